package temporal

import (
	"encoding/json"
	"time"

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
	Started time.Time      `json:"started"`
}

// WorkerRef names a worker: its own task queue and its identity.
type WorkerRef struct {
	Queue    string `json:"queue,omitempty"`
	Identity string `json:"identity,omitempty"`
}

// Step is one completed step of a run.
type Step struct {
	Node     string    `json:"node"`
	Next     string    `json:"next"`
	Outcome  string    `json:"outcome"` // ok, moved, failed, rejected-answer...
	Worker   string    `json:"worker,omitempty"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	Error    string    `json:"error,omitempty"`
}

// historyKept bounds the steps a run carries and reports.
const historyKept = 200

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
	Started  time.Time         `json:"started"`
	History  []Step            `json:"history,omitempty"`
	Calls    []store.Call      `json:"calls,omitempty"`
	State    json.RawMessage   `json:"state,omitempty"`
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
}

// decisionInput is what the decision activity records.
type decisionInput struct {
	nodeInput
	Question human.Question `json:"question"`
	Answer   human.Answer   `json:"answer"`
	Decision string         `json:"decision"`
}

// Error types of activity failures the workflow tells apart.
const (
	errTypeNeedsHuman = "azero.NeedsHuman"
	errTypeAborted    = "azero.Aborted"
	errTypeAudit      = "azero.Audit"
	errTypeFatal      = "azero.Fatal"
)
