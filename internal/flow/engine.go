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
	"strings"
	"time"

	"github.com/azero-dev/azero/internal/answerkey"
	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/store"
)

// Sentinel errors; Drive's typed errors match them with errors.Is.
var (
	// ErrWaiting: the run stopped at a gate because nobody could answer.
	ErrWaiting = errors.New("waiting for a human answer")
	// ErrInterrupted: the run stopped on SIGINT/SIGTERM.
	ErrInterrupted = errors.New("interrupted")
	// ErrAborted: a human rejected or aborted the run at a gate. Nodes and
	// Finish functions wrap it to end a run as aborted. It is
	// human.ErrAborted.
	ErrAborted = human.ErrAborted
	// ErrStepLimit: the run completed more nodes than its graph allows.
	ErrStepLimit = errors.New("step limit reached")
	// ErrLoopLimit: one node completed more often than its graph allows.
	ErrLoopLimit = errors.New("loop limit reached")
	// ErrFinished: the run already ended (done or aborted).
	ErrFinished = errors.New("run already finished")
)

// WaitingError reports a run checkpointed at a gate.
type WaitingError struct {
	RunID, Node string
	Cause       error
	// Resume is the command that continues the run from a terminal, as
	// the person can type it (Engine.Resume); "" names none.
	Resume string
}

func (e *WaitingError) Error() string {
	msg := fmt.Sprintf("run %s is waiting at %s for a human answer (%v)", e.RunID, e.Node, e.Cause)
	if e.Resume != "" {
		msg += "; resume it from a terminal with: " + e.Resume
	}
	return msg
}

// Is makes WaitingError match ErrWaiting.
func (e *WaitingError) Is(target error) bool { return target == ErrWaiting }

// Unwrap returns the cause.
func (e *WaitingError) Unwrap() error { return e.Cause }

// InterruptedError reports a run checkpointed after a signal.
type InterruptedError struct {
	RunID, Node string
	// Waiting: the signal came while the gate Node asked its question;
	// the run waits there with its question, answerable anywhere.
	Waiting bool
	// Resume is the command that continues the run from a terminal
	// (Engine.Resume); "" names none.
	Resume string
}

