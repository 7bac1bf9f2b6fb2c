package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/azero-dev/azero/internal/answerkey"
	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/store"
)

// activities run on a worker, with its store, audit log and state
// directory.
type activities struct {
	reg      *Registry
	store    *store.Store
	audit    *audit.Logger
	stateDir string
	me       WorkerRef
	watch    func(event.Event)
	now      func() time.Time
	// key verifies the seal of an answer an Update claims came through
	// azero's terminal or page; nil: no claim is proven.
	key *answerkey.Key
	// caller returns the identity of the Temporal client that sent the
	// Update with this id to the run of the activity (ctx); nil: unknown.
	caller func(ctx context.Context, update string) (string, error)
}

// heartbeat tells Temporal the worker is alive while fn works: a worker
// that dies mid-node is noticed after the heartbeat timeout, not after the
// node's hours-long timeout.
func heartbeat(ctx context.Context, what string) (stop func()) {
	every := activity.GetInfo(ctx).HeartbeatTimeout / 3
	if every <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx, what)
			}
		}
	}()
	activity.RecordHeartbeat(ctx, what)
	return func() { close(done); <-finished }
}

// collector keeps what one activity reported, for the workflow to add to
// the run's events.
type collector struct {
	mu     sync.Mutex
	events []event.Event
}

func (c *collector) take() []event.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.events
}

// sink shows a run's events on the worker and collects them into col.
func (a *activities) sink(col *collector) event.Sink {
	return event.SinkFunc(func(ctx context.Context, ev event.Event) {
		if ev.RunID == "" {
			ev.RunID = flow.RunID(ctx)
		}
		if ev.Node == "" {
			ev.Node = flow.CurrentNode(ctx)
		}
		if ev.At.IsZero() {
			ev.At = a.now()
		}
		if a.watch != nil {
			a.watch(ev)
		}
		col.mu.Lock()
		col.events = append(col.events, ev)
		col.mu.Unlock()
	})
}

// mirrorLease is the lease every worker holds a Temporal run's row in its
// store with: the row is bookkeeping for the nodes (model calls, scripted
// turns), and only Temporal decides who runs the run.
const mirrorLease = "temporal"

// attempt names this execution of an activity: a node retried (or run
// again by another worker) asks the scripted model the same turn again,
// as a node run again after a crash does locally.
func attempt(ctx context.Context) string {
	info := activity.GetInfo(ctx)
	return fmt.Sprintf("temporal:%s:%s:%d", info.WorkflowExecution.RunID, info.ActivityID, info.Attempt)
}

// classify turns a node's error into what the workflow tells apart;
// stops is the workflow's own test for errors retrying cannot fix.
func classify(err error, stops func(error) bool) error {
	switch {
	case err == nil:
		return nil
	case human.Needed(err):
		return temporal.NewNonRetryableApplicationError(err.Error(), errTypeNeedsHuman, err)
	case errors.Is(err, flow.ErrAborted):
		return temporal.NewNonRetryableApplicationError(err.Error(), errTypeAborted, err)
	case errors.Is(err, llm.ErrBudgetExceeded):
		return temporal.NewNonRetryableApplicationError(err.Error(), errTypeFatal, err)
	case stops != nil && stops(err):
		return temporal.NewNonRetryableApplicationError(err.Error(), errTypeStopped, err)
	}
	return err
}

