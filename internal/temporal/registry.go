package temporal

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/human"
)

// Run is what a worker gives the builder of one run's graph.
type Run struct {
	ID string
	// Events receives what the run's nodes report (the worker shows them);
	// put it in the graph's dependencies.
	Events event.Sink
}

// Worktree says where a run's worktree is. Dir points into the run's
// state, so a worker taking the run over can move it into its own state
// directory.
type Worktree struct {
	Repo   string  // the repository the worktree belongs to
	Branch string  // the run's branch
	Base   string  // the commit the branch starts from
	Dir    *string // the worktree's path, in the state
}

// Definition is one workflow as the Temporal engine runs it.
type Definition[S any] struct {
	// Shape is the graph built without dependencies. The workflow routes
	// with it (Next, Decide, Judge, limits) and never runs its nodes, so
	// building it must not do I/O.
	Shape *flow.Graph[S]
	// Build builds the graph with one run's dependencies on this worker.
	Build func(ctx context.Context, run Run, s *S) (*flow.Graph[S], error)
	// Worktree returns where the run's worktree is, or nil when the
	// workflow has none.
	Worktree func(s *S) *Worktree
	// Stops reports a node's error that retrying cannot fix (an approved
	// change that cannot be merged until the user clears the way): the
	// run stops at the node at once, resumable, instead of retrying it.
	// Optional.
	Stops func(error) bool
}

// Registry maps workflow names to their definitions.
type Registry struct {
	defs map[string]def
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{defs: map[string]def{}} }

// Register adds d under its graph's name. A graph that is not well formed
// is refused.
func Register[S any](r *Registry, d Definition[S]) error {
	if d.Shape == nil || d.Build == nil {
		return fmt.Errorf("register a Temporal workflow: Shape and Build are required")
	}
	if err := d.Shape.Validate(); err != nil {
		return err
	}
	name := d.Shape.Name()
	if _, dup := r.defs[name]; dup {
		return fmt.Errorf("workflow %s registered twice", name)
	}
	r.defs[name] = &typed[S]{d: d}
	return nil
}

// Names lists the registered workflows.
func (r *Registry) Names() []string {
	names := make([]string, 0, len(r.defs))
	for n := range r.defs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (r *Registry) get(name string) (def, error) {
	d := r.defs[name]
	if d == nil {
		return nil, fmt.Errorf("this worker cannot run workflow %q (it knows %v)", name, r.Names())
	}
	return d, nil
}

// stepInfo is a step as the workflow code sees it.
type stepInfo struct {
	gate      bool
	next      []string
	maxVisits int
}

// def is a Definition with its state type erased to JSON.
type def interface {
	name() string
	start() string
	limit() int
	step(name string) (stepInfo, bool)
	// Pure: called from workflow code.
	decide(gate string, state json.RawMessage, q human.Question, a human.Answer) (string, json.RawMessage, error)
	judge(state json.RawMessage) error
	// I/O: called from activities.
	run(ctx context.Context, run Run, node string, state json.RawMessage) (string, json.RawMessage, error)
	ask(ctx context.Context, run Run, gate string, state json.RawMessage) (human.Question, error)
	worktree(state json.RawMessage, edit func(*Worktree) error) (json.RawMessage, *Worktree, error)
	classify(err error) error
}

type typed[S any] struct{ d Definition[S] }

func (t *typed[S]) name() string { return t.d.Shape.Name() }

func (t *typed[S]) classify(err error) error { return classify(err, t.d.Stops) }
func (t *typed[S]) start() string            { return t.d.Shape.Start() }
func (t *typed[S]) limit() int               { return t.d.Shape.Limit() }

func (t *typed[S]) step(name string) (stepInfo, bool) {
	st, ok := t.d.Shape.Step(name)
	if !ok {
		return stepInfo{}, false
	}
	return stepInfo{gate: st.Ask != nil, next: st.Next, maxVisits: st.MaxVisits}, true
}

func (t *typed[S]) decode(raw json.RawMessage) (*S, error) {
	s := new(S)
	if err := json.Unmarshal(raw, s); err != nil {
		return nil, fmt.Errorf("decode state of %s: %w", t.name(), err)
	}
	return s, nil
}

func (t *typed[S]) encode(s *S) (json.RawMessage, error) {
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode state of %s: %w", t.name(), err)
	}
	return raw, nil
}

func (t *typed[S]) decide(gate string, raw json.RawMessage, q human.Question, a human.Answer) (string, json.RawMessage, error) {
	s, err := t.decode(raw)
	if err != nil {
		return "", nil, err
	}
	next, err := t.d.Shape.Decide(gate, s, q, a)
	if err != nil {
		return "", nil, err
	}
	out, err := t.encode(s)
	return next, out, err
}

func (t *typed[S]) judge(raw json.RawMessage) error {
	s, err := t.decode(raw)
	if err != nil {
		return err
	}
	return t.d.Shape.Judge(s)
}

func (t *typed[S]) build(ctx context.Context, run Run, s *S) (*flow.Graph[S], error) {
	g, err := t.d.Build(ctx, run, s)
	if err != nil {
		return nil, fmt.Errorf("build the %s graph for run %s: %w", t.name(), run.ID, err)
	}
	return g, nil
}

func (t *typed[S]) run(ctx context.Context, run Run, node string, raw json.RawMessage) (string, json.RawMessage, error) {
	s, err := t.decode(raw)
	if err != nil {
		return "", nil, err
	}
	g, err := t.build(ctx, run, s)
	if err != nil {
		return "", nil, err
	}
	st, ok := g.Step(node)
	if !ok || st.Run == nil {
		return "", nil, fmt.Errorf("%s is not a node of workflow %s", node, t.name())
	}
	next, err := st.Run(flow.WithRun(ctx, run.ID, node), s)
	if err != nil {
		return "", nil, err
	}
	if !slices.Contains(st.Next, next) {
		return "", nil, fmt.Errorf("node %s chose %q, which is not one of its declared next nodes %v", node, next, st.Next)
	}
	out, err := t.encode(s)
	return next, out, err
}

func (t *typed[S]) ask(ctx context.Context, run Run, gate string, raw json.RawMessage) (human.Question, error) {
	s, err := t.decode(raw)
	if err != nil {
		return human.Question{}, err
	}
	g, err := t.build(ctx, run, s)
	if err != nil {
		return human.Question{}, err
	}
	return g.Ask(flow.WithRun(ctx, run.ID, gate), gate, s)
}

// worktree hands the run's worktree to edit (which may change its Dir)
// and returns the state as edit left it; nil when the workflow has none.
func (t *typed[S]) worktree(raw json.RawMessage, edit func(*Worktree) error) (json.RawMessage, *Worktree, error) {
	if t.d.Worktree == nil {
		return raw, nil, nil
	}
	s, err := t.decode(raw)
	if err != nil {
		return nil, nil, err
	}
	wt := t.d.Worktree(s)
	if wt == nil || wt.Dir == nil || wt.Repo == "" || wt.Branch == "" {
		return raw, nil, nil
	}
	if edit != nil {
		if err := edit(wt); err != nil {
			return nil, nil, err
		}
	}
	out, err := t.encode(s)
	return out, wt, err
}
