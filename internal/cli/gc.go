package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/sandbox"
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
			return gcRun(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.All, "all", false, "also abandon unfinished runs that no process is driving")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "say what would be removed, remove nothing")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print as JSON")
	addEngineFlags(cmd, f)
	return cmd
}

// gcAction is one thing gc did (or would do).
type gcAction struct {
	RunID          string `json:"run_id"`
	Worktree       string `json:"worktree,omitempty"`
	Branch         string `json:"branch,omitempty"`
	Caches         string `json:"build_caches,omitempty"`        // the run's build cache layer
	StaleLock      bool   `json:"stale_lock,omitempty"`          // a lock left on the branch's ref by a killed git
	Unfinished     bool   `json:"unfinished_worktree,omitempty"` // what a killed `git worktree add` left
	lockOf         string // the branch whose lock is stale
	resumable      bool   // the run stays resumable: only a killed git's leftovers go
	Registered     bool   `json:"-"`                         // git still lists the worktree
	OnDisk         bool   `json:"-"`                         // its folder exists
	RepositoryGone bool   `json:"repository_gone,omitempty"` // the run's repository was deleted or moved
	Reason         string `json:"reason"`
	Done           bool   `json:"done"`
	Error          string `json:"error,omitempty"`
	// OnTemporal: a worker's worktree of a run on Temporal, which goes on
	// elsewhere or has ended there: only the worktree is this machine's.
	OnTemporal bool `json:"on_temporal,omitempty"`
}

// runBranch reads the parts of an implementation run's state gc needs.
type runBranch struct {
	Repo     string `json:"repo"`
	Branch   string `json:"branch"`
	Worktree string `json:"worktree"`
	Result   string `json:"result"`
	Commit   string `json:"commit"`
}

// branchOf reads where an implementation run works. A state that does
// not decode (another workflow, a newer azero) names no branch: gc then
// removes the worktree and leaves branches alone.
func branchOf(r store.Run) runBranch {
	var info runBranch
	if err := json.Unmarshal(r.State, &info); err != nil || !filepath.IsAbs(info.Repo) {
		// Not a checkout (the issue workflow's repo is OWNER/NAME).
		return runBranch{}
	}
	return info
}

// keepsBranch reports whether a run leaves its branch for the user: it
// holds an approved commit (merged, or waiting to be merged).
func (i runBranch) keepsBranch() bool {
	return i.Result == "merge_stopped" || i.Result == "merged" || i.Commit != ""
}

// gcRepo is one repository as gc found it, read once for all its runs.
type gcRepo struct {
	repo gitx.Repo
	snap *gitx.Snapshot
	gone bool // deleted, moved, or no longer a repository
}

// gcRepos opens each repository once.
type gcRepos map[string]*gcRepo

func (rs gcRepos) open(ctx context.Context, dir string) (*gcRepo, error) {
	if r, ok := rs[dir]; ok {
		return r, nil
	}
	r := &gcRepo{repo: gitx.Repo{Dir: dir}}
	top, err := gitx.TopLevel(ctx, dir)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, gitx.ErrNotRepository):
		r.gone = true
	case err != nil:
		return nil, err
	case !sameDir(top, dir):
		// Another repository holds the path now (the run's own was
		// deleted inside it): nothing of the run is there.
		r.gone = true
	default:
		if r.snap, err = r.repo.Snapshot(ctx); err != nil {
			return nil, err
		}
	}
	rs[dir] = r
	return r, nil
}

