package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
)

// coderServer speaks the OpenAI chat completions protocol and answers as
// the coder: the tests when asked for tests, the code when asked for code.
// While hold is set, requests wait until it is closed.
type coderServer struct {
	*httptest.Server
	mu       sync.Mutex
	calls    int
	hold     chan struct{}
	arrived  chan struct{}
	tests    string
	code     string
	lastBody string
}

func newCoderServer(t *testing.T, tests, code string) *coderServer {
	s := &coderServer{tests: tests, code: code, arrived: make(chan struct{}, 16)}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			t.Errorf("unexpected %s %s", r.Method, r.URL.Path)
			http.NotFound(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.calls++
		s.lastBody = string(body)
		hold := s.hold
		s.mu.Unlock()
		s.arrived <- struct{}{}
		if hold != nil {
			select {
			case <-hold:
			case <-r.Context().Done():
				return
			}
		}
		text := s.code
		if strings.Contains(string(body), "the tests first") {
			text = s.tests
		}
		content, _ := json.Marshal(text)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4.1",
"choices":[{"index":0,"message":{"role":"assistant","content":%s},"finish_reason":"stop"}],
"usage":{"prompt_tokens":900,"completion_tokens":120,"total_tokens":1020}}`, content)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *coderServer) setHold(ch chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hold = ch
}

func (s *coderServer) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

func TestImplementSurvivesSIGKILLDuringAModelCallAndATestRun(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "pytest")
	repo, state := calcRepo(t), t.TempDir()
	// The project's own conftest lets the test see when pytest runs, and
	// makes each run slow enough to be killed in. The tests run sandboxed:
	// the marker is in their private temporary directory, in the jail
	// under the state directory.
	testenv.WriteFiles(t, repo, map[string]string{"conftest.py": `import os, time
def pytest_sessionstart(session):
    open(os.path.join(os.environ["TMPDIR"], "pytest-started"), "w").close()
    time.sleep(3)
`})
	pytestStarted := func() bool {
		m, _ := filepath.Glob(filepath.Join(state, "sandbox", "jail-*", "tmp", "pytest-started"))
		return len(m) > 0
	}
	testenv.Git(t, repo, "add", "conftest.py")
	testenv.Git(t, repo, "commit", "-qm", "conftest")
	before := testenv.Checkout(t, repo)
	srv := newCoderServer(t, goodTests, goodCalc)
	env := []string{"OPENAI_BASE_URL=" + srv.URL + "/v1", "OPENAI_API_KEY=test-key-0123456789"}
	run := func(args ...string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], args...)
		cmd.Dir = repo
		cmd.Env = azeroEnv(state, env...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	waitArrival := func() {
		select {
		case <-srv.arrived:
		case <-time.After(testenv.Patience):
			t.Fatal("no model call arrived")
		}
	}

	// 1. Killed while the model is answering the scaffold call.
	hold := make(chan struct{})
	srv.setHold(hold)
	cmd := run("implement", "--lld", "docs/design.md", "--coder", "openai:gpt-4.1")
	waitArrival()
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	srv.setHold(nil)
	close(hold)
	if testenv.Checkout(t, repo) != before {
		t.Fatal("the checkout changed after a kill during the model call")
	}
	r := onlyRun(t, state)
	if r.Node != "scaffold" {
		t.Fatalf("killed during scaffold, run stands at %s", r.Node)
	}

	// 2. Resumed; killed while pytest runs the red gate (the baseline's
	// jail, with its marker, is gone).
	cmd = run("resume", r.ID)
	for deadline := time.Now().Add(testenv.Patience); ; time.Sleep(10 * time.Millisecond) {
		if pytestStarted() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("pytest never started")
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if testenv.Checkout(t, repo) != before {
		t.Fatal("the checkout changed after a kill during the test run")
	}
	if r = onlyRun(t, state); r.Node != "red" {
		t.Fatalf("killed during the red gate, run stands at %s", r.Node)
	}

	// 3. Resumed without a terminal: it goes on to the human and waits.
	res := runAzeroIn(t, state, repo, env, "resume", r.ID)
	if res.code != 3 {
		t.Fatalf("resume: exit %d\n%s", res.code, res.stderr)
	}
	if testenv.Checkout(t, repo) != before {
		t.Fatal("the checkout changed before approval")
	}
	// 4. A human approves on a terminal: merged.
	screen := startOnTerminal(t, repo, azeroEnv(state, env...), os.Args[0], "resume", r.ID)
	screen.WaitFor(t, "to merge it", 1)
	if !strings.Contains(screen.Text(), "+def multiply(a, b):") {
		t.Errorf("the human was not shown the diff before approving:\n%s", screen.Text())
	}
	screen.Type(t, "approve")
	if code := screen.exit(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, screen.Text())
	}
	calc, _ := os.ReadFile(filepath.Join(repo, "calc.py"))
	if !strings.Contains(string(calc), "def multiply") {
		t.Error("not merged")
	}
	if srv.count() != 3 {
		t.Errorf("%d model calls, want 3 (the killed one, its repeat, the implementation)", srv.count())
	}
	_, hist := runOf(t, state)
	if got := testenv.NodePath(hist); !strings.HasPrefix(got, "worktree:ok baseline:ok scaffold:ok red:ok implement:ok green:ok lint:ok diff_review:ok human_review:waiting human_review:ok commit:ok merge:ok cleanup:ok END:done") {
		t.Errorf("history: %s", got)
	}
}

func TestImplementStopsAtTheBudget(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "pytest")
	repo, state := calcRepo(t), t.TempDir()
	srv := newCoderServer(t, goodTests, goodCalc)
	env := []string{"OPENAI_BASE_URL=" + srv.URL + "/v1", "OPENAI_API_KEY=test-key-0123456789"}
	// gpt-4.1 is priced: the first call's worst case (its prompt plus 8192
	// output tokens) is several cents, over a one-cent budget.
	res := runAzeroIn(t, state, repo, env, "implement", "--lld", "docs/design.md", "--coder", "openai:gpt-4.1", "--budget", "0.01")
	if res.code != 1 || !strings.Contains(res.stderr, "budget") {
		t.Fatalf("exit %d, want 1 with a budget message\n%s", res.code, res.stderr)
	}
	if srv.count() != 0 {
		t.Fatalf("%d calls made past the budget", srv.count())
	}
	r := onlyRun(t, state)
	if r.Status != store.StatusFailed || r.Node != "scaffold" {
		t.Fatalf("run %s at %s, want failed at scaffold (resumable)", r.Status, r.Node)
	}
	// A larger budget lets it continue where it stopped.
	res = runAzeroIn(t, state, repo, env, "resume", r.ID, "--budget", "5")
	if res.code != 3 {
		t.Fatalf("resume with a larger budget: exit %d\n%s", res.code, res.stderr)
	}
	show := runAzeroIn(t, state, repo, nil, "runs", "show", r.ID, "--json")
	var d struct {
		CostByNode []struct {
			Node  string
			Calls int
		} `json:"cost_by_node"`
		TotalUSD float64 `json:"total_cost_usd"`
	}
	if err := json.Unmarshal([]byte(show.stdout), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.CostByNode) != 2 || d.TotalUSD <= 0 {
		t.Errorf("cost by node = %+v total %v", d.CostByNode, d.TotalUSD)
	}
}

// TestImplementMergeWaitsForTheUsersWork: an approved change that would
// touch the user's uncommitted work is not merged; the run stays at its
// merge, and once the user has cleaned up, a resume merges it — with no
// model key, as no model is asked again.
func TestImplementMergeWaitsForTheUsersWork(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "pytest")
	repo, state := calcRepo(t), t.TempDir()
	srv := newCoderServer(t, goodTests, goodCalc)
	env := []string{"OPENAI_BASE_URL=" + srv.URL + "/v1", "OPENAI_API_KEY=test-key-0123456789"}
	if res := runAzeroIn(t, state, repo, env, "implement", "--lld", "docs/design.md", "--coder", "openai:gpt-4.1"); res.code != 3 {
		t.Fatalf("implement: exit %d\n%s", res.code, res.stderr)
	}
	r := onlyRun(t, state)
	// Meanwhile the user edits calc.py, which the change also changes.
	testenv.WriteFiles(t, repo, map[string]string{"calc.py": "def add(a, b):\n    return a + b  # mine\n"})
	screen := startOnTerminal(t, repo, azeroEnv(state, env...), os.Args[0], "resume", r.ID)
	screen.WaitFor(t, "to merge it", 1)
	screen.Type(t, "approve")
	if code := screen.exit(t); code != ExitError {
		t.Fatalf("exit %d, want 1\n%s", code, screen.Text())
	}
	for _, want := range []string{"uncommitted changes to calc.py", "merge azero/", "azero resume " + r.ID} {
		if !strings.Contains(screen.Text(), want) {
			t.Errorf("the terminal does not say %q:\n%s", want, screen.Text())
		}
	}
	if got := onlyRun(t, state); got.Status != store.StatusFailed || got.Node != "merge" {
		t.Fatalf("run %s at %s, want failed at merge (resumable)", got.Status, got.Node)
	}
	if mine, _ := os.ReadFile(filepath.Join(repo, "calc.py")); !strings.Contains(string(mine), "# mine") {
		t.Fatal("the user's uncommitted work was touched")
	}
	calls := srv.count()
	// The user puts their edit away; the resume has no key at all.
	testenv.Git(t, repo, "checkout", "--", "calc.py")
	res := runAzeroIn(t, state, repo, []string{"OPENAI_API_KEY=", "AZERO_MOCK_LLM="}, "resume", r.ID, "--json")
	if res.code != 0 {
		t.Fatalf("resume after cleaning up: exit %d\n%s", res.code, res.stderr)
	}
	if calc, _ := os.ReadFile(filepath.Join(repo, "calc.py")); !strings.Contains(string(calc), "def multiply") {
		t.Error("not merged")
	}
	if srv.count() != calls {
		t.Errorf("the resume asked the model %d more times", srv.count()-calls)
	}
	if got := onlyRun(t, state); got.Status != store.StatusDone {
		t.Errorf("run %s, want done", got.Status)
	}
}
