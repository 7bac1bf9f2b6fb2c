package flow

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/store"
)

// Sentinel errors; Drive's typed errors match them with errors.Is.
var (
	// ErrWaiting: the run stopped at a gate because nobody could answer.
	ErrWaiting = errors.New("waiting for a human answer")
	// ErrInterrupted: the run stopped on SIGINT/SIGTERM.
	ErrInterrupted = errors.New("interrupted")
	// ErrAborted: a human rejected or aborted the run at a gate. Nodes and
	// Finish functions wrap it to end a run as aborted.
	ErrAborted = errors.New("aborted by a human")
	// ErrStepLimit: the run completed more nodes than its graph allows.
	ErrStepLimit = errors.New("step limit reached")
	// ErrLoopLimit: one node completed more often than its graph allows.
	ErrLoopLimit = errors.New("loop limit reached")
	// ErrFinished: the run already ended (done or aborted).
	ErrFinished = errors.New("run already finished")
)

// needsHuman is implemented by errors meaning "a human must answer first"
// (prompt.ErrNoTerminal, for one).
type needsHuman interface{ NeedsHuman() bool }

// NeedsHuman reports whether err means a human answer is needed.
func NeedsHuman(err error) bool {
	var nh needsHuman
	return errors.As(err, &nh) && nh.NeedsHuman()
}

// WaitingError reports a run checkpointed at a gate.
type WaitingError struct {
	RunID, Node string
	Cause       error
}

func (e *WaitingError) Error() string {
	return fmt.Sprintf("run %s is waiting at %s for a human answer (%v); resume it from a terminal with: azero resume %s",
		e.RunID, e.Node, e.Cause, e.RunID)
}

// Is makes WaitingError match ErrWaiting.
func (e *WaitingError) Is(target error) bool { return target == ErrWaiting }

// Unwrap returns the cause.
func (e *WaitingError) Unwrap() error { return e.Cause }

// InterruptedError reports a run checkpointed after a signal.
type InterruptedError struct{ RunID, Node string }

func (e *InterruptedError) Error() string {
	return fmt.Sprintf("run %s interrupted at %s; continue it with: azero resume %s", e.RunID, e.Node, e.RunID)
}

// Is makes InterruptedError match ErrInterrupted.
func (e *InterruptedError) Is(target error) bool { return target == ErrInterrupted }

// NodeError reports a node that failed; the run can be resumed there.
type NodeError struct {
	RunID, Node string
	Err         error
}

func (e *NodeError) Error() string {
	return fmt.Sprintf("run %s failed at %s: %v", e.RunID, e.Node, e.Err)
}

// Unwrap returns the node's error.
func (e *NodeError) Unwrap() error { return e.Err }

// EventKind says what happened to a run.
type EventKind string

// Event kinds sent to an Engine's Observer.
const (
	EventStarted     EventKind = "started"
	EventNodeStart   EventKind = "node_start"
	EventNodeDone    EventKind = "node_done"
	EventWaiting     EventKind = "waiting"
	EventInterrupted EventKind = "interrupted"
	EventFailed      EventKind = "failed"
	EventFinished    EventKind = "finished"
)

// Event describes progress, for display.
type Event struct {
	Kind    EventKind
	RunID   string
	Node    string
	Next    string
	Status  store.Status
	Elapsed time.Duration
	Err     error
}

// Engine drives runs against a store.
type Engine struct {
	Store    *store.Store
	Audit    *audit.Logger // nil discards
	Observer func(Event)   // optional progress display
	LeaseTTL time.Duration // default 30 s
	Now      func() time.Time
}

func (e *Engine) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

func (e *Engine) observe(ev Event) {
	if e.Observer != nil {
		e.Observer(ev)
	}
}

func (e *Engine) ttl() time.Duration {
	if e.LeaseTTL > 0 {
		return e.LeaseTTL
	}
	return 30 * time.Second
}

type ctxKey int

const (
	runIDKey ctxKey = iota
	nodeKey
)

// RunID returns the id of the run whose node is executing with ctx.
func RunID(ctx context.Context) string {
	s, _ := ctx.Value(runIDKey).(string)
	return s
}

// CurrentNode returns the node executing with ctx.
func CurrentNode(ctx context.Context) string {
	s, _ := ctx.Value(nodeKey).(string)
	return s
}

// CreateOptions describe a new run.
type CreateOptions struct {
	ID   string            // default: store.NewID
	Key  string            // a workflow-specific key (the governance slug)
	Meta map[string]string // shown by `azero runs show`
}

// Create records a new run of g at its start node with the initial state,
// without driving it.
func Create[S any](ctx context.Context, e *Engine, g *Graph[S], state *S, opts CreateOptions) (string, error) {
	if err := g.Validate(); err != nil {
		return "", err
	}
	raw, err := json.Marshal(state)
	if err != nil {
		return "", fmt.Errorf("encode state of %s: %w", g.name, err)
	}
	id := opts.ID
	if id == "" {
		id = store.NewID(e.now())
	}
	err = e.Store.CreateRun(ctx, store.Run{ID: id, Workflow: g.name, Key: opts.Key, Status: store.StatusRunning,
		Node: g.start, State: raw, Meta: opts.Meta})
	if err != nil {
		return "", err
	}
	e.Audit.Event(ctx, "run_created", id, slog.String("workflow", g.name), slog.String("key", opts.Key))
	return id, nil
}

