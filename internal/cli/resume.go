package cli

import (
	"github.com/spf13/cobra"
)

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
  process is driving fails with exit code 1. A run whose stored row was
  changed outside azero is not resumed (exit 1; recorded as run_forged in the
  audit log). RUN may be any unique prefix.`),
		Args:        exactArgs(1, "a run id (see `azero runs`)"),
		Annotations: runExitCodes(ExitOK, ExitError, ExitUsage, ExitNeedsHuman, ExitRejected, ExitTestsFailed, ExitInterrupted),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if err := budgetFlag(budget); err != nil {
				return err
			}
			eng, err := f.openRuns(ctx, f.repoRoot(ctx))
			if err != nil {
				return err
			}
			defer eng.Close()
			if cmd.Flags().Changed("budget") {
				if err := eng.SetBudget(ctx, args[0], budget); err != nil {
					return err
				}
			}
			out, err := eng.Drive(ctx, args[0], f.terminal())
			return f.report(out, err, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the outcome as JSON")
	cmd.Flags().Float64Var(&budget, "budget", 0, "set the run's budget in USD anew (for a run stopped by its budget); 0 removes it")
	addEngineFlags(cmd, f)
	return cmd
}
