package temporal

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/store"
)

// AnswerReply is what the "answer" Update returns once the decision was
// recorded and acted on.
type AnswerReply struct {
	Gate     string `json:"gate"`
	Decision string `json:"decision"`
	Next     string `json:"next"`
}

// driver is one execution of a run's workflow. Everything here runs in
// workflow code: deterministic, no I/O.
type driver struct {
	d   def
	in  Input
	o   Options
	now func() time.Time

	state    []byte
	node     string
	steps    int
	visits   map[string]int
	holder   WorkerRef
	moves    int
	calls    []store.Call
	history  []Step
	events   []event.Event
	seq      int64 // the last event's sequence number
	started  time.Time
	updated  time.Time
	executed int // steps taken in this execution

	status   store.Status
	ended    bool
	question *human.Question
	errText  string

	answer   *human.Answer
	answerU  string // the update that delivered answer
	deciding bool   // an answer to the pending question is being acted on
	replies  map[string]*reply
	resume   bool
}

type reply struct {
	r   AnswerReply
	err error
}

// workflowFunc returns the workflow function driving runs of d.
func workflowFunc(d def) func(workflow.Context, Input) (Result, error) {
	return func(ctx workflow.Context, in Input) (Result, error) {
		dr := &driver{d: d, in: in, o: in.Options.withDefaults(), replies: map[string]*reply{}}
		dr.now = func() time.Time { return workflow.Now(ctx).UTC() }
		return dr.run(ctx)
	}
}

func (dr *driver) snapshot(withState bool) Status {
	s := Status{RunID: dr.in.RunID, Workflow: dr.d.name(), Status: dr.status, Ended: dr.ended, Node: dr.node, Steps: dr.steps,
		Question: dr.question, Error: dr.errText, Holder: dr.holder, Moves: dr.moves, Meta: dr.in.Meta,
		Started: dr.started, Updated: dr.updated, History: dr.history, Calls: dr.calls, Events: dr.events}
	if withState {
		s.State = dr.state
	}
	return s
}

func (dr *driver) run(ctx workflow.Context) (Result, error) {
	if dr.in.Workflow != "" && dr.in.Workflow != dr.d.name() {
		return Result{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("run %s belongs to workflow %q, not %q", dr.in.RunID, dr.in.Workflow, dr.d.name()), errTypeFatal, nil)
	}
	dr.state = dr.in.State
	dr.status = store.StatusRunning
	if c := dr.in.Carry; c != nil {
		dr.node, dr.steps, dr.visits, dr.holder, dr.moves = c.Node, c.Steps, c.Visits, c.Holder, c.Moves
		dr.calls, dr.history, dr.events, dr.started, dr.updated = c.Calls, c.History, c.Events, c.Started, c.Updated
		if n := len(dr.events); n > 0 {
			dr.seq = dr.events[n-1].Seq
		}
	} else {
		dr.node, dr.started = dr.d.start(), dr.now()
		dr.updated = dr.started
		dr.emit(event.Event{Kind: event.RunStarted, Text: "started"})
	}
	if dr.visits == nil {
		dr.visits = map[string]int{}
	}
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (Status, error) { return dr.snapshot(true), nil }); err != nil {
		return Result{}, err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateAnswer, dr.onAnswer,
		workflow.UpdateHandlerOptions{Validator: dr.validateAnswer}); err != nil {
		return Result{}, err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateResume, dr.onResume,
		workflow.UpdateHandlerOptions{Validator: dr.validateResume}); err != nil {
		return Result{}, err
	}

	for {
		if dr.node == flow.End {
			return dr.finish(ctx)
		}
		if dr.executed >= dr.o.StepsPerExecution || workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			return dr.continueAsNew(ctx)
		}
		st, ok := dr.d.step(dr.node)
		if !ok {
			return dr.end(ctx, store.StatusFailed, fmt.Sprintf("node %q no longer exists in workflow %s", dr.node, dr.d.name()))
		}
		if dr.steps >= dr.d.limit() {
			return dr.end(ctx, store.StatusFailed, fmt.Sprintf("%v: %d nodes completed", flow.ErrStepLimit, dr.steps))
		}
		if st.maxVisits > 0 && dr.visits[dr.node] >= st.maxVisits {
			return dr.end(ctx, store.StatusFailed, fmt.Sprintf("%v: %s ran %d times", flow.ErrLoopLimit, dr.node, dr.visits[dr.node]))
		}

		started := dr.now()
		dr.emit(event.Event{Node: dr.node, Kind: event.NodeStarted})
		var (
			next string
			err  error
		)
		if st.gate {
			next, err = dr.gate(ctx)
		} else {
			next, err = dr.runNode(ctx)
		}
		if err == nil && !slices.Contains(st.next, next) {
			err = temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("node %s chose %q, which is not one of its declared next nodes %v", dr.node, next, st.next), errTypeFatal, nil)
		}
		if err != nil {
			var app *temporal.ApplicationError
			if errors.As(err, &app) && app.Type() == errTypeAborted {
				dr.record(Step{Node: dr.node, Next: dr.node, Outcome: "aborted", Worker: dr.holder.Identity, Started: started, Finished: dr.now(), Error: cause(err)})
				return dr.end(ctx, store.StatusAborted, cause(err))
			}
			if err := dr.stopped(ctx, err, started); err != nil {
				return Result{}, err
			}
			continue // the node runs again
		}
		dr.visits[dr.node]++
		dr.steps++
		dr.executed++
		s := dr.record(Step{Node: dr.node, Next: next, Outcome: "ok", Worker: dr.holder.Identity, Started: started, Finished: dr.now()})
		dr.emit(event.Event{Node: dr.node, Kind: event.NodeDone}.WithData(event.NodeDoneData{Next: next, DurationMS: s.DurationMS}))
		dr.node = next
	}
}