func newToken() string {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// Drive runs the run from the node where it stands until it ends, stops at
// a gate, fails or is interrupted. It returns the final state and:
//   - nil when the run is done;
//   - a *WaitingError (ErrWaiting) when a gate could not ask anyone;
//   - an *InterruptedError (ErrInterrupted) when ctx was cancelled;
//   - an error wrapping ErrAborted when a human aborted;
//   - a *store.LeaseHeldError when another process drives the run;
//   - otherwise the node's or Finish's error (wrapped in *NodeError for nodes).
//
// Only one process at a time can drive a run: Drive holds the run's lease
// in the store and renews it while it works.
func Drive[S any](ctx context.Context, e *Engine, g *Graph[S], runID string) (*S, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	token := newToken()
	if err := e.Store.Acquire(ctx, runID, store.Lease{Token: token, PID: os.Getpid()}, e.ttl()); err != nil {
		return nil, err
	}
	// Bookkeeping after cancellation must still reach the store.
	bg := context.WithoutCancel(ctx)
	defer e.Store.Release(bg, runID, token)

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stopBeat := e.heartbeat(ctx, runID, token, cancel)
	defer stopBeat()

	d := &driver[S]{e: e, g: g, runID: runID, token: token, bg: bg}
	return d.run(ctx)
}

// heartbeat renews the lease until stopped; losing it cancels the drive.
func (e *Engine) heartbeat(ctx context.Context, runID, token string, cancel context.CancelCauseFunc) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(e.ttl() / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if err := e.Store.Renew(context.WithoutCancel(ctx), runID, token, e.ttl()); errors.Is(err, store.ErrLeaseLost) {
					cancel(err)
					return
				}
			}
		}
	}()
	return func() { close(done); <-finished }
}

type driver[S any] struct {
	e     *Engine
	g     *Graph[S]
	runID string
	token string
	bg    context.Context

	state  S
	node   string
	steps  int
	visits map[string]int
}

func (d *driver[S]) run(ctx context.Context) (*S, error) {
	r, err := d.e.Store.GetRun(ctx, d.runID)
	if err != nil {
		return nil, err
	}
	if r.Workflow != d.g.name {
		return nil, fmt.Errorf("run %s belongs to workflow %q, not %q", d.runID, r.Workflow, d.g.name)
	}
	if err := json.Unmarshal(r.State, &d.state); err != nil {
		return nil, fmt.Errorf("decode state of run %s: %w", d.runID, err)
	}
	if r.Status.Finished() {
		return &d.state, fmt.Errorf("%w: run %s is %s", ErrFinished, d.runID, r.Status)
	}
	d.node, d.steps, d.visits = r.Node, r.Steps, r.Visits
	if d.visits == nil {
		d.visits = map[string]int{}
	}

	outcome := "resumed"
	if r.Steps == 0 && r.Status == store.StatusRunning {
		outcome = "started"
	}
	now := d.e.now()
	if err := d.checkpoint(ctx, d.node, d.node, store.StatusRunning, false, "", outcome, now, now); err != nil {
		return nil, err
	}
	d.e.Audit.Event(ctx, "run_"+outcome, d.runID, slog.String("workflow", d.g.name), slog.String("node", d.node))
	d.e.observe(Event{Kind: EventStarted, RunID: d.runID, Node: d.node})

	for {
		if d.node == End {
			return d.finish(ctx)
		}
		if err := ctx.Err(); err != nil {
			return d.interrupted(ctx, d.node, d.e.now())
		}
		nd := d.g.nodes[d.node]
		if nd == nil {
			return d.fail(fmt.Errorf("node %q no longer exists in workflow %s", d.node, d.g.name), d.node, d.e.now())
		}
		if d.steps >= d.g.maxSteps {
			return d.fail(fmt.Errorf("%w: %d nodes completed", ErrStepLimit, d.steps), d.node, d.e.now())
		}
		if nd.maxVisits > 0 && d.visits[d.node] >= nd.maxVisits {
			return d.fail(fmt.Errorf("%w: %s ran %d times", ErrLoopLimit, d.node, d.visits[d.node]), d.node, d.e.now())
		}

		started := d.e.now()
		d.e.observe(Event{Kind: EventNodeStart, RunID: d.runID, Node: d.node})
		nctx := context.WithValue(context.WithValue(ctx, runIDKey, d.runID), nodeKey, d.node)
		next, err := nd.fn(nctx, &d.state)
		if err != nil {
			return d.stop(ctx, err, started)
		}
		if !slices.Contains(nd.next, next) {
			return d.fail(fmt.Errorf("node %s chose %q, which is not one of its declared next nodes %v", d.node, next, nd.next), d.node, started)
		}
		d.visits[d.node]++
		d.steps++
		finished := d.e.now()
		// The node's work is done: record it even if a signal arrived
		// meanwhile (the loop then stops before the next node).
		if err := d.checkpoint(d.bg, d.node, next, store.StatusRunning, true, "", "ok", started, finished); err != nil {
			return &d.state, err
		}
		d.e.Audit.Event(ctx, "node", d.runID, slog.String("node", d.node), slog.String("next", next),
			slog.Int64("duration_ms", finished.Sub(started).Milliseconds()))
		d.e.observe(Event{Kind: EventNodeDone, RunID: d.runID, Node: d.node, Next: next, Elapsed: finished.Sub(started)})
		d.node = next
	}
}