// adopt prepares this worker for a step of the run: its store has the
// run and every model call the run made elsewhere, and, when the run
// just came to this worker, its worktree is here. It returns the state
// (with the worktree's new path) and how many calls the run had.
func (a *activities) adopt(ctx context.Context, in nodeInput, d def, moved bool) (json.RawMessage, int, error) {
	if _, err := a.store.GetRun(ctx, in.RunID); errors.Is(err, store.ErrNotFound) {
		err = a.store.CreateRun(ctx, store.Run{ID: in.RunID, Workflow: in.Workflow, Status: store.StatusRunning, Node: in.Node,
			State: in.State, Meta: map[string]string{MetaEngine: EngineName, "worker": a.me.Identity}})
		if err != nil {
			return nil, 0, err
		}
	} else if err != nil {
		return nil, 0, a.refuse(ctx, err)
	}
	if err := a.store.Acquire(ctx, in.RunID, store.Lease{Token: mirrorLease, PID: os.Getpid()}, 24*time.Hour); err != nil {
		return nil, 0, err
	}
	local, err := a.store.Calls(ctx, in.RunID)
	if err != nil {
		return nil, 0, err
	}
	// The calls other workers made (and this one, in steps that completed)
	// are the run's; this store records those it lacks.
	have := map[string]bool{}
	for _, c := range local {
		have[callKey(c)] = true
	}
	for _, c := range in.Calls {
		if have[callKey(c)] {
			continue
		}
		c.RunID, c.Attempt = in.RunID, ""
		if c.Latency == 0 {
			c.Latency = time.Duration(c.LatencyMS) * time.Millisecond
		}
		if err := a.store.RecordCall(ctx, c); err != nil {
			return nil, 0, err
		}
		local = append(local, c)
	}
	state := in.State
	if moved {
		dir := filepath.Join(a.stateDir, "worktrees", in.RunID)
		state, _, err = d.worktree(in.State, func(wt *Worktree) error { return Relocate(ctx, wt, dir, in.RunID) })
		if err != nil {
			return nil, 0, err
		}
	}
	return state, len(local), nil
}

// callKey identifies a model call across stores.
func callKey(c store.Call) string {
	return fmt.Sprintf("%d|%s|%s|%s|%s", c.At.UnixNano(), c.Node, c.Role, c.Model, c.Purpose)
}

// mirror records in this worker's store where the run stands after a step
// it ran, with the step's attempt, so that the calls of that attempt count
// as the run's conversation.
func (a *activities) mirror(ctx context.Context, in nodeInput, next string, state json.RawMessage, status store.Status, outcome, att string, started time.Time) error {
	err := a.store.Checkpoint(ctx, store.Checkpoint{RunID: in.RunID, Token: mirrorLease, Node: in.Node, Next: next,
		Status: status, State: state, Steps: in.Steps, Error: in.Error, Outcome: outcome, Attempt: att,
		Started: started, Finished: a.now()})
	if err != nil {
		return a.refuse(ctx, fmt.Errorf("record run %s in this worker's store: %w", in.RunID, err))
	}
	return nil
}

// refuse makes the error of a row of this worker's store changed outside
// azero final (retrying cannot mend it), recorded once as run_forged;
// other errors stay as they are. gc reads these rows to remove worktrees,
// so azero neither writes over nor acts on a forged one.
func (a *activities) refuse(ctx context.Context, err error) error {
	var rec store.Recorder
	if a.audit != nil {
		rec = a.audit
	}
	if a.store.ReportForged(ctx, rec, "temporal worker", err) {
		return temporal.NewNonRetryableApplicationError(err.Error(), errTypeFatal, err)
	}
	return err
}

// newCalls returns the calls the run made on this worker since it had
// known ones.
func (a *activities) newCalls(ctx context.Context, runID string, known int) ([]store.Call, error) {
	calls, err := a.store.Calls(ctx, runID)
	if err != nil {
		return nil, err
	}
	if known >= len(calls) {
		return nil, nil
	}
	return slices.Clone(calls[known:]), nil
}

// snapshot keeps the run's worktree recoverable by another worker.
func (a *activities) snapshot(ctx context.Context, d def, runID string, state json.RawMessage) error {
	_, wt, err := d.worktree(state, nil)
	if err != nil || wt == nil {
		return err
	}
	return Snapshot(ctx, wt.Repo, *wt.Dir, runID)
}

// Node runs one node of a run.
func (a *activities) Node(ctx context.Context, in nodeInput) (nodeOutput, error) {
	defer heartbeat(ctx, in.Node)()
	started := a.now()
	d, err := a.reg.get(in.Workflow)
	if err != nil {
		return nodeOutput{}, temporal.NewNonRetryableApplicationError(err.Error(), errTypeFatal, err)
	}
	state, known, err := a.adopt(ctx, in, d, in.Moved)
	if err != nil {
		return nodeOutput{}, err
	}
	att := attempt(ctx)
	col := &collector{}
	next, out, err := d.run(flow.WithAttempt(ctx, att), Run{ID: in.RunID, Events: a.sink(col)}, in.Node, state)
	if err != nil {
		return nodeOutput{}, d.classify(err)
	}
	if err := a.snapshot(ctx, d, in.RunID, out); err != nil {
		return nodeOutput{}, err
	}
	done := in
	done.Steps++
	if err := a.mirror(ctx, done, next, out, store.StatusRunning, "ok", att, started); err != nil {
		return nodeOutput{}, err
	}
	calls, err := a.newCalls(ctx, in.RunID, known)
	if err != nil {
		return nodeOutput{}, err
	}
	_ = a.audit.Event(ctx, "node", in.RunID, slog.String("node", in.Node), slog.String("next", next),
		slog.String("engine", EngineName), slog.String("worker", a.me.Identity))
	return nodeOutput{Worker: a.me, Next: next, State: out, Calls: calls, Events: col.take()}, nil
}