// cause is the message of an activity's own error, without Temporal's
// wrapping.
func cause(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return app.Message()
	}
	var te *temporal.TimeoutError
	if errors.As(err, &te) {
		return fmt.Sprintf("activity timed out (%s)", te.TimeoutType())
	}
	return err.Error()
}

func (dr *driver) record(s Step) Step {
	s.DurationMS = max(s.Finished.Sub(s.Started).Milliseconds(), 0)
	dr.history = append(dr.history, s)
	if len(dr.history) > historyKept {
		dr.history = slices.Clone(dr.history[len(dr.history)-historyKept:])
	}
	dr.updated = s.Finished
	return s
}

// emit adds an event to the run's events, numbered in order; the oldest
// go when there are too many, and long ones are cut.
func (dr *driver) emit(evs ...event.Event) {
	for _, ev := range evs {
		dr.seq++
		ev.Seq, ev.RunID = dr.seq, dr.in.RunID
		if ev.At.IsZero() {
			ev.At = dr.now()
		}
		if len(ev.Text) > eventText {
			ev.Text = ev.Text[:eventText] + "\n[cut: the whole text is in the worker's output and the run's lineage]"
		}
		if len(ev.Data) > eventData {
			ev.Data = nil
		}
		dr.events = append(dr.events, ev)
	}
	first, size := max(len(dr.events)-eventsKept, 0), 0
	for i := len(dr.events) - 1; i >= first; i-- {
		size += eventSize(dr.events[i])
		if size > eventsSize {
			first = i + 1
			break
		}
	}
	if first > 0 {
		dr.events = slices.Clone(dr.events[first:])
	}
}

// eventSize is about what an event weighs as JSON.
func eventSize(ev event.Event) int {
	return len(ev.Text) + len(ev.Data) + len(ev.Node) + len(ev.RunID) + 128
}

// stopped records a node that could not complete and waits until a human
// resumes the run: status waiting when the node needs a human, failed
// otherwise. It returns only an error of the workflow itself.
func (dr *driver) stopped(ctx workflow.Context, err error, started time.Time) error {
	var app *temporal.ApplicationError
	dr.status = store.StatusFailed
	outcome := "failed"
	if errors.As(err, &app) && app.Type() == errTypeNeedsHuman {
		dr.status, outcome = store.StatusWaiting, "waiting"
	}
	dr.errText = cause(err)
	dr.record(Step{Node: dr.node, Next: dr.node, Outcome: outcome, Worker: dr.holder.Identity, Started: started, Finished: dr.now(), Error: dr.errText})
	kind, tone := event.Failed, event.Bad
	if outcome == "waiting" {
		kind, tone = event.Waiting, event.Warn
	}
	dr.emit(event.Event{Node: dr.node, Kind: kind, Tone: tone, Text: dr.errText})
	dr.resume = false
	if err := workflow.Await(ctx, func() bool { return dr.resume }); err != nil {
		return err
	}
	dr.resume = false
	dr.status, dr.errText = store.StatusRunning, ""
	dr.updated = dr.now()
	dr.emit(event.Event{Node: dr.node, Kind: event.RunStarted, Text: "resumed"})
	return nil
}

