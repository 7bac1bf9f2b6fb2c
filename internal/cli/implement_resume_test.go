package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/runs"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
)

// A design whose scaffold asks the coder twice, once per test file.
const twoTestsDesign = "# 8 - Feature: multiply\n\n## 2.1 Files Changed\n\n| File | Change Type | Description |\n|---|---|---|\n" +
	"| `test_calc.py` | Add | tests for multiply |\n| `test_more.py` | Add | multiply by zero |\n| `calc.py` | Modify | add multiply |\n"

const moreTests = "```python\nimport calc\n\n\ndef test_multiply_by_zero():\n    assert calc.multiply(0, 4) == 0\n```\n"

// twoTestsScript is the coder's script: turn 1 is test_calc.py, turn 2
// test_more.py, turn 3 calc.py. With slow, turn 2 first fails with a
// rate limit asking for a minute's wait: the run sits inside that model
// call, the test's chosen moment for a kill.
func twoTestsScript(slow bool) string {
	turn2 := "[[reply]]\nrole = \"coder\"\nturn = 2\ntext = '''\n" + moreTests + "'''\n\n"
	if slow {
		turn2 = "[[reply]]\nrole = \"coder\"\nturn = 2\nerror = \"rate_limited\"\nretry_after = \"60s\"\n\n" + turn2
	}
	return "[[reply]]\nrole = \"coder\"\nturn = 1\ntext = '''\n" + goodTests + "'''\n\n" + turn2 +
		"[[reply]]\nrole = \"coder\"\nturn = 3\ntext = '''\n" + goodCalc + "'''\n"
}

// TestScriptedRunKilledInAModelCallResumes: a run on the offline scripted
// model (AZERO_MOCK_LLM=1), killed with SIGKILL inside the scaffold's
// second model call, after its first call was answered and recorded.
// Resumed, the scaffold runs again and must ask the same turns again:
// before, the killed attempt's answered call counted as a turn, so the
// first test file got the second one's reply, the second got the code,
// and the code's call found no reply ("no reply for role coder, turn 4").
//
// The resume has neither AZERO_MOCK_LLM nor any key: the run keeps the
// model it recorded (the scripted one), and `runs show` names that model,
// not today's default coder.
func TestScriptedRunKilledInAModelCallResumes(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "pytest")
	repo := testenv.NewRepo(t, map[string]string{"calc.py": calcPy, "docs/design.md": twoTestsDesign})
	state := t.TempDir()
	script := filepath.Join(t.TempDir(), "coder.toml")
	if err := os.WriteFile(script, []byte(twoTestsScript(true)), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "implement", "--lld", "docs/design.md")
	cmd.Dir, cmd.Env = repo, azeroEnv(state, "AZERO_MOCK_LLM=1", "AZERO_MOCK_SCRIPT="+script)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })

	// The moment: the second prompt is saved (the call is made after) and
	// the first call is recorded.
	for deadline := time.Now().Add(testenv.Patience); ; time.Sleep(10 * time.Millisecond) {
		prompts, _ := filepath.Glob(filepath.Join(state, "runs", "*", "*-prompt-*"))
		if len(prompts) >= 2 {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("implement ended (%v) before its second model call", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the second model call never started")
		}
	}
	cmd.Process.Kill()
	<-done
	r, _ := runOf(t, state)
	if r.Node != "scaffold" {
		t.Fatalf("killed in the scaffold's call, the run stands at %s", r.Node)
	}
	calls := callsOf(t, state, r.ID)
	if len(calls) != 1 || calls[0].Error != "" {
		t.Fatalf("calls before the kill = %+v, want the first one, answered", calls)
	}

	// The rate limit is over; resume with no mock setting and no key.
	if err := os.WriteFile(script, []byte(twoTestsScript(false)), 0o644); err != nil {
		t.Fatal(err)
	}
	res := runAzeroIn(t, state, repo, []string{"AZERO_MOCK_LLM=", "AZERO_MOCK_SCRIPT=", "ANTHROPIC_API_KEY=", "OPENAI_API_KEY="}, "resume", r.ID)
	if res.code != ExitNeedsHuman {
		t.Fatalf("resume: exit %d, want 3 at the review\n%s", res.code, res.stderr)
	}
	r, hist := runOf(t, state)
	if got := testenv.NodePath(hist); !strings.HasSuffix(got, "scaffold:ok red:ok implement:ok green:ok lint:ok diff_review:ok human_review:waiting") {
		t.Errorf("path %s", got)
	}
	// Each file got the reply meant for it.
	wt := filepath.Join(state, "worktrees", r.ID)
	for file, want := range map[string]string{"test_calc.py": "def test_multiply():", "test_more.py": "def test_multiply_by_zero():", "calc.py": "return a * b"} {
		b, err := os.ReadFile(filepath.Join(wt, file))
		if err != nil || !strings.Contains(string(b), want) {
			t.Errorf("%s got another file's reply (or none): %q %v", file, b, err)
		}
	}
	// Every call was recorded with the model the run uses: the killed
	// attempt's, then the scaffold's two and the code's.
	calls = callsOf(t, state, r.ID)
	if len(calls) != 4 {
		t.Errorf("%d calls, want 4", len(calls))
	}
	for _, c := range calls {
		if c.Model != "mock:scripted" {
			t.Errorf("a call was made with %s", c.Model)
		}
	}
	show := runAzeroIn(t, state, repo, nil, "runs", "show", r.ID)
	if !strings.Contains(show.stdout, "coder:    mock:scripted") || strings.Contains(show.stdout, runs.DefaultModel(llm.RoleCoder)) {
		t.Errorf("runs show does not name the model the run used:\n%s", show.stdout)
	}
	var doc struct {
		Run struct {
			Meta map[string]string `json:"meta"`
		} `json:"run"`
	}
	show = runAzeroIn(t, state, repo, nil, "runs", "show", r.ID, "--json")
	if err := json.Unmarshal([]byte(show.stdout), &doc); err != nil || doc.Run.Meta["coder"] != "mock:scripted" {
		t.Errorf("runs show --json: %v, meta %v", err, doc.Run.Meta)
	}
}

// callsOf reads a run's model calls from the store.
func callsOf(t *testing.T, state, runID string) []store.Call {
	t.Helper()
	st := openStore(t, state)
	defer st.Close()
	calls, err := st.Calls(t.Context(), runID)
	if err != nil {
		t.Fatal(err)
	}
	return calls
}