func sameDir(a, b string) bool {
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	return errA == nil && errB == nil && ra == rb
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
	root := filepath.Join(stateDir, "worktrees")
	entries, err := os.ReadDir(root)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	folders := map[string]bool{}
	for _, e := range entries {
		if e.IsDir() {
			folders[e.Name()] = true
		}
	}
	// The runs whose row does not verify are read too, only so that
	// nothing of theirs is taken for another's or for an orphan's.
	runs, err := st.ListRuns(ctx, store.Filter{Unverified: true})
	if err != nil {
		return err
	}
	// A branch name can come back: a run's branch is deleted when it
	// ends, and a later run may take the name. Only the newest run naming
	// a branch in a repository may delete it. A forged row may claim to be
	// the newest: that only keeps a branch.
	owner := map[string]string{}
	for _, r := range runs { // newest first
		if info := branchOf(r); info.Branch != "" {
			key := info.Repo + "\x00" + info.Branch
			if _, ok := owner[key]; !ok {
				owner[key] = r.ID
			}
		}
	}
	repos := gcRepos{}
	var (
		actions []gcAction
		refused []gcRefusal
	)
	known := map[string]bool{}
	temporalRuns := &gcTemporal{f: f}
	defer temporalRuns.close()
	for i := len(runs) - 1; i >= 0; i-- { // oldest first
		r := runs[i]
		known[r.ID] = true
		if r.Unverified != nil {
			if !errors.Is(r.Unverified, store.ErrRunForged) {
				// No key: no row verifies, and gc acts on none.
				return r.Unverified
			}
			// Said on the output whether or not the audit log takes it.
			_ = f.reportForged(ctx, st, "gc", r.Unverified)
			refused = append(refused, gcRefusal{RunID: r.ID, Reason: r.Unverified.Error()})
			continue
		}
		info := branchOf(r)
		if info.Repo == "" && !folders[r.ID] {
			continue // azero made nothing on disk for it
		}
		a := gcAction{RunID: r.ID}
		switch {
		case runOnTemporal(r.Meta) && !r.Status.Finished() && st.LeaseLive(r):
			// A run on Temporal a worker of this machine holds: its
			// worktree is the run's.
			continue
		case runOnTemporal(r.Meta) && !r.Status.Finished():
			// No worker of this machine holds it (killed, or the run moved
			// away): Temporal says whether the worktree here is still the
			// run's. Its branch is the run's wherever it goes.
			why, err := temporalRuns.gone(ctx, r)
			switch {
			case why != "":
				a.Reason = why
			case opts.All && err != nil:
				a.Reason = "no worker of this machine holds the run on Temporal, which could not be asked: " + err.Error()
			case opts.All:
				a.Reason = "no worker of this machine holds the run on Temporal (--all)"
			default:
				continue
			}
			a.OnTemporal = true
		case r.Status.Finished() || r.Node == flow.End:
			a.Reason = "the run has ended (" + string(r.Status) + ")"
		case st.LeaseLive(r):
			continue // being driven right now
		case opts.All:
			a.Reason = "abandoned: " + string(effectiveStatus(st, r)) + " at " + r.Node
		default:
			// Resumable: kept unless --all, but not what a killed git left
			// of it (a stale lock on its branch, a half-made worktree),
			// which its resume would have to repair anyway.
			a.Reason, a.resumable = "left by a git killed with the run, which stays resumable", true
		}
		a.Worktree = info.Worktree
		if a.Worktree == "" {
			a.Worktree = filepath.Join(root, r.ID)
		}
		if own := filepath.Join(root, r.ID); filepath.Clean(a.Worktree) != own {
			// azero makes a run's worktree there and nowhere else: a path
			// elsewhere is not the run's to remove, whatever its row says.
			if a.resumable {
				continue // its resume will say what is wrong
			}
			a.Error = fmt.Sprintf("azero makes a run's worktree in %s, and removes none elsewhere", own)
			actions = append(actions, a)
			continue
		}
		branch := ""
		if info.Branch != "" && owner[info.Repo+"\x00"+info.Branch] == r.ID {
			branch = info.Branch
		}
		if err := gcFind(ctx, repos, &a, info.Repo, branch, info.keepsBranch() || a.resumable || a.OnTemporal); err != nil {
			if a.resumable {
				continue // its resume will say what is wrong with its repository
			}
			a.Error = err.Error()
			actions = append(actions, a)
			continue
		}
		if a.resumable && !a.Unfinished {
			a.Worktree = "" // a complete worktree is the run's work
		}
		if a.Worktree == "" && a.Branch == "" && !a.StaleLock {
			continue // nothing left: the run cleaned up after itself
		}
		if !opts.DryRun {
			if err := gcOne(ctx, st, r, &a, repos[info.Repo], root); err != nil {
				a.Error = err.Error()
			} else {
				a.Done = true
			}
		}
		actions = append(actions, a)
	}
	temporalRuns.note(f, opts)
	var orphans []string
	for id := range folders {
		if !known[id] {
			orphans = append(orphans, id)
		}
	}
	sort.Strings(orphans)
	for _, id := range orphans {
		a := gcAction{RunID: id, Worktree: filepath.Join(root, id), OnDisk: true, Reason: "no run with this id"}
		if !opts.DryRun {
			if err := gcOrphan(ctx, a.Worktree, root); err != nil {
				a.Error = err.Error()
			} else {
				a.Done = true
			}
		}
		actions = append(actions, a)
	}
	caches, err := gcCaches(stateDir, runs, st, opts)
	if err != nil {
		return err
	}
	actions = append(actions, caches...)
	var jails []string
	if !opts.DryRun {
		// A jail lives as long as its process: one whose process is gone
		// was left by a kill, and nothing else can use it.
		if jails, err = sandbox.Sweep(filepath.Join(stateDir, "sandbox")); err != nil {
			return err
		}
	}
	return gcReport(f, opts, actions, refused, jails)
}

