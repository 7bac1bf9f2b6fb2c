package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/rundoc"
	"github.com/azero-dev/azero/internal/sandbox"
	"github.com/azero-dev/azero/internal/store"
)

// GCOptions say what GC removes.
type GCOptions struct {
	// All also abandons unfinished runs that no process is driving.
	All bool
	// DryRun says what would be removed, and removes nothing.
	DryRun bool
	// Engine is the engine chosen on the command line: the Temporal
	// cluster asked about the runs on Temporal this machine worked on.
	Engine EngineFlags
}

// GCReport is what GC did (or would do).
type GCReport struct {
	Removed []GCAction
	Refused []GCRefusal // runs not touched: their stored row does not verify
	Jails   []string    // sandbox jails of killed processes, removed
	// TemporalKept counts the worktrees of runs on Temporal that no
	// worker of this machine holds, kept because Temporal could not say
	// they are no longer the run's (TemporalWhy says why; All removes
	// them).
	TemporalKept int
	TemporalWhy  string
}

// Failed lists the runs GC could not clean up.
func (r GCReport) Failed() []string {
	var ids []string
	for _, a := range r.Removed {
		if a.Error != "" {
			ids = append(ids, a.RunID)
		}
	}
	return ids
}

// GCAction is one thing GC did (or would do).
type GCAction struct {
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

// GC removes (unless opts.DryRun) what ended or killed runs left behind:
// the worktrees of runs that have ended and of runs the store no longer
// knows, their branches unless they keep an approved commit, what a git
// killed with a run left (a stale lock, a half-made worktree; the run
// stays resumable), the build cache layers of ended runs, the sandbox
// jails of killed processes; with opts.All also unfinished runs nothing
// drives, which are marked aborted. It never touches a run being driven,
// a checkout, a path outside azero's worktrees directory, or a run whose
// stored row does not verify (refused, and recorded as run_forged). On a
// worker machine, a run on Temporal keeps its worktree while a worker of
// the machine holds it; otherwise Temporal (opts.Engine, else the user's
// [engine]) is asked whether the worktree is still the run's.
func GC(ctx context.Context, env *Env, opts GCOptions) (GCReport, error) {
	var rep GCReport
	stateDir, err := env.StateDir()
	if err != nil {
		return rep, err
	}
	st, err := env.Store(ctx)
	if err != nil {
		return rep, err
	}
	root := filepath.Join(stateDir, "worktrees")
	entries, err := os.ReadDir(root)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return rep, err
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
		return rep, err
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
		actions []GCAction
		refused []GCRefusal
	)
	known := map[string]bool{}
	temporalRuns := &gcTemporal{env: env, flags: opts.Engine}
	defer temporalRuns.close()
	for i := len(runs) - 1; i >= 0; i-- { // oldest first
		r := runs[i]
		known[r.ID] = true
		if r.Unverified != nil {
			if !errors.Is(r.Unverified, store.ErrRunForged) {
				// No key: no row verifies, and gc acts on none.
				return rep, r.Unverified
			}
			// Said on the output whether or not the audit log takes it.
			_ = env.reportForged(ctx, st, "gc", r.Unverified)
			refused = append(refused, GCRefusal{RunID: r.ID, Reason: r.Unverified.Error()})
			continue
		}
		info := branchOf(r)
		if info.Repo == "" && !folders[r.ID] {
			continue // azero made nothing on disk for it
		}
		a := GCAction{RunID: r.ID}
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
			a.Reason = "abandoned: " + string(rundoc.Status(st, r)) + " at " + r.Node
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
	rep.TemporalKept, rep.TemporalWhy = temporalRuns.kept()
	var orphans []string
	for id := range folders {
		if !known[id] {
			orphans = append(orphans, id)
		}
	}
	sort.Strings(orphans)
	for _, id := range orphans {
		a := GCAction{RunID: id, Worktree: filepath.Join(root, id), OnDisk: true, Reason: "no run with this id"}
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
		return rep, err
	}
	rep.Removed, rep.Refused = append(actions, caches...), refused
	if !opts.DryRun {
		// A jail lives as long as its process: one whose process is gone
		// was left by a kill, and nothing else can use it.
		if rep.Jails, err = sandbox.Sweep(filepath.Join(stateDir, "sandbox")); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// gcCaches finds (and unless a dry run removes) the build cache layers of
// runs that ended, of runs azero does not know, and with --all of
// unfinished runs nothing drives; never of a run whose row does not
// verify.
func gcCaches(stateDir string, runs []store.Run, st *store.Store, opts GCOptions) ([]GCAction, error) {
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
	var out []GCAction
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		a := GCAction{RunID: e.Name(), Caches: filepath.Join(root, e.Name())}
		r, known := byID[e.Name()]
		switch {
		case !known:
			a.Reason = "no run with this id"
		case r.Unverified != nil:
			continue // refused above
		case r.Status.Finished() || r.Node == flow.End:
			a.Reason = "the run has ended (" + string(r.Status) + ")"
		case opts.All && !st.LeaseLive(r):
			a.Reason = "abandoned: " + string(rundoc.Status(st, r)) + " at " + r.Node
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

// GCRefusal is a run gc did not touch because its stored row does not
// verify.
type GCRefusal struct {
	RunID  string `json:"run_id"`
	Reason string `json:"reason"`
}

// gcTemporal asks Temporal, once connected on first need, about the runs
// this machine's workers worked on.
type gcTemporal struct {
	env    *Env
	flags  EngineFlags
	tried  bool
	eng    Engine
	err    error // the connection's, or the last question's
	unsure int   // runs whose worktree was kept because Temporal could not say
}

// gone says why this machine's worktree of run r on Temporal is no longer
// the run's ("" when it may be: Temporal could not be asked, or names as
// the run's holder the worker that worked on it here).
func (g *gcTemporal) gone(ctx context.Context, r store.Run) (string, error) {
	if !g.tried {
		g.tried = true
		g.eng, g.err = g.connect(ctx)
	}
	asker, ok := g.eng.(interface {
		gone(ctx context.Context, runID, worker string) (string, error)
	})
	if !ok {
		g.unsure++
		return "", g.err
	}
	why, err := asker.gone(ctx, r.ID, r.Meta["worker"])
	if why == "" {
		g.unsure++
		if err != nil {
			g.err = err
		}
	}
	return why, err
}

// connect connects to the cluster the flags, else the user's [engine],
// name.
func (g *gcTemporal) connect(ctx context.Context) (Engine, error) {
	cfg, err := g.env.Config("")
	if err != nil {
		return nil, err
	}
	c, err := Choose(g.env, g.flags, cfg)
	if err != nil {
		return nil, err
	}
	if c.Kind != Temporal {
		return nil, errors.New("no Temporal cluster to ask: give --temporal HOST:PORT, or [engine] in the config")
	}
	return openTemporal(ctx, g.env, c, Catalog())
}

// kept says how many worktrees of runs on Temporal were kept because
// Temporal could not say they are no longer the run's, and why.
func (g *gcTemporal) kept() (int, string) {
	if g.unsure == 0 {
		return 0, ""
	}
	why := "Temporal names this machine's worker as their holder"
	if g.err != nil {
		why = g.err.Error()
	}
	return g.unsure, why
}

func (g *gcTemporal) close() {
	if g.eng != nil {
		g.eng.Close()
	}
}

// gcFind fills in what is left of a run: its worktree (a folder, git's
// registration, what an unfinished add left), its branch unless the run
// keeps it or does not own it ("" then), and a stale lock on the branch.
// a.Worktree is cleared when nothing of the worktree is left.
func gcFind(ctx context.Context, repos gcRepos, a *GCAction, repoDir, branch string, keep bool) error {
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
func gcOne(ctx context.Context, st *store.Store, r store.Run, a *GCAction, repo *gcRepo, root string) error {
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

// What lists what an action removes, in words.
func (a GCAction) What() []string {
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
