package flow_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/store"
)

// part is the inner state of the mount tests.
type part struct {
	Trail  []string `json:"trail"`
	Gate   string   `json:"gate"` // the gate name the inner decide saw
	Answer string   `json:"answer"`
	Deps   string   `json:"deps"` // which graph's nodes ran
}

// whole is the outer state: the inner one is a field, nil until made.
type whole struct {
	Trail []string `json:"trail"`
	Inner *part    `json:"inner,omitempty"`
}

// innerGraph works, asks at a gate, and either ends or goes back; its
// nodes record deps, so a test sees which build of it ran.
func innerGraph(deps string, fail func() error) *flow.Graph[part] {
	return flow.New[part]("inner", "work").
		Node("work", func(ctx context.Context, s *part) (string, error) {
			if fail != nil {
				if err := fail(); err != nil {
					return "", err
				}
			}
			s.Trail = append(s.Trail, "work:"+flow.CurrentNode(ctx))
			s.Deps = deps
			return "check", nil
		}, "check").
		Gate("check", func(ctx context.Context, s *part) (human.Question, error) {
			return human.Question{Kind: human.Word, Prompt: "ok (" + deps + ")?",
				Options: []human.Option{{Key: "yes", Decision: "yes"}, {Key: "again", Decision: "again"}}}, nil
		}, func(s *part, q human.Question, a human.Answer) (string, error) {
			s.Gate, s.Answer = q.Gate, a.Key
			if a.Key == "again" {
				return "work", nil
			}
			return flow.End, nil
		}, "work", flow.End).
		MaxVisits("work", 3).
		MaxSteps(20)
}

func innerOf(s *whole) *part { return s.Inner }

// outerGraph makes the inner state, enters the mounted graph and ends at
// "after" when it ends.
func outerGraph(inner *flow.Graph[part], bind func(context.Context, *part) (*flow.Graph[part], error)) *flow.Graph[whole] {
	g := flow.New[whole]("outer", "before").
		Node("before", func(ctx context.Context, s *whole) (string, error) {
			s.Trail = append(s.Trail, "before")
			if s.Inner == nil {
				s.Inner = &part{}
			}
			return "in/work", nil
		}, "in/work").
		Node("after", func(ctx context.Context, s *whole) (string, error) {
			s.Trail = append(s.Trail, "after")
			return flow.End, nil
		}, flow.End).
		MaxSteps(10)
	return flow.Mount(g, flow.Mounted[whole, part]{Prefix: "in/", Graph: inner, State: innerOf, Exit: "after", Bind: bind})
}

func TestMountIsOneGraph(t *testing.T) {
	t.Parallel()
	g := outerGraph(innerGraph("shape", nil), nil)
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := g.Nodes(); !slices.Equal(got, []string{"before", "after", "in/work", "in/check"}) {
		t.Errorf("nodes = %v", got)
	}
	if got := g.Next("in/check"); !slices.Equal(got, []string{"in/work", "after"}) {
		t.Errorf("the inner gate routes to %v; want the inner step prefixed and End mapped to the exit", got)
	}
	if !g.IsGate("in/check") || g.IsGate("in/work") {
		t.Error("the inner gate is not a gate of the outer graph, or the inner node is")
	}
	if st, _ := g.Step("in/work"); st.MaxVisits != 3 {
		t.Errorf("the inner visit limit = %d, want 3", st.MaxVisits)
	}
	if g.Limit() != 30 {
		t.Errorf("step limit = %d, want the outer's 10 plus the inner's 20", g.Limit())
	}
	// The graph walks see the inner gate on every path to the exit.
	if p := g.PathAvoiding("after", "in/check"); p != nil {
		t.Errorf("a path reaches after without the inner gate: %v", p)
	}
	if p := g.PathAvoiding("after"); !slices.Equal(p, []string{"before", "in/work", "in/check", "after"}) {
		t.Errorf("path = %v", p)
	}
	// Decide routes as the engine and Temporal's workflow code do.
	s := &whole{Inner: &part{}}
	q, err := g.Ask(t.Context(), "in/check", s)
	if err != nil {
		t.Fatal(err)
	}
	next, err := g.Decide("in/check", s, q, human.Answer{Gate: "in/check", Key: "again", Channel: human.ChannelTerminal})
	if err != nil || next != "in/work" || s.Inner.Answer != "again" || s.Inner.Gate != "check" {
		t.Errorf("decide = %q, %v, state %+v; want in/work, the answer on the inner state, seen at its own gate's name", next, err, s.Inner)
	}
	// Without its inner state a mounted step fails; it never panics.
	if _, err := g.Ask(t.Context(), "in/check", &whole{}); err == nil || !strings.Contains(err.Error(), "no state for the mounted graph") {
		t.Errorf("ask without the inner state: %v", err)
	}
}

