// Package flow runs workflows as typed graphs with durable checkpoints.
//
// A workflow is a Graph[S] of named steps over a state S (a JSON-encodable
// struct). A node is a func(ctx, *S) returning the name of the next node,
// so conditional edges and retry loops are ordinary code. A gate is a step
// that needs a human, declared as two parts: ask builds the Question (what
// to show, which answers are allowed) and may do I/O; decide routes on the
// Answer and must be pure (no I/O: it only reads and sets the state), so
// the same gate can be answered at a terminal, on a web page or through a
// Temporal Update.
//
// The engine (Drive) holds these invariants, each proven by a test:
//
//   - Every step declares the steps it may go to; the engine refuses any
//     other, so the declared graph is a true map of every path a run can
//     take, and tests prove with PathAvoiding that no path skips a gate.
//   - A gate's decide is pure: a test reads the source (with its types) of
//     the decide of every gate of every graph in azero, and the functions
//     it calls, and refuses any call outside a list of pure functions. Its
//     ask works on a copy of the state: what ask changes is not kept.
//   - After every step the state, the step reached and a history row are
//     written in one SQLite transaction. A run killed at any moment
//     resumes at the step that was running, which therefore runs again:
//     nodes must be safe to repeat (check before you create). A gate asks
//     again.
//   - A gate's question is stored with the run while it is asked, and kept
//     while the run waits, so anyone can see what the run is waiting for.
//     Each asking gets a random nonce and a time (both kept when a resumed
//     run asks the same question again, so no answer to it is recorded as
//     given before it was asked), and an answer another channel posted counts
//     only when its seal verifies for the run, the question and that nonce
//     (package answerkey): any other row in the store's answer column is
//     refused, recorded as answer_forged, removed, and the run waits on.
//   - An answer reaches decide only after human.Validate accepted it for
//     its question and the decision was written to the audit log, with its
//     channel; if the audit log cannot be written the decision is not acted
//     on and the run fails at the gate (resumable).
//   - Without anyone to answer, a gate waits (status waiting, exit 3),
//     unless its question has an Unattended answer (nothing needs a human).
//   - A signal while a gate asks (Ctrl-C at the prompt) leaves the run
//     waiting there with its question, answerable anywhere; a signal while
//     a node works (or a gate builds its question) leaves it interrupted.
//   - The engine names no command: the messages of WaitingError and
//     InterruptedError name the one Engine.Resume gives (only the caller
//     knows how the person started azero).
//   - One process at a time drives a run (a lease in the store).
//   - The engine acts only on a run whose stored row verifies (the store
//     seals every row it writes): Drive refuses a row changed outside
//     azero before any node runs, and the checkpoint that finds a row
//     changed while the run is driven fails; either is recorded once as
//     run_forged, and nothing the row holds is acted on.
//   - A step limit and per-node visit limits stop runaway loops.
//
// Steps report through events (event.Sink): the engine stores each event
// in the run's history and hands it to the watcher (the terminal).
//
// A graph can be mounted inside another (Mount): its steps become steps of
// the outer graph, named with a prefix, working on a part of the outer
// state, so one run goes on from one workflow into another with one
// history, one lease and one set of limits, and the path proofs and the
// purity check see the inner gates where they are.
//
// Nodes get their dependencies from the closure that built the graph, never
// from globals, so the same graph can run on another engine. The package
// is about 1,200 lines: graph.go (definition, validation, path proofs, Ask
// and Decide for tests and other engines), mount.go (one graph inside
// another) and engine.go (driving a run against the store: leases,
// checkpoints, gates, events, audit).
package flow

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/azero-dev/azero/internal/human"
)

// End is the pseudo-node a finished run goes to.
const End = "END"

// DefaultMaxSteps bounds every run unless the graph sets its own limit.
const DefaultMaxSteps = 500

// NodeFunc does one step of work on the state and names the next node.
type NodeFunc[S any] func(ctx context.Context, s *S) (next string, err error)

// AskFunc builds a gate's question from the state. It may do I/O (analyse
// a diff, prepare a file to edit); changes it makes to the state are not
// kept.
type AskFunc[S any] func(ctx context.Context, s *S) (human.Question, error)

// DecideFunc routes a gate on a validated answer to its question. It must
// be pure: it may read and set the state, and nothing else.
type DecideFunc[S any] func(s *S, q human.Question, a human.Answer) (next string, err error)

