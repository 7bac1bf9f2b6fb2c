package design

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/lld"
	"github.com/azero-dev/azero/internal/safewrite"
	"github.com/azero-dev/azero/internal/testenv"
	"github.com/azero-dev/azero/internal/workflow/governance"
	"github.com/azero-dev/azero/internal/workflow/implement"
)

// TestGraphInvariants walks the declared graph (the engine refuses any
// edge not declared, so this is every path a run can take), the mounted
// implementation's steps included.
func TestGraphInvariants(t *testing.T) {
	t.Parallel()
	g := New(Deps{})
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	// A draft goes only to the check; the check only back to the drafter
	// or to the human.
	if got := g.Next(NodeDraft); !slices.Equal(got, []string{NodeCheck}) {
		t.Errorf("draft goes to %v, want only the check", got)
	}
	if got := g.Next(NodeCheck); !slices.Equal(got, []string{NodeDraft, NodeEditDraft}) {
		t.Errorf("check goes to %v", got)
	}
	if got := g.Next(NodeReview); !slices.Equal(got, []string{NodeEditVerdict}) {
		t.Errorf("review goes to %v, want only the verdict gate", got)
	}
	for _, gate := range []string{NodeEditDraft, NodeEditVerdict} {
		if !g.IsGate(gate) {
			t.Errorf("%s is not a gate", gate)
		}
	}
	never := []struct {
		target string
		avoid  []string
		why    string
	}{
		{NodeEditDraft, []string{NodeCheck}, "a human sees a draft the check did not read"},
		{NodeReview, []string{NodeCheck}, "the reviewer reads a draft the check did not read"},
		{NodeReview, []string{NodeEditDraft}, "the reviewer reads a draft no human passed"},
		{NodeCommit, []string{NodeEditVerdict}, "a design is committed without the human's approval"},
		{NodeCommit, []string{NodeReview}, "a design is committed without a review"},
		{NodeDraft, []string{NodePreflight}, "a model is called before the pre-flight checks"},
		{NodeDraft, []string{NodeMap}, "the drafter writes without the repository's map"},
		{ImplementPrefix + implement.NodeWorktree, []string{NodeCommit}, "the implementation starts before the design is committed"},
		{flow.End, []string{NodeEditDraft}, "a run ends without a human seeing a draft"},
	}
	for _, n := range never {
		if g.PathAvoiding(n.target) == nil {
			t.Fatalf("%s is unreachable: the test would prove nothing", n.target)
		}
		if p := g.PathAvoiding(n.target, n.avoid...); p != nil {
			t.Errorf("%s: %s", n.why, strings.Join(p, " -> "))
		}
	}
	// The implementation's invariants, mounted: no path to its commit or
	// merge avoids red, green, the diff review or the human review; red
	// comes before any code is written.
	for _, target := range []string{implement.NodeCommit, implement.NodeMerge} {
		for _, gate := range []string{implement.NodeRed, implement.NodeGreen, implement.NodeDiffGate, implement.NodeReview} {
			if p := g.PathAvoiding(ImplementPrefix+target, ImplementPrefix+gate); p != nil {
				t.Errorf("a path reaches %s without %s: %s", target, gate, strings.Join(p, " -> "))
			}
		}
	}
	if p := g.PathAvoiding(ImplementPrefix+implement.NodeImplement, ImplementPrefix+implement.NodeRed); p != nil {
		t.Errorf("code can be written before the red gate: %s", strings.Join(p, " -> "))
	}
	for _, gate := range implement.Graph(implement.Deps{}).Gates() {
		if !g.IsGate(ImplementPrefix + gate) {
			t.Errorf("the implementation's gate %s is not a gate of the design graph", gate)
		}
	}
	if g.Limit() < 400 {
		t.Errorf("step limit %d: the design's own and the implementation's", g.Limit())
	}
}

