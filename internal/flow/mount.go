package flow

import (
	"context"
	"fmt"
	"strings"

	"github.com/azero-dev/azero/internal/human"
)

// Mounted describes a graph mounted inside another (Mount): its steps
// become steps of the outer graph, working on a part of the outer state.
type Mounted[S, I any] struct {
	// Prefix names the inner steps in the outer graph: step "commit" of
	// the inner graph is Prefix+"commit". It must not be empty, and no
	// outer step may start with it.
	Prefix string
	// Graph is the inner graph: its shape (steps, routes, visit limits,
	// step limit) and, unless Bind is set, the functions its steps run.
	// Its gates' decide functions are always taken from it: a decide is
	// pure, so it cannot depend on what Bind would bind.
	Graph *Graph[I]
	// State returns the inner state inside the outer one (a field of it,
	// or nil while there is none). It must be pure, as a decide is: the
	// gates of the inner graph route through it, on any engine.
	State func(*S) *I
	// Exit is where a route of the inner graph to End continues: a step
	// of the outer graph, or End.
	Exit string
	// Bind, when set, returns the inner graph built for the inner state
	// as it is now (with dependencies that depend on it, which a run
	// learns only when it reaches the inner graph): each inner node and
	// gate question runs from it. It must have Graph's shape. Nil runs
	// Graph's own functions.
	Bind func(ctx context.Context, s *I) (*Graph[I], error)
}

// Mount adds every step of m.Graph to outer, named m.Prefix+name, so that
// a run of outer goes on into the inner graph and back within one run:
// one history, one state (the inner state is m.State of the outer), one
// lease, and the engine's checkpoints, step limit and visit limits, the
// graph walks (Validate, PathAvoiding, Next, IsGate) and other engines
// (Step, Decide) all see one graph. An outer step enters the inner graph
// by routing to m.Prefix+m.Graph.Start(); the inner graph's routes to End
// go to m.Exit. The inner graph's step limit is added to outer's: set the
// outer's own limit (MaxSteps) before mounting. The inner graph's Finish
// is not called: the outer graph's Finish judges the run (it may call
// m.Graph.Judge on the inner state).
//
// Mount returns outer; a problem (an empty prefix, an inner graph that is
// not well formed, a name taken) is reported by outer's Validate.
func Mount[S, I any](outer *Graph[S], m Mounted[S, I]) *Graph[S] {
	inner := m.Graph
	switch {
	case m.Prefix == "":
		outer.errs = append(outer.errs, fmt.Errorf("mount: the prefix of a mounted graph must not be empty"))
		return outer
	case inner == nil || m.State == nil:
		outer.errs = append(outer.errs, fmt.Errorf("mount %s: the inner graph and its state are required", m.Prefix))
		return outer
	case m.Exit == "":
		outer.errs = append(outer.errs, fmt.Errorf("mount %s: no exit: name the outer step (or End) the inner graph ends at", m.Prefix))
		return outer
	}
	if err := inner.Validate(); err != nil {
		outer.errs = append(outer.errs, fmt.Errorf("mount %s: %w", m.Prefix, err))
		return outer
	}
	for _, name := range outer.order {
		if strings.HasPrefix(name, m.Prefix) {
			outer.errs = append(outer.errs, fmt.Errorf("mount %s: the outer step %q already has the prefix", m.Prefix, name))
		}
	}
	out := func(next string) string {
		if next == End {
			return m.Exit
		}
		return m.Prefix + next
	}
	for _, name := range inner.order {
		nd := inner.nodes[name]
		var nexts []string
		for _, nx := range nd.next {
			nexts = append(nexts, out(nx))
		}
		outerName := m.Prefix + name
		mn := &node[S]{name: outerName, next: nexts, maxVisits: nd.maxVisits}
		if nd.gate() {
			mn.ask = mountedAsk(m, name, outerName)
			mn.decide = mountedDecide(m, nd.decide, name, out)
		} else {
			mn.fn = mountedNode(m, name, outerName, out)
		}
		outer.add(mn)
	}
	outer.maxSteps += inner.maxSteps
	return outer
}

// innerState returns the inner state, or an error naming the step when
// the outer state holds none.
func innerState[S, I any](m Mounted[S, I], s *S, step string) (*I, error) {
	in := m.State(s)
	if in == nil {
		return nil, fmt.Errorf("%s: the run has no state for the mounted graph %s yet", step, m.Graph.name)
	}
	return in, nil
}

// bound returns the step called name of the inner graph built for in.
func bound[S, I any](ctx context.Context, m Mounted[S, I], in *I, name string) (Step[I], error) {
	g := m.Graph
	if m.Bind != nil {
		var err error
		if g, err = m.Bind(ctx, in); err != nil {
			return Step[I]{}, fmt.Errorf("%s%s: %w", m.Prefix, name, err)
		}
		if g == nil {
			return Step[I]{}, fmt.Errorf("%s%s: the mounted graph %s was not built", m.Prefix, name, m.Graph.name)
		}
	}
	st, ok := g.Step(name)
	if !ok {
		return Step[I]{}, fmt.Errorf("%s%s: the mounted graph %s has no step %s", m.Prefix, name, g.name, name)
	}
	return st, nil
}

func mountedNode[S, I any](m Mounted[S, I], name, outerName string, out func(string) string) NodeFunc[S] {
	return func(ctx context.Context, s *S) (string, error) {
		in, err := innerState(m, s, outerName)
		if err != nil {
			return "", err
		}
		st, err := bound(ctx, m, in, name)
		if err != nil {
			return "", err
		}
		if st.Run == nil {
			return "", fmt.Errorf("%s: the bound graph's %s is not a node", outerName, name)
		}
		next, err := st.Run(ctx, in)
		if err != nil {
			return "", err
		}
		return out(next), nil
	}
}

func mountedAsk[S, I any](m Mounted[S, I], name, outerName string) AskFunc[S] {
	return func(ctx context.Context, s *S) (human.Question, error) {
		in, err := innerState(m, s, outerName)
		if err != nil {
			return human.Question{}, err
		}
		st, err := bound(ctx, m, in, name)
		if err != nil {
			return human.Question{}, err
		}
		if st.Ask == nil {
			return human.Question{}, fmt.Errorf("%s: the bound graph's %s is not a gate", outerName, name)
		}
		return st.Ask(ctx, in)
	}
}

// mountedDecide routes an answer with the inner gate's decide, which sees
// the question and answer as its own gate's (some decide by the gate's
// name), and names the step it chose in the outer graph.
func mountedDecide[S, I any](m Mounted[S, I], decide DecideFunc[I], name string, out func(string) string) DecideFunc[S] {
	return func(s *S, q human.Question, a human.Answer) (string, error) {
		in := m.State(s)
		if in == nil {
			return "", fmt.Errorf("%s%s: the run has no state for the mounted graph %s yet", m.Prefix, name, m.Graph.name)
		}
		q.Gate, a.Gate = name, name
		next, err := decide(in, q, a)
		if err != nil {
			return "", err
		}
		return out(next), nil
	}
}