func (e *InterruptedError) Error() string {
	msg := fmt.Sprintf("run %s interrupted at %s", e.RunID, e.Node)
	switch {
	case e.Waiting && e.Resume != "":
		msg = fmt.Sprintf("run %s interrupted while %s asked; the run waits there with its question: answer it at a terminal with: %s, or on the page of azero serve",
			e.RunID, e.Node, e.Resume)
	case e.Waiting:
		msg = fmt.Sprintf("run %s interrupted while %s asked; the run waits there with its question", e.RunID, e.Node)
	case e.Resume != "":
		msg += "; continue it with: " + e.Resume
	}
	return msg
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

// AuditError reports a gate decision that could not be written to the
// audit log, and so was not acted on.
type AuditError struct {
	Gate, Decision string
	Err            error
}

func (e *AuditError) Error() string {
	return fmt.Sprintf("the decision %s at %s could not be recorded in the audit log, so it was not acted on (%v); free disk space or fix the log's permissions, then resume the run and answer again",
		e.Decision, e.Gate, e.Err)
}

// Unwrap returns the write error.
func (e *AuditError) Unwrap() error { return e.Err }

// Engine drives runs against a store.
type Engine struct {
	Store    *store.Store
	Audit    *audit.Logger  // run and gate records; nil discards
	Answerer human.Answerer // who answers gates; nil: nobody (runs wait)
	// Watch receives every event as it is stored: the terminal renders
	// them. Optional.
	Watch    func(event.Event)
	LeaseTTL time.Duration // default 30 s
	// Poll is how often a gate asking its Answerer also looks for an
	// answer posted by another channel (the web page); default 500 ms.
	Poll time.Duration
	Now  func() time.Time
	// Resume returns the command that continues run runID from a
	// terminal, for the messages of WaitingError and InterruptedError:
	// only the caller knows how the person started azero (an azero on
	// the PATH, go run in a checkout, a path). Nil: they name none.
	Resume func(runID string) string
	// Holder names who drives, in the lease it takes of a run (its
	// token begins with it), so that a run left with the lease of a
	// driver that died can be told by who drove it (LeaseHolder). ""
	// for a person's command.
	Holder string
}

// LeaseHolder is the Holder of the engine that took l.
func LeaseHolder(l store.Lease) string {
	holder, _, ok := strings.Cut(l.Token, holderSep)
	if !ok {
		return ""
	}
	return holder
}

// holderSep ends the holder's name in a lease's token (tokens are hex).
const holderSep = ":"

// resume is the command continuing runID, or "".
func (e *Engine) resume(runID string) string {
	if e.Resume == nil {
		return ""
	}
	return e.Resume(runID)
}

func (e *Engine) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

// Emit records ev in its run's events and hands it to the watcher. The run
// and node default to those executing with ctx. It implements event.Sink:
// nodes report through it.
func (e *Engine) Emit(ctx context.Context, ev event.Event) {
	if ev.RunID == "" {
		ev.RunID = RunID(ctx)
	}
	if ev.Node == "" {
		ev.Node = CurrentNode(ctx)
	}
	if ev.At.IsZero() {
		ev.At = e.now()
	}
	if ev.RunID != "" {
		// A viewer's record, not a checkpoint: a store that cannot take it
		// fails the next checkpoint, which stops the run properly.
		if seq, err := e.Store.AppendEvent(context.WithoutCancel(ctx), ev); err == nil {
			ev.Seq = seq
		}
	}
	if e.Watch != nil {
		e.Watch(ev)
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
	attemptKey
)

// WithRun returns ctx for running node of run runID: what RunID and
// CurrentNode read. Another engine running a graph's steps uses it.
func WithRun(ctx context.Context, runID, node string) context.Context {
	return context.WithValue(context.WithValue(ctx, runIDKey, runID), nodeKey, node)
}

// WithAttempt marks ctx as one execution of a node: attempt is unique to
// it (a node run again after a crash is another attempt).
func WithAttempt(ctx context.Context, attempt string) context.Context {
	return context.WithValue(ctx, attemptKey, attempt)
}

// Attempt returns the node execution running with ctx ("" outside one).
func Attempt(ctx context.Context) string {
	s, _ := ctx.Value(attemptKey).(string)
	return s
}

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
	_ = e.Audit.Event(ctx, "run_created", id, slog.String("workflow", g.name), slog.String("key", opts.Key))
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
//   - a *store.RunForgedError (store.ErrRunForged) when the run's stored
//     row was changed outside azero, before any node runs or at the
//     checkpoint that finds it; it is recorded as run_forged;
//   - otherwise the node's or Finish's error (wrapped in *NodeError for nodes).
//
// Only one process at a time can drive a run: Drive holds the run's lease
// in the store and renews it while it works.
func Drive[S any](ctx context.Context, e *Engine, g *Graph[S], runID string) (s *S, err error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	// Nothing of a row azero did not write is acted on, not even its
	// lease; a row forged while the run is driven fails the checkpoint
	// that finds it.
	defer func() {
		if e.Audit != nil {
			e.Store.ReportForged(ctx, e.Audit, "drive", err)
		}
	}()
	if _, err := e.Store.GetRun(ctx, runID); err != nil {
		return nil, err
	}
	token := newToken()
	if e.Holder != "" {
		token = e.Holder + holderSep + token
	}
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

	state    S
	node     string
	steps    int
	visits   map[string]int
	question json.RawMessage // the question the current gate asks, kept while the run waits
	forged   map[string]bool // forged answers refused (and audited) by this drive
}

// emit sends an engine event about the run.
func (d *driver[S]) emit(kind event.Kind, node string, tone event.Tone, text string, data any) {
	ev := event.Event{RunID: d.runID, Node: node, Kind: kind, Tone: tone, Text: text}
	if data != nil {
		ev = ev.WithData(data)
	}
	d.e.Emit(d.bg, ev)
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
	_ = d.e.Audit.Event(ctx, "run_"+outcome, d.runID, slog.String("workflow", d.g.name), slog.String("node", d.node))
	d.emit(event.RunStarted, d.node, event.Plain, outcome, nil)

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
		d.emit(event.NodeStarted, d.node, event.Plain, "", nil)
		attempt := fmt.Sprintf("%s:%d", d.token, d.steps)
		nctx := WithAttempt(WithRun(ctx, d.runID, d.node), attempt)
		var next string
		if nd.gate() {
			next, err = d.gate(nctx, nd)
		} else {
			next, err = nd.fn(nctx, &d.state)
		}
		if err != nil {
			return d.stop(ctx, err, started)
		}
		if !slices.Contains(nd.next, next) {
			return d.fail(fmt.Errorf("node %s chose %q, which is not one of its declared next nodes %v", d.node, next, nd.next), d.node, started)
		}
		d.visits[d.node]++
		d.steps++
		d.question = nil
		finished := d.e.now()
		// The node's work is done: record it even if a signal arrived
		// meanwhile (the loop then stops before the next node).
		if err := d.checkpoint(d.bg, d.node, next, store.StatusRunning, true, "", "ok", started, finished, attempt); err != nil {
			return &d.state, err
		}
		_ = d.e.Audit.Event(ctx, "node", d.runID, slog.String("node", d.node), slog.String("next", next),
			slog.Int64("duration_ms", finished.Sub(started).Milliseconds()))
		d.emit(event.NodeDone, d.node, event.Good, "", event.NodeDoneData{Next: next, DurationMS: finished.Sub(started).Milliseconds()})
		d.node = next
	}
}

// gate asks nd's question, gets a validated answer, records the decision
// and routes on it.
func (d *driver[S]) gate(ctx context.Context, nd *node[S]) (string, error) {
	// ask works on a copy: what it changes in the state is not kept, as
	// on an engine that asks in another process.
	view, err := clone(&d.state)
	if err != nil {
		return "", err
	}
	q, err := nd.ask(ctx, view)
	if err != nil {
		return "", err
	}
	q.Gate = nd.name
	if q.AskedAt.IsZero() {
		q.AskedAt = d.e.now().UTC()
	}
	if err := q.Check(); err != nil {
		return "", err
	}
	q.ID = human.Fingerprint(q)
	if stored, ok := d.storedQuestion(q.ID); ok {
		// The run stands at this very question, asked before (it waited,
		// or is resumed at it): it is the same asking, with the same nonce
		// (an answer posted meanwhile was sealed for it) and the time it
		// was first asked, so that no answer to it predates its asking.
		q.Nonce, q.AskedAt = stored.Nonce, stored.AskedAt
	} else {
		q.Nonce = answerkey.Nonce()
	}
	raw, err := json.Marshal(q)
	if err != nil {
		return "", fmt.Errorf("encode the question of %s: %w", nd.name, err)
	}
	if err := d.e.Store.SetQuestion(d.bg, d.runID, d.token, q.ID, raw); err != nil {
		return "", err
	}
	d.question = raw
	d.emit(event.Question, nd.name, event.Plain, q.Prompt, q)

	a, err := d.answer(ctx, q)
	if err != nil {
		if ctx.Err() != nil && !errors.Is(context.Cause(ctx), store.ErrLeaseLost) {
			// A signal while the question is asked (Ctrl-C at the
			// prompt) stops this process, not the asking: the run waits
			// with its question, answerable anywhere.
			return "", &askInterruptedError{err: err}
		}
		if !human.Needed(err) || q.Unattended == nil || ctx.Err() != nil {
			return "", err
		}
		a = human.Answer{Gate: q.Gate, Key: q.Unattended.Key, Channel: human.ChannelUnattended}
	}
	if a.At.IsZero() {
		a.At = d.e.now().UTC()
	}
	opt, err := checkAnswer(q, a)
	if err != nil {
		// A channel handed over an answer its question does not allow:
		// nothing is decided.
		return "", fmt.Errorf("gate %s: %w", nd.name, err)
	}
	attrs := human.DecisionRecord(q, a, opt)
	if err := d.e.Audit.Event(ctx, "gate_decision", d.runID, attrs...); err != nil {
		return "", &AuditError{Gate: nd.name, Decision: opt.Decision, Err: err}
	}
	d.emit(event.Answer, nd.name, event.Plain, opt.Decision, a)
	return nd.decide(&d.state, q, a)
}

// clone returns a deep copy of a state (states are JSON by contract).
func clone[S any](s *S) (*S, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("copy the state: %w", err)
	}
	c := new(S)
	if err := json.Unmarshal(b, c); err != nil {
		return nil, fmt.Errorf("copy the state: %w", err)
	}
	return c, nil
}

