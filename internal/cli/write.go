package cli

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/safewrite"
)

// WriteOptions are the inputs of `azero write`.
type WriteOptions struct {
	IO       *iostreams.IOStreams
	Approver safewrite.Approver // the terminal, or nil when nobody can be asked
	Audit    func() (*audit.Logger, error)
	WorkDir  string
	TopLevel func(ctx context.Context, dir string) (string, error) // the git work tree containing dir

	Path     string
	Content  string // a file to read the content from, or "-" for stdin
	Strategy safewrite.Strategy
	Line     int
	Root     string
	Auto     bool
	Force    bool
	JSON     bool
}

func NewCmdWrite(f *Factory, runF func(*WriteOptions) error) *cobra.Command {
	opts := &WriteOptions{IO: f.IO, Audit: f.Env().Audit, WorkDir: f.WorkDir, TopLevel: gitx.TopLevel}
	if f.IO.CanPrompt() {
		opts.Approver = safewrite.NewTerminalApprover(f.IO, f.Prompter())
	}
	var strategy string
	cmd := &cobra.Command{
		Use:   "write PATH --content FILE|-",
		Short: "Write a file safely: confined, never silently replacing a large file",
		Long: trimLines(`
  Write the content of FILE (or of stdin with -) to PATH the way every azero
  workflow writes files:

  - PATH must resolve, symlinks included, inside the project root, and never
    inside .git; anything else is refused (exit 1) and nothing is written.
  - Replacing an existing file of more than 100 lines needs approval. In a
    terminal azero shows "about to replace N lines with M lines" and the diff
    (deletions red, additions green), lets you choose a strategy, shows the
    result, and writes only after you type 'approve'; 'reject' or cancel stops
    (exit 4). Without a terminal nobody can approve: exit 3. With --auto such a
    write is refused unless --force; --force replaces without asking.
  - The file is replaced atomically (temporary file, fsync, rename, fsync of
    the directory) and keeps its mode; a killed azero never leaves half a file.
  - Every write and every refusal is recorded in the audit log
    ($AZERO_STATE_DIR/audit.jsonl) with line counts and sha256 sums.

  Strategies (--strategy):
    replace  the file becomes the content (the default; creates new files)
    append   the content goes at the end (a missing final newline is added)
    insert   the content goes at --line N (1 to lines+1), pushing the rest down
    extend   new members join existing types: Go methods after the type's last
             method, struct fields into the struct, other declarations at the
             end (comments kept); Python methods at the end of the matching
             class with its indentation (needs python3). Members that already
             exist are an error, never duplicated.
  append, insert and extend keep every existing line, so they need no approval.

  The project root is --root, else the git work tree of the working directory,
  else the working directory. A relative PATH is relative to --root when it is
  given, else to the working directory.`),
		Example: trimLines(`
    azero write src/state.py --content /tmp/state.py
    generate | azero write internal/store/store.go --content - --strategy extend
    azero write notes.md --content new.md --strategy insert --line 10
    azero write big.py --content new.py --auto --force --json`),
		Args:        exactArgs(1, "the PATH to write"),
		Annotations: exitCodesAnnotation(ExitOK, ExitError, ExitUsage, ExitNeedsHuman, ExitRejected, ExitInterrupted),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path = args[0]
			if opts.Force && !opts.Auto {
				return usagef("--force only makes sense with --auto: without --auto azero asks before replacing a large file")
			}
			if opts.Content == "" {
				return usagef("--content is required: a file holding the new content, or - to read it from stdin")
			}
			st, err := safewrite.ParseStrategy(strategy)
			if err != nil {
				return &UsageError{Err: err}
			}
			if st == safewrite.Edit {
				return usagef("--strategy edit is for content derived from FIND/REPLACE blocks (azero apply); use replace, append, insert or extend")
			}
			opts.Strategy = st
			switch {
			case st == safewrite.Insert && opts.Line < 1:
				return usagef("--strategy insert needs --line N, the line (from 1) where the content starts")
			case st != safewrite.Insert && cmd.Flags().Changed("line"):
				return usagef("--line only applies to --strategy insert")
			}
			return run(cmd, runF, writeRun, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Content, "content", "", fmt.Sprintf("file holding the new content, or - for stdin (at most %d MiB)", iostreams.DefaultInputLimit>>20))
	fl.StringVar(&strategy, "strategy", "", "append, insert, extend or replace (default replace)")
	fl.IntVar(&opts.Line, "line", 0, "with --strategy insert: the line where the content starts (1 to lines+1)")
	fl.StringVar(&opts.Root, "root", "", "the project root the path must stay inside (default: the git work tree, else the working directory)")
	fl.BoolVar(&opts.Auto, "auto", false, "never ask: refuse a write that needs approval unless --force")
	fl.BoolVar(&opts.Force, "force", false, "replace a large file without asking")
	fl.BoolVar(&opts.JSON, "json", false, "print the outcome as JSON on stdout")
	return cmd
}

// writeOutcome is what --json prints after a write.
type writeOutcome struct {
	Written bool   `json:"written"`
	Root    string `json:"root"`
	safewrite.Result
}

// writeFailure is what --json prints when nothing was written.
type writeFailure struct {
	Written  bool   `json:"written"`
	Root     string `json:"root"`
	Path     string `json:"path"`
	Error    string `json:"error"`
	ExitCode int    `json:"exit_code"`
}

func writeRun(ctx context.Context, opts *WriteOptions) error {
	root, path := opts.paths(ctx)
	res, err := writeFile(ctx, opts, root, path)
	if opts.JSON {
		var doc any = writeOutcome{Written: !res.Unchanged, Root: root, Result: res}
		if err != nil {
			doc = writeFailure{Root: root, Path: opts.Path, Error: err.Error(), ExitCode: ExitCode(err)}
		}
		if werr := writeJSON(opts.IO.Out, doc); werr != nil && err == nil {
			return werr
		}
	}
	if err != nil {
		return err
	}
	cs := opts.IO.ColorScheme()
	switch {
	case res.Unchanged:
		fmt.Fprintf(opts.IO.ErrOut, "%s already holds this content; nothing was written.\n", res.Path)
	case res.Created:
		fmt.Fprintf(opts.IO.ErrOut, "%s %s (%d lines).\n", cs.Green("Created"), res.Path, res.NewLines)
	default:
		fmt.Fprintf(opts.IO.ErrOut, "%s %s (%s: %d -> %d lines, %s %s)%s.\n", cs.Green("Wrote"), res.Path, res.Strategy,
			res.OldLines, res.NewLines, cs.Red(fmt.Sprintf("-%d", res.DeletedLines)), cs.Green(fmt.Sprintf("+%d", res.AddedLines)), approvalNote(res.Approval))
	}
	return nil
}

func approvalNote(a safewrite.Approval) string {
	switch a {
	case safewrite.ApprovalForced:
		return ", replaced with --force"
	case safewrite.ApprovalApproved:
		return ", approved"
	}
	return ""
}

func writeFile(ctx context.Context, opts *WriteOptions, root, path string) (safewrite.Result, error) {
	content, err := opts.readContent(ctx)
	if err != nil {
		return safewrite.Result{}, err
	}
	logger, err := opts.Audit()
	if err != nil {
		// Every write is audited; without the log there is no write.
		return safewrite.Result{}, fmt.Errorf("open the audit log: %w", err)
	}
	w := &safewrite.Writer{Audit: logger, Approver: opts.Approver, Auto: opts.Auto, Force: opts.Force}
	return w.Write(ctx, safewrite.Request{Root: root, Path: path, Content: content, Strategy: opts.Strategy,
		Line: opts.Line, Actor: "azero write"})
}

// paths returns the project root and the path to write, as the help
// describes them.
func (o *WriteOptions) paths(ctx context.Context) (root, path string) {
	path = o.Path
	if o.Root != "" {
		root = o.Root
		if !filepath.IsAbs(root) {
			root = filepath.Join(o.WorkDir, root)
		}
		return root, path // safewrite resolves a relative path against the root
	}
	root = o.WorkDir
	// Outside a work tree (or without git) the working directory is the
	// root: never wider than what the user is standing in.
	if top, err := o.TopLevel(ctx, o.WorkDir); err == nil {
		root = top
	}
	if path != "" && !filepath.IsAbs(path) && filepath.Clean(o.WorkDir) != filepath.Clean(root) {
		// Not filepath.Join: it would fold "link/.." lexically, and the
		// refusal should name what was typed.
		path = o.WorkDir + string(filepath.Separator) + path
	}
	return root, path
}

// readContent reads --content, bounded and stopped by the first Ctrl-C.
func (o *WriteOptions) readContent(ctx context.Context) ([]byte, error) {
	b, err := o.IO.ReadInput(ctx, o.WorkDir, o.Content, iostreams.DefaultInputLimit)
	if err != nil {
		return nil, fmt.Errorf("--content: %w", err)
	}
	return b, nil
}
