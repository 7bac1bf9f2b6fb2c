package implement

import (
	"slices"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/testenv"
	"github.com/azero-dev/azero/internal/testrun"
)

// TestNoPathSkipsAGate walks the declared graph (the engine refuses any
// edge not declared, so this is every path a run can take).
func TestNoPathSkipsAGate(t *testing.T) {
	t.Parallel()
	g := Graph(Deps{})
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{NodeCommit, NodeMerge} {
		if g.PathAvoiding(target) == nil {
			t.Fatalf("%s is unreachable: the test would prove nothing", target)
		}
		for _, gate := range []string{NodeRed, NodeGreen, NodeDiffGate, NodeReview} {
			if p := g.PathAvoiding(target, gate); p != nil {
				t.Errorf("a path reaches %s without %s: %s", target, gate, strings.Join(p, " -> "))
			}
		}
	}
	for _, gate := range []string{NodeDiffGate, NodeReview, NodeEscalate, NodeScaffoldWriteReview, NodeWriteReview, NodeReviseWriteReview} {
		if !g.IsGate(gate) {
			t.Errorf("%s is not a human gate", gate)
		}
	}
	// Red must come before any code is written.
	if p := g.PathAvoiding(NodeImplement, NodeRed); p != nil {
		t.Errorf("code can be written before the red gate: %s", strings.Join(p, " -> "))
	}
	// A large replacement is written only after its write review; the
	// scaffold's approved writes go on to red, the code's to green.
	for apply, gate := range map[string]string{NodeScaffoldApplyWrites: NodeScaffoldWriteReview, NodeApplyWrites: NodeWriteReview, NodeReviseApplyWrites: NodeReviseWriteReview} {
		if g.PathAvoiding(apply) == nil {
			t.Fatalf("%s is unreachable: the test would prove nothing", apply)
		}
		if p := g.PathAvoiding(apply, gate); p != nil {
			t.Errorf("a path reaches %s without %s: %s", apply, gate, strings.Join(p, " -> "))
		}
	}
	for _, apply := range []string{NodeScaffoldApplyWrites, NodeReviseApplyWrites} {
		if next := g.Next(apply); slices.Contains(next, NodeGreen) || slices.Contains(next, NodeImplement) {
			t.Errorf("the approved writes of tests skip red: %s -> %v", apply, next)
		}
	}
	// A revision asks for the tests only after a red: the revised tests
	// go through red again before any code is asked.
	if p := g.PathAvoiding(NodeRevise, NodeRed); p != nil {
		t.Errorf("a revision starts before the red gate: %s", strings.Join(p, " -> "))
	}
	for _, gen := range []string{NodeScaffold, NodeImplement, NodeRevise} {
		if !slices.ContainsFunc(g.Next(gen), g.IsGate) {
			t.Errorf("%s cannot stop at a write review: %v", gen, g.Next(gen))
		}
	}
	// The merge only follows a commit, which only follows the human review.
	for _, next := range g.Next(NodeDiffGate) {
		if next == NodeCommit || next == NodeMerge {
			t.Errorf("the diff gate leads straight to %s", next)
		}
	}
}

// runBranch is a repository checked out on a run's branch azero/x at its
// first commit, which it returns, as a run's work tree is before azero's
// commit.
func runBranch(t *testing.T) (repo, head string) {
	t.Helper()
	repo = testenv.NewRepo(t, map[string]string{"calc.py": "def add(a, b):\n    return a + b\n"})
	testenv.Git(t, repo, "checkout", "-q", "-b", "azero/x")
	return repo, strings.TrimSpace(testenv.Git(t, repo, "rev-parse", "HEAD"))
}

