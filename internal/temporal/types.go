package temporal

import (
	"encoding/json"
	"time"

	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/store"
)

// Names the engine gives Temporal.
const (
	QueryStatus  = "status" // the run's Status
	UpdateAnswer = "answer" // a human.Answer to the pending question
	UpdateResume = "resume" // retry the node a failed run stopped at

	activityNode     = "azero.node"
	activityAsk      = "azero.ask"
	activityDecision = "azero.decision"
	activityFinish   = "azero.finish"

	// DefaultTaskQueue is the shared task queue when none is configured.
	DefaultTaskQueue = "azero"
	// DefaultNamespace is Temporal's default namespace.
	DefaultNamespace = "default"
)

// Options tune how a run's activities are scheduled. Zero values take the
// defaults.
type Options struct {
	// MoveAfter is how long an activity may wait on the holding worker's
	// queue before the run moves to another worker (default 30 s).
	MoveAfter time.Duration `json:"move_after,omitempty"`
	// NodeTimeout bounds one attempt of a node (default 2 h: model calls
	// and test suites are long).
	NodeTimeout time.Duration `json:"node_timeout,omitempty"`
	// Heartbeat is how long a running activity may go without a heartbeat
	// before Temporal counts its worker as gone (default 1 min).
	Heartbeat time.Duration `json:"heartbeat,omitempty"`
	// Attempts is how often a node is tried before the run stops as
	// failed (default 3).
	Attempts int32 `json:"attempts,omitempty"`
	// StepsPerExecution is how many steps one workflow execution takes
	// before it continues as new (default 100; sooner when Temporal
	// suggests it).
	StepsPerExecution int `json:"steps_per_execution,omitempty"`
}

func (o Options) withDefaults() Options {
	if o.MoveAfter <= 0 {
		o.MoveAfter = 30 * time.Second
	}
	if o.NodeTimeout <= 0 {
		o.NodeTimeout = 2 * time.Hour
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = time.Minute
	}
	if o.Attempts <= 0 {
		o.Attempts = 3
	}
	if o.StepsPerExecution <= 0 {
		o.StepsPerExecution = 100
	}
	return o
}

// Input starts a run, or continues one as new.
type Input struct {
	RunID    string            `json:"run_id"`
	Workflow string            `json:"workflow"`
	State    json.RawMessage   `json:"state"`
	Meta     map[string]string `json:"meta,omitempty"`
	Options  Options           `json:"options"`
	// Carry is where a continued run stands; nil for a new run.
	Carry *Carry `json:"carry,omitempty"`
}

// Carry is what a run carries into its next execution.
type Carry struct {
	Node    string         `json:"node"`
	Steps   int            `json:"steps"`
	Visits  map[string]int `json:"visits"`
	Holder  WorkerRef      `json:"holder"`
	Moves   int            `json:"moves"`
	Calls   []store.Call   `json:"calls,omitempty"`
	History []Step         `json:"history,omitempty"`
	Events  []event.Event  `json:"events,omitempty"`
	Started time.Time      `json:"started_at"`
	Updated time.Time      `json:"updated_at"`
}

// WorkerRef names a worker: its own task queue and its identity.
type WorkerRef struct {
	Queue    string `json:"queue,omitempty"`
	Identity string `json:"identity,omitempty"`
}

// Step is one step of a run: a node that completed (outcome ok), or one
// that stopped (failed, waiting, aborted) or moved to another worker.
type Step struct {
	Node       string    `json:"node"`
	Next       string    `json:"next"`
	Outcome    string    `json:"outcome"` // ok, moved, failed, waiting, aborted
	Worker     string    `json:"worker,omitempty"`
	Started    time.Time `json:"started_at"`
	Finished   time.Time `json:"finished_at"`
	DurationMS int64     `json:"duration_ms"`
	Error      string    `json:"error,omitempty"`
}

// historyKept bounds the steps a run carries and reports; eventsKept the
// events (each cut to eventText and eventData bytes: a run's report is
// in its question and its lineage, the events only tell what happened).
const (
	historyKept = 200
	eventsKept  = 300
	eventText   = 4 << 10
	eventData   = 8 << 10
	// eventsSize bounds the bytes of the events kept: they travel in the
	// status query's answer and in a continued run's input, both held
	// under Temporal's 2 MiB payload limit.
	eventsSize = 1 << 20
)

