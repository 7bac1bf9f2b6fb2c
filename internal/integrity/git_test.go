package integrity_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/integrity"
	"github.com/azero-dev/azero/internal/testenv"
)

// TestMain isolates every git the tests and the code under test start
// from the user's and the system's configuration.
func TestMain(m *testing.M) {
	for _, kv := range testenv.GitEnv(nil) {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	os.Exit(m.Run())
}

const branch = "azero/7-multiply"

// runRepo is a user's checkout and a run's work tree made from it as
// azero makes one, with a change in progress in the work tree.
func runRepo(t testing.TB) (repo, wt string) {
	t.Helper()
	repo = testenv.NewRepo(t, map[string]string{"calc.py": "def add(a, b):\n    return a + b\n", ".gitignore": "*.log\nnode_modules/\n"})
	wt = filepath.Join(t.TempDir(), "wt")
	if err := (gitx.Repo{Dir: repo}).AddWorktree(t.Context(), wt, branch, "HEAD"); err != nil {
		t.Fatal(err)
	}
	testenv.WriteFiles(t, wt, map[string]string{"test_calc.py": "import calc\n", "calc.py": "def add(a, b):\n    return b + a\n", "run.log": "ignored\n"})
	return repo, wt
}

func appendTo(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// adminDir is the run's work tree's administrative directory.
func adminDir(t *testing.T, repo string) string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(repo, ".git", "worktrees"))
	if err != nil || len(entries) != 1 {
		t.Fatalf("worktrees: %v %v", entries, err)
	}
	return filepath.Join(repo, ".git", "worktrees", entries[0].Name())
}

func TestReadGitCatchesWhatARunMayPlant(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		plant func(t *testing.T, repo, wt string)
		want  string // a name Changed must list
	}{
		{"fsmonitor in the config", func(t *testing.T, repo, wt string) {
			testenv.Git(t, wt, "config", "core.fsmonitor", "/tmp/evil")
		}, ".git/config"},
		{"a per-worktree config", func(t *testing.T, repo, wt string) {
			appendTo(t, filepath.Join(adminDir(t, repo), "config.worktree"), "[core]\n\tfsmonitor = /tmp/evil\n")
		}, "config.worktree"},
		{"a shared config.worktree", func(t *testing.T, repo, wt string) {
			appendTo(t, filepath.Join(repo, ".git", "config.worktree"), "[core]\n\tfsmonitor = /tmp/evil\n")
		}, ".git/config.worktree"},
		{"a hook", func(t *testing.T, repo, wt string) {
			appendTo(t, filepath.Join(repo, ".git", "hooks", "post-commit"), "#!/bin/sh\ntouch /tmp/x\n")
		}, ".git/hooks/post-commit"},
		{"a hook made executable", func(t *testing.T, repo, wt string) {
			os.Chmod(filepath.Join(repo, ".git", "hooks", "pre-commit.sample"), 0o700)
		}, ".git/hooks/pre-commit.sample"},
		{"a file hidden through info/exclude", func(t *testing.T, repo, wt string) {
			appendTo(t, filepath.Join(repo, ".git", "info", "exclude"), "conftest.py\n")
		}, ".git/info/exclude"},
		{"attributes naming a filter", func(t *testing.T, repo, wt string) {
			appendTo(t, filepath.Join(repo, ".git", "info", "attributes"), "*.py filter=evil\n")
		}, ".git/info/attributes"},
		{"alternates", func(t *testing.T, repo, wt string) {
			appendTo(t, filepath.Join(repo, ".git", "objects", "info", "alternates"), "/tmp/objects\n")
		}, ".git/objects/info/alternates"},
		{"the work tree's HEAD", func(t *testing.T, repo, wt string) {
			head := strings.TrimSpace(testenv.Git(t, wt, "rev-parse", "HEAD"))
			os.WriteFile(filepath.Join(adminDir(t, repo), "HEAD"), []byte(head+"\n"), 0o644)
		}, "/HEAD"},
		{"the work tree's gitdir", func(t *testing.T, repo, wt string) {
			os.WriteFile(filepath.Join(adminDir(t, repo), "gitdir"), []byte("/tmp/elsewhere/.git\n"), 0o644)
		}, "/gitdir"},
		{"the .git link", func(t *testing.T, repo, wt string) {
			os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: /tmp/planted\n"), 0o644)
		}, ".git link"},
		{"a commit on the run's branch", func(t *testing.T, repo, wt string) {
			testenv.Git(t, wt, "add", "-A")
			testenv.Git(t, wt, "commit", "-qm", "behind azero's back")
		}, ".git/refs/heads/" + branch},
		{"the run's branch packed", func(t *testing.T, repo, wt string) {
			testenv.Git(t, repo, "pack-refs", "--all")
		}, ".git/packed-refs (refs/heads/" + branch + ")"},
		{"the run's branch reset by update-ref", func(t *testing.T, repo, wt string) {
			testenv.Git(t, repo, "commit", "-q", "--allow-empty", "-m", "the user's")
			testenv.Git(t, repo, "update-ref", "refs/heads/"+branch, "main")
		}, ".git/refs/heads/" + branch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			repo, wt := runRepo(t)
			before, err := integrity.ReadGit(wt, branch)
			if err != nil {
				t.Fatal(err)
			}
			tt.plant(t, repo, wt)
			after, err := before.Again()
			if err != nil {
				t.Fatal(err)
			}
			changed := before.Changed(after)
			if !slices.ContainsFunc(changed, func(c string) bool { return strings.Contains(c, tt.want) }) {
				t.Fatalf("changed = %q, want one naming %q", changed, tt.want)
			}
			err = before.Check(after, "the test run")
			var ge *integrity.GitChangedError
			if !errors.As(err, &ge) || !strings.HasPrefix(err.Error(), "the test run changed ") ||
				!strings.Contains(err.Error(), "azero stopped before running any git command; inspect it") {
				t.Errorf("Check = %v", err)
			}
		})
	}
}

