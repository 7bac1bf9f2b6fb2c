package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/store"
)

// GCOptions are the inputs of `azero runs gc`.
type GCOptions struct {
	All    bool
	DryRun bool
	JSON   bool
}

func newRunsGCCommand(f *Factory) *cobra.Command {
	opts := &GCOptions{}
	cmd := &cobra.Command{
		Use:   "gc",
		Short: "Remove worktrees and branches left behind by ended or killed runs",
		Long: trimLines(`
  Every run cleans up its worktree when it ends, but a run killed (or a
  machine that lost power) leaves its worktree in $AZERO_STATE_DIR/worktrees
  and its azero/... branch behind. 'azero runs gc' removes the worktrees of
  runs that have ended and of runs the store no longer knows.

  With --all it also abandons runs that are not finished and that no process
  is driving (interrupted, killed, waiting or failed): they are marked aborted
  and their worktree and branch are removed. Runs being driven right now are
  never touched. Your checkouts are never touched.`),
		Args:        noArgs,
		Annotations: exitCodesAnnotation(ExitOK, ExitError, ExitUsage),
		RunE: func(cmd *cobra.Command, args []string) error {
			return gcRun(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.All, "all", false, "also abandon unfinished runs that no process is driving")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "say what would be removed, remove nothing")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print as JSON")
	return cmd
}

// gcAction is one thing gc did (or would do).
type gcAction struct {
	RunID    string `json:"run_id"`
	Worktree string `json:"worktree,omitempty"`
	Branch   string `json:"branch,omitempty"`
	Reason   string `json:"reason"`
	Done     bool   `json:"done"`
	Error    string `json:"error,omitempty"`
}

// runBranch reads the parts of an implementation run's state gc needs.
type runBranch struct {
	Repo   string `json:"repo"`
	Branch string `json:"branch"`
	Result string `json:"result"`
}

// branchOf reads where an implementation run works. A state that does
// not decode (another workflow, a newer azero) names no branch: gc then
// removes the worktree and leaves branches alone.
func branchOf(r store.Run) runBranch {
	var info runBranch
	if err := json.Unmarshal(r.State, &info); err != nil {
		return runBranch{}
	}
	return info
}

func gcRun(ctx context.Context, f *Factory, opts *GCOptions) error {
	stateDir, err := f.StateDir()
	if err != nil {
		return err
	}
	st, err := f.Store(ctx)
	if err != nil {
		return err
	}
	entries, err := os.ReadDir(filepath.Join(stateDir, "worktrees"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	var actions []gcAction
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		wt := filepath.Join(stateDir, "worktrees", e.Name())
		a := gcAction{RunID: e.Name(), Worktree: wt}
		r, err := st.GetRun(ctx, e.Name())
		var info runBranch
		switch {
		case errors.Is(err, store.ErrNotFound):
			a.Reason = "no run with this id"
		case err != nil:
			return err
		case r.Status.Finished() || r.Node == flow.End:
			a.Reason = "the run has ended (" + string(r.Status) + ")"
			info = branchOf(r)
		case st.LeaseLive(r):
			continue // being driven right now
		case opts.All:
			a.Reason = "abandoned: " + string(effectiveStatus(st, r)) + " at " + r.Node
			info = branchOf(r)
		default:
			continue // resumable; kept unless --all
		}
		// An approved commit that could not be merged stays for the user.
		if info.Branch != "" && info.Result != "merge_stopped" && info.Result != "merged" {
			a.Branch = info.Branch
		}
		if !opts.DryRun {
			if err := gcOne(ctx, st, r, a, info); err != nil {
				a.Error = err.Error()
			} else {
				a.Done = true
			}
		}
		actions = append(actions, a)
	}
	if opts.JSON {
		if actions == nil {
			actions = []gcAction{}
		}
		return writeJSON(f.IO.Out, map[string]any{"removed": actions, "dry_run": opts.DryRun})
	}
	if len(actions) == 0 {
		fmt.Fprintln(f.IO.ErrOut, "Nothing to clean up.")
		return nil
	}
	verb := "removed"
	if opts.DryRun {
		verb = "would remove"
	}
	var failed []string
	for _, a := range actions {
		what := a.Worktree
		if a.Branch != "" {
			what += " and branch " + a.Branch
		}
		if a.Error != "" {
			fmt.Fprintf(f.IO.ErrOut, "%s: could not remove %s: %s\n", a.RunID, what, a.Error)
			failed = append(failed, a.RunID)
			continue
		}
		fmt.Fprintf(f.IO.ErrOut, "%s: %s %s (%s)\n", a.RunID, verb, what, a.Reason)
	}
	if len(failed) > 0 {
		return fmt.Errorf("could not clean up %s", strings.Join(failed, ", "))
	}
	return nil
}

// gcOne removes one worktree (and branch), marking an abandoned run
// aborted first so that nobody resumes into a missing worktree.
func gcOne(ctx context.Context, st *store.Store, r store.Run, a gcAction, info runBranch) error {
	if r.ID != "" && !r.Status.Finished() && r.Node != flow.End {
		token := fmt.Sprintf("gc-%d", os.Getpid())
		if err := st.Acquire(ctx, r.ID, store.Lease{Token: token, PID: os.Getpid()}, time.Minute); err != nil {
			return err
		}
		now := time.Now()
		err := st.Checkpoint(ctx, store.Checkpoint{RunID: r.ID, Token: token, Node: r.Node, Next: r.Node,
			Status: store.StatusAborted, Steps: r.Steps, Visits: r.Visits, Error: "abandoned by azero runs gc",
			Outcome: "aborted", Started: now, Finished: now})
		st.Release(context.WithoutCancel(ctx), r.ID, token)
		if err != nil {
			return err
		}
	}
	repoDir := info.Repo
	if repoDir == "" {
		// The worktree knows its repository.
		out, err := (gitx.Repo{Dir: a.Worktree}).Run(ctx, "rev-parse", "--path-format=absolute", "--git-common-dir")
		if err == nil {
			repoDir = filepath.Dir(strings.TrimSpace(string(out)))
		}
	}
	if repoDir != "" {
		repo := gitx.Repo{Dir: repoDir}
		if err := repo.RemoveWorktree(ctx, a.Worktree); err != nil {
			return err
		}
		if a.Branch != "" {
			if err := repo.DeleteBranch(ctx, a.Branch, true); err != nil {
				return err
			}
		}
	}
	// What git did not know about (a repository deleted since) goes too.
	return os.RemoveAll(a.Worktree)
}
