package integrity_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/azero-dev/azero/internal/integrity"
	"github.com/azero-dev/azero/internal/testenv"
)

func TestReadTreeSeesEveryKindOfChange(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(t *testing.T, dir string)
		want   integrity.TreeChange
	}{
		{"nothing", func(t *testing.T, dir string) {}, integrity.TreeChange{}},
		{"same content written again", func(t *testing.T, dir string) {
			testenv.WriteFiles(t, dir, map[string]string{"a.py": "a\n"})
		}, integrity.TreeChange{}},
		{"content", func(t *testing.T, dir string) {
			testenv.WriteFiles(t, dir, map[string]string{"a.py": "b\n"})
		}, integrity.TreeChange{Modified: []string{"a.py"}}},
		{"mode", func(t *testing.T, dir string) { os.Chmod(filepath.Join(dir, "a.py"), 0o755) },
			integrity.TreeChange{Modified: []string{"a.py"}}},
		{"unreadable", func(t *testing.T, dir string) { os.Chmod(filepath.Join(dir, "a.py"), 0) },
			integrity.TreeChange{Modified: []string{"a.py"}}},
		{"a file added deep", func(t *testing.T, dir string) {
			testenv.WriteFiles(t, dir, map[string]string{"new/deep/conftest.py": "x\n"})
		}, integrity.TreeChange{Added: []string{"new", "new/deep", "new/deep/conftest.py"}}},
		{"an ignored file", func(t *testing.T, dir string) {
			testenv.WriteFiles(t, dir, map[string]string{"build/out.log": "changed\n"})
		}, integrity.TreeChange{Modified: []string{"build/out.log"}}},
		{"removed", func(t *testing.T, dir string) { os.RemoveAll(filepath.Join(dir, "sub")) },
			integrity.TreeChange{Removed: []string{"sub", "sub/b.py"}}},
		{"a link's target", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "link"))
			os.Symlink("/etc/passwd", filepath.Join(dir, "link"))
		}, integrity.TreeChange{Modified: []string{"link"}}},
		{"a file replaced by a link to the same content", func(t *testing.T, dir string) {
			os.Rename(filepath.Join(dir, "a.py"), filepath.Join(dir, "moved.py"))
			os.Symlink("moved.py", filepath.Join(dir, "a.py"))
		}, integrity.TreeChange{Added: []string{"moved.py"}, Modified: []string{"a.py"}}},
		{"the .git link", func(t *testing.T, dir string) {
			testenv.WriteFiles(t, dir, map[string]string{".git": "gitdir: /tmp/elsewhere\n"})
		}, integrity.TreeChange{Modified: []string{".git"}}},
		{"a named pipe, never read", func(t *testing.T, dir string) {
			if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
				t.Skip("no named pipes here")
			}
		}, integrity.TreeChange{Added: []string{"pipe"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			testenv.WriteFiles(t, dir, map[string]string{"a.py": "a\n", "sub/b.py": "b\n", "build/out.log": "log\n", ".git": "gitdir: /repo/.git/worktrees/wt\n"})
			if err := os.Symlink("a.py", filepath.Join(dir, "link")); err != nil {
				t.Fatal(err)
			}
			before, err := integrity.ReadTree(dir)
			if err != nil {
				t.Fatal(err)
			}
			tt.change(t, dir)
			after, err := integrity.ReadTree(dir)
			if err != nil {
				t.Fatal(err)
			}
			got := before.Diff(after)
			if !slices.Equal(got.Added, tt.want.Added) ||
				!slices.Equal(got.Removed, tt.want.Removed) || !slices.Equal(got.Modified, tt.want.Modified) {
				t.Errorf("Diff = %+v, want %+v", got, tt.want)
			}
			if same := before.Digest() == after.Digest(); same != got.Empty() {
				t.Errorf("digests equal: %v, but the change is %+v", same, got)
			}
		})
	}
}

func TestReadTreeDoesNotDescendIntoAGitDirectory(t *testing.T) {
	t.Parallel()
	repo := testenv.NewRepo(t, map[string]string{"a": "a\n"})
	before, err := integrity.ReadTree(repo)
	if err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, repo, "commit", "-q", "--allow-empty", "-m", "x")
	after, _ := integrity.ReadTree(repo)
	if c := before.Diff(after); !c.Empty() {
		t.Errorf("a commit changed the work tree's fingerprint: %+v", c)
	}
}