// TestReadGitIgnoresWhatIsNotTheRunsBusiness: the user working in their
// checkout while a run waits (commits, branches, objects, their index)
// is not a change of what the fingerprint watches.
func TestReadGitIgnoresWhatIsNotTheRunsBusiness(t *testing.T) {
	t.Parallel()
	repo, wt := runRepo(t)
	before, err := integrity.ReadGit(wt, branch)
	if err != nil {
		t.Fatal(err)
	}
	testenv.WriteFiles(t, repo, map[string]string{"notes.txt": "mine\n"})
	testenv.Git(t, repo, "add", "notes.txt")
	testenv.Git(t, repo, "commit", "-qm", "the user's own work")
	testenv.Git(t, repo, "branch", "feature")
	testenv.Git(t, wt, "status", "--porcelain")
	testenv.Git(t, wt, "add", "test_calc.py")
	after, err := before.Again()
	if err != nil {
		t.Fatal(err)
	}
	if changed := before.Changed(after); len(changed) > 0 {
		t.Errorf("changed = %q, want nothing", changed)
	}
}

// TestAPlantedFilterIsCaughtBeforeGitRuns: a filter driver is named by
// the repository, so no configuration on git's command line can turn it
// off (the plain git below runs it); the fingerprint sees the planted
// configuration first.
func TestAPlantedFilterIsCaughtBeforeGitRuns(t *testing.T) {
	t.Parallel()
	repo, wt := runRepo(t)
	before, err := integrity.ReadGit(wt, branch)
	if err != nil {
		t.Fatal(err)
	}
	mark := filepath.Join(t.TempDir(), "filter.ran")
	testenv.Git(t, repo, "config", "filter.evil.clean", "sh -c ': > "+mark+"; cat'")
	appendTo(t, filepath.Join(repo, ".git", "info", "attributes"), "*.py filter=evil\n")

	after, err := before.Again()
	if err != nil {
		t.Fatal(err)
	}
	err = before.Check(after, "the test run")
	if err == nil || !strings.Contains(err.Error(), ".git/config") || !strings.Contains(err.Error(), ".git/info/attributes") {
		t.Fatalf("Check = %v, want the config and the attributes named", err)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("the filter ran before any git call")
	}
	// What the check stops: azero's next git call would run it.
	if _, err := (gitx.Repo{Dir: wt}).Run(t.Context(), "add", "-A"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(mark); err != nil {
		t.Fatal("a planted filter does not run inside gitx: the test proves nothing")
	}
}

func TestReadGitOfAPathThatIsNoWorkTree(t *testing.T) {
	t.Parallel()
	if _, err := integrity.ReadGit(t.TempDir(), branch); err == nil {
		t.Error("ReadGit of a plain directory succeeded")
	}
	repo := testenv.NewRepo(t, map[string]string{"a": "a"})
	if _, err := integrity.ReadGit(repo, "main"); err == nil {
		t.Error("ReadGit of a main work tree (a .git directory, no link) succeeded")
	}
}
