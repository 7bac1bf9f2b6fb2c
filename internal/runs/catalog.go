package runs

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/safewrite"
	"github.com/azero-dev/azero/internal/store"
)

// Catalog is the one list of the workflows azero runs. The local engine,
// the Temporal worker, resume, the page of azero serve and MCP all read
// it: adding a workflow is adding its entry here.
func Catalog() Workflows { return catalog() }

var catalog = sync.OnceValue(func() Workflows {
	return Workflows{implementWorkflow(), issueWorkflow(), designWorkflow(), selftestWorkflow()}
})

// Workflows is a list of workflows (Catalog's, or a test's own).
type Workflows []Workflow

// Lookup returns the workflow called name.
func (ws Workflows) Lookup(name string) (Workflow, bool) {
	for _, w := range ws {
		if w.Name() == name {
			return w, true
		}
	}
	return nil, false
}

// Names lists the workflows, sorted.
func (ws Workflows) Names() []string {
	names := make([]string, len(ws))
	for i, w := range ws {
		names[i] = w.Name()
	}
	slices.Sort(names)
	return names
}

// Summary is what lists and pages show of a run of a workflow beyond
// its row, read from its state.
func (ws Workflows) Summary(r store.Run) Summary {
	w, ok := ws.Lookup(r.Workflow)
	if !ok {
		return Summary{}
	}
	return w.summary(r.State)
}

// Run is one run as its workflow's dependencies are built for it, in
// this process or on a Temporal worker.
type Run struct {
	ID string
	// Events receives what the run's nodes and models report: the engine
	// driving it, which stores them and shows them to whoever watches.
	Events event.Sink
	// Approver asks a person about a file write that needs approval,
	// where one can be asked in place (a terminal); nil: nobody can.
	Approver safewrite.Approver
}

// Spec defines a workflow for the service. S is the run's state, D the
// dependencies its nodes use.
type Spec[S, D any] struct {
	// Name is the workflow's name: its graph's (Define checks it when the
	// graph is first built), known without building it.
	Name string
	// Graph builds the workflow's graph over d. Graph of the zero D is its
	// shape (name, nodes, routes, limits), which engines route with and
	// which must be built without I/O.
	Graph func(d D) *flow.Graph[S]
	// Deps builds one run's dependencies from env, as the run's state
	// records them (its models, its settings), whatever the process.
	Deps func(ctx context.Context, env *Env, run Run, s *S) (D, error)
	// Ready checks, before a run is driven on in this process, what the
	// process must provide (the issue workflow's editor and tracker
	// token), and may say so at t; nil: nothing to check.
	Ready func(ctx context.Context, d D, s *S, r store.Run, t Terminal) error
	// Report fills in what the workflow says of a drive that ended with
	// err: o's result, the line it achieved, its notes (see Outcome). s is
	// the state the drive left in memory, nil when it never started;
	// o.Stored reads the state stored. It returns the error the drive
	// ends with. Nil: the run's row alone.
	Report func(env *Env, s *S, err error, o *Outcome) error
	// Summary is what lists and pages show of a run beyond its row; nil:
	// nothing.
	Summary func(s *S) Summary
	// Worktree is where a run's worktree is (the Temporal engine moves it
	// between workers); nil: its runs have none.
	Worktree func(s *S) *Worktree
	// Stops reports a node's error that retrying cannot fix (an approved
	// change that cannot be merged until the user clears the way): on
	// Temporal the run stops at its node at once, resumable. Nil: none.
	Stops func(error) bool
	// Budget gives a run a new budget of usd USD; nil: runs of this
	// workflow have none.
	Budget func(env *Env, s *S, usd float64) error
	// HandOver reports a drive that ended by handing the person over to
	// another run, which is driven on instead (the issue workflow's slug
	// collision, answered resume). Nil: none does.
	HandOver func(err error) (runID string, ok bool)
}

