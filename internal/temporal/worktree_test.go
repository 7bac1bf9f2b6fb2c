package temporal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/testenv"
)

// A worktree's uncommitted work (modified, deleted and untracked files)
// survives a move to another worker's directory, and the branch is never
// written.
func TestRelocateRestoresTheWorktreeFromItsSnapshot(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "git")
	ctx := t.Context()
	repo := testenv.NewRepo(t, map[string]string{"a.go": "package a\n", "gone.txt": "delete me\n", ".gitignore": "*.log\n"})
	base := strings.TrimSpace(testenv.Git(t, repo, "rev-parse", "HEAD"))
	oldDir := filepath.Join(t.TempDir(), "worktrees", "run1")
	if err := (gitx.Repo{Dir: repo}).AddWorktree(ctx, oldDir, "azero/1-x", base); err != nil {
		t.Fatal(err)
	}
	testenv.WriteFiles(t, oldDir, map[string]string{"a.go": "package a\n\nfunc A() {}\n", "new_test.go": "package a\n", "build.log": "ignored\n"})
	if err := os.Remove(filepath.Join(oldDir, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	statusBefore := testenv.Git(t, oldDir, "status", "--porcelain")
	if err := Snapshot(ctx, repo, oldDir, "run1"); err != nil {
		t.Fatal(err)
	}
	if got := testenv.Git(t, oldDir, "status", "--porcelain"); got != statusBefore {
		t.Fatalf("snapshotting changed the worktree's status:\n%s\nwas\n%s", got, statusBefore)
	}

	newDir := filepath.Join(t.TempDir(), "worktrees", "run1")
	path := oldDir
	wt := &Worktree{Repo: repo, Branch: "azero/1-x", Base: base, Dir: &path}
	if err := Relocate(ctx, wt, newDir, "run1"); err != nil {
		t.Fatal(err)
	}
	if path != newDir {
		t.Errorf("the state's worktree path is %s, want %s", path, newDir)
	}
	if got := testenv.Git(t, newDir, "status", "--porcelain"); got != statusBefore {
		t.Errorf("the moved worktree's status:\n%s\nwant\n%s", got, statusBefore)
	}
	for name, want := range map[string]string{"a.go": "package a\n\nfunc A() {}\n", "new_test.go": "package a\n"} {
		if b, err := os.ReadFile(filepath.Join(newDir, name)); err != nil || string(b) != want {
			t.Errorf("%s = %q (%v), want %q", name, b, err, want)
		}
	}
	for _, name := range []string{"gone.txt", "build.log"} {
		if _, err := os.Stat(filepath.Join(newDir, name)); !os.IsNotExist(err) {
			t.Errorf("%s should not be in the moved worktree (deleted, or ignored): %v", name, err)
		}
	}
	if _, err := os.Stat(oldDir); !os.IsNotExist(err) {
		t.Errorf("the old worktree should be gone: %v", err)
	}
	if tip := strings.TrimSpace(testenv.Git(t, repo, "rev-parse", "refs/heads/azero/1-x")); tip != base {
		t.Errorf("the branch moved to %s; the engine must never write it", tip)
	}

	// Once the run's worktree is cleaned up, its snapshot goes too, and a
	// later move only changes the path.
	if err := (gitx.Repo{Dir: repo}).RemoveWorktree(ctx, newDir); err != nil {
		t.Fatal(err)
	}
	if err := Snapshot(ctx, repo, newDir, "run1"); err != nil {
		t.Fatal(err)
	}
	if refs := testenv.Git(t, repo, "for-each-ref", "refs/azero/"); strings.TrimSpace(refs) != "" {
		t.Fatalf("the snapshot of a cleaned-up worktree should be deleted, got %s", refs)
	}
	third := filepath.Join(t.TempDir(), "run1")
	if err := Relocate(ctx, wt, third, "run1"); err != nil {
		t.Fatal(err)
	}
	if path != third {
		t.Errorf("path = %s", path)
	}
	if _, err := os.Stat(third); !os.IsNotExist(err) {
		t.Errorf("a run without a snapshot must not get a worktree back: %v", err)
	}
}

// A worker that died after its step changed the branch, before the step
// ended with a snapshot: a commit of exactly the snapshot's files (the
// run committing its work) is carried on, the worktree recreated at the
// commit; a deleted branch (the run cleaning up) leaves nothing to bring
// back.
func TestRelocateCarriesOnTheRunsOwnBranchChanges(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "git")
	ctx := t.Context()
	repo := testenv.NewRepo(t, map[string]string{"a.go": "package a\n"})
	base := strings.TrimSpace(testenv.Git(t, repo, "rev-parse", "HEAD"))
	dir := filepath.Join(t.TempDir(), "run3")
	if err := (gitx.Repo{Dir: repo}).AddWorktree(ctx, dir, "azero/3-z", base); err != nil {
		t.Fatal(err)
	}
	testenv.WriteFiles(t, dir, map[string]string{"a.go": "package a // done\n", "a_test.go": "package a\n"})
	if err := Snapshot(ctx, repo, dir, "run3"); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, dir, "add", "-A")
	testenv.Git(t, dir, "commit", "-qm", "the run's commit")
	commit := strings.TrimSpace(testenv.Git(t, dir, "rev-parse", "HEAD"))

	path := dir
	wt := &Worktree{Repo: repo, Branch: "azero/3-z", Base: base, Dir: &path}
	moved := filepath.Join(t.TempDir(), "run3")
	if err := Relocate(ctx, wt, moved, "run3"); err != nil {
		t.Fatalf("a commit of the snapshot's files should be carried on: %v", err)
	}
	if path != moved {
		t.Errorf("path = %s, want %s", path, moved)
	}
	if head := strings.TrimSpace(testenv.Git(t, moved, "rev-parse", "HEAD")); head != commit {
		t.Errorf("the recreated worktree is at %s, want the run's commit %s", head, commit)
	}
	if st := testenv.Git(t, moved, "status", "--porcelain"); st != "" {
		t.Errorf("the recreated worktree should be clean, got\n%s", st)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the old worktree should be gone: %v", err)
	}

	// The run's cleanup removed the worktree and deleted the branch; the
	// snapshot was not forgotten yet.
	if err := (gitx.Repo{Dir: repo}).RemoveWorktree(ctx, moved); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, repo, "branch", "-D", "azero/3-z")
	last := filepath.Join(t.TempDir(), "run3")
	if err := Relocate(ctx, wt, last, "run3"); err != nil {
		t.Fatalf("a run whose branch its cleanup deleted should move: %v", err)
	}
	if path != last {
		t.Errorf("path = %s, want %s", path, last)
	}
	if _, err := os.Stat(last); !os.IsNotExist(err) {
		t.Errorf("a cleaned-up run must not get a worktree back: %v", err)
	}
}

