//go:build temporalserver

package cli

import (
	"encoding/json"
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

	"github.com/azero-dev/azero/internal/runs"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/temporal"
	"github.com/azero-dev/azero/internal/testenv"
)

// A worker killed (SIGKILL) while its step runs the project's tests takes
// its test processes with it: none of them goes on to its timeout. And
// the worktree it leaves is collected by `azero runs gc` on its machine
// once the run has moved to another worker; while Temporal names the dead
// worker as the holder (a worker restarted with its --identity would take
// the run back), only --all removes it.
//
// The processes die with the worker through the sandbox, which runs every
// test run in a jail that dies with azero.
func TestTemporalWorkerKilledMidTestRun(t *testing.T) {
	testenv.RequireTool(t, "git")
	testenv.RequireTool(t, "go")
	c := newCluster(t)
	const queue = "kill-queue"
	flags := []string{"--temporal", c.addr, "--namespace", c.ns, "--task-queue", queue}
	killed := c.startWorkerProcess(t, "worker-k", flags...)
	worktrees := filepath.Join(killed.state, "worktrees")

	// The project's test sleeps, in the killed worker's worktree only: on
	// another worker the same run's baseline passes at once.
	repo := testenv.NewRepo(t, map[string]string{
		"go.mod":          "module example.com/killmark\n\ngo 1.26\n",
		"killmark/add.go": "package killmark\n\nfunc Add(a, b int) int { return a + b }\n",
		"killmark/add_test.go": fmt.Sprintf("package killmark\n\nimport (\n\t\"os\"\n\t\"strings\"\n\t\"testing\"\n\t\"time\"\n)\n\n"+
			"func TestAdd(t *testing.T) {\n\tif wd, _ := os.Getwd(); strings.HasPrefix(wd, %q) {\n"+
			"\t\tos.WriteFile(\".sleeping\", nil, 0o644)\n\t\ttime.Sleep(10 * time.Minute)\n\t}\n"+
			"\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"Add(1, 2) != 3\")\n\t}\n}\n", worktrees),
		"docs/design.md": "# 7 - Feature: multiply\n\n## Files Changed\n\n| File | Change Type | Description |\n|---|---|---|\n" +
			"| `killmark/mul_test.go` | Add | tests: Mul(3, 4) is 12 |\n| `killmark/mul.go` | Add | func Mul(a, b int) int |\n",
	})
	state := t.TempDir()
	c.configQueue(t, state, queue)
	script := coderScript(t, "```go\npackage killmark\n```\n")
	impl := exec.Command(os.Args[0], append([]string{"implement", "--lld", "docs/design.md", "--json"}, flags...)...)
	impl.Dir, impl.Env = repo, azeroEnv(state, implementEnv(state, script)...)
	withoutTerminal(impl)
	if err := impl.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { impl.Process.Kill(); impl.Wait() })

	// The baseline runs the tests in the worker's worktree, and the test
	// sleeps, silent: its output so far has reached the worker (had it
	// not, the test run would die of a broken pipe when it wrote it, and
	// prove nothing).
	for deadline := time.Now().Add(testenv.Patience); ; time.Sleep(100 * time.Millisecond) {
		if m, _ := filepath.Glob(filepath.Join(worktrees, "*", "killmark", ".sleeping")); len(m) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tests never ran in %s:\n%s", worktrees, killed.stderr)
		}
	}
	time.Sleep(500 * time.Millisecond) // for go test to pass the test's first lines on
	tests := processesIn(t, worktrees)
	isTest := func(pid int) bool {
		argv := strings.Fields(cmdline(pid))
		return len(argv) > 0 && strings.HasSuffix(argv[0], "/killmark.test")
	}
	if !slices.ContainsFunc(tests, isTest) {
		t.Fatalf("no test binary among the processes of the worktree: %v", tests)
	}
	runID := onlyTemporalRun(t, killed.state)
	for _, pid := range tests {
		t.Logf("the test run's process %d: %s", pid, cmdline(pid))
	}
	if err := killed.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-killed.done

	// Every process the worker's test run started dies with it.
	deadline := time.Now().Add(testenv.Patience)
	for left := alive(tests); len(left) > 0; left = alive(tests) {
		if time.Now().After(deadline) {
			for _, pid := range left {
				t.Errorf("process %d (%s) of the killed worker's test run survived it", pid, cmdline(pid))
				_ = syscall.Kill(pid, syscall.SIGKILL) // the test's own leftovers
			}
			break
		}
		time.Sleep(100 * time.Millisecond)
	}

	// The run is still held by the dead worker: gc keeps its worktree
	// (a worker restarted as worker-k would take the run back), --all
	// removes it.
	worktree := filepath.Join(worktrees, runID)
	gcFlags := append([]string{"runs", "gc", "--json"}, flags...)
	if res := runAzeroIn(t, killed.state, killed.state, nil, gcFlags...); res.code != 0 || strings.Contains(res.stdout, runID) {
		t.Fatalf("gc while the dead worker holds the run: exit %d, want its worktree kept\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if _, err := os.Stat(worktree); err != nil {
		t.Fatalf("the worktree of a run the dead worker holds went: %v", err)
	}
	// No worker runs, so Temporal cannot say where the run stands.
	dry := runAzeroIn(t, killed.state, killed.state, nil, append(gcFlags, "--all", "--dry-run")...)
	if !strings.Contains(dry.stdout, `"reason": "no worker of this machine holds the run on Temporal`) {
		t.Errorf("gc --all --dry-run:\n%s\n%s", dry.stdout, dry.stderr)
	}

	// Another worker takes the run over once the dead one's step stops
	// heartbeating; gc on the dead worker's machine then collects its
	// worktree, and leaves the run's branch to the run.
	restore := onOtherMachine(t, worktree)
	c.startWorkerProcess(t, "worker-b", flags...)
	c.waitFor(t, runID, "the move to worker-b", func(st temporal.Status) bool { return st.Holder.Identity == "worker-b" })
	restore()
	res := runAzeroIn(t, killed.state, killed.state, nil, gcFlags...)
	var doc struct {
		Removed []runs.GCAction `json:"removed"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil || res.code != 0 {
		t.Fatalf("gc after the move: exit %d, %v\n%s\n%s", res.code, err, res.stdout, res.stderr)
	}
	if len(doc.Removed) != 1 || doc.Removed[0].RunID != runID || !doc.Removed[0].Done || !doc.Removed[0].OnTemporal ||
		doc.Removed[0].Reason != "the run moved to worker worker-b" || doc.Removed[0].Branch != "" {
		t.Fatalf("gc after the move removed %+v, want the worktree of run %s only", doc.Removed, runID)
	}
	if _, err := os.Stat(worktree); !os.IsNotExist(err) {
		t.Errorf("the dead worker's worktree is still there: %v", err)
	}
	if list := testenv.Git(t, repo, "worktree", "list"); strings.Contains(list, worktree) {
		t.Errorf("git still lists the dead worker's worktree:\n%s", list)
	}
	if branches := testenv.Git(t, repo, "branch", "--list", "azero/*"); strings.TrimSpace(branches) == "" {
		t.Error("gc deleted the branch of a run that goes on on Temporal")
	}
}

// onOtherMachine keeps a copy of the worktree at dir, and returns a
// function that puts it back if it is gone: the workers of these tests
// share one file system, where the worker a run moves to removes the old
// worktree while it takes the run over; on the dead worker's own machine
// the folder stays, unregistered, for gc.
func onOtherMachine(t *testing.T, dir string) (restore func()) {
	t.Helper()
	aside := filepath.Join(t.TempDir(), "aside")
	if out, err := exec.Command("cp", "-a", dir, aside).CombinedOutput(); err != nil {
		t.Fatalf("copy %s: %v\n%s", dir, err, out)
	}
	return func() {
		t.Helper()
		if _, err := os.Stat(dir); err == nil {
			return
		}
		if out, err := exec.Command("cp", "-a", aside, dir).CombinedOutput(); err != nil {
			t.Fatalf("put %s back: %v\n%s", dir, err, out)
		}
	}
}

// processesIn lists the processes whose working directory is under dir.
func processesIn(t *testing.T, dir string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("needs /proc: %v", err)
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd")); err == nil && strings.HasPrefix(cwd, dir+string(filepath.Separator)) {
			out = append(out, pid)
		}
	}
	return out
}

// alive returns the processes of pids that still run (a zombie waiting
// for its parent has ended).
func alive(pids []int) []int {
	var out []int
	for _, pid := range pids {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		if err != nil {
			continue
		}
		if _, rest, ok := strings.Cut(string(b), ") "); ok && !strings.HasPrefix(rest, "Z") {
			out = append(out, pid)
		}
	}
	return out
}

// cmdline is a process's command line, for messages.
func cmdline(pid int) string {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
}

// onlyTemporalRun is the id of the one run a worker's store mirrors.
func onlyTemporalRun(t *testing.T, state string) string {
	t.Helper()
	for deadline := time.Now().Add(testenv.Patience); ; time.Sleep(100 * time.Millisecond) {
		st := openStore(t, state)
		r, err := st.ListRuns(t.Context(), store.Filter{})
		st.Close()
		if err == nil && len(r) == 1 {
			return r[0].ID
		}
		if time.Now().After(deadline) {
			t.Fatalf("the worker's store has runs %v (%v)", r, err)
		}
	}
}
