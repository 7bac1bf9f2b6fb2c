package gitx_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/testenv"
)

func TestWorktreeLifecycle(t *testing.T) {
	t.Parallel()
	dir := testenv.NewRepo(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	r := gitx.Repo{Dir: dir, Env: testenv.GitEnv(nil)}
	ctx := t.Context()
	head, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if br, _ := r.CurrentBranch(ctx); br != "main" {
		t.Fatalf("branch = %q", br)
	}
	wt := filepath.Join(t.TempDir(), "wt dir")
	for range 2 { // repeating is safe
		if err := r.AddWorktree(ctx, wt, "azero/7-demo", head); err != nil {
			t.Fatal(err)
		}
	}
	if ok, _ := r.BranchExists(ctx, "azero/7-demo"); !ok {
		t.Fatal("branch not created")
	}
	list, err := r.Worktrees(ctx)
	if err != nil || len(list) != 2 || list[1].Branch != "azero/7-demo" {
		t.Fatalf("worktrees = %+v, %v", list, err)
	}
	// Changes in the work tree never show in the main checkout.
	os.WriteFile(filepath.Join(wt, "a.txt"), []byte("changed\n"), 0o644)
	w := gitx.Repo{Dir: wt, Env: testenv.GitEnv(nil)}
	if _, err := w.Run(ctx, "commit", "-qam", "change a"); err != nil {
		t.Fatal(err)
	}
	if dirty, _ := r.DirtyPaths(ctx); len(dirty) != 0 {
		t.Errorf("main checkout dirty: %v", dirty)
	}
	changed, err := r.ChangedPaths(ctx, head, "azero/7-demo")
	if err != nil || !slices.Equal(changed, []string{"a.txt"}) {
		t.Errorf("changed = %v, %v", changed, err)
	}
	if ok, _ := r.IsAncestor(ctx, head, "azero/7-demo"); !ok {
		t.Error("base is not an ancestor of the branch")
	}
	if ok, _ := r.IsAncestor(ctx, "azero/7-demo", head); ok {
		t.Error("branch is an ancestor of base")
	}
	// Removed by hand, then added again: the stale registration is pruned.
	os.RemoveAll(wt)
	if err := r.AddWorktree(ctx, wt, "azero/7-demo", head); err != nil {
		t.Fatalf("re-add after manual removal: %v", err)
	}
	if err := r.RemoveWorktree(ctx, wt); err != nil {
		t.Fatal(err)
	}
	if err := r.RemoveWorktree(ctx, wt); err != nil {
		t.Fatalf("removing twice: %v", err)
	}
	if _, err := os.Stat(wt); !os.IsNotExist(err) {
		t.Error("work tree still on disk")
	}
	if err := r.DeleteBranch(ctx, "azero/7-demo", false); err == nil {
		t.Error("an unmerged branch was deleted without force")
	}
	if err := r.DeleteBranch(ctx, "azero/7-demo", true); err != nil {
		t.Fatal(err)
	}
	if err := r.DeleteBranch(ctx, "azero/7-demo", true); err != nil {
		t.Errorf("deleting a missing branch: %v", err)
	}
}

func TestDirtyPaths(t *testing.T) {
	t.Parallel()
	dir := testenv.NewRepo(t, map[string]string{"a.txt": "a\n", "old name.txt": "o\n", "c.txt": "c\n"})
	r := gitx.Repo{Dir: dir, Env: testenv.GitEnv(nil)}
	testenv.WriteFiles(t, dir, map[string]string{"a.txt": "changed\n", "new\nline.txt": "n\n", ".gitignore": "ignored.txt\n", "ignored.txt": "x"})
	testenv.Git(t, dir, "mv", "old name.txt", "renamed.txt")
	got, err := r.DirtyPaths(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want := []string{".gitignore", "a.txt", "new\nline.txt", "old name.txt", "renamed.txt"}
	if !slices.Equal(got, want) {
		t.Errorf("dirty = %q, want %q", got, want)
	}
	if br, err := (gitx.Repo{Dir: dir}).CurrentBranch(t.Context()); err != nil || br != "main" {
		t.Errorf("branch %q %v", br, err)
	}
	testenv.Git(t, dir, "checkout", "-q", "--detach")
	if br, err := r.CurrentBranch(t.Context()); err != nil || br != "" {
		t.Errorf("detached: branch %q %v", br, err)
	}
}
