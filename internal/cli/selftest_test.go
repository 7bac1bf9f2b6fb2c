package cli

// The foundation's end-to-end checks (issue 2) on the self-test workflow,
// with real azero processes: SIGKILL at random moments and resume, one
// driver per run, SIGINT, 50 concurrent runs on one store, and the gate on
// a real terminal and without one.

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
	"github.com/azero-dev/azero/internal/workflow/selftest"
)

// effects reads the self-test's effects log.
func effects(t *testing.T, dir string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, selftest.EffectsFile))
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

func onlyRun(t *testing.T, state string) store.Run {
	t.Helper()
	r, _ := runOf(t, state)
	return r
}

// progressed waits until the run completes one more node than it had, and
// reports true, or until the process ends (false; its result stays in
// done for the caller).
func progressed(t *testing.T, state string, done chan error) bool {
	t.Helper()
	steps := -1
	if countRuns(t, state) > 0 {
		steps = onlyRun(t, state).Steps
	}
	for deadline := time.Now().Add(testenv.Patience); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		select {
		case err := <-done:
			done <- err
			return false
		default:
		}
		if countRuns(t, state) > 0 && onlyRun(t, state).Steps > steps {
			return true
		}
	}
	t.Fatal("the self-test made no progress")
	return false
}

// countRuns counts the runs in the store (0 when there is none yet).
func countRuns(t *testing.T, state string) int {
	t.Helper()
	if _, err := os.Stat(filepath.Join(state, store.FileName)); err != nil {
		return 0
	}
	st := openStore(t, state)
	defer st.Close()
	runs, err := st.ListRuns(t.Context(), store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return len(runs)
}

// spawnAzero starts azero in the background, with no terminal.
func spawnAzero(t *testing.T, state string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = azeroEnv(state)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

func TestSelftestSurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	state, dir := t.TempDir(), t.TempDir()
	const steps = 8
	cmd := spawnAzero(t, state, "selftest", "--dir", dir, "--steps", fmt.Sprint(steps), "--delay", "150ms")
	kills := 0
	var runID string
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		// Wait until this process has done some work (on a loaded machine
		// a start can take longer than a node), then kill it at a random
		// moment of what follows.
		if !progressed(t, state, done) {
			// It ended on its own: it reached the gate (exit 3).
			if r := onlyRun(t, state); r.Node == "approve" && r.Status == store.StatusWaiting {
				break
			}
			t.Fatal("the process ended before the gate")
		}
		time.Sleep(time.Duration(rand.IntN(300)) * time.Millisecond)
		select {
		case err := <-done:
			if code := exitCode(err); code != 3 {
				t.Fatalf("exit %d before the gate", code)
			}
		default:
			cmd.Process.Signal(syscall.SIGKILL)
			<-done
			kills++
		}
		r := onlyRun(t, state)
		runID = r.ID
		if r.Node == "approve" && r.Status == store.StatusWaiting {
			break
		}
		cmd = spawnAzero(t, state, "resume", runID)
		done = make(chan error, 1)
		go func() { done <- cmd.Wait() }()
	}
	if kills == 0 {
		t.Fatal("the run was never killed: the test proved nothing")
	}
	// Finish through the gate on a terminal.
	screen := startOnTerminal(t, dir, azeroEnv(state), os.Args[0], "resume", runID)
	screen.WaitFor(t, "Finish it?", 1)
	screen.Type(t, "approve")
	if code := screen.exit(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, screen.Text())
	}
	got := effects(t, dir)
	want := []string{"prepare"}
	for i := 1; i <= steps; i++ {
		want = append(want, fmt.Sprintf("work %d", i))
	}
	want = append(want, "finish")
	// Every effect happened, in order; an effect repeats only right after
	// itself: the node that was killed ran again on resume, and no other.
	var collapsed []string
	extra := 0
	for _, e := range got {
		if len(collapsed) > 0 && collapsed[len(collapsed)-1] == e {
			extra++
			continue
		}
		collapsed = append(collapsed, e)
	}
	if !slices.Equal(collapsed, want) {
		t.Errorf("effects %v, want each of %v once, repeated only by the killed node", got, want)
	}
	if extra > kills {
		t.Errorf("%d effects repeated by %d kills", extra, kills)
	}
	dups := extra
	r, hist := runOf(t, state)
	if r.Status != store.StatusDone {
		t.Fatalf("status %s", r.Status)
	}
	oks := map[string]int{}
	for _, h := range hist {
		if h.Outcome == "ok" {
			oks[h.Node]++
		}
	}
	if oks["prepare"] != 1 || oks["work"] != steps || oks["approve"] != 1 || oks["finish"] != 1 {
		t.Errorf("history is not complete: %v", oks)
	}
	t.Logf("%d kills, %d effects repeated", kills, dups)
}