func (dr *driver) validateResume(ctx workflow.Context) error {
	if dr.question != nil || (dr.status != store.StatusFailed && dr.status != store.StatusWaiting) {
		return fmt.Errorf("run %s is %s at %s: only a failed run, or one whose node needs a human, can be resumed this way", dr.in.RunID, dr.status, dr.node)
	}
	return nil
}

func (dr *driver) onResume(ctx workflow.Context) (string, error) {
	if err := dr.validateResume(ctx); err != nil {
		return "", err
	}
	dr.resume = true
	return dr.node, nil
}

// activityOptions are declared here, at the call site: a node may run for
// hours and heartbeats; an ask or a record is short.
func (dr *driver) activityOptions(long bool) workflow.ActivityOptions {
	ao := workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Minute,
		HeartbeatTimeout:    dr.o.Heartbeat,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        time.Second,
			BackoffCoefficient:     2,
			MaximumInterval:        time.Minute,
			MaximumAttempts:        dr.o.Attempts,
			NonRetryableErrorTypes: []string{errTypeNeedsHuman, errTypeAborted, errTypeAudit, errTypeFatal, errTypeStopped},
		},
	}
	if long {
		ao.StartToCloseTimeout = dr.o.NodeTimeout
	}
	if dr.holder.Queue != "" {
		ao.TaskQueue = dr.holder.Queue
		ao.ScheduleToStartTimeout = dr.o.MoveAfter
	}
	return ao
}

// exec runs an activity on the worker holding the run, moving the run to
// another worker when the holder does not take it in time.
func (dr *driver) exec(ctx workflow.Context, name string, long bool, in func(moved bool) any, out *nodeOutput) error {
	for {
		actx := workflow.WithActivityOptions(ctx, dr.activityOptions(long))
		err := workflow.ExecuteActivity(actx, name, in(dr.holder.Queue == "")).Get(ctx, out)
		if err == nil {
			dr.holder = out.Worker
			dr.calls = append(dr.calls, out.Calls...)
			dr.emit(out.Events...)
			return nil
		}
		if dr.holder.Queue == "" || !gone(err) {
			return err
		}
		now := dr.now()
		s := dr.record(Step{Node: dr.node, Next: dr.node, Outcome: "moved", Worker: dr.holder.Identity, Started: now, Finished: now,
			Error: fmt.Sprintf("worker %s did not take %s: %s", dr.holder.Identity, name, cause(err))})
		dr.emit(event.Event{Node: dr.node, Kind: event.Warning, Tone: event.Warn, Text: s.Error + "; the run moves to another worker"})
		dr.moves++
		dr.holder = WorkerRef{}
	}
}

// gone reports whether err says the holding worker is not there: it did
// not pick the activity up in time, or stopped heartbeating.
func gone(err error) bool {
	var te *temporal.TimeoutError
	if !errors.As(err, &te) {
		return false
	}
	switch te.TimeoutType() {
	case enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, enumspb.TIMEOUT_TYPE_HEARTBEAT:
		return true
	}
	return false
}

func (dr *driver) input(node string) nodeInput {
	return nodeInput{RunID: dr.in.RunID, Workflow: dr.d.name(), Node: node, State: dr.state, Calls: dr.calls, Steps: dr.steps}
}

// build returns in for exec, marked moved as exec says.
func build[T any](in T, set func(*T, bool)) func(bool) any {
	return func(moved bool) any {
		c := in
		set(&c, moved)
		return c
	}
}

func setMoved(in *nodeInput, moved bool) { in.Moved = moved }

func setDecisionMoved(in *decisionInput, moved bool) { in.Moved = moved }

func (dr *driver) runNode(ctx workflow.Context) (string, error) {
	var out nodeOutput
	if err := dr.exec(ctx, activityNode, true, build(dr.input(dr.node), setMoved), &out); err != nil {
		return "", err
	}
	dr.state = out.State
	return out.Next, nil
}