// A branch changed outside the run does not get the snapshot laid over
// it: the move fails and says why.
func TestRelocateRefusesABranchThatMoved(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "git")
	ctx := t.Context()
	repo := testenv.NewRepo(t, map[string]string{"a.go": "package a\n"})
	base := strings.TrimSpace(testenv.Git(t, repo, "rev-parse", "HEAD"))
	dir := filepath.Join(t.TempDir(), "run2")
	if err := (gitx.Repo{Dir: repo}).AddWorktree(ctx, dir, "azero/2-y", base); err != nil {
		t.Fatal(err)
	}
	testenv.WriteFiles(t, dir, map[string]string{"a.go": "package a // changed\n"})
	if err := Snapshot(ctx, repo, dir, "run2"); err != nil {
		t.Fatal(err)
	}
	// Someone commits other files than the run had.
	testenv.WriteFiles(t, dir, map[string]string{"a.go": "package a // someone else's\n"})
	testenv.Git(t, dir, "commit", "-qam", "someone else's commit")
	path := dir
	err := Relocate(ctx, &Worktree{Repo: repo, Branch: "azero/2-y", Base: base, Dir: &path}, filepath.Join(t.TempDir(), "run2"), "run2")
	if err == nil || !strings.Contains(err.Error(), "does not sit on its branch") {
		t.Fatalf("err = %v", err)
	}
	if path != dir {
		t.Errorf("a failed move must leave the path alone, got %s", path)
	}
}
