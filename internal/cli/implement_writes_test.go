package cli

// End-to-end tests of the implementation's write review (spec #173 as a
// gate of the graph): a coder that returns a whole file replacing an
// existing file of more than 100 lines gets nothing written until a human
// approves that content, from whichever channel answers: the terminal of
// `azero resume`, or the JSON API of `azero serve`. Real git, real pytest,
// the offline scripted coder.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
)

// bigCalc is a calculator of 153 lines: more than the 100 lines above
// which a replacement needs approval, fewer than the 500 that make the
// coder write edit blocks instead of the whole file.
func bigCalc() string {
	var b strings.Builder
	b.WriteString("\"\"\"A calculator with many helpers.\"\"\"\n")
	for i := 1; i <= 37; i++ {
		fmt.Fprintf(&b, "\n\ndef twice_%d():\n    return %d\n", i, 2*i)
	}
	b.WriteString("\n\ndef add(a, b):\n    return a + b\n")
	return b.String()
}

// bigCalcWith is the coder's whole-file reply: the calculator with
// multiply, keeping only its first keepHelpers helpers.
func bigCalcWith(keepHelpers int) string {
	var b strings.Builder
	b.WriteString("```python\n\"\"\"A calculator with many helpers.\"\"\"\n")
	for i := 1; i <= keepHelpers; i++ {
		fmt.Fprintf(&b, "\n\ndef twice_%d():\n    return %d\n", i, 2*i)
	}
	b.WriteString("\n\ndef add(a, b):\n    return a + b\n\n\ndef multiply(a, b):\n    return a * b\n```\n")
	return b.String()
}

// bigCalcRepo is a checkout whose calc.py has 153 lines; the design adds
// a test file and modifies calc.py.
func bigCalcRepo(t *testing.T) string {
	t.Helper()
	return testenv.NewRepo(t, map[string]string{"calc.py": bigCalc(), "docs/design.md": calcDesign})
}

// waitingAtWriteReview runs implement without a terminal and checks that
// it waits at the write review with its question stored: the warning and
// the diff, and nothing written.
func waitingAtWriteReview(t *testing.T, state, repo string, env []string) store.Run {
	t.Helper()
	res := runAzeroIn(t, state, repo, env, "implement", "--lld", "docs/design.md", "--json")
	if res.code != ExitNeedsHuman {
		t.Fatalf("exit %d, want 3\n%s", res.code, res.stderr)
	}
	r, hist := runOf(t, state)
	if got, want := testenv.NodePath(hist), "worktree:ok baseline:ok scaffold:ok red:ok implement:ok write_review:waiting"; got != want {
		t.Fatalf("path:\n got %s\nwant %s", got, want)
	}
	if got, _ := os.ReadFile(filepath.Join(state, "worktrees", r.ID, "calc.py")); string(got) != bigCalc() {
		t.Fatal("calc.py was replaced before anyone approved")
	}
	show := runAzeroIn(t, state, repo, nil, "runs", "show", r.ID, "--json")
	var d struct {
		Run struct {
			Status string `json:"status"`
			Node   string `json:"node"`
		} `json:"run"`
		Question *human.Question `json:"question"`
	}
	if err := json.Unmarshal([]byte(show.stdout), &d); err != nil {
		t.Fatalf("%v\n%s", err, show.stdout)
	}
	if d.Run.Status != "waiting" || d.Run.Node != "write_review" || d.Question == nil || d.Question.Gate != "write_review" {
		t.Fatalf("runs show --json: %s", show.stdout)
	}
	q := d.Question
	for _, want := range []string{"!! WARNING: calc.py: about to replace 153 lines with", "--- a/calc.py", "+++ b/calc.py", "+def multiply(a, b):"} {
		if !strings.Contains(q.Report, want) {
			t.Errorf("the stored question's report lacks %q:\n%s", want, q.Report)
		}
	}
	if !strings.Contains(q.Title, "more than 100 lines") || strings.Join(q.Keys(), ",") != "approve,revise,abort" || q.ID == "" {
		t.Errorf("question %q answers %v id %q", q.Title, q.Keys(), q.ID)
	}
	return r
}

// prompts returns the run's implement prompts in the lineage, in order.
func implementPrompts(t *testing.T, state, runID string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(state, "runs", runID, "*-prompt-implement.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(paths))
	for i, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = string(b)
	}
	return out
}