// TestEveryGateAnswerIsADeclaredRoute asks every gate in the states a run
// can reach it in, and routes every answer each question allows: each
// lands on a declared next node (Graph.Decide checks), so no answer on any
// channel can take a run where the graph does not show.
func TestEveryGateAnswerIsADeclaredRoute(t *testing.T) {
	t.Parallel()
	repo, head := runBranch(t)
	testenv.WriteFiles(t, repo, map[string]string{"calc.py": "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n", "test_calc.py": "import calc\n"})
	g := Graph(Deps{})
	base := State{Worktree: repo, Repo: repo, Branch: "azero/x", BaseBranch: "main", BaseCommit: head,
		Files: []FileSpec{{Path: "calc.py", Change: "Modify"}, {Path: "test_calc.py", Change: "Add", Test: true}},
		Green: &testrun.Result{Summary: "2 passed"}}
	scaffoldWrite := func(purpose string, scaffolds int) State {
		s := base
		path := "test_calc.py"
		if purpose == PurposeStub {
			path = "calc.py"
		}
		s.Scaffolds, s.Stubbed = scaffolds, purpose == PurposeStub
		s.PendingWrites = []PendingWrite{{Path: path, Purpose: purpose, Content: "import calc\n\n\ndef test_mul():\n    assert calc.mul(2, 3) == 6\n", Strategy: "replace"}}
		return s
	}
	reviseWrite := func(rounds int) State {
		s := base
		s.Revising, s.ReviseRounds, s.Feedback = true, rounds, "keep the zero case"
		s.PendingWrites = []PendingWrite{{Path: "test_calc.py", Purpose: PurposeRevise, Content: "import calc\n\n\ndef test_mul():\n    assert calc.mul(0, 3) == 0\n", Strategy: "replace"}}
		return s
	}
	implementWrite := func(implementations int) State {
		s := base
		s.Implementations = implementations
		s.PendingWrites = []PendingWrite{{Path: "calc.py", Purpose: PurposeImplement, Content: "def mul(a, b):\n    return a * b\n", Strategy: "replace"}}
		return s
	}
	states := map[string][]State{
		NodeScaffoldWriteReview: {scaffoldWrite(PurposeScaffold, 1), scaffoldWrite(PurposeStub, 2), scaffoldWrite(PurposeScaffold, MaxScaffolds)},
		NodeWriteReview:         {implementWrite(1), implementWrite(MaxImplementations)},
		NodeReviseWriteReview:   {reviseWrite(1), reviseWrite(MaxScaffolds)},
		NodeEscalate: {
			func() State { s := base; s.EscalatedFrom, s.Escalation = NodeRed, "not a red"; return s }(),
			func() State { s := base; s.EscalatedFrom, s.Escalation = NodeGreen, "runner failed"; return s }(),
		},
		NodeDiffGate: {base},
		NodeReview: {
			func() State { s := base; s.GateDecision = "APPROVED"; return s }(),
			func() State { s := base; s.GateDecision = "NOT_REQUIRED"; return s }(),
			func() State { s := base; s.GateDecision = "REJECTED"; return s }(),
			func() State { s := base; s.GateDecision = "REJECTED"; s.Implementations = MaxImplementations; return s }(),
			func() State { s := base; s.GateDecision = "APPROVED"; s.Implementations = MaxImplementations; return s }(),
		},
	}
	for _, gate := range g.Gates() {
		if len(states[gate]) == 0 {
			t.Errorf("gate %s is not walked", gate)
		}
		for i, s := range states[gate] {
			q, err := g.Ask(t.Context(), gate, &s)
			if err != nil {
				t.Fatalf("%s #%d: %v", gate, i, err)
			}
			opts := q.Options
			if q.Unattended != nil {
				opts = append(opts, *q.Unattended)
			}
			if len(opts) == 0 {
				t.Errorf("%s #%d offers no answer", gate, i)
			}
			for _, o := range opts {
				a := human.Answer{Gate: gate, Key: o.Key, Channel: human.ChannelTerminal, Text: "some feedback", Confirm: o.Confirm}
				if q.Unattended != nil && o.Key == q.Unattended.Key {
					a.Channel = human.ChannelUnattended
				}
				s2 := s
				if _, err := g.Decide(gate, &s2, q, a); err != nil {
					t.Errorf("%s #%d answer %s: %v", gate, i, o.Key, err)
				}
			}
		}
	}
	// Spent attempts take revise away; a rejected diff takes approve away.
	q, _ := g.Ask(t.Context(), NodeReview, &states[NodeReview][3])
	if keys := q.Keys(); !slices.Equal(keys, []string{AnswerAbort}) {
		t.Errorf("rejected with no attempt left: answers %v, want only abort", keys)
	}
	q, _ = g.Ask(t.Context(), NodeReview, &states[NodeReview][2])
	if keys := q.Keys(); !slices.Equal(keys, []string{AnswerRevise, AnswerAbort}) {
		t.Errorf("rejected diff: answers %v, want revise or abort", keys)
	}
	q, _ = g.Ask(t.Context(), NodeReview, &states[NodeReview][1])
	if !strings.Contains(q.Report, "+def mul(a, b):") {
		t.Errorf("a change nobody saw at the diff review is not shown at the human review:\n%s", q.Report)
	}
}