// TestEveryGateAnswerIsADeclaredRoute asks each gate of the design in the
// states a run can reach it in and routes every answer its question
// allows: each lands on a declared next node (Graph.Decide checks).
func TestEveryGateAnswerIsADeclaredRoute(t *testing.T) {
	t.Parallel()
	root := testenv.NewRepo(t, map[string]string{"calc.go": "package calc\n"})
	g := New(Deps{StateDir: t.TempDir(), Writer: &safewrite.Writer{}})
	base := State{Slug: "design-001-x", Root: root, AuditDir: DefaultAuditDir, LLDPath: "docs/lld/001-x.md",
		Loop: governance.Loop{Draft: goodLLD, DraftFile: "002-draft.md", Drafts: 1, Verdict: "**Verdict:** APPROVED\n", VerdictFile: "003-verdict.md", Verdicts: 1}}
	failing := base
	failing.Draft, failing.Findings, failing.Returns, failing.Checked = inventedLLD, Check(inventedLLD, root), MaxCheckReturns, true
	blocked := base
	blocked.Verdict = "**Verdict:** BLOCK\n"
	states := map[string][]State{NodeEditDraft: {base, failing}, NodeEditVerdict: {base, blocked, failing}}
	for _, gate := range g.Gates() {
		if strings.HasPrefix(gate, ImplementPrefix) {
			continue // the implementation's own tests walk its gates
		}
		if len(states[gate]) == 0 {
			t.Errorf("gate %s is not walked", gate)
		}
		for i, s := range states[gate] {
			ctx := flow.WithRun(t.Context(), "run-"+gate, gate)
			q, err := g.Ask(ctx, gate, &s)
			if err != nil {
				t.Fatalf("%s #%d: %v", gate, i, err)
			}
			for _, o := range q.Options {
				a := human.Answer{Gate: gate, Key: o.Key, Channel: human.ChannelTerminal, Text: "feedback", Confirm: o.Confirm, Files: map[string]string{}}
				for _, f := range q.Files {
					a.Files[f.Name] = f.Content
				}
				s2 := s
				next, err := g.Decide(gate, &s2, q, a)
				if err != nil {
					t.Errorf("%s #%d answer %s: %v", gate, i, o.Key, err)
				}
				if o.Key == AnswerApprove && next != NodeCommit {
					t.Errorf("approve at %s goes to %s", gate, next)
				}
			}
		}
	}
	// A BLOCK asks for the override; a failing check is in the report.
	q, _ := g.Ask(flow.WithRun(t.Context(), "r", NodeEditVerdict), NodeEditVerdict, &blocked)
	if o, _ := q.Option(AnswerApprove); o.Confirm != OverrideWord {
		t.Errorf("approving over a BLOCK confirms %q, want %q", o.Confirm, OverrideWord)
	}
	q, _ = g.Ask(flow.WithRun(t.Context(), "r2", NodeEditDraft), NodeEditDraft, &failing)
	if !strings.Contains(q.Report, "fails azero's mechanical check") || !strings.Contains(q.Report, "src/calc.go") || q.Facts["check"] != "failed" {
		t.Errorf("the draft gate's report on a failing draft = %q, facts %v", q.Report, q.Facts)
	}
}

// goodLLD passes the check in a repository with calc.go.
const goodLLD = `# 1 - Bug: Multiply multiplies

## 1. Context & Goal

* **Issue:** #1
* **Objective:** calc.Multiply returns the product of its arguments.

## 2. Proposed Changes

### 2.1 Files Changed

| File | Change Type | Description |
|------|-------------|-------------|
| ` + "`calc.go`" + ` | Modify | Multiply returns a * b |
| ` + "`calc_test.go`" + ` | Modify | Test Multiply |

## 3. Requirements

1. Multiply(2, 3) is 6.

## 4. Test Scenarios

| ID | Scenario | Input | Expected Output |
|----|----------|-------|-----------------|
| 010 | product | 2, 3 | 6 |
`

// inventedLLD names an invented src/ directory.
var inventedLLD = strings.Replace(goodLLD, "`calc.go`", "`src/calc.go`", 1)