// storedQuestion returns the question the run stands at in the store when
// it is the question with id, asked before with a nonce and a time (a run
// resumed at its gate asks it again).
func (d *driver[S]) storedQuestion(id string) (human.Question, bool) {
	r, err := d.e.Store.GetRun(d.bg, d.runID)
	if err != nil || len(r.Question) == 0 {
		return human.Question{}, false
	}
	var stored human.Question
	if json.Unmarshal(r.Question, &stored) != nil || stored.ID != id || stored.Nonce == "" || stored.AskedAt.IsZero() {
		return human.Question{}, false
	}
	return stored, true
}

// askInterruptedError is a gate's asking stopped by a signal.
type askInterruptedError struct{ err error }

func (e *askInterruptedError) Error() string { return "interrupted while asking: " + e.err.Error() }
func (e *askInterruptedError) Unwrap() error { return e.err }

// answer gets the first answer to q: one posted by another channel (the
// web page) for this very question while the run waited or while it asks,
// or the engine's Answerer's (the terminal's), which is then claimed in
// the store so that a later answer from elsewhere is refused.
func (d *driver[S]) answer(ctx context.Context, q human.Question) (human.Answer, error) {
	if a, ok, err := d.posted(q); ok || err != nil {
		return a, err
	}
	if d.e.Answerer == nil {
		return human.Answer{}, &human.NobodyError{Reason: "no channel can answer here"}
	}
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		a   human.Answer
		err error
	}
	local := make(chan result, 1)
	go func() {
		a, err := d.e.Answerer.Answer(actx, q)
		local <- result{a, err}
	}()
	poll := d.e.Poll
	if poll <= 0 {
		poll = 500 * time.Millisecond
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		select {
		case r := <-local:
			if r.err != nil {
				return r.a, r.err
			}
			// First answer wins: claim the question for this one (the
			// store seals it for the question's nonce).
			r.a.QuestionID = q.ID
			if r.a.At.IsZero() {
				r.a.At = d.e.now().UTC()
			}
			raw, err := json.Marshal(r.a)
			if err != nil {
				return r.a, err
			}
			switch err := d.e.Store.PostAnswer(d.bg, d.runID, q.ID, raw); {
			case errors.Is(err, store.ErrAnswered):
				a, ok, perr := d.posted(q)
				if ok {
					d.emit(event.Warning, q.Gate, event.Warn, "the question was answered on the "+a.Channel+" channel first; your answer was not used", nil)
					return a, nil
				}
				return r.a, errors.Join(err, perr)
			case err != nil:
				return r.a, err
			}
			return r.a, nil
		case <-tick.C:
			if a, ok, err := d.posted(q); ok || err != nil {
				cancel()
				<-local
				return a, err
			}
		}
	}
}