// Status is where a run stands, as the "status" query reports it.
type Status struct {
	RunID    string       `json:"run_id"`
	Workflow string       `json:"workflow"`
	Status   store.Status `json:"status"`
	// Ended says the run is over (its workflow returned): a failed run
	// that has not ended waits to be resumed.
	Ended    bool              `json:"ended"`
	Node     string            `json:"node"`
	Steps    int               `json:"steps"`
	Question *human.Question   `json:"question,omitempty"`
	Error    string            `json:"error,omitempty"`
	Holder   WorkerRef         `json:"holder"`
	Moves    int               `json:"moves"`
	Meta     map[string]string `json:"meta,omitempty"`
	Started  time.Time         `json:"started_at"`
	// Updated is when the run last changed (a step ended, a question was
	// asked or answered).
	Updated time.Time       `json:"updated_at"`
	History []Step          `json:"history,omitempty"`
	Calls   []store.Call    `json:"calls,omitempty"`
	Events  []event.Event   `json:"events,omitempty"`
	State   json.RawMessage `json:"state,omitempty"`
}

// Result is what a finished run returns.
type Result = Status

// nodeInput is what a node, ask or finish activity gets.
type nodeInput struct {
	RunID    string          `json:"run_id"`
	Workflow string          `json:"workflow"`
	Node     string          `json:"node"`
	State    json.RawMessage `json:"state"`
	Calls    []store.Call    `json:"calls,omitempty"`  // every call the run made so far
	Steps    int             `json:"steps"`            // nodes completed so far
	Status   store.Status    `json:"status,omitempty"` // finish: how the run ended
	Error    string          `json:"error,omitempty"`
	// Moved says the run has no holder: the worker taking this activity
	// becomes it, and first brings the run's worktree to itself.
	Moved bool `json:"moved,omitempty"`
}

// nodeOutput is what those activities return.
type nodeOutput struct {
	Worker   WorkerRef       `json:"worker"`
	Next     string          `json:"next,omitempty"`
	State    json.RawMessage `json:"state"`
	Calls    []store.Call    `json:"calls,omitempty"` // calls made by this activity
	Question *human.Question `json:"question,omitempty"`
	Events   []event.Event   `json:"events,omitempty"` // what the activity reported
	// Answer is the answer as the decision activity recorded it: the
	// channel it proved, or temporal with the caller's identity.
	Answer *human.Answer `json:"answer,omitempty"`
}

// decisionInput is what the decision activity records.
type decisionInput struct {
	nodeInput
	Question human.Question `json:"question"`
	Answer   human.Answer   `json:"answer"`
	Decision string         `json:"decision"`
	// Update is the id of the "answer" Update that delivered Answer; ""
	// for the gate's unattended answer, which no client gave.
	Update string `json:"update,omitempty"`
}

// Error types of activity failures the workflow tells apart.
const (
	errTypeNeedsHuman = "azero.NeedsHuman"
	errTypeAborted    = "azero.Aborted"
	errTypeAudit      = "azero.Audit"
	errTypeFatal      = "azero.Fatal"
	errTypeStopped    = "azero.Stopped" // a node's error retrying cannot fix (Definition.Stops)

	// Refusals of the answer Update's validator.
	errTypeNotAsked = "azero.NotAsked" // no such question is waiting
	errTypeAnswered = "azero.Answered" // another answer came first
	errTypeInvalid  = "azero.InvalidAnswer"
	// An answer accepted but not acted on (its decision could not be
	// recorded): the question stays pending.
	errTypeNotActed = "azero.NotActedOn"
)

// MetaEngine is the meta key naming the engine of a run kept in a
// worker's store; EngineName its value for Temporal runs. Such a row is a
// worker's bookkeeping: the run is resumed, answered and cleaned up
// through Temporal, never from that store.
const (
	MetaEngine = "engine"
	EngineName = "temporal"
)