// Without a terminal the run waits at the write review with its question;
// resumed at a terminal, typing approve writes the file (no new model
// call) and the run goes on to green, the diff review and the merge.
func TestImplementWriteReviewAnsweredAtATerminal(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "pytest")
	repo, state := bigCalcRepo(t), t.TempDir()
	env := implementEnv(state, coderScript(t, goodTests, bigCalcWith(37)))
	r := waitingAtWriteReview(t, state, repo, env)

	screen := startAzero(t, state, repo, env, "resume", r.ID)
	screen.WaitFor(t, "Nothing is written unless you type approve", 1)
	if !strings.Contains(screen.Text(), "+def multiply(a, b):") || !strings.Contains(screen.Text(), "about to replace 153 lines with 157 lines") {
		t.Errorf("the terminal did not show the warning and the diff:\n%s", screen.Text())
	}
	screen.Type(t, "appr") // a partial word is asked again
	screen.WaitFor(t, "in full", 1)
	screen.Type(t, "approve")
	screen.WaitFor(t, "Nothing is committed unless you type approve", 1)
	screen.Type(t, "approve")
	screen.WaitFor(t, "to merge it", 1)
	screen.Type(t, "approve")
	if code := screen.exit(t); code != ExitOK {
		t.Fatalf("exit %d\n%s", code, screen.Text())
	}
	_, hist := runOf(t, state)
	if got := testenv.NodePath(hist); !strings.Contains(got, "write_review:waiting write_review:ok apply_writes:ok green:ok lint:ok diff_review:ok human_review:ok commit:ok merge:ok") {
		t.Errorf("path %s", got)
	}
	if got := testenv.Git(t, repo, "show", "main:calc.py"); got != strings.TrimSuffix(strings.TrimPrefix(bigCalcWith(37), "```python\n"), "```\n") {
		t.Errorf("main's calc.py is not the approved content:\n%s", got)
	}
	if n := len(implementPrompts(t, state, r.ID)); n != 1 {
		t.Errorf("%d implement prompts: the resume asked the coder again", n)
	}
	approvals := testenv.AuditEvents(t, state, "file_write_approval")
	if len(approvals) != 1 || approvals[0]["path"] != "calc.py" || approvals[0]["approval"] != "approved" || approvals[0]["channel"] != human.ChannelTerminal ||
		approvals[0]["run_id"] != r.ID {
		t.Errorf("file_write_approval records: %v", approvals)
	}
	var decisions []string
	for _, rec := range testenv.AuditEvents(t, state, "gate_decision") {
		decisions = append(decisions, fmt.Sprint(rec["gate"], ":", rec["decision"], ":", rec["channel"]))
	}
	if got := strings.Join(decisions, ","); got != "write_review:APPROVED:terminal,diff_review:APPROVED:terminal,human_review:APPROVED:terminal" {
		t.Errorf("gate decisions: %s", got)
	}
}