func TestMountRefusesWhatIsNotOneGraph(t *testing.T) {
	t.Parallel()
	base := func() *flow.Graph[whole] {
		return flow.New[whole]("outer", "a").Node("a", func(context.Context, *whole) (string, error) { return "in/work", nil }, "in/work")
	}
	broken := flow.New[part]("inner", "x").Node("x", func(context.Context, *part) (string, error) { return "y", nil }, "y")
	tests := []struct {
		name string
		g    *flow.Graph[whole]
		want string
	}{
		{"no prefix", flow.Mount(base(), flow.Mounted[whole, part]{Graph: innerGraph("", nil), State: innerOf, Exit: flow.End}), "prefix"},
		{"no exit", flow.Mount(base(), flow.Mounted[whole, part]{Prefix: "in/", Graph: innerGraph("", nil), State: innerOf}), "exit"},
		{"no lens", flow.Mount(base(), flow.Mounted[whole, part]{Prefix: "in/", Graph: innerGraph("", nil), Exit: flow.End}), "required"},
		{"an inner graph not well formed", flow.Mount(base(), flow.Mounted[whole, part]{Prefix: "in/", Graph: broken, State: innerOf, Exit: flow.End}), "unknown node"},
		{"an exit that does not exist", flow.Mount(base(), flow.Mounted[whole, part]{Prefix: "in/", Graph: innerGraph("", nil), State: innerOf, Exit: "gone"}), "unknown node \"gone\""},
		{"an outer step with the prefix", flow.Mount(base().Node("in/x", func(context.Context, *whole) (string, error) { return flow.End, nil }, flow.End),
			flow.Mounted[whole, part]{Prefix: "in/", Graph: innerGraph("", nil), State: innerOf, Exit: flow.End}), "already has the prefix"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if err := tt.g.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate = %v, want an error about %q", err, tt.want)
			}
		})
	}
}

// TestMountedRunWaitsResumesAndEnds drives a run through the mounted
// graph: one history with the inner steps named with the prefix, the
// inner gate waiting and answered on resume, then the outer exit.
func TestMountedRunWaitsResumesAndEnds(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	g := outerGraph(innerGraph("shape", nil), nil)
	id, err := flow.Create(t.Context(), e, g, &whole{}, flow.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.Answerer = nobody
	_, err = flow.Drive(t.Context(), e, g, id)
	var we *flow.WaitingError
	if !errors.As(err, &we) || we.Node != "in/check" {
		t.Fatalf("err = %v, want waiting at in/check", err)
	}
	r, _ := e.Store.GetRun(t.Context(), id)
	if r.Status != store.StatusWaiting || r.Node != "in/check" || !strings.Contains(string(r.Question), `"gate":"in/check"`) {
		t.Fatalf("run = %s at %s, question %s", r.Status, r.Node, r.Question)
	}
	e.Answerer = answerer(func(q human.Question) (human.Answer, error) {
		key := "yes"
		if q.Gate != "in/check" {
			return human.Answer{}, fmt.Errorf("asked at %s", q.Gate)
		}
		return human.Answer{Gate: q.Gate, Key: key, Channel: human.ChannelTerminal}, nil
	})
	s, err := flow.Drive(t.Context(), e, g, id)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.Trail, ","); got != "before,after" {
		t.Errorf("outer trail = %s", got)
	}
	if s.Inner == nil || strings.Join(s.Inner.Trail, ",") != "work:in/work" || s.Inner.Answer != "yes" || s.Inner.Gate != "check" {
		t.Errorf("inner state = %+v; want its node run once (seeing its outer name as the current node) and the answer", s.Inner)
	}
	steps, err := e.Store.History(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	var nodes []string
	for _, st := range steps {
		if st.Outcome == "ok" {
			nodes = append(nodes, st.Node)
		}
	}
	if got := strings.Join(nodes, ","); got != "before,in/work,in/check,after" {
		t.Errorf("history = %s", got)
	}
	r, _ = e.Store.GetRun(t.Context(), id)
	if r.Status != store.StatusDone || r.Visits["in/work"] != 1 {
		t.Errorf("run = %s, visits %v", r.Status, r.Visits)
	}
}

// TestMountedRunResumesInsideTheInnerGraph: a run stopped in a mounted
// step (here a failure; a kill leaves the run at the same step) resumes
// at that step, with the inner state as the last checkpoint left it.
func TestMountedRunResumesInsideTheInnerGraph(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	calls := 0
	fail := func() error {
		calls++
		if calls == 2 {
			return errors.New("killed")
		}
		return nil
	}
	g := outerGraph(innerGraph("shape", fail), nil)
	id, _ := flow.Create(t.Context(), e, g, &whole{}, flow.CreateOptions{})
	e.Answerer = typed("again")
	_, err := flow.Drive(t.Context(), e, g, id)
	var ne *flow.NodeError
	if !errors.As(err, &ne) || ne.Node != "in/work" {
		t.Fatalf("err = %v, want a failure at in/work", err)
	}
	r, _ := e.Store.GetRun(t.Context(), id)
	if r.Node != "in/work" || r.Visits["in/work"] != 1 || r.Visits["in/check"] != 1 {
		t.Fatalf("run stands at %s with visits %v", r.Node, r.Visits)
	}
	e.Answerer = typed("yes")
	s, err := flow.Drive(t.Context(), e, g, id)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.Inner.Trail, ","); got != "work:in/work,work:in/work" || strings.Join(s.Trail, ",") != "before,after" {
		t.Errorf("inner trail %s, outer %v: want the inner node twice and the outer steps once each", got, s.Trail)
	}
}