func TestCheck(t *testing.T) {
	t.Parallel()
	root := testenv.NewRepo(t, map[string]string{"calc.go": "package calc\n", "calc_test.go": "package calc\n", "internal/x.go": "package internal\n"})
	row := func(path, change string) string { return "| `" + path + "` | " + change + " | x |\n" }
	doc := func(rows ...string) string {
		return "# 1 - Bug: X\n\n### 2.1 Files Changed\n\n| File | Change Type | Description |\n|---|---|---|\n" + strings.Join(rows, "")
	}
	tests := []struct {
		name  string
		doc   string
		rules []string
	}{
		{"valid", goodLLD, nil},
		{"an invented src/", inventedLLD, []string{"no-placeholder-prefix", "must-exist"}},
		{"a Modify of nothing", doc(row("calc.go", "Modify"), row("gone_test.go", "Modify")), []string{"must-exist"}},
		{"an Add under an invented lib/", doc(row("calc.go", "Modify"), row("lib/calc_test.go", "Add")), []string{"no-placeholder-prefix"}},
		{"an Add over a file", doc(row("calc.go", "Modify"), row("calc_test.go", "Add")), []string{"must-not-exist"}},
		{"an Add in a new directory", doc(row("calc.go", "Modify"), row("calc_test.go", "Modify"), row("internal/fresh/deeper/y.go", "Add")), nil},
		{"an Add below a file", doc(row("calc.go", "Modify"), row("calc.go/x_test.go", "Add")), []string{"parent-is-directory"}},
		{"a secret", doc(row("calc.go", "Modify"), row("calc_test.go", "Modify"), row(".env", "Add")), []string{RuleSecret}},
		{"no test", doc(row("calc.go", "Modify")), []string{RuleTests}},
		{"no code", doc(row("calc_test.go", "Modify")), []string{RuleCode}},
		{"outside the repository", doc(row("calc.go", "Modify"), row("../x_test.go", "Add")), []string{"inside-repository"}},
		{"no table", "# Title\n\nNo table at all.\n", []string{RuleTable}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var rules []string
			for _, f := range Check(tt.doc, root) {
				rules = append(rules, f.Rule)
			}
			for _, r := range tt.rules {
				if !slices.Contains(rules, r) {
					t.Errorf("rules = %v, want %s", rules, r)
				}
			}
			if len(tt.rules) == 0 && len(rules) > 0 {
				t.Errorf("a valid design failed: %v", rules)
			}
		})
	}
	// The check is the same code implement runs: what it passes, lld
	// passes too.
	parsed, err := lld.Parse(goodLLD)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lld.Check(parsed, root); err != nil {
		t.Fatal(err)
	}
	if text := FindingsText(Check(inventedLLD, root)); !strings.Contains(text, "`src/calc.go`") || !strings.Contains(text, "line ") {
		t.Errorf("findings text = %q", text)
	}
}

func TestBuiltInPromptsAndTemplate(t *testing.T) {
	t.Parallel()
	for _, section := range []string{"## 1. Context & Goal", "### 2.1 Files Changed", "| File | Change Type | Description |",
		"### 2.2 Data Structures and Signatures", "### 2.3 Logic Flow", "## 3. Requirements", "## 4. Test Scenarios"} {
		if !strings.Contains(Template(), section) {
			t.Errorf("the template lacks %q", section)
		}
	}
	if !strings.Contains(ReviewPrompt(), "**Verdict:** APPROVED or BLOCK") || len(ReviewPromptSHA256()) != 64 {
		t.Error("the review prompt does not ask for a verdict")
	}
	s := &State{Issue: &Issue{Number: 4, Title: "T", Body: "the body"}, Map: "## Files\n\ncalc.go\n", Loop: governance.Loop{Draft: "# D\n"}}
	first := draftRequest(s)
	msg := first.Messages[0].Text
	if !strings.Contains(msg, "<issue>\n# T\n\nIssue #4") || !strings.Contains(msg, "<repository>\n## Files") || strings.Contains(msg, "<draft>") ||
		!strings.Contains(first.System, Template()) || first.Purpose != "design" {
		t.Errorf("first request = %+v", first)
	}
	s.CheckFeedback = "- `src/x.go`: no src/ (no-placeholder-prefix)\n"
	if msg := draftRequest(s).Messages[0].Text; !strings.Contains(msg, "<check>\n- `src/x.go`") || !strings.Contains(msg, "<draft>\n# D\n</draft>") {
		t.Errorf("a check's return = %q", msg)
	}
	s.CheckFeedback, s.Feedback = "", "shorter"
	if msg := draftRequest(s).Messages[0].Text; !strings.Contains(msg, "<feedback>\nshorter\n</feedback>") || strings.Contains(msg, "<check>") {
		t.Errorf("a revision = %q", msg)
	}
	r := reviewRequest(s, nil)
	if r.System != ReviewPrompt() || r.Purpose != "design-review" || !strings.Contains(r.Messages[0].Text, "<check>\nThe Files Changed table passed") ||
		strings.Contains(r.Messages[0].Text, "<repository>") {
		t.Errorf("review request = %+v", r)
	}
	if err := errors.Unwrap(&ManualError{}); !errors.Is(err, flow.ErrAborted) {
		t.Errorf("a manual stop is not an abort: %v", err)
	}
}