// The same question answered through `azero serve`'s JSON API: revise
// sends the file back to the coder with the feedback (in its next prompt),
// the new reply is asked about anew, and approve writes it; serve
// continues the run to the human review.
func TestImplementWriteReviewAnsweredThroughServe(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "pytest")
	repo, state := bigCalcRepo(t), t.TempDir()
	const feedback = "Keep every twice_ helper: the task only adds multiply."
	env := implementEnv(state, coderScript(t, goodTests, bigCalcWith(2), bigCalcWith(37)))
	r := waitingAtWriteReview(t, state, repo, env)
	first := runByID(t, state, r.ID)

	srv := startServe(t, state)
	var res map[string]any
	if code := srv.api(t, "POST", "/api/runs/"+r.ID+"/answer", `{"gate":"write_review","answer":"revise"}`, &res); code != http.StatusUnprocessableEntity {
		t.Fatalf("revise without feedback: %d %v", code, res)
	}
	body, _ := json.Marshal(map[string]string{"gate": "write_review", "answer": "revise", "feedback": feedback})
	if code := srv.api(t, "POST", "/api/runs/"+r.ID+"/answer", string(body), &res); code != http.StatusOK || res["continued"] != true {
		t.Fatalf("revise: %d %v", code, res)
	}
	srv.linesUntil(t, "now waits at write_review")
	again := runByID(t, state, r.ID)
	if again.Status != store.StatusWaiting || again.Node != "write_review" || string(again.Question) == string(first.Question) {
		t.Fatalf("after revise: %s at %s", again.Status, again.Node)
	}
	prompts := implementPrompts(t, state, r.ID)
	if len(prompts) != 2 || strings.Contains(prompts[0], feedback) || !strings.Contains(prompts[1], feedback) || !strings.Contains(prompts[1], "You wrote calc.py whole") {
		t.Fatalf("the coder's next prompt does not carry the feedback (%d prompts)", len(prompts))
	}
	if got, _ := os.ReadFile(filepath.Join(state, "worktrees", r.ID, "calc.py")); string(got) != bigCalc() {
		t.Fatal("calc.py was written without an approval")
	}

	if code := srv.api(t, "POST", "/api/runs/"+r.ID+"/answer", `{"gate":"write_review","answer":"approve"}`, &res); code != http.StatusOK || res["continued"] != true {
		t.Fatalf("approve: %d %v", code, res)
	}
	srv.linesUntil(t, "now waits at human_review")
	done := runByID(t, state, r.ID)
	if done.Status != store.StatusWaiting || done.Node != "human_review" {
		t.Fatalf("after approve: %s at %s", done.Status, done.Node)
	}
	got, _ := os.ReadFile(filepath.Join(state, "worktrees", r.ID, "calc.py"))
	if !strings.Contains(string(got), "def twice_37():") || !strings.Contains(string(got), "def multiply(a, b):") {
		t.Errorf("calc.py is not the approved reply:\n%s", got)
	}
	_, hist := runOf(t, state)
	if p := testenv.NodePath(hist); !strings.Contains(p, "write_review:ok implement:ok write_review:waiting write_review:ok apply_writes:ok green:ok") {
		t.Errorf("path %s", p)
	}
	approvals := testenv.AuditEvents(t, state, "file_write_approval")
	if len(approvals) != 1 || approvals[0]["approval"] != "approved" || approvals[0]["channel"] != human.ChannelAPI {
		t.Errorf("file_write_approval records: %v", approvals)
	}
	var decisions []string
	for _, rec := range testenv.AuditEvents(t, state, "gate_decision") {
		if rec["gate"] == "write_review" {
			decisions = append(decisions, fmt.Sprint(rec["decision"], ":", rec["channel"], ":", rec["text"]))
		}
	}
	if got := strings.Join(decisions, ","); got != "REVISE:api:"+feedback+",APPROVED:api:<nil>" {
		t.Errorf("write review decisions: %s", got)
	}
	if code := srv.stop(t); code != ExitOK {
		t.Errorf("serve exited %d\n%s", code, srv.stderr)
	}
}

// --auto refuses a large replacement, failing the run (no answer could
// lift the run's own setting, so it does not wait for one); --auto
// --force writes it at once, recorded as forced. Neither asks.
func TestImplementAutoDecidesLargeReplacements(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "pytest")
	t.Run("auto refuses", func(t *testing.T) {
		t.Parallel()
		repo, state := bigCalcRepo(t), t.TempDir()
		res := runAzeroIn(t, state, repo, implementEnv(state, coderScript(t, goodTests, bigCalcWith(37))), "implement", "--lld", "docs/design.md", "--auto")
		if res.code != ExitError || !strings.Contains(res.stderr, "--auto --force") {
			t.Fatalf("exit %d, want 1 saying how to allow it\n%s", res.code, res.stderr)
		}
		r, hist := runOf(t, state)
		if got := testenv.NodePath(hist); r.Status != store.StatusFailed || got != "worktree:ok baseline:ok scaffold:ok red:ok implement:failed" {
			t.Errorf("run %s, path %s", r.Status, got)
		}
		if got, _ := os.ReadFile(filepath.Join(state, "worktrees", r.ID, "calc.py")); string(got) != bigCalc() {
			t.Error("--auto replaced calc.py")
		}
		refused := testenv.AuditEvents(t, state, "file_write_refused")
		if len(refused) != 1 || refused[0]["refusal"] != "needs_approval" || refused[0]["path"] != "calc.py" {
			t.Errorf("refusals %v", refused)
		}
	})
	t.Run("auto force writes", func(t *testing.T) {
		t.Parallel()
		repo, state := bigCalcRepo(t), t.TempDir()
		res := runAzeroIn(t, state, repo, implementEnv(state, coderScript(t, goodTests, bigCalcWith(37))), "implement", "--lld", "docs/design.md", "--auto", "--force")
		if res.code != ExitNeedsHuman {
			t.Fatalf("exit %d, want 3 at the human review\n%s", res.code, res.stderr)
		}
		_, hist := runOf(t, state)
		if got := testenv.NodePath(hist); !strings.HasSuffix(got, "red:ok implement:ok green:ok lint:ok diff_review:ok human_review:waiting") {
			t.Errorf("path %s", got)
		}
		approvals := testenv.AuditEvents(t, state, "file_write_approval")
		if len(approvals) != 1 || approvals[0]["approval"] != "forced" || approvals[0]["path"] != "calc.py" {
			t.Errorf("approvals %v", approvals)
		}
	})
}