func TestReviseSendsFeedbackToTheCoder(t *testing.T) {
	t.Parallel()
	s := State{Implementations: 1, GateDecision: "APPROVED"}
	q := human.Question{Facts: map[string]any{factTree: "4b825dc642cb6eb9a060e54bf8d69288fbee4904"}}
	next, err := decideReview(&s, q, human.Answer{Key: AnswerRevise, Text: "  use math.prod  "})
	if err != nil || next != NodeRevise || s.Feedback != "use math.prod" || s.Revisions != 1 || s.GateDecision != "" ||
		!s.Revising || s.ReviewedTree != "4b825dc642cb6eb9a060e54bf8d69288fbee4904" {
		t.Fatalf("revise: next %s, state %+v, %v", next, s, err)
	}
	// Every file is asked whether it changes for the feedback, and may
	// stay as it is.
	for name, text := range map[string]string{"code": implementText(&s, "calc.py", nil), "tests": reviseText(&s, "test_calc.py", nil)} {
		if !strings.Contains(text, "use math.prod") || !strings.Contains(text, "sent it back") || !strings.Contains(text, "NO CHANGE") {
			t.Errorf("the %s prompt does not ask about the feedback:\n%s", name, text)
		}
	}
}

// The diff review, and the human review of a change nobody saw there,
// list the edit blocks that matched their file only loosely.
func TestReviewsListLooseMatches(t *testing.T) {
	t.Parallel()
	repo, head := runBranch(t)
	testenv.WriteFiles(t, repo, map[string]string{"calc.py": "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"})
	g := Graph(Deps{})
	s := State{Worktree: repo, Repo: repo, Branch: "azero/x", BaseBranch: "main", BaseCommit: head,
		Files:        []FileSpec{{Path: "calc.py", Change: "Modify"}},
		LooseMatches: []LooseMatch{{Path: "calc.py", What: "block 1, lines 1-2: applied, loose match: indentation shifted by +4 spaces"}}}
	for _, gate := range []string{NodeDiffGate, NodeReview} {
		q, err := g.Ask(t.Context(), gate, &s)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(q.Report, "matched only loosely") || !strings.Contains(q.Report, "calc.py: block 1, lines 1-2: applied, loose match: indentation shifted by +4 spaces") {
			t.Errorf("%s does not list the loose match:\n%s", gate, q.Report)
		}
	}
}

// Every loop through a write review passes a node with a visit limit (the
// round that wrote the files), so a human who keeps revising, or files
// that keep changing under the approval, cannot loop for ever.
func TestWriteReviewLoopsAreBounded(t *testing.T) {
	t.Parallel()
	g := Graph(Deps{})
	var limited []string
	for _, name := range g.Nodes() {
		if st, _ := g.Step(name); st.MaxVisits > 0 {
			limited = append(limited, name)
		}
	}
	for _, name := range []string{NodeScaffoldWriteReview, NodeScaffoldApplyWrites, NodeWriteReview, NodeApplyWrites} {
		// A walk from name that never enters a limited node must not come
		// back to name.
		seen := map[string]bool{}
		stack := []string{name}
		for len(stack) > 0 {
			cur := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, nx := range g.Next(cur) {
				if nx == name {
					t.Errorf("%s loops back to itself through %s without a visit limit (limited: %v)", name, cur, limited)
				}
				if !seen[nx] && !slices.Contains(limited, nx) && nx != flow.End {
					seen[nx] = true
					stack = append(stack, nx)
				}
			}
		}
	}
}
