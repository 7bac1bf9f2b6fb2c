package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/azero-dev/azero/internal/edit"
	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/runs"
	"github.com/azero-dev/azero/internal/safewrite"
)

// ApplyOptions are the inputs of `azero apply`.
type ApplyOptions struct {
	IO      *iostreams.IOStreams
	Env     *runs.Env // where relative paths start, the audit log
	WorkDir string
	// Writer is the file-writing front door (asking on the terminal when
	// there is one).
	Writer func(auto, force bool) (*safewrite.Writer, error)

	File   string
	Edits  string // a path, or "-" for stdin
	Root   string
	DryRun bool
	JSON   bool
}

// NewCmdApply is `azero apply`; runF nil runs applyRun.
func NewCmdApply(f *Factory, runF func(*ApplyOptions) error) *cobra.Command {
	opts := &ApplyOptions{IO: f.IO, Env: f.Env(), WorkDir: f.WorkDir, Writer: f.writer}
	cmd := &cobra.Command{
		Use:   "apply FILE --edits REPLY",
		Short: "Apply a model's FIND/REPLACE edit blocks to a file, all or nothing",
		Long: trimLines(`
  Apply the edit blocks in REPLY (a file, or - for standard input) to FILE.
  Two formats are accepted, even mixed in one reply:

    ### CHANGE 1: what changes         <<<<<<< SEARCH
    FIND:                               exact lines to find
    ` + "```" + `                                 =======
    exact lines to find                 their replacement
    ` + "```" + `                                 >>>>>>> REPLACE
    REPLACE WITH:
    ` + "```" + `
    their replacement
    ` + "```" + `

  Each FIND must match whole lines of the file exactly once: exactly first,
  then ignoring differences in whitespace, and if every FIND line starts with
  a line number ("12 | code", as copied from a numbered view), without the
  numbers. A whitespace match re-indents the replacement only when every
  FIND line is shifted from the file by the same amount; otherwise the block
  is refused and the error shows the file's lines to copy. Every loose match
  is listed (on standard error, or under "loose" in --json), and a block whose
  replacement is the text already there is reported as "no change".

  Blocks apply in order. If any block fails (not found, ambiguous, unevenly
  indented, or replacing code with a placeholder such as "// ... existing
  code ..."), nothing is written and the error names the block, with the
  file's lines to copy.

  The file is written through azero's safe write: confined to --root (default:
  the git repository containing FILE, else FILE's directory), atomically, with
  its mode, line endings and final newline kept.`),
		Example:     "  azero apply big.py --edits reply.md --dry-run\n  model-cli ... | azero apply internal/store/store.go --edits - --json",
		Args:        exactArgs(1, "the FILE to edit"),
		Annotations: exitCodesAnnotation(ExitOK, ExitError, ExitUsage, ExitInterrupted),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			if opts.Edits == "" {
				return usagef("--edits REPLY is required (a file with the model's reply, or - for stdin)")
			}
			return run(cmd, runF, applyRun, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Edits, "edits", "", "the reply with the edit blocks: a file, or - for standard input")
	cmd.Flags().StringVar(&opts.Root, "root", "", "the project root the file must be inside (default: its git repository, else its directory)")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "print the unified diff and write nothing")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	return cmd
}

// applyReport is `azero apply --json`. Status is "applied" (the file was
// written), "no_change" (every block's replacement is the text already
// there; nothing written), "dry_run" (--dry-run with changes) or "failed".
// Each result says how its block matched, its own status and, for a loose
// match, what was overlooked ("loose").
type applyReport struct {
	File    string `json:"file"`
	Status  string `json:"status"`
	Applied bool   `json:"applied"`
	DryRun  bool   `json:"dry_run"`
	Blocks  int    `json:"blocks"`
	// Line counts of the file once the blocks applied (absent when they
	// did not), named as the gate and `azero write` name them.
	*LineCounts
	Results []edit.Result `json:"results"`
	Diff    string        `json:"diff,omitempty"`
	Error   string        `json:"error,omitempty"`
	Detail  any           `json:"error_detail,omitempty"`
	// ExitCode is the command's exit code when it fails (0: omitted).
	ExitCode int `json:"exit_code,omitempty"`
}

// LineCounts are a file's line counts before and after a change, in the
// JSON vocabulary every command shares.
type LineCounts struct {
	OriginalLines int `json:"original_lines"`
	LinesAfter    int `json:"lines_after"`
	LinesAdded    int `json:"lines_added"`
	LinesDeleted  int `json:"lines_deleted"`
}

const (
	applyStatusApplied  = "applied"
	applyStatusNoChange = "no_change"
	applyStatusDryRun   = "dry_run"
	applyStatusFailed   = "failed"
)

