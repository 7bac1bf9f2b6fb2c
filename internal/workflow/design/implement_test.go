package design

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
	"github.com/azero-dev/azero/internal/workflow/implement"
)

// coderScript writes the test of Multiply (red: it fails on the wrong
// product), then the fix (green).
var coderScript = reply("coder", 1, "```go\npackage calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"add\")\n\t}\n}\n\n"+
	"func TestMultiply(t *testing.T) {\n\tif got := Multiply(2, 3); got != 6 {\n\t\tt.Errorf(\"Multiply(2, 3) = %d, want 6\", got)\n\t}\n}\n```\n") +
	reply("coder", 2, "```go\npackage calc\n\n// Add returns a + b.\nfunc Add(a, b int) int { return a + b }\n\n// Multiply returns a times b.\nfunc Multiply(a, b int) int { return a * b }\n```\n")

// TestImplementGoesOnInTheSameRun: with --implement the committed design
// is implemented in the same run, red to green, through the mounted
// implementation's gates; killed while it runs the tests, the run resumes
// inside the implementation and merges.
func TestImplementGoesOnInTheSameRun(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "go")
	w := newWorld(t, project, reply("drafter", 1, goodLLD)+reply("reviewer", 1, approved))
	w.coder = w.file("coder.toml", coderScript)
	s := w.prepare(w.fileIssue("Multiply returns 0", "calc.Multiply(2, 3) returns 0; it must return 6."), &ImplementPlan{Coder: "mock:scripted"})
	h := &person{steps: []step{
		{gate: NodeEditDraft, key: AnswerSend},
		{gate: NodeEditVerdict, key: AnswerApprove},
	}}
	// Killed when the green tests start.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	w.eng.Watch = func(ev event.Event) {
		if ev.Kind == event.NodeStarted && ev.Node == ImplementPrefix+implement.NodeGreen {
			cancel()
		}
	}
	runID := store.NewID(time.Now())
	g := New(w.deps(runID, h))
	if _, err := flow.Create(t.Context(), w.eng, g, s, flow.CreateOptions{ID: runID, Key: s.Slug}); err != nil {
		t.Fatal(err)
	}
	_, err := flow.Drive(ctx, w.eng, g, runID)
	if !errors.Is(err, flow.ErrInterrupted) {
		t.Fatalf("err = %v, want interrupted in the implementation's green", err)
	}
	r, _ := w.st.GetRun(t.Context(), runID)
	if r.Node != ImplementPrefix+implement.NodeGreen || r.Workflow != Name {
		t.Fatalf("the run stands at %s (%s)", r.Node, r.Workflow)
	}
	w.eng.Watch = nil
	h = &person{steps: []step{{gate: ImplementPrefix + implement.NodeDiffGate, key: "approve"}, {gate: ImplementPrefix + implement.NodeReview, key: "approve"}}}
	final, err := w.resume(t.Context(), runID, h)
	if err != nil {
		t.Fatal(err)
	}
	in := final.Implementation
	if in == nil || in.Result != implement.ResultMerged || in.Red == nil || in.Green == nil || in.LLDPath == "" {
		t.Fatalf("implementation = %+v", in)
	}
	if !strings.Contains(w.read("calc.go"), "return a * b") || !strings.Contains(w.read("calc_test.go"), "TestMultiply") {
		t.Errorf("the change is not merged into the checkout")
	}
	// One run: its history goes from the design into the implementation.
	steps, err := w.st.History(t.Context(), runID)
	if err != nil {
		t.Fatal(err)
	}
	var nodes []string
	for _, st := range steps {
		if st.Outcome == "ok" {
			nodes = append(nodes, st.Node)
		}
	}
	order := []string{NodeCommit, NodeImplement, ImplementPrefix + implement.NodeWorktree, ImplementPrefix + implement.NodeRed,
		ImplementPrefix + implement.NodeGreen, ImplementPrefix + implement.NodeDiffGate, ImplementPrefix + implement.NodeReview, ImplementPrefix + implement.NodeMerge}
	at := -1
	for _, want := range order {
		i := slices.Index(nodes, want)
		if i <= at {
			t.Fatalf("history %v: %s is missing or out of order", nodes, want)
		}
		at = i
	}
	if got := w.git("log", "--format=%s", "-3"); !strings.Contains(got, "docs(lld): design for issue #1") {
		t.Errorf("the design commit is not in the history:\n%s", got)
	}
	if r, _ = w.st.GetRun(t.Context(), runID); r.Status != store.StatusDone {
		t.Errorf("run status %s", r.Status)
	}
	if w.calls(runID, "coder") != 2 {
		t.Errorf("coder calls = %d, want 2", w.calls(runID, "coder"))
	}
}

// TestImplementationThatCannotStartIsResumable: a design whose tests no
// runner azero knows can run is committed, and the run stops at the
// implementation's first step, to be resumed once the cause is fixed.
func TestImplementationThatCannotStartIsResumable(t *testing.T) {
	t.Parallel()
	files := map[string]string{"calc.rb": "def add(a, b) a + b end\n", "README.md": "calc\n"}
	lld := strings.NewReplacer("`calc.go`", "`calc.rb`", "`calc_test.go` | Modify", "`calc_test.rb` | Add").Replace(goodLLD)
	w := newWorld(t, files, reply("drafter", 1, lld)+reply("reviewer", 1, approved))
	s := w.prepare(w.fileIssue("Multiply", "It must multiply."), &ImplementPlan{Coder: "mock:scripted"})
	_, final, err := w.start(s, &person{steps: []step{{gate: NodeEditDraft, key: AnswerSend}, {gate: NodeEditVerdict, key: AnswerApprove}}})
	var ne *flow.NodeError
	if !errors.As(err, &ne) || ne.Node != NodeImplement || !strings.Contains(err.Error(), "its implementation cannot start") {
		t.Fatalf("err = %v, want a failure at %s", err, NodeImplement)
	}
	if final.Committed == nil || final.Implementation != nil {
		t.Errorf("committed %+v, implementation %+v", final.Committed, final.Implementation)
	}
}
