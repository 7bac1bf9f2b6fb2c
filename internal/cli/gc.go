package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/azero-dev/azero/internal/runs"
)

// GCOptions are the inputs of `azero runs gc`.
type GCOptions struct {
	RunDeps

	All    bool
	DryRun bool
	JSON   bool
}

// NewCmdRunsGC is `azero runs gc`; runF nil runs gcRun.
func NewCmdRunsGC(f *Factory, runF func(*GCOptions) error) *cobra.Command {
	opts := &GCOptions{RunDeps: f.runDeps()}
	cmd := &cobra.Command{
		Use:   "gc",
		Short: "Remove worktrees and branches left behind by ended or killed runs",
		Long: trimLines(`
  Every run cleans up its worktree when it ends, but a run killed (or a
  machine that lost power) leaves its worktree in $AZERO_STATE_DIR/worktrees
  and its azero/... branch behind. 'azero runs gc' removes the worktrees of
  runs that have ended and of runs the store no longer knows.

  What a git killed with a run left (a stale lock on the run's branch, a
  half-made worktree) is removed too; the run stays resumable, and its resume
  makes the worktree again.

  With --all it also abandons runs that are not finished and that no process
  is driving (interrupted, killed, waiting or failed): they are marked aborted
  and their worktree and branch are removed. Runs being driven right now are
  never touched. Your checkouts are never touched.

  A run whose stored row was changed outside azero is never touched either:
  gc says so (the audit log records it as run_forged), and leaves its
  worktree and branch for you to inspect. Only worktrees in azero's own
  worktrees directory are ever removed.

  On a worker machine (azero worker), a run on Temporal keeps its worktree
  here while a worker of this machine holds it. When none does (the worker
  was killed, or the run moved away), gc asks Temporal (--temporal, or
  [engine] in the config) and removes the worktree of a run that ended there,
  is no longer there, or is held by another worker; the run's branch and its
  row stay the run's. With --all it removes such a worktree even when Temporal
  cannot be asked or names this machine's dead worker as the holder (a worker
  restarted with the same --identity would then rebuild it from the run's
  snapshot, as a moved run is).`),
		Args:        noArgs,
		Annotations: exitCodesAnnotation(ExitOK, ExitError, ExitUsage, ExitInterrupted),
		RunE: func(cmd *cobra.Command, args []string) error {
			return run(cmd, runF, gcRun, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.All, "all", false, "also abandon unfinished runs that no process is driving")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "say what would be removed, remove nothing")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print as JSON")
	addEngineFlags(cmd, &opts.Engine)
	return cmd
}

func gcRun(ctx context.Context, opts *GCOptions) error {
	rep, err := runs.GC(ctx, opts.Env, runs.GCOptions{All: opts.All, DryRun: opts.DryRun, Engine: opts.Engine})
	if err != nil {
		return err
	}
	return gcReport(opts, rep)
}

// gcReport prints what gc did: one JSON document with --json, else a
// line per run on stderr.
func gcReport(opts *GCOptions, rep runs.GCReport) error {
	actions, refused, jails := rep.Removed, rep.Refused, rep.Jails
	var err error
	if failed := rep.Failed(); len(failed) > 0 {
		err = fmt.Errorf("could not clean up %s", strings.Join(failed, ", "))
	}
	if opts.JSON {
		if actions == nil {
			actions = []runs.GCAction{}
		}
		doc := map[string]any{"removed": actions, "dry_run": opts.DryRun}
		if len(refused) > 0 {
			doc["refused"] = refused
		}
		if len(jails) > 0 {
			doc["jails_removed"] = jails
		}
		if err != nil {
			doc["error"], doc["exit_code"] = err.Error(), ExitCode(err)
		}
		if werr := writeJSON(opts.IO.Out, doc); werr != nil {
			return errors.Join(err, werr)
		}
		return err
	}
	if rep.TemporalKept > 0 && !opts.All {
		fmt.Fprintf(opts.IO.ErrOut, "azero: kept the worktrees of %d run(s) on Temporal that no worker of this machine holds (%s); --all removes them\n", rep.TemporalKept, rep.TemporalWhy)
	}
	for _, r := range refused {
		fmt.Fprintf(opts.IO.ErrOut, "%s: not touched: %s\n", r.RunID, r.Reason)
	}
	if len(jails) > 0 {
		fmt.Fprintf(opts.IO.ErrOut, "removed %d sandbox jail(s) left by processes that were killed\n", len(jails))
	}
	if len(actions) == 0 {
		if len(refused) == 0 && len(jails) == 0 {
			fmt.Fprintln(opts.IO.ErrOut, "Nothing to clean up.")
		}
		return nil
	}
	verb := "removed"
	if opts.DryRun {
		verb = "would remove"
	}
	for _, a := range actions {
		what := strings.Join(a.What(), ", ")
		if a.Error != "" {
			fmt.Fprintf(opts.IO.ErrOut, "%s: could not remove %s: %s\n", a.RunID, what, a.Error)
			continue
		}
		fmt.Fprintf(opts.IO.ErrOut, "%s: %s %s (%s)\n", a.RunID, verb, what, a.Reason)
	}
	return err
}