func TestTreeChangeString(t *testing.T) {
	t.Parallel()
	c := integrity.TreeChange{Added: []string{"conftest.py", "evil", "evil/a.py", "evil/b/c.py"}, Modified: []string{"tests/test_calc.py"}}
	if got, want := c.String(), "tests/test_calc.py modified, conftest.py added, evil/ added"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}

func TestRunnerOutput(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]bool{
		"__pycache__": true, "pkg/__pycache__/calc.cpython-311.pyc": true, "calc.pyc": true, ".pytest_cache/v/x": true,
		"node_modules/.vite/vitest/results.json": true, "node_modules/.cache": true, "tsconfig.tsbuildinfo": true, "web/tsconfig.app.tsbuildinfo": true,
		"calc.py": false, "conftest.py": false, "node_modules/calc": false, "src/.vite": false, "pycache/x": false,
	} {
		if got := integrity.RunnerOutput(p); got != want {
			t.Errorf("RunnerOutput(%q) = %v, want %v", p, got, want)
		}
	}
}

// TestWatchPutsTheWorkTreeBack runs code that changes everything it can
// in a run's work tree: End reports it, and the work tree is as it was,
// but for the ignored file the run removed, whose content nothing kept.
func TestWatchPutsTheWorkTreeBack(t *testing.T) {
	t.Parallel()
	repo, wt := runRepo(t)
	testenv.WriteFiles(t, wt, map[string]string{"keep.log": "ignored, changed by the run\n", "gone.log": "ignored, removed by the run\n",
		"pkg/mod.py": "x = 1\n", "untracked.txt": "the model's\n"})
	nm := filepath.Join(t.TempDir(), "node_modules", "left-pad")
	os.MkdirAll(nm, 0o755)
	os.MkdirAll(filepath.Join(wt, "node_modules"), 0o755)
	os.Symlink(nm, filepath.Join(wt, "node_modules", "left-pad"))
	os.Chmod(filepath.Join(wt, "calc.py"), 0o600)
	ctx := t.Context()
	scope := integrity.Scope{Worktree: wt, Branch: branch}
	w, err := integrity.Begin(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := integrity.ReadTree(wt)

	// The run.
	testenv.WriteFiles(t, wt, map[string]string{"calc.py": "def add(a, b):\n    return 5\n", "conftest.py": "evil\n",
		"evil/a.py": "a\n", "keep.log": "rewritten\n", "__pycache__/calc.cpython-311.pyc": "poison",
		"node_modules/.vite/deps/x.js": "poison"})
	os.Remove(filepath.Join(wt, "untracked.txt"))
	os.Remove(filepath.Join(wt, "gone.log"))
	os.RemoveAll(filepath.Join(wt, "pkg"))
	testenv.WriteFiles(t, wt, map[string]string{"pkg": "a file where a directory was\n"})
	os.Chmod(filepath.Join(wt, "test_calc.py"), 0o755)
	os.Remove(filepath.Join(wt, "node_modules", "left-pad"))
	os.Symlink("/etc", filepath.Join(wt, "node_modules", "left-pad"))

	out, err := w.End(ctx, "the test run")
	if err != nil {
		t.Fatal(err)
	}
	if out.Counts() {
		t.Fatal("a run that changed the change counts")
	}
	want := integrity.TreeChange{Added: []string{"conftest.py", "evil", "evil/a.py"}, Removed: []string{"gone.log", "pkg/mod.py", "untracked.txt"},
		Modified: []string{"calc.py", "keep.log", "node_modules/left-pad", "pkg", "test_calc.py"}}
	if !slices.Equal(out.Changed.Added, want.Added) || !slices.Equal(out.Changed.Removed, want.Removed) || !slices.Equal(out.Changed.Modified, want.Modified) {
		t.Errorf("Changed = %+v\nwant %+v", out.Changed, want)
	}
	if slices.ContainsFunc(out.Changed.Paths(), integrity.RunnerOutput) {
		t.Errorf("Changed lists runner outputs: %s", out.Changed)
	}
	if !slices.Contains(out.Cleaned, "__pycache__/calc.cpython-311.pyc") || !slices.Contains(out.Cleaned, "node_modules/.vite/deps/x.js") {
		t.Errorf("Cleaned = %q", out.Cleaned)
	}
	if !slices.Equal(out.Lost, []string{"gone.log", "keep.log"}) {
		t.Errorf("Lost = %q, want the ignored files the run removed or changed", out.Lost)
	}
	after, _ := integrity.ReadTree(wt)
	if c := before.Diff(after); !slices.Equal(c.Paths(), []string{"gone.log", "keep.log"}) {
		t.Errorf("after the restore the work tree differs by %+v", c)
	}
	if b, _ := os.ReadFile(filepath.Join(wt, "untracked.txt")); string(b) != "the model's\n" {
		t.Errorf("untracked.txt = %q", b)
	}
	if fi, _ := os.Stat(filepath.Join(wt, "calc.py")); fi.Mode().Perm() != 0o600 {
		t.Errorf("calc.py's mode = %v", fi.Mode())
	}
	// The work tree's index was not touched: git still sees the change.
	if status := testenv.Git(t, wt, "status", "--porcelain"); !strings.Contains(status, "?? untracked.txt") || !strings.Contains(status, " M calc.py") {
		t.Errorf("status after the restore:\n%s", status)
	}
	_ = repo

	// A second run that changes nothing counts.
	w, err = integrity.Begin(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := w.End(ctx, "the test run"); err != nil || !out.Counts() || len(out.Cleaned)+len(out.Lost) > 0 {
		t.Errorf("a run that changed nothing: %+v, %v", out, err)
	}
}

// TestWatchStopsAtTheGitDirectory: a run that planted configuration is
// stopped before anything else, the work tree left as the run left it.
func TestWatchStopsAtTheGitDirectory(t *testing.T) {
	t.Parallel()
	_, wt := runRepo(t)
	w, err := integrity.Begin(t.Context(), integrity.Scope{Worktree: wt, Branch: branch})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, wt, "config", "core.fsmonitor", "/tmp/evil")
	testenv.WriteFiles(t, wt, map[string]string{"conftest.py": "evil\n"})
	_, err = w.End(t.Context(), "the lint step")
	var ge *integrity.GitChangedError
	if !errors.As(err, &ge) || !strings.HasPrefix(err.Error(), "the lint step changed .git/config of your repository") {
		t.Fatalf("End = %v", err)
	}
	if _, err := os.Stat(filepath.Join(wt, "conftest.py")); err != nil {
		t.Error("the work tree was restored, which runs git, after the git directory changed")
	}
}

// BenchmarkReadTree fingerprints a work tree of 5,000 files of 1 to 8 KB
// in 50 directories (taken twice per test run).
func BenchmarkReadTree(b *testing.B) {
	dir := b.TempDir()
	files := map[string]string{}
	for i := range 5000 {
		files[fmt.Sprintf("pkg%02d/file%04d.py", i%50, i)] = strings.Repeat(fmt.Sprintf("x = %d\n", i), 128+i%896)
	}
	testenv.WriteFiles(b, dir, files)
	for b.Loop() {
		t, err := integrity.ReadTree(dir)
		if err != nil || t.Len() != 5050 {
			b.Fatal(t.Len(), err)
		}
	}
}

// BenchmarkWatch is one run's checks of a 5,000-file work tree that the
// run left alone: Begin (git's fingerprint, the tree's, the snapshot) and
// End (both fingerprints again).
func BenchmarkWatch(b *testing.B) {
	_, wt := runRepo(b)
	files := map[string]string{}
	for i := range 5000 {
		files[fmt.Sprintf("pkg%02d/file%04d.py", i%50, i)] = strings.Repeat(fmt.Sprintf("x = %d\n", i), 128+i%896)
	}
	testenv.WriteFiles(b, wt, files)
	testenv.Git(b, wt, "add", "-A")
	testenv.Git(b, wt, "commit", "-qm", "5000 files")
	scope := integrity.Scope{Worktree: wt, Branch: branch}
	for b.Loop() {
		w, err := integrity.Begin(b.Context(), scope)
		if err != nil {
			b.Fatal(err)
		}
		if out, err := w.End(b.Context(), "the test run"); err != nil || !out.Counts() {
			b.Fatal(out, err)
		}
	}
}