type node[S any] struct {
	name      string
	fn        NodeFunc[S]
	ask       AskFunc[S]
	decide    DecideFunc[S]
	next      []string
	maxVisits int
}

func (n *node[S]) gate() bool { return n.ask != nil }

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

func (g *Graph[S]) add(n *node[S]) *Graph[S] {
	switch {
	case n.name == "" || n.name == End:
		g.errs = append(g.errs, fmt.Errorf("node name %q is reserved", n.name))
	case g.nodes[n.name] != nil:
		g.errs = append(g.errs, fmt.Errorf("node %q added twice", n.name))
	case n.fn == nil && (n.ask == nil || n.decide == nil):
		g.errs = append(g.errs, fmt.Errorf("node %q has no function", n.name))
	case len(n.next) == 0:
		g.errs = append(g.errs, fmt.Errorf("node %q declares no next node", n.name))
	default:
		n.next = slices.Clone(n.next)
		g.nodes[n.name] = n
		g.order = append(g.order, n.name)
	}
	return g
}

// Node adds a node that may continue to any of next (End included).
func (g *Graph[S]) Node(name string, fn NodeFunc[S], next ...string) *Graph[S] {
	return g.add(&node[S]{name: name, fn: fn, next: next})
}

// Gate adds a step that needs a human: ask builds the question, the
// engine gets a validated answer from its Answerer (or the run waits
// there), and decide routes to one of next.
func (g *Graph[S]) Gate(name string, ask AskFunc[S], decide DecideFunc[S], next ...string) *Graph[S] {
	return g.add(&node[S]{name: name, ask: ask, decide: decide, next: next})
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
	return nd != nil && nd.gate()
}

// Gates returns the gates in the order they were added.
func (g *Graph[S]) Gates() []string {
	var out []string
	for _, name := range g.order {
		if g.nodes[name].gate() {
			out = append(out, name)
		}
	}
	return out
}

// Ask builds gate's question for s, as the engine would.
func (g *Graph[S]) Ask(ctx context.Context, gate string, s *S) (human.Question, error) {
	nd := g.nodes[gate]
	if nd == nil || !nd.gate() {
		return human.Question{}, fmt.Errorf("%s is not a gate of %s", gate, g.name)
	}
	q, err := nd.ask(ctx, s)
	q.Gate = gate
	return q, err
}

// Decide validates a for q and routes gate on it, as the engine would,
// and checks that the route is declared.
func (g *Graph[S]) Decide(gate string, s *S, q human.Question, a human.Answer) (string, error) {
	nd := g.nodes[gate]
	if nd == nil || !nd.gate() {
		return "", fmt.Errorf("%s is not a gate of %s", gate, g.name)
	}
	if _, err := checkAnswer(q, a); err != nil {
		return "", err
	}
	next, err := nd.decide(s, q, a)
	if err != nil {
		return "", err
	}
	if !slices.Contains(nd.next, next) {
		return "", fmt.Errorf("gate %s chose %q, which is not one of its declared next nodes %v", gate, next, nd.next)
	}
	return next, nil
}

// checkAnswer is where flow checks an answer against its question before
// a gate decides on it (the engine's gate, Decide): human.Validate, the
// one function every channel and engine checks answers with.
func checkAnswer(q human.Question, a human.Answer) (human.Option, error) {
	return human.Validate(q, a)
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

// Step is one step of a graph as another engine sees it: a node (Run), or
// a gate (Ask and Decide).
type Step[S any] struct {
	Name      string
	Run       NodeFunc[S]   // nil for a gate
	Ask       AskFunc[S]    // nil for a node
	Decide    DecideFunc[S] // nil for a node
	Next      []string
	MaxVisits int // 0: no limit
}

// Step returns the step called name.
func (g *Graph[S]) Step(name string) (Step[S], bool) {
	nd := g.nodes[name]
	if nd == nil {
		return Step[S]{}, false
	}
	return Step[S]{Name: nd.name, Run: nd.fn, Ask: nd.ask, Decide: nd.decide, Next: slices.Clone(nd.next), MaxVisits: nd.maxVisits}, true
}

// Limit is how many steps a run of the graph may complete in all.
func (g *Graph[S]) Limit() int { return g.maxSteps }

// Judge judges a state that reached End, as Finish set it: nil means done,
// an error wrapping ErrAborted aborted, any other error failed.
func (g *Graph[S]) Judge(s *S) error {
	if g.finish == nil {
		return nil
	}
	return g.finish(s)
}
