package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/azero-dev/azero/internal/runs"
	"github.com/azero-dev/azero/internal/safewrite"
)

// DemoOptions are the inputs of `azero demo`.
type DemoOptions struct {
	RunDeps
	// Writer is the file-writing front door the demo's project is
	// written through.
	Writer func(auto, force bool) (*safewrite.Writer, error)

	Dir     string
	Sandbox string
	JSON    bool
}

// NewCmdDemo is `azero demo`; runF nil runs demoRun.
func NewCmdDemo(f *Factory, runF func(*DemoOptions) error) *cobra.Command {
	opts := &DemoOptions{RunDeps: f.runDeps(), Writer: f.writer}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Watch the implementation workflow on a small embedded Go project, offline",
		Long: trimLines(`
  Copy a small Go project (textkit, whose Slugify only lower-cases) into a new
  git repository in a temporary directory and run 'azero implement' on its
  design document with the offline scripted model: nothing leaves this machine
  and no API key is needed.

  You will see the model's tests fail (red), a first implementation fail one
  case, the fix pass (green), go vet and the diff review report. Then you are
  asked twice, typing the word in full:

    1. the diff review: 'approve' commits the change on the run's branch
       ('reject' sends it to the final review with only revise or abort);
    2. the final review: 'approve' merges the branch into the demo
       repository's main, 'revise' sends the change back to the coder with
       your feedback, 'abort' drops it.

  The merge lands in the demo repository, never in yours.

  Without a terminal nothing is asked: the diff review, with nothing flagged,
  passes unattended, and the run stops at the final review (exit 3), printing
  the command that resumes it from where you stand (in azero's checkout,
  'go run ./cmd/azero resume RUN'); resumed at a terminal, it asks only the
  final review, showing the whole diff first. Through 'go run' the exit code
  is go run's own: 'exit status 3' is printed and go run exits 1 (build
  azero, 'go build -o azero ./cmd/azero', for its exact codes).`),
		Args:        noArgs,
		Annotations: runExitCodes(ExitOK, ExitError, ExitUsage, ExitNeedsHuman, ExitRejected, ExitTestsFailed, ExitInterrupted),
		RunE: func(cmd *cobra.Command, args []string) error {
			return run(cmd, runF, demoRun, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Dir, "dir", "", "directory to create the demo in (default: a new temporary directory)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the outcome as JSON")
	addSandboxFlag(cmd, &opts.Sandbox)
	addEngineFlags(cmd, &opts.Engine)
	return cmd
}

func demoRun(ctx context.Context, opts *DemoOptions) error {
	// The demo repository has no config of its own: the user's chooses
	// the engine, and a choice that cannot be used leaves nothing behind.
	if _, err := opts.config(""); err != nil {
		return err
	}
	base := opts.Env.Abs(opts.Dir)
	if base == "" {
		d, err := os.MkdirTemp("", "azero-demo-")
		if err != nil {
			return err
		}
		base = d
	}
	w, err := opts.Writer(false, false)
	if err != nil {
		return err
	}
	d, err := runs.PrepareDemo(ctx, w, base)
	if err != nil {
		return err
	}
	cs := opts.IO.ColorScheme()
	fmt.Fprintf(opts.IO.ErrOut, "%s a demo repository is ready in %s\n", cs.Bold("azero demo:"), d.Project)
	fmt.Fprintf(opts.IO.ErrOut, "  design: %s (make Slugify produce URL slugs)\n  coder: the offline scripted model\n", runs.DemoDesign)
	if opts.IO.CanPrompt() {
		fmt.Fprintf(opts.IO.ErrOut, "  you will be asked twice: 'approve' at the diff review commits the change on the run's branch,\n"+
			"  then 'approve' at the final review merges it (or 'revise', or 'abort')\n\n")
	} else {
		fmt.Fprintf(opts.IO.ErrOut, "  no terminal: nothing is asked; the run stops at the final review (the merge) with exit 3\n"+
			"  and says how to resume it from a terminal\n\n")
	}
	return implementRun(ctx, &ImplementOptions{
		RunDeps:    opts.RunDeps,
		LLD:        d.Design,
		Repo:       d.Project,
		Runner:     "go",
		JSON:       opts.JSON,
		Sandbox:    opts.Sandbox,
		mockScript: d.Script,
	})
}
