// Package flow runs workflows as typed graphs with durable checkpoints.
//
// A workflow is a Graph[S]: named nodes, each a func(ctx, *S) returning the
// name of the next node, so conditional edges and retry loops are ordinary
// code. Every node declares the nodes it may go to; the engine refuses any
// other, which makes the declared graph a true map of every path a run can
// take, and lets tests prove that no path skips a gate.
//
// After every node the state, the node reached and a history row are
// written in one transaction (see Drive). A run killed at any moment
// resumes at the node that was running, which therefore runs again: nodes
// must be safe to repeat (check before you create).
//
// Nodes get their dependencies from the closure that built the graph, never
// from globals, so the same graph can later run on another engine (Temporal
// activities, with gates as signals).
package flow

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// End is the pseudo-node a finished run goes to.
const End = "END"

// DefaultMaxSteps bounds every run unless the graph sets its own limit.
const DefaultMaxSteps = 500

// NodeFunc does one step of work on the state and names the next node.
type NodeFunc[S any] func(ctx context.Context, s *S) (next string, err error)

type node[S any] struct {
	name      string
	fn        NodeFunc[S]
	next      []string
	gate      bool
	maxVisits int
}

// Graph is a workflow definition. Build it once with New and the adding
// methods, then Validate it (Create and Drive do).
type Graph[S any] struct {
	name     string
	start    string
	nodes    map[string]*node[S]
	order    []string
	maxSteps int
	finish   func(*S) error
	errs     []error
}

// New starts a graph called name whose runs begin at start.
func New[S any](name, start string) *Graph[S] {
	return &Graph[S]{name: name, start: start, nodes: map[string]*node[S]{}, maxSteps: DefaultMaxSteps}
}

func (g *Graph[S]) add(name string, fn NodeFunc[S], gate bool, next []string) *Graph[S] {
	switch {
	case name == "" || name == End:
		g.errs = append(g.errs, fmt.Errorf("node name %q is reserved", name))
	case g.nodes[name] != nil:
		g.errs = append(g.errs, fmt.Errorf("node %q added twice", name))
	case fn == nil:
		g.errs = append(g.errs, fmt.Errorf("node %q has no function", name))
	case len(next) == 0:
		g.errs = append(g.errs, fmt.Errorf("node %q declares no next node", name))
	default:
		g.nodes[name] = &node[S]{name: name, fn: fn, next: slices.Clone(next), gate: gate}
		g.order = append(g.order, name)
	}
	return g
}

// Node adds a node that may continue to any of next (End included).
func (g *Graph[S]) Node(name string, fn NodeFunc[S], next ...string) *Graph[S] {
	return g.add(name, fn, false, next)
}

// Gate adds a node that needs a human answer. Without a terminal it must
// return an error whose NeedsHuman method reports true (prompt does); the
// run then waits there.
func (g *Graph[S]) Gate(name string, fn NodeFunc[S], next ...string) *Graph[S] {
	return g.add(name, fn, true, next)
}

// MaxVisits limits how often one node may complete in a run, stopping a
// runaway loop through it.
func (g *Graph[S]) MaxVisits(name string, n int) *Graph[S] {
	if nd := g.nodes[name]; nd != nil {
		nd.maxVisits = n
	} else {
		g.errs = append(g.errs, fmt.Errorf("visit limit for unknown node %q", name))
	}
	return g
}

// MaxSteps limits how many nodes a run may complete in all.
func (g *Graph[S]) MaxSteps(n int) *Graph[S] {
	g.maxSteps = n
	return g
}

// Finish sets the function that judges a run reaching End: nil means done,
// an error wrapping ErrAborted means aborted, any other error failed.
func (g *Graph[S]) Finish(fn func(*S) error) *Graph[S] {
	g.finish = fn
	return g
}

// Name returns the workflow's name.
func (g *Graph[S]) Name() string { return g.name }

// Start returns the first node.
func (g *Graph[S]) Start() string { return g.start }

// Nodes returns the node names in the order they were added.
func (g *Graph[S]) Nodes() []string { return slices.Clone(g.order) }

// Next returns the nodes name may go to.
func (g *Graph[S]) Next(name string) []string {
	if nd := g.nodes[name]; nd != nil {
		return slices.Clone(nd.next)
	}
	return nil
}

// IsGate reports whether name is a gate.
func (g *Graph[S]) IsGate(name string) bool {
	nd := g.nodes[name]
	return nd != nil && nd.gate
}

// Validate checks that the graph is well formed: the start exists, every
// declared successor exists, every node is reachable and End is reachable.
func (g *Graph[S]) Validate() error {
	errs := slices.Clone(g.errs)
	if g.nodes[g.start] == nil {
		errs = append(errs, fmt.Errorf("start node %q does not exist", g.start))
	}
	for _, name := range g.order {
		for _, nx := range g.nodes[name].next {
			if nx != End && g.nodes[nx] == nil {
				errs = append(errs, fmt.Errorf("node %q goes to unknown node %q", name, nx))
			}
		}
	}
	if len(errs) == 0 {
		reached := g.reachable(g.start, nil)
		for _, name := range g.order {
			if !reached[name] {
				errs = append(errs, fmt.Errorf("node %q is unreachable from %q", name, g.start))
			}
		}
		if !reached[End] {
			errs = append(errs, fmt.Errorf("no path from %q reaches the end", g.start))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("graph %s: %w", g.name, err)
	}
	return nil
}

// reachable returns the nodes reachable from from without entering any
// node in avoid.
func (g *Graph[S]) reachable(from string, avoid map[string]bool) map[string]bool {
	seen := map[string]bool{}
	if avoid[from] {
		return seen
	}
	stack := []string{from}
	seen[from] = true
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		nd := g.nodes[cur]
		if nd == nil {
			continue
		}
		for _, nx := range nd.next {
			if !seen[nx] && !avoid[nx] {
				seen[nx] = true
				stack = append(stack, nx)
			}
		}
	}
	return seen
}

// PathAvoiding returns a path from the start to target that never enters
// any node in avoid, or nil when every path to target passes through one of
// them. Tests use it to prove that a gate cannot be skipped.
func (g *Graph[S]) PathAvoiding(target string, avoid ...string) []string {
	skip := map[string]bool{}
	for _, a := range avoid {
		skip[a] = true
	}
	if skip[g.start] {
		return nil
	}
	prev := map[string]string{g.start: ""}
	queue := []string{g.start}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur == target {
			var path []string
			for n := cur; n != ""; n = prev[n] {
				path = append(path, n)
			}
			slices.Reverse(path)
			return path
		}
		nd := g.nodes[cur]
		if nd == nil {
			continue
		}
		for _, nx := range nd.next {
			if _, seen := prev[nx]; !seen && !skip[nx] {
				prev[nx] = cur
				queue = append(queue, nx)
			}
		}
	}
	return nil
}
