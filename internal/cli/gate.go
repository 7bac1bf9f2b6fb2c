package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/azero-dev/azero/internal/shell"

	"github.com/spf13/cobra"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/review"
	"github.com/azero-dev/azero/internal/safewrite"
)

// GateOptions are the inputs of `azero gate`.
type GateOptions struct {
	IO       *iostreams.IOStreams
	Prompter review.Approver
	// Terminal opens the controlling terminal, and a prompter on it, for a
	// review whose standard streams cannot ask (a git hook framework pipes
	// them); nil never opens one.
	Terminal   func() (*iostreams.IOStreams, review.Approver, error)
	Audit      func() (*audit.Logger, error)
	Now        func() time.Time
	WorkDir    string
	Executable func() (string, error) // where the hook finds azero

	Repo        string
	Staged      bool
	JSON        bool
	InstallHook bool
	Force       bool
	Quiet       bool
}

func NewCmdGate(f *Factory, runF func(*GateOptions) error) *cobra.Command {
	opts := &GateOptions{IO: f.IO, Prompter: f.Prompter(), Terminal: f.controllingTerminal, Audit: f.Env().Audit, Now: f.Now, WorkDir: f.WorkDir, Executable: os.Executable}
	cmd := &cobra.Command{
		Use:   "gate",
		Short: "Review the diff a commit would take and demand a typed approve",
		Long: trimLines(`
  Review what a commit would take before it is made: tracked changes against
  HEAD plus untracked, not-ignored files (with --staged only the index, which is
  what a plain 'git commit' takes). Before the first commit of a repository,
  --staged reviews it too: every staged file is NEW.

  azero prints a 'git diff --stat' style summary, then for every flagged file a
  WARNING banner with its line counts before and after and its real diff (at
  most 500 lines per file). A file is flagged when it is REPLACED (more than
  half of its lines deleted and new content added), DELETED, or MODIFIED with
  more than half of it changed or more than half of its lines deleted. New
  files are listed, never flagged. The banner says what happened: lines
  replaced or lost, a deletion, only the line endings converted, a symbolic
  link pointed elsewhere, a submodule moved to another commit.

  Unresolved merge conflicts fail the review (exit 1) in every mode: resolve
  them and 'git add' the files first.

  In a terminal the report is always shown and only typing 'approve' passes;
  'reject' stops (exit 4); anything else asks again. When stdin or stderr is
  not a terminal but the process has one (a hook framework such as pre-commit,
  lefthook or husky pipes the hook's streams), azero asks through it, as git's
  own prompts do: the report and the question go to /dev/tty, the decision's
  line to stderr, and the same rules hold. Without a terminal to ask on (none,
  one held in raw mode by a full-screen program such as an agent's interface,
  or azero in its background) nothing flagged passes (decision NOT_REQUIRED)
  and anything flagged fails at once with exit 3 (decision
  ABORTED_NON_INTERACTIVE): it never waits for input.

  No flag and no environment variable skips the review. Every decision is
  recorded in the audit log ($AZERO_STATE_DIR/audit.jsonl).

  --json prints {"files": [...], "flagged_files": [...], "decision": ...,
  "repository": ...} on stdout, also when exiting 3 or 4; the report and the
  question go to stderr (or to /dev/tty, as above).

  --quiet shows only the flagged files, each with its banner and diff, and
  the question; a change with nothing flagged passes silently. It skips no
  check: a flagged file still needs the typed approve.

  --install-hook writes the repository's pre-commit hook to run
  'azero gate --staged' (with --quiet: 'azero gate --staged --quiet') with
  the terminal connected, so that plain 'git commit'
  is reviewed too. It refuses to replace a different hook unless --force. The
  hook is a convenience for people committing by hand: 'git commit --no-verify'
  skips any hook, which is why azero's workflows do not rely on it. Their gate
  does not depend on the hook: it is a node of the workflow graph that every
  path to a commit passes through.`),
		Example: trimLines(`
  azero gate
  azero gate --repo ../service --json
  azero gate --staged
  azero gate --install-hook`),
		Args:        noArgs,
		Annotations: exitCodesAnnotation(ExitOK, ExitError, ExitUsage, ExitNeedsHuman, ExitRejected, ExitInterrupted),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Force && !opts.InstallHook {
				return usagef("--force only applies to --install-hook; nothing skips the review")
			}
			if opts.Quiet && opts.JSON {
				return usagef("--quiet is for people; --json already prints only the document")
			}
			if opts.InstallHook && opts.JSON {
				return usagef("--json does not apply to --install-hook")
			}
			return run(cmd, runF, gateRun, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Repo, "repo", "", "a directory inside the repository to review (default: the working directory)")
	fl.BoolVar(&opts.Staged, "staged", false, "review only the index against HEAD (what a plain git commit takes)")
	fl.BoolVar(&opts.JSON, "json", false, "print the analysis and decision as JSON on stdout")
	fl.BoolVar(&opts.InstallHook, "install-hook", false, "write a git pre-commit hook running 'azero gate --staged'")
	fl.BoolVar(&opts.Force, "force", false, "with --install-hook: replace an existing, different pre-commit hook")
	fl.BoolVar(&opts.Quiet, "quiet", false, "show only the flagged files (banners and diffs) and the question; nothing when nothing is flagged (what the hook runs)")
	return cmd
}

func (o *GateOptions) repoDir() string {
	switch {
	case o.Repo == "":
		return o.WorkDir
	case filepath.IsAbs(o.Repo):
		return o.Repo
	}
	return filepath.Join(o.WorkDir, o.Repo)
}

func gateRun(ctx context.Context, opts *GateOptions) error {
	if opts.InstallHook {
		return installHook(ctx, opts)
	}
	logger, err := opts.Audit()
	if err != nil {
		// Every decision must be recorded; without the log there is none.
		return fmt.Errorf("open the audit log: %w", err)
	}
	streams, prompter := opts.IO, opts.Prompter
	var viaTerminal bool
	var noTerminal error // why nobody can be asked, when the streams cannot ask
	if !streams.CanPrompt() && opts.Terminal != nil {
		tty, p, err := opts.Terminal()
		if err != nil {
			noTerminal = err
		} else {
			defer tty.Close()
			streams, prompter, viaTerminal = tty, p, true
			tty.ErrOut = &newLineFirst{w: tty.ErrOut}
		}
	}
	g := &review.Gate{IO: streams, Prompter: prompter, Audit: logger, Now: opts.Now}
	out, err := g.Run(ctx, review.GateOptions{Repo: opts.repoDir(), Staged: opts.Staged, Quiet: opts.Quiet})
	switch {
	case viaTerminal && err == nil && out.Decision != "" && !(opts.Quiet && out.Decision == review.NotRequired):
		// The report was on the terminal; the hook's own output (what
		// the framework shows) says how it ended. A failure says so in
		// its error.
		fmt.Fprintln(opts.IO.ErrOut, gateOutcome(out.Decision))
	case noTerminal != nil:
		err = explainNoTerminal(err, noTerminal, opts.Staged)
	}
	if opts.JSON && out.Decision != "" {
		doc := gateDoc{Outcome: out}
		if err != nil {
			// A decision that stops the commit (rejected, or nobody to
			// ask) is a failure of the command: say so in the document.
			doc.Error, doc.ExitCode = err.Error(), ExitCode(err)
		}
		if werr := writeJSON(opts.IO.Out, doc); werr != nil {
			return errors.Join(err, werr)
		}
	}
	return err
}

// newLineFirst starts what is written through it on a new line: a hook
// framework may have left the cursor after its own text ("azero
// gate......") on the terminal the review then writes to. Nothing written,
// nothing added.
type newLineFirst struct {
	w       io.Writer
	started bool
}

func (n *newLineFirst) Write(p []byte) (int, error) {
	if !n.started && len(p) > 0 {
		n.started = true
		if _, err := n.w.Write([]byte("\n")); err != nil {
			return 0, err
		}
	}
	return n.w.Write(p)
}

// gateOutcome is the line a hook's stderr gets when the review was asked
// on the terminal: the report was there, the framework shows this.
func gateOutcome(d review.Decision) string {
	if d == review.Approved {
		return "Diff review: APPROVED by the human at the terminal (asked through /dev/tty)."
	}
	return fmt.Sprintf("Diff review: %s (nothing to approve).", d)
}

// explainNoTerminal says why nobody could be asked when neither the
// standard streams nor a controlling terminal can ask, and, for a hook's
// review, what lets the commit through: an approval is not remembered, so
// running the review elsewhere does not help the hook.
func explainNoTerminal(err, noTerminal error, staged bool) error {
	var nr *review.NeedsReviewError
	if !errors.As(err, &nr) {
		return err
	}
	if nr.Cause == nil {
		nr.Cause = fmt.Errorf("stdin or stderr is not a terminal, and %w", noTerminal)
	}
	if staged {
		return fmt.Errorf("%w. In a git hook an approval given elsewhere is not remembered: run git commit itself from a terminal, where the review asks even when a hook framework pipes the hook's output", err)
	}
	return err
}

// gateDoc is `azero gate --json`: the review's outcome, and why the
// command fails when it does.
type gateDoc struct {
	review.Outcome
	Error    string `json:"error,omitempty"`
	ExitCode int    `json:"exit_code,omitempty"`
}

// hookScript is the pre-commit hook; the first %s is azero's path,
// shell-quoted, the others the gate's arguments.
const hookScript = `#!/bin/sh
# Installed by 'azero gate --install-hook': review the staged diff before
# every commit and demand a typed 'approve'. A hook is only a convenience:
# 'git commit --no-verify' skips it, so azero's workflows do not rely on it
# (their gate is a node of the workflow graph).
azero=%[1]s
if [ ! -x "$azero" ]; then
	echo "pre-commit: azero is not at $azero; reinstall the hook with: azero gate --install-hook --force" >&2
	exit 1
fi
# git runs hooks with stdin from /dev/null: give azero the terminal, when
# there is one, so that the human can answer.
if [ -t 2 ] && (exec </dev/tty) 2>/dev/null; then
	exec "$azero" gate %[2]s </dev/tty
fi
exec "$azero" gate %[2]s
`

func installHook(ctx context.Context, opts *GateOptions) error {
	top, err := gitx.TopLevel(ctx, opts.repoDir())
	if err != nil {
		return err
	}
	// core.hooksPath and linked worktrees decide where git looks.
	hooks, err := gitx.Repo{Dir: top}.HooksDir(ctx)
	if err != nil {
		return err
	}
	exe, err := opts.Executable()
	if err != nil {
		return fmt.Errorf("locate the azero executable for the hook: %w", err)
	}
	if exe, err = filepath.Abs(exe); err != nil {
		return err
	}
	args := "--staged"
	if opts.Quiet {
		args += " --quiet"
	}
	content := []byte(fmt.Sprintf(hookScript, shell.QuotePOSIX(exe), args))
	// The hooks directory may be inside .git, where azero's project writes
	// never go; its parent is the root of this one deliberate write.
	root, rel := filepath.Dir(hooks), filepath.Join(filepath.Base(hooks), "pre-commit")
	hookPath := filepath.Join(hooks, "pre-commit")

	logger, err := opts.Audit()
	if err != nil {
		return fmt.Errorf("open the audit log: %w", err)
	}
	w := &safewrite.Writer{Audit: logger, Force: opts.Force}
	existing, err := os.ReadFile(hookPath)
	switch {
	case err == nil && bytes.Equal(existing, content):
		fmt.Fprintf(opts.IO.ErrOut, "The pre-commit hook at %s already runs azero gate.\n", hookPath)
		return nil
	case err == nil && !opts.Force:
		return fmt.Errorf("%s already exists and is not azero's hook: nothing was written; merge 'azero gate --staged' into it yourself, or pass --force to replace it", hookPath)
	case err == nil:
		// Replace by removing first, so the new hook gets its executable
		// mode whatever the old file's was.
		if err := w.Remove(ctx, root, rel, "azero gate", ""); err != nil {
			return fmt.Errorf("replace %s: %w", hookPath, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("read the existing hook: %w", err)
	}
	_, err = w.Write(ctx, safewrite.Request{Root: root, Path: rel, Content: content, Mode: 0o755, Actor: "azero gate"})
	if err != nil {
		return fmt.Errorf("write %s: %w", hookPath, err)
	}
	fmt.Fprintf(opts.IO.ErrOut, "Installed %s: every 'git commit' in this repository now shows the staged diff and asks for 'approve'.\n"+
		"'git commit --no-verify' skips a hook; azero's own workflows never rely on it (their gate is part of the workflow).\n", hookPath)
	return nil
}