// Ask builds a gate's question.
func (a *activities) Ask(ctx context.Context, in nodeInput) (nodeOutput, error) {
	defer heartbeat(ctx, in.Node)()
	d, err := a.reg.get(in.Workflow)
	if err != nil {
		return nodeOutput{}, temporal.NewNonRetryableApplicationError(err.Error(), errTypeFatal, err)
	}
	state, known, err := a.adopt(ctx, in, d, in.Moved)
	if err != nil {
		return nodeOutput{}, err
	}
	col := &collector{}
	q, err := d.ask(ctx, Run{ID: in.RunID, Events: a.sink(col)}, in.Node, state)
	if err != nil {
		return nodeOutput{}, d.classify(err)
	}
	q.Gate = in.Node
	if q.AskedAt.IsZero() {
		q.AskedAt = a.now().UTC()
	}
	calls, err := a.newCalls(ctx, in.RunID, known)
	if err != nil {
		return nodeOutput{}, err
	}
	ev := event.Event{RunID: in.RunID, Node: in.Node, Kind: event.Question, Text: q.Prompt}.WithData(q)
	a.sink(col).Emit(ctx, ev)
	return nodeOutput{Worker: a.me, State: state, Question: &q, Calls: calls, Events: col.take()}, nil
}

// Decision writes a gate's decision to this worker's audit log, before the
// workflow acts on it. It fails, and the decision is not acted on, when
// the log cannot be written.
func (a *activities) Decision(ctx context.Context, in decisionInput) (nodeOutput, error) {
	// Taking the run over recreates its worktree, and the audit log may
	// sit on a slow disk: neither is a dead worker.
	defer heartbeat(ctx, in.Node)()
	d, err := a.reg.get(in.Workflow)
	if err != nil {
		return nodeOutput{}, temporal.NewNonRetryableApplicationError(err.Error(), errTypeFatal, err)
	}
	state, _, err := a.adopt(ctx, in.nodeInput, d, in.Moved)
	if err != nil {
		return nodeOutput{}, err
	}
	q, ans := in.Question, in.Answer
	opt, err := checkAnswer(q, ans)
	if err != nil {
		return nodeOutput{}, temporal.NewNonRetryableApplicationError(err.Error(), errTypeFatal, err)
	}
	var extra []slog.Attr
	if in.Update != "" {
		identity, err := a.identity(ctx, in.Update)
		if err != nil {
			extra = append(extra, slog.String("client_identity_error", err.Error()))
		} else {
			extra = append(extra, slog.String("client_identity", identity))
		}
		ans = a.received(in.RunID, q, ans, identity)
	}
	attrs := append(human.DecisionRecord(q, ans, opt), slog.String("engine", EngineName), slog.String("worker", a.me.Identity))
	attrs = append(attrs, extra...)
	if err := a.audit.Event(ctx, "gate_decision", in.RunID, attrs...); err != nil {
		e := &flow.AuditError{Gate: q.Gate, Decision: opt.Decision, Err: err}
		return nodeOutput{}, temporal.NewNonRetryableApplicationError(e.Error(), errTypeAudit, err)
	}
	col := &collector{}
	a.sink(col).Emit(flow.WithRun(ctx, in.RunID, q.Gate), event.Event{Kind: event.Answer, Text: opt.Decision}.WithData(ans))
	return nodeOutput{Worker: a.me, State: state, Events: col.take(), Answer: &ans}, nil
}

// identity returns who sent the Update with this id to the activity's
// run, as Temporal knows the client.
func (a *activities) identity(ctx context.Context, update string) (string, error) {
	if a.caller == nil {
		return "", errors.New("this worker cannot read the run's history")
	}
	return a.caller(ctx, update)
}

