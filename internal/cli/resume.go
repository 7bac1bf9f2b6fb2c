package cli

import (
	"context"

	"github.com/spf13/cobra"
)

// ResumeOptions are the inputs of `azero resume`.
type ResumeOptions struct {
	RunDeps

	RunID string
	JSON  bool
	// Budget is the run's new budget in USD when SetBudget (--budget was
	// given; 0 removes it).
	Budget    float64
	SetBudget bool
}

// NewCmdResume is `azero resume`; runF nil runs resumeRun.
func NewCmdResume(f *Factory, runF func(*ResumeOptions) error) *cobra.Command {
	opts := &ResumeOptions{RunDeps: f.runDeps()}
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
			opts.RunID = args[0]
			if err := budgetFlag(opts.Budget); err != nil {
				return err
			}
			opts.SetBudget = cmd.Flags().Changed("budget")
			return run(cmd, runF, resumeRun, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the outcome as JSON")
	cmd.Flags().Float64Var(&opts.Budget, "budget", 0, "set the run's budget in USD anew (for a run stopped by its budget); 0 removes it")
	addEngineFlags(cmd, &opts.Engine)
	return cmd
}

func resumeRun(ctx context.Context, opts *ResumeOptions) error {
	eng, err := opts.openHere(ctx)
	if err != nil {
		return err
	}
	defer eng.Close()
	if opts.SetBudget {
		if err := eng.SetBudget(ctx, opts.RunID, opts.Budget); err != nil {
			return err
		}
	}
	out, err := eng.Drive(ctx, opts.RunID, opts.Terminal())
	return opts.report(out, err, opts.JSON)
}