// gcCaches finds (and unless a dry run removes) the build cache layers of
// runs that ended, of runs azero does not know, and with --all of
// unfinished runs nothing drives; never of a run whose row does not
// verify.
func gcCaches(stateDir string, runs []store.Run, st *store.Store, opts *GCOptions) ([]gcAction, error) {
	root := filepath.Join(stateDir, "sandbox", "cache")
	ents, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	byID := map[string]store.Run{}
	for _, r := range runs {
		byID[r.ID] = r
	}
	var out []gcAction
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		a := gcAction{RunID: e.Name(), Caches: filepath.Join(root, e.Name())}
		r, known := byID[e.Name()]
		switch {
		case !known:
			a.Reason = "no run with this id"
		case r.Unverified != nil:
			continue // refused above
		case r.Status.Finished() || r.Node == flow.End:
			a.Reason = "the run has ended (" + string(r.Status) + ")"
		case opts.All && !st.LeaseLive(r):
			a.Reason = "abandoned: " + string(effectiveStatus(st, r)) + " at " + r.Node
		default:
			continue // the run's own, while it may go on
		}
		if !opts.DryRun {
			if err := os.RemoveAll(a.Caches); err != nil {
				a.Error = err.Error()
			} else {
				a.Done = true
			}
		}
		out = append(out, a)
	}
	return out, nil
}

// gcRefusal is a run gc did not touch because its stored row does not
// verify.
type gcRefusal struct {
	RunID  string `json:"run_id"`
	Reason string `json:"reason"`
}

// gcTemporal asks Temporal, once connected on first need, about the runs
// this machine's workers worked on.
type gcTemporal struct {
	f      *Factory
	tried  bool
	te     *temporalEngine
	err    error // the connection's, or the last question's
	unsure int   // runs whose worktree was kept because Temporal could not say
}

// gone says why this machine's worktree of run r on Temporal is no longer
// the run's ("" when it may be: Temporal could not be asked, or names as
// the run's holder the worker that worked on it here).
func (g *gcTemporal) gone(ctx context.Context, r store.Run) (string, error) {
	if !g.tried {
		g.tried = true
		g.te, g.err = g.f.temporalEngine(ctx, "")
		if g.te == nil && g.err == nil {
			g.err = errors.New("no Temporal cluster to ask: give --temporal HOST:PORT, or [engine] in the config")
		}
	}
	if g.te == nil {
		g.unsure++
		return "", g.err
	}
	why, err := temporalRunGone(ctx, g.te, r.ID, r.Meta["worker"])
	if why == "" {
		g.unsure++
		if err != nil {
			g.err = err
		}
	}
	return why, err
}

// note says, once, that worktrees of runs on Temporal were kept.
func (g *gcTemporal) note(f *Factory, opts *GCOptions) {
	if g.unsure == 0 || opts.All || opts.JSON {
		return
	}
	why := "Temporal names this machine's worker as their holder"
	if g.err != nil {
		why = g.err.Error()
	}
	fmt.Fprintf(f.IO.ErrOut, "azero: kept the worktrees of %d run(s) on Temporal that no worker of this machine holds (%s); --all removes them\n", g.unsure, why)
}

func (g *gcTemporal) close() {
	if g.te != nil {
		g.te.Close()
	}
}

// gcFind fills in what is left of a run: its worktree (a folder, git's
// registration, what an unfinished add left), its branch unless the run
// keeps it or does not own it ("" then), and a stale lock on the branch.
// a.Worktree is cleared when nothing of the worktree is left.
func gcFind(ctx context.Context, repos gcRepos, a *gcAction, repoDir, branch string, keep bool) error {
	_, statErr := os.Lstat(a.Worktree)
	a.OnDisk = statErr == nil
	var r *gcRepo
	if repoDir != "" {
		var err error
		if r, err = repos.open(ctx, repoDir); err != nil {
			return err
		}
	}
	if r == nil || r.gone {
		a.RepositoryGone = r != nil
		if !a.OnDisk {
			a.Worktree = ""
		}
		return nil
	}
	left, err := r.snap.Leftovers(a.Worktree, branch)
	if err != nil {
		return err
	}
	a.Registered, a.Unfinished = left.Registered, left.Unfinished
	if !left.Worktree() {
		a.Worktree = ""
	}
	if left.Branch && !keep {
		a.Branch = branch
	}
	a.StaleLock, a.lockOf = left.BranchLock, branch
	return nil
}

