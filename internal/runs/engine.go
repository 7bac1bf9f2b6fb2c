package runs

import (
	"context"
	"encoding/json"
	"time"

	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/rundoc"
	"github.com/azero-dev/azero/internal/safewrite"
	"github.com/azero-dev/azero/internal/store"
)

// Engine drives runs: the local engine (this machine's store, flow's
// graph engine, leases) or a Temporal cluster. Every door reaches runs
// through one.
type Engine interface {
	// Kind is Local or Temporal.
	Kind() string
	// Start creates the run p prepared and follows it from p's terminal
	// until it ends, waits at a gate nobody there can answer, or stops.
	Start(ctx context.Context, p *Prepared) (Outcome, error)
	// Drive drives on the run ref names (an id or a unique prefix) from
	// where it stands, watched and answered from t, until it ends, waits
	// at a gate nobody there can answer, or stops. A run waiting for an
	// answer asks its question again; a failed one retries the node it
	// stopped at.
	Drive(ctx context.Context, ref string, t Terminal) (Outcome, error)
	// Unfinished finds the newest run of workflow whose key is key that
	// can still go on (the issue workflow's slug).
	Unfinished(ctx context.Context, workflow, key string) (runID string, ok bool, err error)
	// SetBudget gives the run ref names a new budget of usd USD (0
	// removes it), before it is driven on.
	SetBudget(ctx context.Context, ref string, usd float64) error
	// Answer is the one answer path of the doors (the page of azero serve,
	// its API): see Reply.
	Answer(ctx context.Context, ref string, r Reply) (Accepted, error)
	// List lists runs, newest first: the document of azero runs.
	List(ctx context.Context, q Query) (Listing, error)
	// Show describes one run: the document of azero runs show.
	Show(ctx context.Context, ref string, withEvents bool) (Shown, error)
	// Close releases the engine (not the Env it was opened with).
	Close() error

	// What the page of azero serve needs besides:

	// Workflows are the workflows the engine runs.
	Workflows() Workflows
	// Source is what describes the runs of this engine as the store does
	// its own.
	Source() Source
	// Describe says whose runs these are, in a line.
	Describe() string
	// Continue starts continuing, in this process, the runs whose answer
	// was accepted and that nothing drives, until ctx ends or stop is
	// called, which saves the runs it drives and waits for them
	// (continue.go); log receives a line for each run continued, every
	// how often it looks again (0: ContinueEvery). On Temporal the
	// cluster's workers continue runs: it does nothing.
	Continue(ctx context.Context, log func(string), every time.Duration) (stop func())
	// Driving lists the runs this process continues now.
	Driving() []string
}

// WorkerHooks are what RunWorker tells of the worker it runs.
type WorkerHooks struct {
	// Watch receives the events of the runs it works on.
	Watch func(event.Event)
	// Started is told once it polls; Stopping once it was told to stop,
	// before the steps under way finish.
	Started  func(WorkerStarted)
	Stopping func()
}

// WorkerStarted is a worker RunWorker started.
type WorkerStarted struct {
	Identity, Address, Namespace, Queue, OwnQueue string
}

func (h WorkerHooks) started(w WorkerStarted) {
	if h.Started != nil {
		h.Started(w)
	}
}

func (h WorkerHooks) stopping() {
	if h.Stopping != nil {
		h.Stopping()
	}
}

// Source is where the runs of an engine are read from as the store
// presents its own: *store.Store, or the runs on Temporal.
type Source interface {
	rundoc.Source
	GetRun(ctx context.Context, id string) (store.Run, error)
	// FindRun finds the run whose id is ref or uniquely starts with it.
	FindRun(ctx context.Context, ref string) (store.Run, error)
	Spent(ctx context.Context, runID string) (float64, error)
	// PostedAnswer returns the answer posted for the question r asks and
	// not yet taken: ok false when there is none; an error matching
	// store.ErrForged when the one there was not made by azero.
	PostedAnswer(r store.Run) (a human.Answer, ok bool, err error)
}

// poster is a Source that takes answers (the answer path posts through
// it).
type poster interface {
	Source
	PostAnswer(ctx context.Context, runID, questionID string, answer json.RawMessage) error
}

// Terminal is who watches, answers and approves a drive in this process;
// the zero Terminal is nobody (a run waits at its first gate that needs a
// human).
type Terminal struct {
	// Watch receives the run's events as they happen.
	Watch func(event.Event)
	// Answerer asks the run's questions.
	Answerer human.Answerer
	// Approver asks about a file write that needs approval in place.
	Approver safewrite.Approver
	// Note receives a line for the person that belongs to no run's
	// events (resuming a run, where a saved run goes on).
	Note func(string)
}

