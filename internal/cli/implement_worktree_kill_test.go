package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/testenv"
)

// TestImplementKilledInsideGitWorktreeAdd: azero, with every git it
// started, is killed (a power cut) inside its `git worktree add`, at
// moments git itself stops at: while git holds the lock of the run's
// branch (in the user's reference-transaction hook), and halfway through
// the checkout (in a smudge filter). The resumed run must not reuse what
// the kill left (a stale ref lock, a worktree on no branch or half checked
// out): it repairs it and goes on to the review with a complete worktree.
// (azero's git runs no hook of the repository: the killed azero finds git
// through a git on PATH that lifts that protection, see hooksAllowed.)
func TestImplementKilledInsideGitWorktreeAdd(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "pytest")
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc to find the processes to kill")
	}
	tests := []struct {
		name   string
		setup  func(t *testing.T, repo string) []string // the killed azero's extra environment
		marker string
		left   func(t *testing.T, repo, wt string)
	}{
		{
			name: "holding the branch's ref lock",
			setup: func(t *testing.T, repo string) []string {
				hook := filepath.Join(repo, ".git", "hooks", "reference-transaction")
				os.WriteFile(hook, []byte(`#!/bin/sh
[ -n "$MARK" ] && [ "$1" = prepared ] || exit 0
if grep -q refs/heads/azero/ && [ ! -e "$MARK.lock" ]; then : > "$MARK.lock"; exec sleep 600; fi
`), 0o755)
				return hooksAllowed(t)
			},
			marker: ".lock",
			left: func(t *testing.T, repo, wt string) {
				locks, _ := filepath.Glob(filepath.Join(repo, ".git", "refs", "heads", "azero", "*.lock"))
				if len(locks) != 1 {
					t.Fatalf("the kill left no ref lock: %v", locks)
				}
			},
		},
		{
			name: "halfway through the checkout",
			setup: func(t *testing.T, repo string) []string {
				testenv.Git(t, repo, "config", "filter.pause.clean", "cat")
				testenv.Git(t, repo, "config", "filter.pause.smudge", `sh -c 'if [ -n "$MARK" ] && [ ! -e "$MARK.smudge" ]; then : > "$MARK.smudge"; exec sleep 600; fi; cat'`)
				return nil
			},
			marker: ".smudge",
			left: func(t *testing.T, repo, wt string) {
				if _, err := os.Stat(filepath.Join(wt, "a.txt")); err != nil {
					t.Fatalf("the checkout had not begun: %v", err)
				}
				if _, err := os.Stat(filepath.Join(wt, "z.txt")); err == nil {
					t.Fatal("the checkout had finished")
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			files := map[string]string{"calc.py": calcPy, "docs/design.md": calcDesign, ".gitattributes": "m.txt filter=pause\n"}
			for c := 'a'; c <= 'z'; c++ {
				files[string(c)+".txt"] = string(c) + "\n"
			}
			repo, state := testenv.NewRepo(t, files), t.TempDir()
			extra := tt.setup(t, repo)
			mark := filepath.Join(t.TempDir(), "reached")
			script := coderScript(t, goodTests, goodCalc)
			cmd := exec.Command(os.Args[0], "implement", "--lld", "docs/design.md")
			cmd.Dir = repo
			cmd.Env = azeroEnv(state, append([]string{"AZERO_MOCK_LLM=1", "AZERO_MOCK_SCRIPT=" + script, "MARK=" + mark}, extra...)...)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			t.Cleanup(func() { killGitTree(cmd.Process.Pid); <-done })
			for deadline := time.Now().Add(testenv.Patience); ; time.Sleep(5 * time.Millisecond) {
				if _, err := os.Stat(mark + tt.marker); err == nil {
					break
				}
				select {
				case <-done:
					t.Fatal("implement ended before git reached the moment")
				default:
				}
				if time.Now().After(deadline) {
					t.Fatal("git never reached the moment")
				}
			}
			killGitTree(cmd.Process.Pid)
			<-done
			r, _ := runOf(t, state)
			if r.Node != "worktree" {
				t.Fatalf("killed in git worktree add, the run stands at %s", r.Node)
			}
			wt := filepath.Join(state, "worktrees", r.ID)
			tt.left(t, repo, wt)

			res := runAzeroIn(t, state, repo, nil, "resume", r.ID)
			if res.code != ExitNeedsHuman {
				t.Fatalf("resume: exit %d, want 3 at the review\n%s", res.code, res.stderr)
			}
			_, hist := runOf(t, state)
			if got := testenv.NodePath(hist); !strings.HasSuffix(got, "worktree:ok baseline:ok scaffold:ok red:ok implement:ok green:ok lint:ok diff_review:ok human_review:waiting") {
				t.Errorf("path %s", got)
			}
			// The worktree is complete: every file, on the run's branch.
			for c := 'a'; c <= 'z'; c++ {
				if b, err := os.ReadFile(filepath.Join(wt, string(c)+".txt")); err != nil || string(b) != string(c)+"\n" {
					t.Errorf("%c.txt in the worktree = %q, %v", c, b, err)
				}
			}
			if got := strings.TrimSpace(testenv.Git(t, wt, "branch", "--show-current")); got != r.Key {
				t.Errorf("the worktree is on %q, want %q", got, r.Key)
			}
			if locks, _ := filepath.Glob(filepath.Join(repo, ".git", "refs", "heads", "azero", "*.lock")); len(locks) != 0 {
				t.Errorf("ref locks left: %v", locks)
			}
			if out := testenv.Git(t, repo, "worktree", "list", "--porcelain"); strings.Contains(out, "locked") || strings.Contains(out, "prunable") {
				t.Errorf("a worktree is left locked or prunable:\n%s", out)
			}
		})
	}
}

// hooksAllowed returns the environment of an azero whose git runs the
// repository's hooks: a git first on PATH that drops the protection gitx
// passes through the environment, as only a test would.
func hooksAllowed(t *testing.T) []string {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := "#!/bin/sh\nunset GIT_CONFIG_COUNT\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return []string{"PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH")}
}