// posted returns an answer another channel posted for q, if any. Only an
// answer azero made for this asking of q counts (its seal verifies for
// the run, q's id and q's nonce); anything else in the store's answer
// column is refused: not acted on, recorded as answer_forged and removed,
// while the run goes on waiting for a real answer. An answer key that
// cannot be read is an error: nothing is taken without it.
func (d *driver[S]) posted(q human.Question) (human.Answer, bool, error) {
	r, err := d.e.Store.GetRun(d.bg, d.runID)
	if err != nil || len(r.Answer) == 0 {
		return human.Answer{}, false, nil
	}
	a, err := d.e.Store.CheckAnswer(d.runID, q, r.Answer)
	var forged *store.ForgedError
	switch {
	case errors.As(err, &forged):
		d.refuse(q, r.Answer, forged)
		return human.Answer{}, false, nil
	case err != nil:
		return human.Answer{}, false, fmt.Errorf("gate %s: %w", q.Gate, err)
	}
	return a, true, nil
}

// refuse records a forged answer once (audit and a warning event) and
// removes it, so that a real answer can still be posted.
func (d *driver[S]) refuse(q human.Question, raw json.RawMessage, f *store.ForgedError) {
	if !d.forged[string(raw)] {
		if d.forged == nil {
			d.forged = map[string]bool{}
		}
		d.forged[string(raw)] = true
		claimed := f.Claimed.Channel
		attrs := []slog.Attr{slog.String("gate", q.Gate), slog.String("claimed_channel", claimed), slog.String("reason", f.Err.Error())}
		if f.Claimed.By != "" {
			attrs = append(attrs, slog.String("claimed_by", f.Claimed.By))
		}
		_ = d.e.Audit.Event(d.bg, "answer_forged", d.runID, attrs...)
		if claimed == "" {
			claimed = "no"
		}
		d.emit(event.Warning, q.Gate, event.Warn, fmt.Sprintf("an answer in the store claiming the %s channel was not made by azero: it was refused and recorded as answer_forged; %s still waits for a human",
			claimed, q.Gate), nil)
	}
	_ = d.e.Store.DropAnswer(d.bg, d.runID, d.token, raw)
}