// gate asks the gate's question on a worker, waits for a valid answer (or
// takes the unattended one), has a worker record the decision, and routes
// on it in workflow code.
func (dr *driver) gate(ctx workflow.Context) (string, error) {
	var out nodeOutput
	if err := dr.exec(ctx, activityAsk, false, build(dr.input(dr.node), setMoved), &out); err != nil {
		return "", err
	}
	// The ask's changes to the state are not kept, as locally; a move may
	// have placed the worktree elsewhere, which is.
	dr.state = out.State
	if out.Question == nil {
		return "", temporal.NewNonRetryableApplicationError("gate "+dr.node+" asked no question", errTypeFatal, nil)
	}
	q := *out.Question
	q.Gate = dr.node
	// The question's id is its content, as locally: an answer given for
	// it (the web page sends the id it showed) is refused once it changed.
	q.ID = human.Fingerprint(q)
	q.Nonce = questionNonce(workflow.GetInfo(ctx).WorkflowExecution.RunID, dr.steps, q.ID)
	if err := q.Check(); err != nil {
		return "", temporal.NewNonRetryableApplicationError(err.Error(), errTypeFatal, nil)
	}
	// Only a question that waits for a human is pending: one with an
	// unattended answer is decided at once, and nobody may answer it.
	if q.Unattended == nil {
		dr.question = &q
		dr.updated = dr.now()
		defer func() { dr.question, dr.updated = nil, dr.now() }()
	}
	for {
		var a human.Answer
		update := ""
		if q.Unattended != nil {
			a = human.Answer{Gate: q.Gate, Key: q.Unattended.Key, Channel: human.ChannelUnattended, By: "temporal worker " + dr.holder.Identity}
		} else {
			dr.status = store.StatusWaiting
			if err := workflow.Await(ctx, func() bool { return dr.answer != nil }); err != nil {
				return "", err
			}
			a, update = *dr.answer, dr.answerU
			dr.answer, dr.answerU = nil, ""
			dr.status, dr.deciding = store.StatusRunning, true
		}
		if a.At.IsZero() {
			a.At = dr.now()
		}
		next, err := dr.decide(ctx, q, a, update)
		dr.deciding = false
		if update != "" {
			dr.replies[update] = &reply{r: AnswerReply{Gate: q.Gate, Decision: decisionOf(q, a), Next: next}, err: err}
		}
		if err == nil {
			dr.errText = ""
			return next, nil
		}
		if q.Unattended != nil {
			return "", err
		}
		// The answer was not acted on: the question stays pending.
		dr.errText = cause(err)
	}
}

// questionNonce is the nonce of one asking of a question: unique to the
// execution (its run id is random, and new when the run continues as
// new) and the step the run stands at (a gate asked again later stands
// at a later step), and the same when the workflow replays. It need not
// be secret: answers are sealed for it with a key, not with it.
func questionNonce(execution string, steps int, questionID string) string {
	sum := sha256.Sum256([]byte(execution + "|" + strconv.Itoa(steps) + "|" + questionID))
	return hex.EncodeToString(sum[:16])
}

func decisionOf(q human.Question, a human.Answer) string {
	if o, ok := q.Option(a.Key); ok {
		return o.Decision
	}
	return ""
}

// decide validates a, has a worker write the decision to its audit log,
// and only then routes on it, with the answer as the worker recorded it
// (an Update's channel is what the worker could verify, not what the
// caller claimed). update is the id of the Update that delivered a.
func (dr *driver) decide(ctx workflow.Context, q human.Question, a human.Answer, update string) (string, error) {
	opt, err := checkAnswer(q, a)
	if err != nil {
		return "", err
	}
	var out nodeOutput
	in := decisionInput{nodeInput: dr.input(q.Gate), Question: q, Answer: a, Decision: opt.Decision, Update: update}
	if err := dr.exec(ctx, activityDecision, false, build(in, setDecisionMoved), &out); err != nil {
		return "", err
	}
	if out.Answer != nil {
		a = *out.Answer
	}
	dr.state = out.State
	next, state, err := dr.d.decide(q.Gate, dr.state, q, a)
	if err != nil {
		return "", err
	}
	dr.state = state
	return next, nil
}

