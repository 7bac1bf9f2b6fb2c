package gitx_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/testenv"
)

func TestRunInAMissingDirectoryIsNotAMissingGit(t *testing.T) {
	t.Parallel()
	gone := filepath.Join(t.TempDir(), "deleted-repo")
	_, err := gitx.Repo{Dir: gone}.Run(t.Context(), "worktree", "list")
	if err == nil {
		t.Fatal("git ran in a missing directory")
	}
	if errors.Is(err, gitx.ErrGitNotFound) || strings.Contains(err.Error(), "not installed") {
		t.Errorf("a missing directory reported as a missing git: %v", err)
	}
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), gone) {
		t.Errorf("err = %v, want one naming the missing directory and matching fs.ErrNotExist", err)
	}
}

// TestRunWithoutGit: a git that really is missing still says so.
func TestRunWithoutGit(t *testing.T) {
	// Not parallel: it changes PATH.
	t.Setenv("PATH", t.TempDir())
	_, err := gitx.Repo{Dir: t.TempDir()}.Run(context.Background(), "version")
	if !errors.Is(err, gitx.ErrGitNotFound) || !strings.Contains(err.Error(), "install git") {
		t.Errorf("err = %v, want ErrGitNotFound saying what to do", err)
	}
}

func TestOpenCheckout(t *testing.T) {
	t.Parallel()
	withCommit := testenv.NewRepo(t, map[string]string{"sub/a.txt": "a\n"})
	unborn := t.TempDir()
	testenv.Git(t, unborn, "init", "-q")
	sha256 := t.TempDir()
	testenv.Git(t, sha256, "init", "-q", "--object-format=sha256")
	bare := t.TempDir()
	testenv.Git(t, bare, "init", "-q", "--bare")
	head := strings.TrimSpace(testenv.Git(t, withCommit, "rev-parse", "HEAD"))
	tests := []struct {
		name, dir, top, head, format string
		notRepo                      bool
	}{
		{"with a commit, from a subdirectory", filepath.Join(withCommit, "sub"), withCommit, head, "sha1", false},
		{"no commit yet", unborn, unborn, "", "sha1", false},
		{"sha256 without commits", sha256, sha256, "", "sha256", false},
		{"outside", t.TempDir(), "", "", "", true},
		{"inside .git", filepath.Join(withCommit, ".git"), "", "", "", true},
		{"bare", bare, "", "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := gitx.OpenCheckout(t.Context(), tt.dir)
			if tt.notRepo {
				if !errors.Is(err, gitx.ErrNotRepository) {
					t.Fatalf("err = %v, want ErrNotRepository", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want, _ := filepath.EvalSymlinks(tt.top)
			if got, _ := filepath.EvalSymlinks(c.Top); got != want || c.Head != tt.head || c.ObjectFormat != tt.format || c.Unborn() != (tt.head == "") {
				t.Errorf("checkout = %+v, want top %s head %q format %s", c, tt.top, tt.head, tt.format)
			}
			// The empty tree id is the one git computes.
			if empty := strings.TrimSpace(testenv.Git(t, tt.dir, "hash-object", "-t", "tree", "/dev/null")); c.EmptyTree() != empty {
				t.Errorf("EmptyTree = %s, git says %s", c.EmptyTree(), empty)
			}
		})
	}
}

// gitCmd is git in dir, not started.
func gitCmd(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = testenv.GitEnv(os.Environ())
	return cmd
}

// conflictRepo returns a repository in the middle of a merge with a
// conflict in each of names.
func conflictRepo(t *testing.T, names ...string) string {
	t.Helper()
	files := map[string]string{"clean.txt": "c\n"}
	for _, n := range names {
		files[n] = "base\n"
	}
	repo := testenv.NewRepo(t, files)
	testenv.Git(t, repo, "checkout", "-q", "-b", "theirs")
	for _, n := range names {
		write(t, repo, n, "theirs\n")
	}
	testenv.Git(t, repo, "commit", "-qam", "theirs")
	testenv.Git(t, repo, "checkout", "-q", "main")
	for _, n := range names {
		write(t, repo, n, "ours\n")
	}
	testenv.Git(t, repo, "commit", "-qam", "ours")
	cmd := gitCmd(repo, "merge", "theirs")
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("the merge did not conflict:\n%s", out)
	}
	return repo
}

// TestUnmergedPaths: conflicted paths with odd names are listed once each,
// and none once the conflicts are resolved.
func TestUnmergedPaths(t *testing.T) {
	t.Parallel()
	names := []string{"a.txt", "with\nnewline.txt", "with\ttab.txt", "ünï.txt"}
	repo := conflictRepo(t, names...)
	got, err := gitx.Repo{Dir: repo}.ListUntrackedAndUnmerged(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(names)
	slices.Sort(want)
	if !slices.Equal(got.Unmerged, want) {
		t.Errorf("unmerged = %q, want %q", got.Unmerged, want)
	}
	testenv.Git(t, repo, "add", "-A")
	if got, err := (gitx.Repo{Dir: repo}).ListUntrackedAndUnmerged(t.Context()); err != nil || len(got.Unmerged) != 0 {
		t.Errorf("after git add: %q, %v", got.Unmerged, err)
	}
}

// TestStaleLockOfALiveGitIsKept holds the branch's ref lock in a live git
// (its reference-transaction hook waits): the lock is young and git works
// in the repository, so it is not stale and nobody removes it.
func TestStaleLockOfALiveGitIsKept(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	repo := testenv.NewRepo(t, map[string]string{"a": "a\n"})
	mark := filepath.Join(t.TempDir(), "held")
	release := filepath.Join(t.TempDir(), "release")
	writeHook(t, repo, "reference-transaction", fmt.Sprintf(`[ "$1" = prepared ] || exit 0
: > '%s'
while [ ! -e '%s' ]; do sleep 0.05; done
`, mark, release))
	cmd := gitCmd(repo, "branch", "azero/held")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	waitFor(t, mark, done)
	lock := filepath.Join(repo, ".git", "refs", "heads", "azero", "held.lock")
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("no lock while git holds it: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	removed, err := gitx.Repo{Dir: repo}.RemoveStaleBranchLock(ctx, "azero/held")
	if removed || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("removed = %v, err = %v; want the held lock waited for", removed, err)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("the lock of a live git was removed: %v", err)
	}
	// Once git finishes, the lock is gone by itself and the branch exists.
	os.WriteFile(release, nil, 0o644)
	<-done
	if removed, err := (gitx.Repo{Dir: repo}).RemoveStaleBranchLock(t.Context(), "azero/held"); removed || err != nil {
		t.Errorf("after git finished: removed = %v, %v", removed, err)
	}
	if ok, _ := (gitx.Repo{Dir: repo}).BranchExists(t.Context(), "azero/held"); !ok {
		t.Error("the live git's update was lost")
	}
}

func TestDeleteBranchRemovesAStaleLock(t *testing.T) {
	t.Parallel()
	repo := testenv.NewRepo(t, map[string]string{"a": "a\n"})
	testenv.Git(t, repo, "branch", "azero/stuck")
	write(t, repo, ".git/refs/heads/azero/stuck.lock", "")
	r := gitx.Repo{Dir: repo}
	if err := r.DeleteBranch(t.Context(), "azero/stuck", true); err != nil {
		t.Fatalf("DeleteBranch with a lock left by a dead git: %v", err)
	}
	if ok, _ := r.BranchExists(t.Context(), "azero/stuck"); ok {
		t.Error("branch still there")
	}
}

func TestWorktreesReportsLocksAndPrunable(t *testing.T) {
	t.Parallel()
	repo := testenv.NewRepo(t, map[string]string{"a": "a\n"})
	parent := t.TempDir()
	for _, n := range []string{"locked one", "gone\nnewline", "detached"} {
		args := []string{"worktree", "add", "-q"}
		if n == "detached" {
			args = append(args, "--detach")
		} else {
			args = append(args, "-b", "b-"+strings.NewReplacer("\n", "-", " ", "-").Replace(n))
		}
		testenv.Git(t, repo, append(args, filepath.Join(parent, n))...)
	}
	testenv.Git(t, repo, "worktree", "lock", "--reason", "on a USB disk", filepath.Join(parent, "locked one"))
	os.RemoveAll(filepath.Join(parent, "gone\nnewline"))
	list, err := gitx.Repo{Dir: repo}.Worktrees(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 4 {
		t.Fatalf("%d work trees: %+v", len(list), list)
	}
	byName := map[string]gitx.Worktree{}
	for _, w := range list[1:] {
		byName[filepath.Base(w.Path)] = w
	}
	if w := byName["locked one"]; !w.Locked || w.LockReason != "on a USB disk" || w.Branch != "b-locked-one" || w.Prunable {
		t.Errorf("locked = %+v", w)
	}
	if w := byName["gone\nnewline"]; !w.Prunable || w.Locked {
		t.Errorf("prunable = %+v", w)
	}
	if w := byName["detached"]; !w.Detached || w.Branch != "" || len(w.Head) != 40 {
		t.Errorf("detached = %+v", w)
	}
}