func (d *driver[S]) checkpoint(ctx context.Context, ran, next string, st store.Status, saveState bool, errText, outcome string, started, finished time.Time) error {
	var raw json.RawMessage
	if saveState {
		b, err := json.Marshal(&d.state)
		if err != nil {
			return fmt.Errorf("encode state of run %s: %w", d.runID, err)
		}
		raw = b
	}
	return d.e.Store.Checkpoint(ctx, store.Checkpoint{
		RunID: d.runID, Token: d.token, Node: ran, Next: next, Status: st, State: raw,
		Steps: d.steps, Visits: d.visits, Error: errText, Outcome: outcome, Started: started, Finished: finished,
	})
}

// stop classifies a node's error and records where the run stands. The
// node's changes to the state are discarded: it runs again on resume.
func (d *driver[S]) stop(ctx context.Context, err error, started time.Time) (*S, error) {
	node := d.node
	switch {
	case NeedsHuman(err):
		if cerr := d.checkpoint(d.bg, node, node, store.StatusWaiting, false, err.Error(), "waiting", started, d.e.now()); cerr != nil {
			return &d.state, cerr
		}
		d.e.Audit.Event(d.bg, "run_waiting", d.runID, slog.String("node", node), slog.String("reason", err.Error()))
		d.e.observe(Event{Kind: EventWaiting, RunID: d.runID, Node: node, Err: err})
		return &d.state, &WaitingError{RunID: d.runID, Node: node, Cause: err}
	case ctx.Err() != nil && !errors.Is(context.Cause(ctx), store.ErrLeaseLost):
		return d.interrupted(ctx, node, started)
	case errors.Is(err, ErrAborted):
		if cerr := d.checkpoint(d.bg, node, node, store.StatusAborted, false, err.Error(), "aborted", started, d.e.now()); cerr != nil {
			return &d.state, cerr
		}
		d.e.Audit.Event(d.bg, "run_aborted", d.runID, slog.String("node", node), slog.String("reason", err.Error()))
		d.e.observe(Event{Kind: EventFinished, RunID: d.runID, Node: node, Status: store.StatusAborted, Err: err})
		return &d.state, err
	default:
		if cause := context.Cause(ctx); errors.Is(cause, store.ErrLeaseLost) {
			err = cause
		}
		return d.fail(err, node, started)
	}
}

func (d *driver[S]) interrupted(ctx context.Context, node string, started time.Time) (*S, error) {
	if err := d.checkpoint(d.bg, node, node, store.StatusInterrupted, false, "interrupted", "interrupted", started, d.e.now()); err != nil {
		return &d.state, err
	}
	d.e.Audit.Event(d.bg, "run_interrupted", d.runID, slog.String("node", node))
	d.e.observe(Event{Kind: EventInterrupted, RunID: d.runID, Node: node})
	return &d.state, &InterruptedError{RunID: d.runID, Node: node}
}

func (d *driver[S]) fail(err error, node string, started time.Time) (*S, error) {
	if errors.Is(err, store.ErrLeaseLost) {
		// Another process owns the run now; it records what happens next.
		return &d.state, err
	}
	if cerr := d.checkpoint(d.bg, node, node, store.StatusFailed, false, err.Error(), "failed", started, d.e.now()); cerr != nil {
		return &d.state, errors.Join(err, cerr)
	}
	d.e.Audit.Event(d.bg, "run_failed", d.runID, slog.String("node", node), slog.String("error", err.Error()))
	d.e.observe(Event{Kind: EventFailed, RunID: d.runID, Node: node, Err: err})
	return &d.state, &NodeError{RunID: d.runID, Node: node, Err: err}
}

func (d *driver[S]) finish(ctx context.Context) (*S, error) {
	var verdict error
	if d.g.finish != nil {
		verdict = d.g.finish(&d.state)
	}
	status, outcome := store.StatusDone, "done"
	switch {
	case errors.Is(verdict, ErrAborted):
		status, outcome = store.StatusAborted, "aborted"
	case verdict != nil:
		status, outcome = store.StatusFailed, "failed"
	}
	errText := ""
	if verdict != nil {
		errText = verdict.Error()
	}
	now := d.e.now()
	if err := d.checkpoint(d.bg, End, End, status, true, errText, outcome, now, now); err != nil {
		return &d.state, err
	}
	d.e.Audit.Event(d.bg, "run_finished", d.runID, slog.String("workflow", d.g.name), slog.String("status", string(status)))
	d.e.observe(Event{Kind: EventFinished, RunID: d.runID, Node: End, Status: status, Err: verdict})
	return &d.state, verdict
}
