package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
)

func TestRunsGCRemovesWhatKilledRunsLeft(t *testing.T) {
	t.Parallel()
	repo, state := calcRepo(t), t.TempDir()
	before, beforeRefs := checkout(t, repo), refs(t, repo)
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
		Removed []gcAction `json:"removed"`
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
	if got := refs(t, repo); got != beforeRefs {
		t.Errorf("refs left:\n%s", got)
	}
	if checkout(t, repo) != before {
		t.Error("gc changed the checkout")
	}
	if res := runAzeroIn(t, state, repo, nil, "runs", "gc"); !strings.Contains(res.stderr, "Nothing to clean up") {
		t.Errorf("second gc:\n%s", res.stderr)
	}
}