func (d *driver[S]) checkpoint(ctx context.Context, ran, next string, st store.Status, saveState bool, errText, outcome string, started, finished time.Time, attempt ...string) error {
	var raw json.RawMessage
	if saveState {
		b, err := json.Marshal(&d.state)
		if err != nil {
			return fmt.Errorf("encode state of run %s: %w", d.runID, err)
		}
		raw = b
	}
	var q json.RawMessage
	if st == store.StatusWaiting {
		q = d.question
	}
	return d.e.Store.Checkpoint(ctx, store.Checkpoint{
		RunID: d.runID, Token: d.token, Node: ran, Next: next, Status: st, State: raw, Question: q,
		KeepQuestion: outcome == "started" || outcome == "resumed", Attempt: strings.Join(attempt, ""),
		Steps: d.steps, Visits: d.visits, Error: errText, Outcome: outcome, Started: started, Finished: finished,
	})
}

// stop classifies a node's error and records where the run stands. The
// node's changes to the state are discarded: it runs again on resume.
func (d *driver[S]) stop(ctx context.Context, err error, started time.Time) (*S, error) {
	node := d.node
	var asking *askInterruptedError
	switch {
	case errors.As(err, &asking):
		return d.interruptedAsking(node, started)
	case human.Needed(err) && ctx.Err() == nil:
		if cerr := d.checkpoint(d.bg, node, node, store.StatusWaiting, false, err.Error(), "waiting", started, d.e.now()); cerr != nil {
			return &d.state, cerr
		}
		_ = d.e.Audit.Event(d.bg, "run_waiting", d.runID, slog.String("node", node), slog.String("reason", err.Error()))
		d.emit(event.Waiting, node, event.Warn, err.Error(), nil)
		return &d.state, &WaitingError{RunID: d.runID, Node: node, Cause: err, Resume: d.e.resume(d.runID)}
	case ctx.Err() != nil && !errors.Is(context.Cause(ctx), store.ErrLeaseLost):
		return d.interrupted(ctx, node, started)
	case errors.Is(err, ErrAborted):
		if cerr := d.checkpoint(d.bg, node, node, store.StatusAborted, false, err.Error(), "aborted", started, d.e.now()); cerr != nil {
			return &d.state, cerr
		}
		_ = d.e.Audit.Event(d.bg, "run_aborted", d.runID, slog.String("node", node), slog.String("reason", err.Error()))
		d.emit(event.Finished, node, event.Bad, err.Error(), event.FinishedData{Status: string(store.StatusAborted), Error: err.Error()})
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
	_ = d.e.Audit.Event(d.bg, "run_interrupted", d.runID, slog.String("node", node))
	d.emit(event.Interrupted, node, event.Warn, "", nil)
	return &d.state, &InterruptedError{RunID: d.runID, Node: node, Resume: d.e.resume(d.runID)}
}

// interruptedAsking records a run whose gate was asking when the signal
// came: waiting at the gate with its question stored, as a run that found
// nobody to ask, so the page, the API and another terminal can answer it.
func (d *driver[S]) interruptedAsking(node string, started time.Time) (*S, error) {
	const why = "interrupted while asking; the question waits for an answer"
	if err := d.checkpoint(d.bg, node, node, store.StatusWaiting, false, why, "waiting", started, d.e.now()); err != nil {
		return &d.state, err
	}
	_ = d.e.Audit.Event(d.bg, "run_interrupted", d.runID, slog.String("node", node), slog.String("status", string(store.StatusWaiting)))
	d.emit(event.Waiting, node, event.Warn, why, nil)
	return &d.state, &InterruptedError{RunID: d.runID, Node: node, Waiting: true, Resume: d.e.resume(d.runID)}
}

func (d *driver[S]) fail(err error, node string, started time.Time) (*S, error) {
	if errors.Is(err, store.ErrLeaseLost) {
		// Another process owns the run now; it records what happens next.
		return &d.state, err
	}
	if cerr := d.checkpoint(d.bg, node, node, store.StatusFailed, false, err.Error(), "failed", started, d.e.now()); cerr != nil {
		return &d.state, errors.Join(err, cerr)
	}
	_ = d.e.Audit.Event(d.bg, "run_failed", d.runID, slog.String("node", node), slog.String("error", err.Error()))
	d.emit(event.Failed, node, event.Bad, err.Error(), nil)
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
	_ = d.e.Audit.Event(d.bg, "run_finished", d.runID, slog.String("workflow", d.g.name), slog.String("status", string(status)))
	tone := event.Good
	if verdict != nil {
		tone = event.Bad
	}
	d.emit(event.Finished, End, tone, errText, event.FinishedData{Status: string(status), Error: errText})
	return &d.state, verdict
}
