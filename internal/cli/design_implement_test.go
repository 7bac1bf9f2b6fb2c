package cli

// `azero design --implement` as a user runs it: the design's gates and the
// mounted implementation's answered at a real pseudo-terminal, the models
// the scripted offline model (one script for the drafter, the reviewer
// and the coder), the tests Go's own, the run killed at the
// implementation's first gate and continued with --resume.

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
	designwf "github.com/azero-dev/azero/internal/workflow/design"
	"github.com/azero-dev/azero/internal/workflow/implement"
)

// desLLD is the drafter's design for issue #1 of newDesWorld: calc.go
// modified, its test file added.
const desLLD = "# 1 - Feature: Multiply\n\n## 1. Context & Goal\n\n* **Issue:** #1\n* **Objective:** calc.Multiply(2, 3) is 6.\n\n" +
	"## 2. Proposed Changes\n\n### 2.1 Files Changed\n\n| File | Change Type | Description |\n|------|-------------|-------------|\n" +
	"| `calc.go` | Modify | Multiply returns a * b |\n| `calc_test.go` | Add | Test Multiply |\n\n" +
	"## 3. Requirements\n\n1. Multiply(2, 3) is 6.\n\n## 4. Test Scenarios\n\n| ID | Scenario | Input | Expected Output |\n|----|----------|-------|-----------------|\n| 010 | product | 2, 3 | 6 |\n"

// desCoder is the coder's three turns: the test, a stub that compiles
// (red), the code (green).
var desCoder = []string{
	"```go\npackage calc\n\nimport \"testing\"\n\nfunc TestMultiply(t *testing.T) {\n\tif got := Multiply(2, 3); got != 6 {\n\t\tt.Fatalf(\"Multiply(2, 3) = %d, want 6\", got)\n\t}\n}\n```\n",
	"```go\n" + desCalcGo + "\n// Multiply returns a * b.\nfunc Multiply(a, b int) int {\n\treturn 0\n}\n```\n",
	"```go\n" + desCalcGo + "\n// Multiply returns a * b.\nfunc Multiply(a, b int) int {\n\treturn a * b\n}\n```\n",
}

// desImplementScript scripts every role of a design run that goes on into
// its implementation: a script turns the built-in replies off for all of
// them.
func desImplementScript() string {
	var b strings.Builder
	b.WriteString(issScript([]string{desLLD}, []string{"**Verdict:** APPROVED\n\n## Tier 1: blocking\n\n- None\n"}))
	for i, c := range desCoder {
		fmt.Fprintf(&b, "[[reply]]\nrole = \"coder\"\nturn = %d\ntext = '''\n%s'''\n\n", i+1, c)
	}
	return b.String()
}

// The implementation's questions as the terminal shows them: the diff
// review (asked only when something is flagged) and the merge.
const (
	desDiffReview = "unless you type approve"
	desMergeAsk   = "to merge it"
)

// answerImplementation types approve at the implementation's diff review
// (if it asks) and at its merge, counting from the screen's count of each
// question before.
func (p *issProc) answerImplementation() {
	p.t.Helper()
	reviews, merges := strings.Count(p.text(), desDiffReview), strings.Count(p.text(), desMergeAsk)
	deadline := time.Now().Add(testenv.Patience)
	for strings.Count(p.text(), desMergeAsk) == merges {
		if strings.Count(p.text(), desDiffReview) > reviews {
			p.Type(p.t, "approve")
			reviews++
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the implementation never asked to merge:\n%s", p.text())
		}
		select {
		case <-p.done:
			<-p.Drained()
			p.t.Fatalf("azero exited (%d) before asking to merge:\n%s", p.code, p.text())
		case <-time.After(20 * time.Millisecond):
		}
	}
	p.Type(p.t, "approve")
}