// TestMountedLimitsHold: the inner visit limit stops a loop inside the
// mounted graph as it would stop it alone.
func TestMountedLimitsHold(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	g := outerGraph(innerGraph("shape", nil), nil)
	id, _ := flow.Create(t.Context(), e, g, &whole{}, flow.CreateOptions{})
	e.Answerer = typed("again")
	_, err := flow.Drive(t.Context(), e, g, id)
	if !errors.Is(err, flow.ErrLoopLimit) || !strings.Contains(err.Error(), "in/work ran 3 times") {
		t.Fatalf("err = %v, want the loop limit of in/work", err)
	}
}

// TestMountBindsTheInnerGraphToItsState: with Bind, the inner nodes and
// questions run from the graph built for the inner state as it is then;
// decisions route with the shape's decide, as on Temporal.
func TestMountBindsTheInnerGraphToItsState(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	var built []string
	bind := func(_ context.Context, s *part) (*flow.Graph[part], error) {
		built = append(built, fmt.Sprintf("%d", len(s.Trail)))
		return innerGraph("bound", nil), nil
	}
	g := outerGraph(innerGraph("shape", nil), bind)
	id, _ := flow.Create(t.Context(), e, g, &whole{}, flow.CreateOptions{})
	var prompts []string
	e.Answerer = answerer(func(q human.Question) (human.Answer, error) {
		prompts = append(prompts, q.Prompt)
		return human.Answer{Gate: q.Gate, Key: "yes", Channel: human.ChannelTerminal}, nil
	})
	s, err := flow.Drive(t.Context(), e, g, id)
	if err != nil {
		t.Fatal(err)
	}
	if s.Inner.Deps != "bound" || !slices.Equal(prompts, []string{"ok (bound)?"}) {
		t.Errorf("deps %q, prompts %v: the bound graph did not run", s.Inner.Deps, prompts)
	}
	if !slices.Equal(built, []string{"0", "1"}) {
		t.Errorf("bound for inner states %v, want once per step, for the state it stood in", built)
	}
	failing := outerGraph(innerGraph("shape", nil), func(context.Context, *part) (*flow.Graph[part], error) {
		return nil, errors.New("no runner")
	})
	id, _ = flow.Create(t.Context(), e, failing, &whole{}, flow.CreateOptions{})
	if _, err := flow.Drive(t.Context(), e, failing, id); err == nil || !strings.Contains(err.Error(), "in/work: no runner") {
		t.Errorf("err = %v, want the bind error named by the step", err)
	}
}