// gcOne removes what is left of one run, marking an abandoned run aborted
// first so that nobody resumes into a missing worktree.
func gcOne(ctx context.Context, st *store.Store, r store.Run, a *gcAction, repo *gcRepo, root string) error {
	if !r.Status.Finished() && r.Node != flow.End && !a.resumable && !a.OnTemporal {
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
	switch {
	case repo == nil && a.Worktree != "":
		// A state that names no repository: the worktree knows its own.
		return gcOrphan(ctx, a.Worktree, root)
	case repo == nil || repo.gone:
		// The registration lived in the repository, which is gone.
		if a.Worktree != "" {
			return os.RemoveAll(a.Worktree)
		}
		return nil
	}
	if a.Worktree != "" {
		if err := removeWorktree(ctx, repo.repo, a.Worktree, root); err != nil {
			return err
		}
	}
	if a.Branch != "" {
		// DeleteBranch removes a stale lock of the branch first.
		return repo.repo.DeleteBranch(ctx, a.Branch, true)
	}
	if a.StaleLock {
		// The branch stays (its run kept it), but not the lock.
		if _, err := repo.repo.RemoveStaleBranchLock(ctx, a.lockOf); err != nil {
			return err
		}
	}
	return nil
}

// removeWorktree removes a worktree and its registration. A folder in
// azero's own worktrees directory goes even when git no longer knows it.
func removeWorktree(ctx context.Context, repo gitx.Repo, path, root string) error {
	err := repo.RemoveWorktree(ctx, path)
	if err == nil || filepath.Dir(path) != root {
		return err
	}
	if err := os.RemoveAll(path); err != nil {
		return err
	}
	return repo.RemoveWorktree(ctx, path)
}

// gcOrphan removes a folder of azero's worktrees directory that no run
// names, with the registration its repository (named by its .git file)
// keeps of it. Its branch is not azero's to delete: its run is unknown.
func gcOrphan(ctx context.Context, path, root string) error {
	if common := gitx.CommonDirOf(path); common != "" {
		if _, err := os.Stat(common); err == nil {
			return removeWorktree(ctx, gitx.Repo{Dir: common}, path, root)
		}
	}
	return os.RemoveAll(path)
}

func gcReport(f *Factory, opts *GCOptions, actions []gcAction, refused []gcRefusal, jails []string) error {
	var failed []string
	for _, a := range actions {
		if a.Error != "" {
			failed = append(failed, a.RunID)
		}
	}
	var err error
	if len(failed) > 0 {
		err = fmt.Errorf("could not clean up %s", strings.Join(failed, ", "))
	}
	if opts.JSON {
		if actions == nil {
			actions = []gcAction{}
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
		if werr := writeJSON(f.IO.Out, doc); werr != nil {
			return errors.Join(err, werr)
		}
		return err
	}
	for _, r := range refused {
		fmt.Fprintf(f.IO.ErrOut, "%s: not touched: %s\n", r.RunID, r.Reason)
	}
	if len(jails) > 0 {
		fmt.Fprintf(f.IO.ErrOut, "removed %d sandbox jail(s) left by processes that were killed\n", len(jails))
	}
	if len(actions) == 0 {
		if len(refused) == 0 && len(jails) == 0 {
			fmt.Fprintln(f.IO.ErrOut, "Nothing to clean up.")
		}
		return nil
	}
	verb := "removed"
	if opts.DryRun {
		verb = "would remove"
	}
	for _, a := range actions {
		what := strings.Join(a.what(), ", ")
		if a.Error != "" {
			fmt.Fprintf(f.IO.ErrOut, "%s: could not remove %s: %s\n", a.RunID, what, a.Error)
			continue
		}
		fmt.Fprintf(f.IO.ErrOut, "%s: %s %s (%s)\n", a.RunID, verb, what, a.Reason)
	}
	return err
}

// what lists what an action removes, in words.
func (a gcAction) what() []string {
	var out []string
	switch {
	case a.Worktree == "":
	case a.Unfinished:
		out = append(out, "half-made worktree "+a.Worktree)
	case a.OnDisk || a.RepositoryGone:
		out = append(out, a.Worktree)
	default:
		out = append(out, "the registration of "+a.Worktree+" (its folder was deleted)")
	}
	if a.Branch != "" {
		out = append(out, "branch "+a.Branch)
	}
	if a.Caches != "" {
		out = append(out, "build cache layer "+a.Caches)
	}
	if a.StaleLock {
		out = append(out, "a stale lock on the branch")
	}
	if a.RepositoryGone {
		out = append(out, "(its repository is gone)")
	}
	if len(out) == 0 {
		out = append(out, "nothing")
	}
	return out
}