// TestDesignImplementGoesOnToMergedCode: one run designs for issue #1
// (committed), then implements the design red to green in its worktree;
// killed at the implementation's first question, `azero design --resume`
// continues the implementation (no model is asked again, the design is
// not committed again) to the merge. The run's history holds the design's
// steps and the implementation's, and --json has the design's path and
// commit.
func TestDesignImplementGoesOnToMergedCode(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "go")
	w := newDesWorld(t, desImplementScript())
	base := strings.TrimSpace(w.git("rev-parse", "HEAD"))

	p := w.start(nil, "design", "--issue", "1", "--implement", "--json")
	p.answer(issDraftMenu, 1, "s")
	p.answer(issVerdictMenu, 1, "a")
	// Killed at the implementation's first question: the diff review when
	// something is flagged, else the merge.
	deadline := time.Now().Add(testenv.Patience)
	for !strings.Contains(p.text(), desDiffReview) && !strings.Contains(p.text(), desMergeAsk) {
		if time.Now().After(deadline) {
			t.Fatalf("the implementation never asked:\n%s", p.text())
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.kill()

	st := w.store()
	listed, err := st.ListRuns(t.Context(), store.Filter{Workflow: designwf.Name})
	if err != nil || len(listed) != 1 {
		t.Fatalf("design runs %v, %v", listed, err)
	}
	id := listed[0].ID
	if r := listed[0]; !strings.HasPrefix(r.Node, designwf.ImplementPrefix) || r.Status.Finished() {
		t.Fatalf("killed, the run is %s at %s: want it inside the implementation", r.Status, r.Node)
	}
	designCommit := strings.TrimSpace(w.git("rev-parse", "HEAD"))
	if designCommit == base || !w.exists("docs/lld/001-multiply.md") {
		t.Fatalf("the design is not committed before the implementation:\n%s", w.git("log", "--oneline"))
	}
	if w.exists("calc_test.go") {
		t.Fatal("the implementation reached the checkout before its merge was approved")
	}
	before := w.calls(id)

	q := w.start(nil, "design", "--resume", "design-001-multiply", "--json")
	q.answerImplementation()
	if code := q.exit(); code != ExitOK {
		t.Fatalf("design --resume: exit %d\n%s", code, q.text())
	}
	if !strings.Contains(q.text(), desDiffReview) || !strings.Contains(q.text(), "Merge azero/1-multiply into main?") {
		t.Errorf("the resumed run did not ask the diff review and the merge:\n%s", q.text())
	}
	if strings.Contains(q.text(), issDraftMenu) || strings.Contains(q.text(), issVerdictMenu) {
		t.Errorf("the resumed run asked the design's questions again:\n%s", q.text())
	}
	if !strings.Contains(q.text(), "at "+designwf.ImplementPrefix) {
		t.Errorf("the resumed run does not say it continues inside the implementation:\n%s", q.text())
	}

	o := desDoc(t, q.stdout.String())
	if o.RunID != id || o.Status != "done" || o.Issue != 1 || o.LLDPath != "docs/lld/001-multiply.md" || o.Commit == "" ||
		!strings.HasPrefix(designCommit, o.Commit) {
		t.Fatalf("the document %+v: want run %s done, the design's path and its commit %s", o, id, designCommit)
	}
	var impl struct {
		Result struct {
			Implementation *struct {
				Result string `json:"result"`
			} `json:"implementation"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(q.stdout.String()), &impl); err != nil || impl.Result.Implementation == nil || impl.Result.Implementation.Result != implement.ResultMerged {
		t.Errorf("the document's implementation: %+v (%v)\n%s", impl.Result.Implementation, err, q.stdout.String())
	}

	// The code is merged; the design was committed once, before it.
	if got := w.read("calc.go"); !strings.Contains(got, "return a * b") {
		t.Errorf("calc.go is not the implementation:\n%s", got)
	}
	if !strings.Contains(w.read("calc_test.go"), "TestMultiply") {
		t.Error("calc_test.go is not the coder's test")
	}
	if n := strings.Count(w.git("log", "--format=%H", base+"..HEAD"), "\n"); n < 2 {
		t.Errorf("%d commits after the design's base, want the design's and the implementation's:\n%s", n, w.git("log", "--oneline"))
	}
	if got := w.git("log", "--format=%H", "--", "docs/lld/001-multiply.md"); strings.Count(got, "\n") != 1 || !strings.HasPrefix(got, designCommit) {
		t.Errorf("the design's commits: %q, want only %s", got, designCommit)
	}
	w.git("merge-base", "--is-ancestor", designCommit, "HEAD") // fails the test when the merge left the design out

	// Each model was asked once per turn, across the kill: the resumed run
	// asked nobody again.
	after := w.calls(id)
	if after["drafter"] != 1 || after["reviewer"] != 1 || after["coder"] != len(desCoder) || before["coder"] != len(desCoder) {
		t.Errorf("model calls %v (before the kill %v): want 1 draft, 1 review, %d coder turns, all before the kill", after, before, len(desCoder))
	}

	// One run, one history: the design's steps, then the implementation's
	// (red before green), prefixed.
	steps, err := st.History(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	var nodes []string
	for _, s := range steps {
		if s.Outcome == "ok" {
			nodes = append(nodes, s.Node)
		}
	}
	order := []string{designwf.NodeLoadInput, designwf.NodeDraft, designwf.NodeCheck, designwf.NodeEditDraft, designwf.NodeReview,
		designwf.NodeEditVerdict, designwf.NodeCommit, designwf.NodeImplement,
		designwf.ImplementPrefix + implement.NodeWorktree, designwf.ImplementPrefix + implement.NodeRed,
		designwf.ImplementPrefix + implement.NodeGreen, designwf.ImplementPrefix + implement.NodeDiffGate,
		designwf.ImplementPrefix + implement.NodeReview, designwf.ImplementPrefix + implement.NodeMerge}
	at := -1
	for _, want := range order {
		i := slices.Index(nodes[at+1:], want)
		if i < 0 {
			t.Fatalf("history %v: %s is missing or out of order", nodes, want)
		}
		at += i + 1
	}
	r, err := st.GetRun(t.Context(), id)
	if err != nil || r.Status != store.StatusDone || r.Workflow != designwf.Name {
		t.Errorf("the run is %s %s (%v)", r.Workflow, r.Status, err)
	}
	if n := len(w.runs()); n != 0 {
		t.Errorf("%d issue runs: the design made runs of another workflow", n)
	}
}