// received is the answer an Update delivered, as it is recorded, given
// the identity of the Temporal client that sent it ("" when unknown).
// Anyone who can reach the cluster can send an Update naming any
// channel, address and browser, so the answer keeps what it claims only
// when it carries a seal made with this worker's answer key (azero's
// terminal or page, sharing the key) for this asking of the question.
// Otherwise it came through Temporal: channel temporal, answered by the
// client Temporal names, the channel claimed kept as claimed_channel, the
// address, browser and name claimed dropped. When in doubt, temporal.
func (a *activities) received(runID string, q human.Question, ans human.Answer, identity string) human.Answer {
	proven := a.key.Verify(runID, q, ans) == nil
	ans.MAC, ans.ClaimedChannel = "", ""
	if proven {
		return ans
	}
	if ans.Channel != human.ChannelTemporal {
		ans.ClaimedChannel = ans.Channel
	}
	ans.Channel, ans.RemoteAddr, ans.UserAgent = human.ChannelTemporal, "", ""
	ans.By = "a Temporal client"
	if identity != "" {
		ans.By = "Temporal client " + identity
	}
	return ans
}

// updateCaller finds, in the run's history, who sent an Update: the
// identity of the client, as Temporal recorded it with the request when
// the run accepted it. The decision activity is scheduled by the workflow
// task that accepted the Update, so the acceptance is in the history.
func updateCaller(c client.Client) func(ctx context.Context, update string) (string, error) {
	return func(ctx context.Context, update string) (string, error) {
		run := activity.GetInfo(ctx).WorkflowExecution
		it := c.GetWorkflowHistory(ctx, run.ID, run.RunID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				return "", fmt.Errorf("read the history of run %s: %w", run.ID, err)
			}
			// Proto getters are nil-safe: other events have no meta.
			meta := ev.GetWorkflowExecutionUpdateAcceptedEventAttributes().GetAcceptedRequest().GetMeta()
			if meta.GetUpdateId() == update {
				return meta.GetIdentity(), nil
			}
		}
		return "", fmt.Errorf("update %s is not in the history of run %s", update, run.ID)
	}
}

// Finish records how a run ended and forgets its worktree snapshot.
func (a *activities) Finish(ctx context.Context, in nodeInput) (nodeOutput, error) {
	defer heartbeat(ctx, flow.End)()
	d, err := a.reg.get(in.Workflow)
	if err != nil {
		return nodeOutput{}, temporal.NewNonRetryableApplicationError(err.Error(), errTypeFatal, err)
	}
	if _, wt, err := d.worktree(in.State, nil); err != nil {
		return nodeOutput{}, err
	} else if wt != nil {
		if err := ForgetSnapshot(ctx, wt.Repo, in.RunID); err != nil {
			return nodeOutput{}, err
		}
	}
	// The worker's row of the run ends as the run did.
	if _, err := a.store.GetRun(ctx, in.RunID); err == nil {
		if err := a.store.Acquire(ctx, in.RunID, store.Lease{Token: mirrorLease, PID: os.Getpid()}, time.Minute); err != nil {
			return nodeOutput{}, err
		}
		if err := a.mirror(ctx, in, in.Node, in.State, in.Status, string(in.Status), "", a.now()); err != nil {
			return nodeOutput{}, err
		}
		if err := a.store.Release(ctx, in.RunID, mirrorLease); err != nil {
			return nodeOutput{}, err
		}
	} else if !errors.Is(err, store.ErrNotFound) {
		return nodeOutput{}, a.refuse(ctx, err)
	}
	attrs := []slog.Attr{slog.String("workflow", in.Workflow), slog.String("status", string(in.Status)),
		slog.String("engine", EngineName), slog.String("worker", a.me.Identity)}
	if in.Error != "" {
		attrs = append(attrs, slog.String("error", in.Error))
	}
	_ = a.audit.Event(ctx, "run_finished", in.RunID, attrs...)
	tone := event.Good
	if in.Status != store.StatusDone {
		tone = event.Bad
	}
	col := &collector{}
	a.sink(col).Emit(flow.WithRun(ctx, in.RunID, flow.End), event.Event{Kind: event.Finished, Tone: tone, Text: in.Error}.
		WithData(event.FinishedData{Status: string(in.Status), Error: in.Error}))
	return nodeOutput{Worker: a.me, State: in.State, Events: col.take()}, nil
}