// Worktree says where a run's worktree is. Dir points into the run's
// state, so an engine can move it (a Temporal worker taking a run over
// makes it in its own state directory).
type Worktree struct {
	Repo   string  // the repository the worktree belongs to
	Branch string  // the run's branch
	Base   string  // the commit the branch starts from
	Dir    *string // the worktree's path, in the state
}

// Summary is what a list or a page shows of a run beyond its row.
type Summary struct {
	// Trail is the issue workflow's drafts and verdicts; nil for others.
	Trail *Trail
	// Change says the run makes a change that can be shown as a diff:
	// Worktree and Base are where it is while the run goes on (empty once
	// it ended), Patch the lineage file keeping it.
	Change         bool
	Worktree, Base string
	Patch          string
}

// Trail is a governance run's audit trail: its drafts and verdicts.
type Trail struct {
	Dir             string // the trail's directory, absolute
	Draft, Verdict  string
	ReviewerVerdict string
	Iteration       int
	Drafts          int
	Verdicts        int
	Filed           *Filed // the issue filed, once it is
}

// Filed is an issue a run filed.
type Filed struct {
	Number int
	URL    string
}

// Workflow is one entry of the catalog, its state type erased.
type Workflow interface {
	// Name is the workflow's name (its graph's).
	Name() string

	def() any // the *workflow[S, D]; for the engines of this package
	summary(state json.RawMessage) Summary
	budget(env *Env, state json.RawMessage, usd float64) (json.RawMessage, error)
	hasBudget() bool
	// local drives run r on the local engine (local.go).
	local(ctx context.Context, l *localEngine, fe *flow.Engine, t Terminal, r store.Run, p *Prepared) (Outcome, error)
	create(ctx context.Context, fe *flow.Engine, p *Prepared) error
}

// Define makes spec an entry of a catalog.
func Define[S, D any](spec Spec[S, D]) Workflow {
	if spec.Name == "" || spec.Graph == nil || spec.Deps == nil {
		panic("runs.Define: a workflow needs Name, Graph and Deps")
	}
	w := &workflow[S, D]{spec: spec}
	w.shape = sync.OnceValue(func() *flow.Graph[S] {
		var zero D
		g := spec.Graph(zero)
		if g.Name() != spec.Name {
			panic(fmt.Sprintf("runs.Define: workflow %s builds graph %s", spec.Name, g.Name()))
		}
		return g
	})
	return w
}

// workflow is a Spec with what the engines need of it.
type workflow[S, D any] struct {
	spec  Spec[S, D]
	shape func() *flow.Graph[S]
}

func (w *workflow[S, D]) Name() string { return w.spec.Name }
func (w *workflow[S, D]) def() any     { return w }

func (w *workflow[S, D]) decode(runID string, raw json.RawMessage) (*S, error) {
	s := new(S)
	if err := json.Unmarshal(raw, s); err != nil {
		return nil, fmt.Errorf("decode state of run %s: %w", runID, err)
	}
	return s, nil
}

func (w *workflow[S, D]) summary(raw json.RawMessage) Summary {
	if w.spec.Summary == nil {
		return Summary{}
	}
	s := new(S)
	if json.Unmarshal(raw, s) != nil {
		return Summary{}
	}
	return w.spec.Summary(s)
}

func (w *workflow[S, D]) hasBudget() bool { return w.spec.Budget != nil }

func (w *workflow[S, D]) budget(env *Env, raw json.RawMessage, usd float64) (json.RawMessage, error) {
	s, err := w.decode("", raw)
	if err != nil {
		return nil, err
	}
	if err := w.spec.Budget(env, s, usd); err != nil {
		return nil, err
	}
	return json.Marshal(s)
}

// build builds the graph of one run with its dependencies.
func (w *workflow[S, D]) build(ctx context.Context, env *Env, run Run, s *S) (*flow.Graph[S], D, error) {
	d, err := w.spec.Deps(ctx, env, run, s)
	if err != nil {
		return nil, d, err
	}
	return w.spec.Graph(d), d, nil
}
