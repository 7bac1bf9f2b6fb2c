package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/azero-dev/azero/internal/workflow/demo"
)

// DemoOptions are the inputs of `azero demo`.
type DemoOptions struct {
	Dir     string
	Sandbox string
	JSON    bool
}

func newDemoCommand(f *Factory) *cobra.Command {
	opts := &DemoOptions{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Watch the implementation workflow on a small embedded Go project, offline",
		Long: trimLines(`
  Copy a small Go project (textkit, whose Slugify only lower-cases) into a new
  git repository in a temporary directory and run 'azero implement' on its
  design document with the offline scripted model: nothing leaves this machine
  and no API key is needed.

  You will see the model's tests fail (red), a first implementation fail one
  case, the fix pass (green), go vet, the diff review report, and two typed
  approvals: 'approve' at the diff review, then 'approve' to merge. The merge
  lands in the demo repository, never in yours.

  Without a terminal the run stops at the first gate that needs you (exit 3)
  and prints how to continue: run 'azero resume RUN' from a terminal.`),
		Args:        noArgs,
		Annotations: exitCodesAnnotation(ExitOK, ExitError, ExitUsage, ExitNeedsHuman, ExitRejected, ExitTestsFailed, ExitInterrupted),
		RunE: func(cmd *cobra.Command, args []string) error {
			return demoRun(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Dir, "dir", "", "directory to create the demo in (default: a new temporary directory)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the outcome as JSON")
	addSandboxFlag(cmd, &opts.Sandbox)
	addEngineFlags(cmd, f)
	return cmd
}

func demoRun(ctx context.Context, f *Factory, opts *DemoOptions) error {
	// The demo repository has no config of its own: the user's chooses
	// the engine, and a choice that cannot be used leaves nothing behind.
	if _, err := f.runConfig(""); err != nil {
		return err
	}
	base := f.abs(opts.Dir)
	if base == "" {
		d, err := os.MkdirTemp("", "azero-demo-")
		if err != nil {
			return err
		}
		base = d
	}
	w, err := f.writer(false, false)
	if err != nil {
		return err
	}
	d, err := demo.Prepare(ctx, w, base)
	if err != nil {
		return err
	}
	cs := f.IO.ColorScheme()
	fmt.Fprintf(f.IO.ErrOut, "%s a demo repository is ready in %s\n", cs.Bold("azero demo:"), d.Project)
	fmt.Fprintf(f.IO.ErrOut, "  design: %s (make Slugify produce URL slugs)\n  coder: the offline scripted model\n\n", demo.Design)
	return implementRun(ctx, f, &ImplementOptions{
		LLD:        d.Design,
		Repo:       d.Project,
		Runner:     "go",
		JSON:       opts.JSON,
		Sandbox:    opts.Sandbox,
		mockScript: d.Script,
	})
}