func applyRun(ctx context.Context, opts *ApplyOptions) error {
	file := opts.Env.Abs(opts.File)
	root := opts.Env.Abs(opts.Root)
	if root == "" {
		if top, err := gitx.TopLevel(ctx, filepath.Dir(file)); err == nil {
			root = top
		} else {
			root = filepath.Dir(file)
		}
	}
	rep := applyReport{File: opts.File, DryRun: opts.DryRun, Results: []edit.Result{}}
	fail := func(err error) error {
		rep.Status, rep.Error = applyStatusFailed, err.Error()
		var (
			pe *edit.ParseError
			nf *edit.NotFoundError
			am *edit.AmbiguousError
			el *edit.ElisionError
			ie *edit.IndentError
		)
		switch {
		case errors.As(err, &pe):
			rep.Detail = pe
		case errors.As(err, &nf):
			rep.Detail = nf
		case errors.As(err, &am):
			rep.Detail = am
		case errors.As(err, &el):
			rep.Detail = el
		case errors.As(err, &ie):
			rep.Detail = ie
		}
		err = fmt.Errorf("%s unchanged: %w", opts.File, err)
		if opts.JSON {
			rep.ExitCode = ExitCode(err)
			if werr := writeJSON(opts.IO.Out, rep); werr != nil {
				return errors.Join(err, werr)
			}
		}
		return err
	}

	reply, err := opts.IO.ReadInput(ctx, opts.WorkDir, opts.Edits, iostreams.DefaultInputLimit)
	if err != nil {
		return fail(err)
	}
	before, snap, err := safewrite.Read(root, file)
	if err != nil {
		return fail(err)
	}
	if !snap.Exists {
		return fail(fmt.Errorf("%s does not exist: edit blocks change an existing file (create new files with azero write)", opts.File))
	}
	blocks, err := edit.Parse(string(reply))
	if err != nil {
		return fail(err)
	}
	rep.Blocks = len(blocks)
	for _, b := range blocks {
		if b.Path != "" && !edit.PathMatches(file, b.Path) {
			return fail(fmt.Errorf("edit block %d is for %s, not %s", b.N, b.Path, opts.File))
		}
	}
	after, results, err := edit.Apply(string(before), blocks)
	if results != nil {
		rep.Results = results
	}
	if err != nil {
		return fail(err)
	}
	if !opts.JSON {
		reportBlocks(opts.IO.ErrOut, results)
	}
	if after == string(before) {
		rep.Status = applyStatusNoChange
		if opts.JSON {
			return writeJSON(opts.IO.Out, rep)
		}
		fmt.Fprintf(opts.IO.ErrOut, "no change to %s: every block's REPLACE WITH is the text already there; nothing written\n", opts.File)
		return nil
	}
	req := safewrite.Request{Root: root, Path: file, Content: []byte(after), Strategy: safewrite.Edit, Base: &snap, Actor: "azero apply"}
	p, err := safewrite.Propose(req)
	if err != nil {
		return fail(err)
	}
	rep.LineCounts = &LineCounts{OriginalLines: p.ExistingLines, LinesAfter: p.NewLines, LinesAdded: p.Added, LinesDeleted: p.Deleted}
	if opts.DryRun {
		rep.Status, rep.Diff = applyStatusDryRun, p.Diff
		if opts.JSON {
			return writeJSON(opts.IO.Out, rep)
		}
		// The diff is the output, as long as the change: paged on a terminal.
		defer opts.IO.StartPager()()
		fmt.Fprint(opts.IO.Out, safewrite.ColorDiff(opts.IO.ColorSchemeOut(), p.Diff))
		return nil
	}
	w, err := opts.Writer(false, false)
	if err != nil {
		return fail(err)
	}
	if _, err := w.Write(ctx, req); err != nil {
		return fail(err)
	}
	rep.Status, rep.Applied = applyStatusApplied, true
	if opts.JSON {
		return writeJSON(opts.IO.Out, rep)
	}
	applied := 0
	for _, r := range results {
		if r.Status == edit.Applied {
			applied++
		}
	}
	fmt.Fprintf(opts.IO.ErrOut, "applied %d block(s) to %s\n", applied, opts.File)
	return nil
}

// reportBlocks lists, for a person, the blocks that matched loosely and
// those that changed nothing: the places to look at before trusting the
// result.
func reportBlocks(w io.Writer, results []edit.Result) {
	for _, r := range results {
		if r.Status == edit.NoChange || r.IsLoose() {
			fmt.Fprintln(w, r)
		}
	}
}