// runningRunID waits until the store in state holds a running run (the
// only one), and returns its id.
func runningRunID(t *testing.T, state, dir string) string {
	t.Helper()
	var id string
	for deadline := time.Now().Add(testenv.Patience); id == ""; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the run never started")
		}
		if res := runAzeroIn(t, state, dir, nil, "runs", "--json"); strings.Contains(res.stdout, `"status": "running"`) {
			var doc struct{ Runs []struct{ ID string } }
			json.Unmarshal([]byte(res.stdout), &doc)
			id = doc.Runs[0].ID
		}
	}
	return id
}

func TestSecondDriverIsRefused(t *testing.T) {
	t.Parallel()
	state, dir := t.TempDir(), t.TempDir()
	first := spawnAzero(t, state, "selftest", "--dir", dir, "--steps", "3", "--delay", "3s")
	defer first.Process.Kill()
	id := runningRunID(t, state, dir)
	res := runAzeroIn(t, state, dir, nil, "resume", id)
	if res.code != 1 || !strings.Contains(res.stderr, "being driven by another azero process") {
		t.Fatalf("second driver: exit %d\n%s", res.code, res.stderr)
	}
}

func TestInterruptSavesTheRun(t *testing.T) {
	t.Parallel()
	state, dir := t.TempDir(), t.TempDir()
	cmd := spawnAzero(t, state, "selftest", "--dir", dir, "--steps", "3", "--delay", "2s")
	for deadline := time.Now().Add(testenv.Patience); len(effects(t, dir)) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the run never started")
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	if code := exitCode(cmd.Wait()); code != 130 {
		t.Fatalf("exit %d, want 130", code)
	}
	r := onlyRun(t, state)
	if r.Status != store.StatusInterrupted || r.Node != "work" || r.Lease.Token != "" {
		t.Fatalf("run %s at %s, lease %q", r.Status, r.Node, r.Lease.Token)
	}
	// It continues from there.
	res := runAzeroIn(t, state, dir, nil, "resume", r.ID)
	if res.code != 3 {
		t.Fatalf("resume: exit %d\n%s", res.code, res.stderr)
	}
	if got := strings.Join(effects(t, dir), ","); got != "prepare,work 1,work 2,work 3" {
		t.Errorf("effects = %s", got)
	}
}

func TestFiftyRunsOnOneStore(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	const n = 50
	var wg sync.WaitGroup
	results := make([]runResult, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = runAzeroIn(t, state, t.TempDir(), nil, "selftest", "--steps", "3", "--delay", "5ms", "--dir", filepath.Join(state, fmt.Sprint("d", i)))
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r.code != 3 || strings.Contains(r.stderr, "locked") {
			t.Errorf("run %d: exit %d\n%s", i, r.code, r.stderr)
		}
	}
	res := runAzeroIn(t, state, state, nil, "runs", "--json", "--limit", "0")
	var doc struct {
		Runs []struct {
			ID, Workflow, Status, Node string
		}
	}
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		t.Fatalf("runs --json is not JSON: %v\n%s", err, res.stdout)
	}
	if len(doc.Runs) != n {
		t.Fatalf("%d runs listed, want %d", len(doc.Runs), n)
	}
	for _, r := range doc.Runs {
		if r.Workflow != "selftest" || r.Status != "waiting" || r.Node != "approve" {
			t.Errorf("run %+v", r)
		}
	}
}

func TestGateNeedsTheTypedWord(t *testing.T) {
	t.Parallel()
	state, dir := t.TempDir(), t.TempDir()
	res := runAzeroIn(t, state, dir, nil, "selftest", "--dir", dir, "--steps", "1", "--delay", "1ms")
	if res.code != 3 || !strings.Contains(res.stderr, selfCommand(t)+" resume ") {
		t.Fatalf("no terminal: exit %d\n%s", res.code, res.stderr)
	}
	id := onlyRun(t, state).ID
	// Resuming without a terminal stops at the same gate without asking.
	res = runAzeroIn(t, state, dir, nil, "resume", id)
	if res.code != 3 || !strings.Contains(res.stderr, "waiting at approve") {
		t.Fatalf("no terminal: exit %d\n%s", res.code, res.stderr)
	}
	if r := onlyRun(t, state); r.Status != store.StatusWaiting || r.Node != "approve" {
		t.Fatalf("run %s at %s", r.Status, r.Node)
	}
	screen := startOnTerminal(t, dir, azeroEnv(state), os.Args[0], "resume", id)
	screen.WaitFor(t, "Finish it?", 1)
	for _, answer := range []string{"", "y", "yes", "APPROV"} {
		screen.Type(t, answer)
	}
	screen.WaitFor(t, "in full", 4)
	if strings.Contains(strings.Join(effects(t, dir), ","), "finish") {
		t.Fatal("finished without the typed word")
	}
	screen.Type(t, "approve")
	if code := screen.exit(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, screen.Text())
	}
	if got := strings.Join(effects(t, dir), ","); got != "prepare,work 1,finish" {
		t.Errorf("effects = %s", got)
	}
}
