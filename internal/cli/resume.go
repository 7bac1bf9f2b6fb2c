package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"

	"github.com/spf13/cobra"

	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/workflow/implement"
	"github.com/azero-dev/azero/internal/workflow/selftest"
)

// resumer continues a run of one workflow.
type resumer func(ctx context.Context, f *Factory, run store.Run, asJSON bool) error

// workflowCommands are what the generic commands do for each workflow.
type workflowCommands struct {
	resume resumer
	// budget gives a run's stored state a new budget; nil for a workflow
	// whose runs have none.
	budget func(f *Factory, r store.Run, state json.RawMessage, usd float64) (json.RawMessage, error)
}

// workflows maps workflow names to their commands.
func workflows() map[string]workflowCommands {
	return map[string]workflowCommands{
		selftest.Name:  {resume: resumeSelftest},
		implement.Name: {resume: resumeImplement, budget: budgetImplement},
		issueWorkflow:  {resume: resumeIssue},
	}
}

// workflowNames lists the workflows this azero runs, sorted.
func workflowNames() []string {
	names := make([]string, 0, len(workflows()))
	for n := range workflows() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// budgetImplement sets an implementation run's budget.
func budgetImplement(f *Factory, r store.Run, raw json.RawMessage, usd float64) (json.RawMessage, error) {
	var s implement.State
	if err := decodeState(store.Run{ID: r.ID, State: raw}, &s); err != nil {
		return nil, err
	}
	cfg, err := f.Config(s.Repo)
	if err != nil {
		return nil, err
	}
	if err := s.SetBudget(usd, f.providerEnv(cfg).Prices); err != nil {
		return nil, usagef("%v", err)
	}
	return json.Marshal(&s)
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
			if te, err := f.temporalEngine(ctx, f.repoRoot(ctx)); err != nil {
				return err
			} else if te != nil {
				defer te.Close()
				if cmd.Flags().Changed("budget") {
					return usagef("--budget is not supported for runs on Temporal yet")
				}
				return resumeTemporal(ctx, f, te, args[0], asJSON)
			}
			st, err := f.Store(ctx)
			if err != nil {
				return err
			}
			r, err := st.FindRun(ctx, args[0])
			if err != nil {
				// A row changed outside azero: nothing it holds is read to
				// act on (not its workflow, state or config).
				return f.reportForged(ctx, st, "resume", err)
			}
			if runOnTemporal(r.Meta) {
				// A worker's bookkeeping of a run on Temporal: driving it
				// here would run it twice.
				return fmt.Errorf("run %s runs on Temporal (this machine's store only mirrors the steps its worker ran): use %s", r.ID, f.resumeCommand(r.ID, true))
			}
			if r.Status.Finished() {
				return fmt.Errorf("run %s is already %s; nothing to resume", r.ID, r.Status)
			}
			wf, ok := workflows()[r.Workflow]
			if !ok {
				return fmt.Errorf("run %s belongs to workflow %q, which this azero cannot run", r.ID, r.Workflow)
			}
			if cmd.Flags().Changed("budget") {
				if wf.budget == nil {
					return usagef("runs of the %s workflow have no budget: --budget applies to implement runs", r.Workflow)
				}
				err := st.EditState(ctx, r.ID, func(raw json.RawMessage) (json.RawMessage, error) { return wf.budget(f, r, raw, budget) })
				if err != nil {
					return f.reportForged(ctx, st, "resume", err)
				}
				if r, err = st.GetRun(ctx, r.ID); err != nil {
					return err
				}
				a, err := f.Audit()
				if err != nil {
					return err
				}
				_ = a.Event(ctx, "budget_set", r.ID, slog.Float64("budget_usd", budget))
			}
			return wf.resume(ctx, f, r, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the outcome as JSON")
	cmd.Flags().Float64Var(&budget, "budget", 0, "set the run's budget in USD anew (for a run stopped by its budget); 0 removes it")
	addEngineFlags(cmd, f)
	return cmd
}
