package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/runs"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
)

func TestRunsGCRemovesWhatKilledRunsLeft(t *testing.T) {
	t.Parallel()
	repo, state := calcRepo(t), t.TempDir()
	before, beforeRefs := testenv.Checkout(t, repo), testenv.Refs(t, repo)
	srv := newCoderServer(t, goodTests, goodCalc)
	hold := make(chan struct{})
	defer close(hold)
	srv.setHold(hold)
	env := []string{"OPENAI_BASE_URL=" + srv.URL + "/v1", "OPENAI_API_KEY=test-key-0123456789"}
	cmd := exec.Command(os.Args[0], "implement", "--lld", "docs/design.md", "--coder", "openai:gpt-4.1")
	cmd.Dir, cmd.Env = repo, azeroEnv(state, env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-srv.arrived:
	case <-time.After(testenv.Patience):
		t.Fatal("no model call")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	r := onlyRun(t, state)
	wt := filepath.Join(state, "worktrees", r.ID)
	if _, err := os.Stat(wt); err != nil {
		t.Fatalf("the killed run left no worktree: %v", err)
	}
	// An orphan: a worktree whose run the store does not know.
	orphan := filepath.Join(state, "worktrees", "000000-orphan")
	testenv.Git(t, repo, "worktree", "add", "-q", "-b", "azero/orphan", orphan)

	// By default a killed run is resumable and kept.
	res := runAzeroIn(t, state, repo, nil, "runs", "gc", "--json")
	if res.code != 0 {
		t.Fatalf("gc: exit %d\n%s", res.code, res.stderr)
	}
	var doc struct {
		Removed []runs.GCAction `json:"removed"`
	}
	json.Unmarshal([]byte(res.stdout), &doc)
	if len(doc.Removed) != 1 || doc.Removed[0].RunID != "000000-orphan" || !doc.Removed[0].Done {
		t.Fatalf("gc removed %+v, want only the orphan", doc.Removed)
	}
	if _, err := os.Stat(wt); err != nil {
		t.Fatal("gc removed a resumable run's worktree")
	}
	// --dry-run says what --all would do and does nothing.
	res = runAzeroIn(t, state, repo, nil, "runs", "gc", "--all", "--dry-run")
	if !strings.Contains(res.stderr, "would remove "+wt) {
		t.Errorf("dry run:\n%s", res.stderr)
	}
	if _, err := os.Stat(wt); err != nil {
		t.Fatal("--dry-run removed something")
	}
	res = runAzeroIn(t, state, repo, nil, "runs", "gc", "--all")
	if res.code != 0 || !strings.Contains(res.stderr, "abandoned") {
		t.Fatalf("gc --all: exit %d\n%s", res.code, res.stderr)
	}
	if _, err := os.Stat(wt); !os.IsNotExist(err) {
		t.Error("worktree still there")
	}
	if r := onlyRun(t, state); r.Status != store.StatusAborted {
		t.Errorf("abandoned run is %s", r.Status)
	}
	// The orphan's branch is not azero's to delete: its run is unknown.
	testenv.Git(t, repo, "branch", "-D", "azero/orphan")
	if got := testenv.Refs(t, repo); got != beforeRefs {
		t.Errorf("refs left:\n%s", got)
	}
	if testenv.Checkout(t, repo) != before {
		t.Error("gc changed the checkout")
	}
	if res := runAzeroIn(t, state, repo, nil, "runs", "gc"); !strings.Contains(res.stderr, "Nothing to clean up") {
		t.Errorf("second gc:\n%s", res.stderr)
	}
}

// gcRunState is what gc reads of an implementation run's state.
type gcRunState struct {
	Repo     string `json:"repo"`
	Branch   string `json:"branch"`
	Worktree string `json:"worktree"`
	Result   string `json:"result,omitempty"`
}

// putRun records an implementation run in the state directory's store, as
// implement would have left it, and returns its id and worktree path.
func putRun(t *testing.T, state string, status store.Status, node, repo, branch, result string) (id, wt string) {
	t.Helper()
	st := openStore(t, state)
	defer st.Close()
	id = store.NewID(time.Now())
	wt = filepath.Join(state, "worktrees", id)
	raw, _ := json.Marshal(gcRunState{Repo: repo, Branch: branch, Worktree: wt, Result: result})
	if err := st.CreateRun(t.Context(), store.Run{ID: id, Workflow: "implement", Node: node, Status: status, State: raw}); err != nil {
		t.Fatal(err)
	}
	return id, wt
}

func runStatus(t *testing.T, state, id string) store.Status {
	t.Helper()
	return runByID(t, state, id).Status
}

// gcJSON runs `azero runs gc --json` with args and decodes what it did.
func gcJSON(t *testing.T, state, dir string, args ...string) []runs.GCAction {
	t.Helper()
	res := runAzeroIn(t, state, dir, nil, append([]string{"runs", "gc", "--json"}, args...)...)
	if res.code != 0 {
		t.Fatalf("gc %v: exit %d\n%s", args, res.code, res.stderr)
	}
	var doc struct {
		Removed []runs.GCAction `json:"removed"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		t.Fatalf("gc --json: %v\n%s", err, res.stdout)
	}
	return doc.Removed
}

func branchExists(t *testing.T, repo, branch string) bool {
	t.Helper()
	return strings.TrimSpace(testenv.Git(t, repo, "branch", "--list", branch)) != ""
}

func TestRunsGCWhenTheRepositoryIsGone(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	parent := t.TempDir()
	repo := filepath.Join(parent, "project")
	os.MkdirAll(repo, 0o755)
	testenv.Git(t, repo, "init", "-q", "-b", "main")
	testenv.Git(t, repo, "commit", "-q", "--allow-empty", "-m", "init")
	ended, endedWT := putRun(t, state, store.StatusDone, "end", repo, "azero/1-gone", "")
	killed, killedWT := putRun(t, state, store.StatusRunning, "red", repo, "azero/2-gone", "")
	testenv.Git(t, repo, "worktree", "add", "-q", "-b", "azero/1-gone", endedWT)
	testenv.Git(t, repo, "worktree", "add", "-q", "-b", "azero/2-gone", killedWT)
	os.RemoveAll(repo) // the user deleted the project

	got := gcJSON(t, state, parent, "--all")
	if len(got) != 2 {
		t.Fatalf("gc did %+v, want both runs cleaned", got)
	}
	for _, a := range got {
		if !a.Done || a.Error != "" || !a.RepositoryGone {
			t.Errorf("%s: %+v, want done with the repository gone", a.RunID, a)
		}
	}
	for _, wt := range []string{endedWT, killedWT} {
		if _, err := os.Stat(wt); !os.IsNotExist(err) {
			t.Errorf("%s still there", wt)
		}
	}
	if s := runStatus(t, state, killed); s != store.StatusAborted {
		t.Errorf("abandoned run is %s", s)
	}
	if s := runStatus(t, state, ended); s != store.StatusDone {
		t.Errorf("ended run became %s", s)
	}
	res := runAzeroIn(t, state, parent, nil, "runs", "gc", "--all")
	if res.code != 0 || !strings.Contains(res.stderr, "Nothing to clean up") || strings.Contains(res.stderr, "not installed") {
		t.Errorf("second gc: exit %d\n%s", res.code, res.stderr)
	}
}

func TestRunsGCWhenTheWorktreeFolderWasDeletedByHand(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	repo := testenv.NewRepo(t, map[string]string{"a.txt": "a\n"})
	beforeRefs := testenv.Refs(t, repo)
	_, failedWT := putRun(t, state, store.StatusAborted, "cleanup", repo, "azero/3-rejected", "rejected")
	_, keptWT := putRun(t, state, store.StatusDone, "end", repo, "azero/4-stopped", "merge_stopped")
	for wt, branch := range map[string]string{failedWT: "azero/3-rejected", keptWT: "azero/4-stopped"} {
		testenv.Git(t, repo, "worktree", "add", "-q", "-b", branch, wt)
		os.RemoveAll(wt) // by hand
	}

	res := runAzeroIn(t, state, repo, nil, "runs", "gc")
	if res.code != 0 || strings.Contains(res.stderr, "Nothing to clean up") {
		t.Fatalf("gc: exit %d\n%s", res.code, res.stderr)
	}
	if !strings.Contains(res.stderr, "its folder was deleted") {
		t.Errorf("gc does not say what it removed:\n%s", res.stderr)
	}
	if wts := testenv.Git(t, repo, "worktree", "list", "--porcelain"); strings.Contains(wts, "prunable") || strings.Contains(wts, state) {
		t.Errorf("worktrees left:\n%s", wts)
	}
	if branchExists(t, repo, "azero/3-rejected") {
		t.Error("the rejected run's branch is left")
	}
	// A merge that stopped keeps its approved commit's branch for the user.
	if !branchExists(t, repo, "azero/4-stopped") {
		t.Error("the branch of a stopped merge was deleted")
	}
	testenv.Git(t, repo, "branch", "-D", "azero/4-stopped")
	if got := testenv.Refs(t, repo); got != beforeRefs {
		t.Errorf("refs left:\n%s", got)
	}
	if res := runAzeroIn(t, state, repo, nil, "runs", "gc"); !strings.Contains(res.stderr, "Nothing to clean up") {
		t.Errorf("second gc:\n%s", res.stderr)
	}
}

// TestRunsGCNeverDeletesABranchANewerRunUses: a branch name comes back
// when a later run of the same issue starts after the first cleaned up.
func TestRunsGCNeverDeletesABranchANewerRunUses(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	repo := testenv.NewRepo(t, map[string]string{"a.txt": "a\n"})
	putRun(t, state, store.StatusDone, "end", repo, "azero/5-again", "rejected")
	time.Sleep(10 * time.Millisecond) // created_at orders runs
	newer, newerWT := putRun(t, state, store.StatusWaiting, "diff_gate", repo, "azero/5-again", "")
	testenv.Git(t, repo, "worktree", "add", "-q", "-b", "azero/5-again", newerWT)

	if got := gcJSON(t, state, repo); len(got) != 0 {
		t.Fatalf("gc removed %+v, want nothing: the branch is the waiting run's", got)
	}
	if !branchExists(t, repo, "azero/5-again") {
		t.Fatal("the waiting run's branch was deleted")
	}
	// With --all the waiting run is abandoned, and its branch goes.
	got := gcJSON(t, state, repo, "--all")
	if len(got) != 1 || got[0].RunID != newer || got[0].Branch != "azero/5-again" || !got[0].Done {
		t.Fatalf("gc --all = %+v", got)
	}
	if branchExists(t, repo, "azero/5-again") {
		t.Error("branch left")
	}
}

// killGitTree kills pid and every process below it, children first (a
// power cut: nothing is finished or cleaned up).
func killGitTree(pid int) {
	parent := map[int]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) > 1 {
			parent[p], _ = strconv.Atoi(fields[1])
		}
	}
	tree := []int{pid}
	for changed := true; changed; {
		changed = false
		for p, pp := range parent {
			if slices.Contains(tree, pp) && !slices.Contains(tree, p) {
				tree, changed = append(tree, p), true
			}
		}
	}
	for _, p := range tree {
		syscall.Kill(p, syscall.SIGSTOP)
	}
	for i := len(tree) - 1; i >= 0; i-- {
		syscall.Kill(tree[i], syscall.SIGKILL)
	}
}

// killWorktreeAdd starts `git worktree add -b branch wt` with MARK=mark
// in its environment and kills it, with every git it started, once marker
// exists.
func killWorktreeAdd(t *testing.T, repo, branch, wt, mark, marker string) {
	t.Helper()
	cmd := exec.Command("git", "worktree", "add", "-q", "-b", branch, wt)
	cmd.Dir = repo
	cmd.Env = append(testenv.GitEnv(os.Environ()), "MARK="+mark)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(testenv.Patience)
	for {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			killGitTree(cmd.Process.Pid)
			cmd.Wait()
			t.Fatalf("git never reached %s", marker)
		}
		time.Sleep(5 * time.Millisecond)
	}
	killGitTree(cmd.Process.Pid)
	cmd.Wait()
}

// TestRunsGCCleansWhatKilledGitsLeft kills real `git worktree add`
// processes of two dead runs: one while it holds the branch's ref lock
// (in the reference-transaction hook), one halfway through its checkout
// (in a smudge filter). gc --all removes the stale lock and the half-made
// worktree.
func TestRunsGCCleansWhatKilledGitsLeft(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	state := t.TempDir()
	files := map[string]string{".gitattributes": "m.txt filter=pause\n"}
	for c := 'a'; c <= 'z'; c++ {
		files[string(c)+".txt"] = string(c) + "\n"
	}
	repo := testenv.NewRepo(t, files)
	beforeRefs := testenv.Refs(t, repo)
	testenv.Git(t, repo, "config", "filter.pause.clean", "cat")
	testenv.Git(t, repo, "config", "filter.pause.smudge", `sh -c 'if [ -n "$MARK" ] && [ ! -e "$MARK.smudge" ]; then : > "$MARK.smudge"; exec sleep 600; fi; cat'`)
	hook := filepath.Join(repo, ".git", "hooks", "reference-transaction")
	os.WriteFile(hook, []byte(`#!/bin/sh
[ "$1" = prepared ] || exit 0
if grep -q refs/heads/azero/6- && [ ! -e "$MARK.lock" ]; then : > "$MARK.lock"; exec sleep 600; fi
`), 0o755)

	locked, lockedWT := putRun(t, state, store.StatusRunning, "worktree", repo, "azero/6-locked", "")
	half, halfWT := putRun(t, state, store.StatusRunning, "worktree", repo, "azero/7-half", "")
	marker := filepath.Join(t.TempDir(), "reached")
	killWorktreeAdd(t, repo, "azero/6-locked", lockedWT, marker, marker+".lock")
	killWorktreeAdd(t, repo, "azero/7-half", halfWT, marker, marker+".smudge")
	os.Remove(hook)
	lock := filepath.Join(repo, ".git", "refs", "heads", "azero", "6-locked.lock")
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("the kill left no ref lock: %v", err)
	}
	if wts := testenv.Git(t, repo, "worktree", "list", "--porcelain"); !strings.Contains(wts, "locked") {
		t.Fatalf("the kill left no half-made worktree:\n%s", wts)
	}

	// Both runs are resumable: plain gc keeps them, and their branches,
	// but removes what the killed gits left (their resume would have to
	// repair it).
	byID := map[string]runs.GCAction{}
	for _, a := range gcJSON(t, state, repo) {
		byID[a.RunID] = a
	}
	if a := byID[locked]; !a.Done || !a.StaleLock || a.Branch != "" {
		t.Errorf("locked run: %+v, want only its stale lock removed", a)
	}
	if a := byID[half]; !a.Done || !a.Unfinished || a.Branch != "" || a.Worktree != halfWT {
		t.Errorf("half-made run: %+v, want only its half-made worktree removed", a)
	}
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Error("the stale lock is still there")
	}
	for _, wt := range []string{lockedWT, halfWT} {
		if _, err := os.Stat(wt); !os.IsNotExist(err) {
			t.Errorf("%s still there", wt)
		}
	}
	if admins, _ := os.ReadDir(filepath.Join(repo, ".git", "worktrees")); len(admins) != 0 {
		t.Errorf("administrative directories left: %v", admins)
	}
	if !branchExists(t, repo, "azero/7-half") {
		t.Error("the resumable run's branch was deleted")
	}
	for _, id := range []string{locked, half} {
		if r := runByID(t, state, id); r.Status != store.StatusRunning {
			t.Errorf("run %s is %s: plain gc abandoned a resumable run", id, r.Status)
		}
	}
	if got := gcJSON(t, state, repo); len(got) != 0 {
		t.Errorf("a second gc removed %+v", got)
	}
	// With --all the runs are abandoned, and the branch goes.
	got := gcJSON(t, state, repo, "--all")
	if len(got) != 1 || got[0].RunID != half || got[0].Branch != "azero/7-half" || !got[0].Done {
		t.Errorf("gc --all = %+v, want the half-made run's branch removed", got)
	}
	if got := testenv.Refs(t, repo); got != beforeRefs {
		t.Errorf("refs left:\n%s", got)
	}
	// The branch can be made again: nothing blocks it.
	testenv.Git(t, repo, "branch", "azero/6-locked")
}

// openStore opens the store of the state directory; the caller closes it.
func openStore(t *testing.T, state string) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), filepath.Join(state, store.FileName), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// runByID reads one run from the state directory's store.
func runByID(t *testing.T, state, id string) store.Run {
	t.Helper()
	st := openStore(t, state)
	defer st.Close()
	r, err := st.GetRun(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