// validateAnswer refuses, before it reaches the history, an answer the
// pending question does not allow. Its errors are typed so that clients
// tell "not asked" and "answered first" from a wrong answer, and none is
// retryable: the same answer sent again is refused again.
func (dr *driver) validateAnswer(ctx workflow.Context, a human.Answer) error {
	a = viaUpdate(a)
	switch {
	case dr.question != nil && (dr.answer != nil || dr.deciding):
		return refused(errTypeAnswered, "gate %s of run %s was already answered", dr.question.Gate, dr.in.RunID)
	case dr.question == nil || dr.status != store.StatusWaiting:
		return refused(errTypeNotAsked, "run %s is not waiting for an answer (it is %s at %s)", dr.in.RunID, dr.status, dr.node)
	case a.Gate != "" && a.Gate != dr.question.Gate:
		return refused(errTypeNotAsked, "gate %s is not waiting: run %s waits at %s", a.Gate, dr.in.RunID, dr.question.Gate)
	case a.QuestionID != "" && a.QuestionID != dr.question.ID:
		return refused(errTypeNotAsked, "the question at %s changed since it was read: look at it again", dr.question.Gate)
	case a.Channel == human.ChannelUnattended:
		return refused(errTypeInvalid, "gate %s needs a human: no channel may answer it as unattended", dr.question.Gate)
	}
	if _, err := checkAnswer(*dr.question, a); err != nil {
		return refused(errTypeInvalid, "%s", err.Error())
	}
	return nil
}

// checkAnswer is where the Temporal engine checks an answer against its
// question: the Update's validator, and again where the workflow and the
// decision activity act on it (a replayed Update skips its validator; an
// activity's input crosses the history): human.Validate, the one
// function every channel and engine checks answers with.
func checkAnswer(q human.Question, a human.Answer) (human.Option, error) {
	return human.Validate(q, a)
}

// refused is the error of an answer the run will not take.
func refused(kind, format string, args ...any) error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf(format, args...), kind, nil)
}

// viaUpdate is an answer as the Update delivered it: one that names no
// channel came through Temporal itself (any Temporal client). A channel
// named is only a claim until the decision activity verifies it.
func viaUpdate(a human.Answer) human.Answer {
	if a.Channel == "" {
		a.Channel = human.ChannelTemporal
	}
	return a
}

func (dr *driver) onAnswer(ctx workflow.Context, a human.Answer) (AnswerReply, error) {
	// Validators do not run on replay: the handler checks again.
	if err := dr.validateAnswer(ctx, a); err != nil {
		return AnswerReply{}, err
	}
	a = viaUpdate(a)
	id := workflow.GetCurrentUpdateInfo(ctx).ID
	dr.answer, dr.answerU = &a, id
	if err := workflow.Await(ctx, func() bool { return dr.replies[id] != nil }); err != nil {
		return AnswerReply{}, err
	}
	r := dr.replies[id]
	delete(dr.replies, id)
	if r.err != nil {
		// Not acted on (its decision could not be recorded): the question
		// stays pending, and this Update is over; answer again.
		kind := errTypeNotActed
		var app *temporal.ApplicationError
		if errors.As(r.err, &app) && app.Type() != "" {
			kind = app.Type()
		}
		return AnswerReply{}, refused(kind, "%s", cause(r.err))
	}
	return r.r, nil
}

// finish judges a run that reached the end and has a worker record it.
func (dr *driver) finish(ctx workflow.Context) (Result, error) {
	status, errText := store.StatusDone, ""
	if verdict := dr.d.judge(dr.state); verdict != nil {
		status, errText = store.StatusFailed, verdict.Error()
		if errors.Is(verdict, flow.ErrAborted) {
			status = store.StatusAborted
		}
	}
	return dr.end(ctx, status, errText)
}

// end records how the run ended and returns its result.
func (dr *driver) end(ctx workflow.Context, status store.Status, errText string) (Result, error) {
	in := dr.input(dr.node)
	in.Status, in.Error = status, errText
	var out nodeOutput
	// Finishing needs no worktree: it is never moved with the run.
	if err := dr.exec(ctx, activityFinish, false, func(bool) any { return in }, &out); err != nil {
		return Result{}, err
	}
	dr.status, dr.errText, dr.ended = status, errText, true
	// Let an Update in flight get its reply before the run closes.
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
		return Result{}, err
	}
	return dr.snapshot(true), nil
}

func (dr *driver) continueAsNew(ctx workflow.Context) (Result, error) {
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
		return Result{}, err
	}
	next := dr.in
	next.State = dr.state
	next.Carry = &Carry{Node: dr.node, Steps: dr.steps, Visits: dr.visits, Holder: dr.holder, Moves: dr.moves,
		Calls: dr.calls, History: dr.history, Events: dr.events, Started: dr.started, Updated: dr.updated}
	return Result{}, workflow.NewContinueAsNewError(ctx, dr.d.name(), next)
}