func (t Terminal) note(line string) {
	if t.Note != nil {
		t.Note(line)
	}
}

func (t Terminal) watch(ev event.Event) {
	if t.Watch != nil {
		t.Watch(ev)
	}
}

// Prepared is a new run, ready to start: its workflow, id, initial state,
// key and metadata, made by a workflow's Prepare function (implement.go,
// issue.go, selftest.go) with the terminal that follows it.
type Prepared struct {
	ID    string
	wf    Workflow
	state any // *S
	key   string
	meta  map[string]string
	term  Terminal
	// fe and graph, when set, are the engine and the graph with the
	// dependencies the preparation built and checked (the issue
	// workflow's pre-flight): the local engine drives the run with them,
	// so that nothing is checked twice.
	fe    *flow.Engine
	graph any // *flow.Graph[S]
}

// Workflow names the workflow of the run.
func (p *Prepared) Workflow() string { return p.wf.Name() }

// Outcome is where a run stands after a drive, and what its workflow
// says of it.
type Outcome struct {
	RunID    string
	Workflow string
	Engine   string // Local or Temporal
	Status   store.Status
	Node     string
	Error    string // the run's own
	// Ended says a run on Temporal is over (its workflow returned): a
	// failed run that has not ended waits to be resumed.
	Ended bool
	// Resume is the command that continues the run from a terminal, when
	// it can go on.
	Resume string
	// Result is the workflow's report, for --json.
	Result any
	// Done is what the run achieved, in one line, for a person who did
	// not ask for a document ("Merged azero/3-x into main (ab12cd3).").
	Done string
	// Notes are lines for the person whatever the output: where a saved
	// run goes on.
	Notes []string
	// Doc, when set, is the whole document of --json: the workflow's own
	// (an issue run that ended before it started).
	Doc any
	// Unreadable is why the run's row could not be read after the drive
	// (Forged: it was changed outside azero, and nothing of it may be
	// reported as the run's).
	Unreadable error
	Forged     bool

	state json.RawMessage // the state stored
}

// Stored decodes the run's state as stored after the drive into v; false
// when there is none (or it does not decode).
func (o *Outcome) Stored(v any) bool {
	return len(o.state) > 0 && json.Unmarshal(o.state, v) == nil
}

// Query selects the runs of a list.
type Query = rundoc.Filter

// Listing is the list of azero runs: the runs, and for runs on Temporal
// what each waits for and where.
type Listing struct {
	Engine string
	Runs   []View
}

// View is a run as azero runs lists it: rundoc's document, with, for a
// run on Temporal, the worker holding it and the question it waits for.
type View struct {
	rundoc.View
	Worker   string          `json:"worker,omitempty"`
	Question *human.Question `json:"question,omitempty"`
}

// Shown is one run as azero runs show describes it: rundoc's document
// and, on Temporal, the run's steps with the worker of each, the worker
// holding it and its moves.
type Shown struct {
	rundoc.Detail
	Engine string
	Worker string
	Moves  int
	Ended  bool
	Steps  []Step // on Temporal
	// Resume is the command that answers its question from a terminal;
	// "" when none does.
	Resume string
}

// Step is a step of a run on Temporal: a node that completed (outcome
// ok), or one that stopped (failed, waiting, aborted) or moved to another
// worker.
type Step struct {
	Node       string    `json:"node"`
	Next       string    `json:"next"`
	Outcome    string    `json:"outcome"`
	Worker     string    `json:"worker,omitempty"`
	Started    time.Time `json:"started_at"`
	Finished   time.Time `json:"finished_at"`
	DurationMS int64     `json:"duration_ms"`
	Error      string    `json:"error,omitempty"`
}

// Document is the document of azero runs show --json.
func (s Shown) Document() any {
	if s.Engine != Temporal {
		return s.Detail
	}
	steps := s.Steps
	if steps == nil {
		steps = []Step{}
	}
	return struct {
		rundoc.Detail
		Engine  string `json:"engine"`
		Worker  string `json:"worker,omitempty"`
		Moves   int    `json:"moves"`
		Ended   bool   `json:"ended"`
		History []Step `json:"history"`
	}{s.Detail, Temporal, s.Worker, s.Moves, s.Ended, steps}
}
