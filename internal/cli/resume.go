package cli

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/workflow/implement"
	"github.com/azero-dev/azero/internal/workflow/selftest"
)

// resumer continues a run of one workflow.
type resumer func(ctx context.Context, f *Factory, run store.Run, asJSON bool) error

// resumers maps workflow names to the code that continues their runs.
func resumers() map[string]resumer {
	return map[string]resumer{
		selftest.Name:  resumeSelftest,
		implement.Name: resumeImplement,
		issueWorkflow:  resumeIssue,
	}
}

func newResumeCommand(f *Factory) *cobra.Command {
	var (
		asJSON bool
		budget float64
	)
	cmd := &cobra.Command{
		Use:   "resume RUN",
		Short: "Continue a run that stopped at a gate, was interrupted or failed",
		Long: trimLines(`
  Continue a run from the node where it stopped. A run waiting at a gate asks
  its question again (this needs a terminal); an interrupted or killed run
  re-runs the node that was running; a failed run retries the node that failed.
  Only one process can drive a run at a time: resuming a run that another
  process is driving fails with exit code 1. RUN may be any unique prefix.`),
		Args:        exactArgs(1, "a run id (see `azero runs`)"),
		Annotations: exitCodesAnnotation(ExitOK, ExitError, ExitUsage, ExitNeedsHuman, ExitRejected, ExitTestsFailed, ExitInterrupted),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := f.Store(ctx)
			if err != nil {
				return err
			}
			r, err := st.FindRun(ctx, args[0])
			if err != nil {
				return err
			}
			if r.Status.Finished() {
				return fmt.Errorf("run %s is already %s; nothing to resume", r.ID, r.Status)
			}
			resume, ok := resumers()[r.Workflow]
			if !ok {
				return fmt.Errorf("run %s belongs to workflow %q, which this azero cannot run", r.ID, r.Workflow)
			}
			if cmd.Flags().Changed("budget") {
				if budget < 0 {
					return usagef("--budget must not be negative")
				}
				meta := map[string]string{"budget": strconv.FormatFloat(budget, 'f', -1, 64)}
				if err := st.UpdateMeta(ctx, r.ID, meta); err != nil {
					return err
				}
				r.Meta["budget"] = meta["budget"]
			}
			return resume(ctx, f, r, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the outcome as JSON")
	cmd.Flags().Float64Var(&budget, "budget", 0, "set the run's budget in USD anew (for a run stopped by its budget); 0 removes it")
	return cmd
}
