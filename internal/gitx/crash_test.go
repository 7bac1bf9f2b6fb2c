package gitx_test

// Crash safety of work tree creation: a process running AddWorktree is
// killed with SIGKILL, together with every git it started (a power cut),
// at chosen moments of a real `git worktree add`, and AddWorktree run
// again must leave a complete work tree. The moments are reached without
// timing guesses: git itself stops there, in a reference-transaction hook
// (the branch's ref lock is held), in a git wrapper on GIT_EXEC_PATH (the
// child git that points HEAD at the branch, or the one that checks the
// files out), in a smudge filter (half of the files written) or in the
// post-checkout hook (everything done); the hooks run through a git on
// PATH that lifts gitx's protection (see hooksAllowed).

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/testenv"
)

// helperEnv makes the test binary run AddWorktree once (helperMain) with
// the arguments in GITX_HELPER_{REPO,PATH,BRANCH,BASE}, like azero's first
// workflow node does.
const helperEnv = "GITX_HELPER_ADD_WORKTREE"

func helperMain() int {
	r := gitx.Repo{Dir: os.Getenv("GITX_HELPER_REPO")}
	err := r.AddWorktree(context.Background(), os.Getenv("GITX_HELPER_PATH"), os.Getenv("GITX_HELPER_BRANCH"), os.Getenv("GITX_HELPER_BASE"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// crashRepo is a repository with 40 files; m.txt goes through the "pause"
// filter, which is the identity until a test makes it stop.
func crashRepo(t *testing.T) (repo, head string) {
	t.Helper()
	files := map[string]string{".gitattributes": "m.txt filter=pause\n"}
	for c := 'a'; c <= 'z'; c++ {
		files[string(c)+".txt"] = strings.Repeat(string(c)+"\n", 50)
	}
	for i := range 14 {
		files[fmt.Sprintf("dir/%02d.txt", i)] = fmt.Sprintf("file %d\n", i)
	}
	repo = testenv.NewRepo(t, files)
	testenv.Git(t, repo, "config", "filter.pause.clean", "cat")
	testenv.Git(t, repo, "config", "filter.pause.smudge", `sh -c 'if [ -n "$PAUSE_SMUDGE" ] && [ ! -e "$MARK" ]; then : > "$MARK"; exec sleep 600; fi; cat'`)
	return repo, strings.TrimSpace(testenv.Git(t, repo, "rev-parse", "HEAD"))
}

// writeHook installs an executable hook in repo.
func writeHook(t *testing.T, repo, name, body string) {
	t.Helper()
	p := filepath.Join(repo, ".git", "hooks", name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
}

// hooksAllowed returns the environment of a helper whose git runs the
// repository's hooks: a git first on PATH that drops the protection
// gitx passes through the environment, as only a test would.
func hooksAllowed(t *testing.T) []string {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := fmt.Sprintf("#!/bin/sh\nunset GIT_CONFIG_COUNT\nexec '%s' \"$@\"\n", real)
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return []string{"PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH")}
}

// gitWrapper returns a directory for GIT_EXEC_PATH whose git stops, once,
// when run as `git <sub>`, and otherwise runs the real git.
func gitWrapper(t *testing.T, sub string) string {
	t.Helper()
	execPath := strings.TrimSpace(testenv.Git(t, t.TempDir(), "--exec-path"))
	dir := t.TempDir()
	script := fmt.Sprintf(`#!/bin/sh
if [ "$1" = %s ] && [ ! -e "$MARK" ]; then : > "$MARK"; exec sleep 600; fi
GIT_EXEC_PATH='%s' exec '%s/git' "$@"
`, sub, execPath, execPath)
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// startHelper starts AddWorktree in a child process of its own group.
func startHelper(t *testing.T, repo, path, branch, base string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=1", "GITX_HELPER_REPO="+repo, "GITX_HELPER_PATH="+path,
		"GITX_HELPER_BRANCH="+branch, "GITX_HELPER_BASE="+base)
	cmd.Env = append(cmd.Env, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killTree(cmd.Process.Pid); cmd.Wait() })
	return cmd
}

// waitFor waits until file exists or the helper exits.
func waitFor(t *testing.T, file string, done <-chan struct{}) {
	t.Helper()
	deadline := time.After(testenv.Patience)
	for {
		if _, err := os.Stat(file); err == nil {
			return
		}
		select {
		case <-done:
			t.Fatalf("the helper exited before reaching %s", filepath.Base(file))
		case <-deadline:
			t.Fatalf("%s never appeared", file)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// descendants returns pid and every process below it, from /proc.
func descendants(pid int) []int {
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
		i := strings.LastIndexByte(string(stat), ')')
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) > 1 {
			parent[p], _ = strconv.Atoi(fields[1])
		}
	}
	out := []int{pid}
	for changed := true; changed; {
		changed = false
		for p, pp := range parent {
			if slices.Contains(out, pp) && !slices.Contains(out, p) {
				out = append(out, p)
				changed = true
			}
		}
	}
	return out
}

// killTree stops pid and all its descendants, then kills them, children
// before parents: nothing they were doing gets finished or cleaned up, as
// in a power cut. (Killing a parent first would orphan the process group
// of a stopped git, which the kernel wakes with SIGHUP: git would clean
// up its locks, which a power cut does not let it do.)
func killTree(pid int) {
	var all []int
	for range 5 { // stop until no new child appears
		procs := descendants(pid)
		for _, p := range procs {
			syscall.Kill(p, syscall.SIGSTOP)
		}
		if len(procs) == len(all) {
			break
		}
		all = procs
	}
	all = descendants(pid) // parents before their children
	for i := len(all) - 1; i >= 0; i-- {
		syscall.Kill(all[i], syscall.SIGKILL)
	}
}

// worktreeEntry returns git's record of the work tree at path.
func worktreeEntry(t *testing.T, repo, path string) (gitx.Worktree, bool) {
	t.Helper()
	list, err := gitx.Repo{Dir: repo}.Worktrees(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want, _ := filepath.EvalSymlinks(filepath.Dir(path))
	for _, w := range list {
		if w.Path == filepath.Join(want, filepath.Base(path)) {
			return w, true
		}
	}
	return gitx.Worktree{}, false
}

// requireComplete fails unless path is a complete work tree of repo on
// branch at head, with nothing left over from an unfinished add.
func requireComplete(t *testing.T, repo, path, branch, head string) {
	t.Helper()
	w, ok := worktreeEntry(t, repo, path)
	if !ok {
		t.Fatalf("no work tree at %s", path)
	}
	if w.Branch != branch || w.Head != head || w.Locked || w.Prunable {
		t.Fatalf("work tree = %+v, want on %s at %s, not locked", w, branch, head)
	}
	if st := testenv.Git(t, path, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("work tree not clean:\n%s", st)
	}
	if got := testenv.Git(t, path, "diff", "--stat", head); got != "" {
		t.Fatalf("work tree differs from %s:\n%s", head, got)
	}
	for c := 'a'; c <= 'z'; c++ {
		b, err := os.ReadFile(filepath.Join(path, string(c)+".txt"))
		if err != nil || string(b) != strings.Repeat(string(c)+"\n", 50) {
			t.Fatalf("%c.txt = %q, %v", c, b, err)
		}
	}
	admins, _ := os.ReadDir(filepath.Join(repo, ".git", "worktrees"))
	if len(admins) != 1 {
		t.Errorf("%d administrative directories in .git/worktrees, want 1", len(admins))
	}
	locks, _ := filepath.Glob(filepath.Join(repo, ".git", "refs", "heads", "azero", "*.lock"))
	if len(locks) != 0 {
		t.Errorf("ref locks left: %v", locks)
	}
}

func TestAddWorktreeAfterAKillAtEachStep(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc to find the processes to kill")
	}
	const branch = "azero/12-crash"
	tests := []struct {
		name string
		// setup makes git stop at the moment; it returns extra
		// environment for the killed process.
		setup func(t *testing.T, repo string) []string
		// left checks the state the kill left, proving the moment.
		left func(t *testing.T, repo, path string)
		kept bool // the work tree found is complete and must be kept
	}{
		{
			name: "ref lock held while the branch is created",
			setup: func(t *testing.T, repo string) []string {
				writeHook(t, repo, "reference-transaction", `[ "$1" = prepared ] || exit 0
if grep -q refs/heads/azero/ && [ ! -e "$MARK" ]; then : > "$MARK"; exec sleep 600; fi
`)
				return hooksAllowed(t)
			},
			left: func(t *testing.T, repo, path string) {
				if _, err := os.Stat(filepath.Join(repo, ".git", "refs", "heads", branch+".lock")); err != nil {
					t.Fatalf("no ref lock left: %v", err)
				}
				if ok, _ := (gitx.Repo{Dir: repo}).BranchExists(t.Context(), branch); ok {
					t.Fatal("the branch was created")
				}
			},
		},
		{
			name: "registered before HEAD names the branch",
			setup: func(t *testing.T, repo string) []string {
				return []string{"GIT_EXEC_PATH=" + gitWrapper(t, "symbolic-ref")}
			},
			left: func(t *testing.T, repo, path string) {
				w, ok := worktreeEntry(t, repo, path)
				if !ok || w.Branch != "" || !w.Locked {
					list, _ := os.ReadDir(filepath.Join(repo, ".git", "worktrees"))
					t.Logf("%v %s", list, testenv.Git(t, repo, "worktree", "list", "--porcelain"))
					t.Fatalf("work tree = %+v (listed %v), want one on no branch, locked", w, ok)
				}
			},
		},
		{
			name:  "on the branch before the checkout",
			setup: func(t *testing.T, repo string) []string { return []string{"GIT_EXEC_PATH=" + gitWrapper(t, "reset")} },
			left: func(t *testing.T, repo, path string) {
				w, ok := worktreeEntry(t, repo, path)
				if !ok || w.Branch != branch || !w.Locked {
					list, _ := os.ReadDir(filepath.Join(repo, ".git", "worktrees"))
					t.Logf("%v %s", list, testenv.Git(t, repo, "worktree", "list", "--porcelain"))
					t.Fatalf("work tree = %+v (listed %v), want one on the branch, locked", w, ok)
				}
				if _, err := os.Stat(filepath.Join(path, "a.txt")); err == nil {
					t.Fatal("files were checked out")
				}
			},
		},
		{
			name:  "half of the files checked out",
			setup: func(t *testing.T, repo string) []string { return []string{"PAUSE_SMUDGE=1"} },
			left: func(t *testing.T, repo, path string) {
				_, errA := os.Stat(filepath.Join(path, "a.txt"))
				_, errZ := os.Stat(filepath.Join(path, "z.txt"))
				if errA != nil || errZ == nil {
					t.Fatalf("a.txt: %v, z.txt: %v; want a checkout stopped at m.txt", errA, errZ)
				}
				if w, _ := worktreeEntry(t, repo, path); !w.Locked {
					t.Fatalf("work tree = %+v, want it locked while initializing", w)
				}
			},
		},
		{
			name: "everything done, post-checkout hook running",
			setup: func(t *testing.T, repo string) []string {
				writeHook(t, repo, "post-checkout", `if [ ! -e "$MARK" ]; then : > "$MARK"; exec sleep 600; fi
`)
				return hooksAllowed(t)
			},
			left: func(t *testing.T, repo, path string) {},
			kept: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			repo, head := crashRepo(t)
			path := filepath.Join(t.TempDir(), "wt-run1")
			mark := filepath.Join(t.TempDir(), "reached")
			env := append(tt.setup(t, repo), "MARK="+mark)
			cmd := startHelper(t, repo, path, branch, head, env...)
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			waitFor(t, mark, done)
			killTree(cmd.Process.Pid)
			<-done
			tt.left(t, repo, path)
			var before os.FileInfo
			if tt.kept {
				before, _ = os.Stat(filepath.Join(path, ".git"))
			}

			// Run again, as a resumed run does: the marker now lets git pass.
			r := gitx.Repo{Dir: repo, Env: []string{"MARK=" + mark}}
			if err := r.AddWorktree(t.Context(), path, branch, head); err != nil {
				t.Fatalf("AddWorktree after the kill: %v", err)
			}
			requireComplete(t, repo, path, branch, head)
			if tt.kept {
				after, _ := os.Stat(filepath.Join(path, ".git"))
				if before == nil || !os.SameFile(before, after) {
					t.Error("a complete work tree was made again instead of kept")
				}
			}
			// And once more: nothing changes.
			if err := r.AddWorktree(t.Context(), path, branch, head); err != nil {
				t.Fatalf("third AddWorktree: %v", err)
			}
			requireComplete(t, repo, path, branch, head)
		})
	}
}

// TestAddWorktreeAfterKillsAtTimedMoments kills at delays that fall
// wherever they fall; whatever the moment, the next AddWorktree recovers.
func TestAddWorktreeAfterKillsAtTimedMoments(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc to find the processes to kill")
	}
	for _, delay := range []time.Duration{0, time.Millisecond, 3 * time.Millisecond, 8 * time.Millisecond, 15 * time.Millisecond, 30 * time.Millisecond, 60 * time.Millisecond} {
		t.Run(delay.String(), func(t *testing.T) {
			t.Parallel()
			repo, head := crashRepo(t)
			path := filepath.Join(t.TempDir(), "wt")
			cmd := startHelper(t, repo, path, "azero/timed", head)
			time.Sleep(delay)
			killTree(cmd.Process.Pid)
			cmd.Wait()
			if err := (gitx.Repo{Dir: repo}).AddWorktree(t.Context(), path, "azero/timed", head); err != nil {
				t.Fatalf("AddWorktree after a kill at %v: %v", delay, err)
			}
			requireComplete(t, repo, path, "azero/timed", head)
		})
	}
}

// TestAddWorktreeAfterUnfinishedRegistrations: each state a `git worktree
// add` killed between two of its writes leaves in .git/worktrees (found by
// the timed kills above, made here on purpose): a directory with nothing
// in it, a lock cut short, a gitdir cut short, a registration without its
// commondir (which stops git from even listing the work trees). The next
// AddWorktree removes it and makes the work tree, with one registration.
func TestAddWorktreeAfterUnfinishedRegistrations(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files func(path string) map[string]string
	}{
		{"an empty directory", func(string) map[string]string { return nil }},
		{"an empty lock", func(string) map[string]string { return map[string]string{"locked": ""} }},
		{"a lock cut short", func(string) map[string]string { return map[string]string{"locked": "initia"} }},
		{"an empty gitdir", func(string) map[string]string { return map[string]string{"locked": "initializing\n", "gitdir": ""} }},
		{"a gitdir cut short", func(p string) map[string]string {
			return map[string]string{"locked": "initializing\n", "gitdir": filepath.Join(p, ".g")}
		}},
		{"no commondir", func(p string) map[string]string {
			return map[string]string{"locked": "initializing\n", "gitdir": filepath.Join(p, ".git") + "\n"}
		}},
		{"a HEAD cut short", func(p string) map[string]string {
			return map[string]string{"locked": "initializing\n", "gitdir": filepath.Join(p, ".git") + "\n", "commondir": "../..\n", "HEAD": "ref: refs/he"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			repo, head := crashRepo(t)
			path := filepath.Join(t.TempDir(), "wt")
			admin := filepath.Join(repo, ".git", "worktrees", "wt")
			if err := os.MkdirAll(admin, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, content := range tt.files(path) {
				if err := os.WriteFile(filepath.Join(admin, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := (gitx.Repo{Dir: repo}).AddWorktree(t.Context(), path, "azero/unfinished", head); err != nil {
				t.Fatalf("AddWorktree: %v", err)
			}
			requireComplete(t, repo, path, "azero/unfinished", head)
		})
	}
}

// TestAddWorktreeWaitsForAnOrphanedGit kills only the process running
// AddWorktree: its `git worktree add` lives on and finishes the work tree,
// which the next AddWorktree must let finish and keep, not tear down.
func TestAddWorktreeWaitsForAnOrphanedGit(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	repo, head := crashRepo(t)
	// The checkout pauses for a second at m.txt, then goes on.
	testenv.Git(t, repo, "config", "filter.pause.smudge", `sh -c 'if [ ! -e "$MARK" ]; then : > "$MARK"; sleep 1; fi; cat'`)
	path := filepath.Join(t.TempDir(), "wt")
	mark := filepath.Join(t.TempDir(), "reached")
	cmd := startHelper(t, repo, path, "azero/orphan", head, "MARK="+mark)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	waitFor(t, mark, done)
	syscall.Kill(cmd.Process.Pid, syscall.SIGKILL) // git is in a group of its own: it lives on
	<-done
	if err := (gitx.Repo{Dir: repo}).AddWorktree(t.Context(), path, "azero/orphan", head); err != nil {
		t.Fatalf("AddWorktree while an orphaned git finishes: %v", err)
	}
	requireComplete(t, repo, path, "azero/orphan", head)
}

func TestAddWorktreeRefusals(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	repo, head := crashRepo(t)
	r := gitx.Repo{Dir: repo}

	// A branch with commits since base is checked out where it is: the
	// work tree made again after its directory was deleted keeps them.
	path := filepath.Join(t.TempDir(), "wt")
	if err := r.AddWorktree(ctx, path, "azero/moved", head); err != nil {
		t.Fatal(err)
	}
	write(t, path, "new.txt", "n\n")
	testenv.Git(t, path, "add", "new.txt")
	testenv.Git(t, path, "commit", "-qm", "work")
	tip := strings.TrimSpace(testenv.Git(t, repo, "rev-parse", "azero/moved"))
	write(t, path, "a.txt", "uncommitted\n")
	os.RemoveAll(filepath.Join(repo, ".git", "worktrees")) // git forgets it
	if err := r.AddWorktree(ctx, path, "azero/moved", head); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(testenv.Git(t, repo, "rev-parse", "azero/moved")); got != tip {
		t.Errorf("the branch moved from %s to %s", tip, got)
	}
	requireComplete(t, repo, path, "azero/moved", tip)
	if b, _ := os.ReadFile(filepath.Join(path, "new.txt")); string(b) != "n\n" {
		t.Errorf("the committed file is %q", b)
	}

	// A directory that is not a work tree is never removed.
	mine := filepath.Join(t.TempDir(), "project")
	write(t, mine, "precious.txt", "keep\n")
	err := r.AddWorktree(ctx, mine, "azero/other", head)
	if err == nil || !strings.Contains(err.Error(), "not a work tree of this repository") {
		t.Errorf("foreign directory: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(mine, "precious.txt")); string(b) != "keep\n" {
		t.Error("a foreign directory was touched")
	}
	// Nor the main work tree.
	if err := r.RemoveWorktree(ctx, repo); err == nil {
		t.Error("RemoveWorktree removed the main work tree")
	}
	if _, err := os.Stat(filepath.Join(repo, "a.txt")); err != nil {
		t.Fatal(err)
	}
}

// TestAddWorktreeRepairs covers states made by hand: a work tree whose
// files were changed, one deleted by hand, one whose registration git
// forgot, and a lock left on the branch by a git long dead.
func TestAddWorktreeRepairs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		break_ func(t *testing.T, repo, path string)
	}{
		{"dirty files", func(t *testing.T, repo, path string) {
			write(t, path, "a.txt", "changed\n")
			os.Remove(filepath.Join(path, "b.txt"))
		}},
		{"directory deleted by hand", func(t *testing.T, repo, path string) { os.RemoveAll(path) }},
		{"registration forgotten", func(t *testing.T, repo, path string) {
			os.RemoveAll(filepath.Join(repo, ".git", "worktrees"))
		}},
		{"old lock on the branch", func(t *testing.T, repo, path string) {
			lock := filepath.Join(repo, ".git", "refs", "heads", "azero", "fix.lock")
			write(t, repo, ".git/refs/heads/azero/fix.lock", "")
			old := time.Now().Add(-time.Hour)
			os.Chtimes(lock, old, old)
		}},
		{"detached HEAD", func(t *testing.T, repo, path string) { testenv.Git(t, path, "checkout", "-q", "--detach") }},
		{"unlocked index gone", func(t *testing.T, repo, path string) {
			entries, _ := os.ReadDir(filepath.Join(repo, ".git", "worktrees"))
			os.Remove(filepath.Join(repo, ".git", "worktrees", entries[0].Name(), "index"))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			repo, head := crashRepo(t)
			r := gitx.Repo{Dir: repo}
			path := filepath.Join(t.TempDir(), "wt")
			if err := r.AddWorktree(t.Context(), path, "azero/fix", head); err != nil {
				t.Fatal(err)
			}
			tt.break_(t, repo, path)
			if err := r.AddWorktree(t.Context(), path, "azero/fix", head); err != nil {
				t.Fatalf("AddWorktree: %v", err)
			}
			requireComplete(t, repo, path, "azero/fix", head)
		})
	}
}
