//go:build !lean || temporalserver

package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/rundoc"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/temporal"
)

// The Temporal engine adapts internal/temporal's client to Engine here,
// rather than internal/temporal implementing Engine itself: Engine's
// methods speak this package's types (Prepared, Terminal, Outcome, the
// catalog's reports), and internal/temporal, below the service, knows
// nothing of them.

// settle does nothing: this build drives runs on Temporal itself.
func (e *Env) settle(Choice) error { return nil }

// connectOptions is how internal/temporal reaches the cluster c chose,
// and how it schedules the runs started there.
func connectOptions(c Choice) (temporal.ConnectOptions, temporal.Options) {
	return temporal.ConnectOptions{Address: c.Address, Namespace: c.Namespace, TLSCert: c.TLSCert, TLSKey: c.TLSKey,
		TLSCA: c.TLSCA, ServerName: c.ServerName, APIKey: c.APIKey}, temporal.Options{MoveAfter: c.MoveAfter}
}

// openTemporal connects to the cluster c chose.
func openTemporal(ctx context.Context, env *Env, c Choice, wfs Workflows) (Engine, error) {
	conn, opts := connectOptions(c)
	cl, err := temporal.Dial(ctx, conn)
	if err != nil {
		return nil, err
	}
	return &temporalEngine{env: env, wfs: wfs, choice: c, opts: opts, client: &temporal.Client{C: cl, TaskQueue: c.TaskQueue}}, nil
}

// temporalEngine drives runs on a Temporal cluster: azero's workers run
// their steps; this process starts, follows and answers them.
type temporalEngine struct {
	env    *Env
	wfs    Workflows
	choice Choice
	opts   temporal.Options
	client *temporal.Client
}

func (te *temporalEngine) Kind() string         { return Temporal }
func (te *temporalEngine) Close() error         { te.client.C.Close(); return nil }
func (te *temporalEngine) Workflows() Workflows { return te.wfs }
func (te *temporalEngine) Driving() []string    { return nil }

// Continue does nothing: the cluster's workers continue its runs.
func (te *temporalEngine) Continue(context.Context, func(string), time.Duration) func() {
	return func() {}
}

// Source presents the runs on the cluster as the store presents its own.
func (te *temporalEngine) Source() Source {
	_ = te.sealing()
	return &temporal.Runs{Client: te.client}
}

// Describe says whose runs these are.
func (te *temporalEngine) Describe() string {
	return fmt.Sprintf("the runs on Temporal at %s (namespace %s, task queue %s)", te.choice.Address, nsOrDefault(te.choice.Namespace), te.client.TaskQueue)
}

func nsOrDefault(ns string) string {
	if ns == "" {
		return temporal.DefaultNamespace
	}
	return ns
}

// sealing has the answers this process sends sealed with the answer key,
// which proves their channel to the workers sharing it; to the others
// they came through Temporal.
func (te *temporalEngine) sealing() error {
	key, err := te.env.AnswerKey()
	if err != nil {
		return err
	}
	te.client.Key = key
	return nil
}

// Start starts a run on Temporal and follows it from p's terminal, as the
// local engine drives one: it asks the run's questions there when it can
// ask, and stops with the first question when it cannot (the run keeps
// waiting on Temporal).
func (te *temporalEngine) Start(ctx context.Context, p *Prepared) (Outcome, error) {
	if p.ID == "" {
		p.ID = store.NewID(te.env.now())
	}
	raw, err := json.Marshal(p.state)
	if err != nil {
		return Outcome{}, fmt.Errorf("encode state of %s: %w", p.wf.Name(), err)
	}
	err = te.client.Start(ctx, temporal.Input{RunID: p.ID, Workflow: p.wf.Name(), State: raw, Meta: p.meta, Options: te.opts})
	if err != nil {
		return Outcome{}, err
	}
	if a, err := te.env.Audit(); err == nil {
		_ = a.Event(ctx, "run_created", p.ID, slog.String("workflow", p.wf.Name()), slog.String("engine", Temporal),
			slog.String("address", te.choice.Address))
	}
	p.term.note(fmt.Sprintf("azero: run %s started on Temporal at %s (task queue %s)", p.ID, te.choice.Address, te.client.TaskQueue))
	st, err := te.follow(ctx, p.ID, 0, p.term)
	return te.report(st, err)
}

// Drive continues a run on Temporal from t: it answers the question the
// run waits for, or retries the node a failed run stopped at, then
// follows the run.
func (te *temporalEngine) Drive(ctx context.Context, ref string, t Terminal) (Outcome, error) {
	r, err := (&temporal.Runs{Client: te.client}).FindRun(ctx, ref)
	if err != nil {
		return Outcome{}, err
	}
	runID := r.ID
	st, err := te.client.Status(ctx, runID)
	if err != nil {
		return Outcome{}, err
	}
	if st.Ended {
		return Outcome{}, fmt.Errorf("run %s is already %s; nothing to resume", runID, st.Status)
	}
	if st.Question == nil && (st.Status == store.StatusFailed || st.Status == store.StatusWaiting) {
		if err := te.client.Resume(ctx, runID); err != nil {
			return Outcome{}, err
		}
		t.note(fmt.Sprintf("Resuming run %s at %s on Temporal.", runID, st.Node))
	}
	shown := st.Steps + countNotOK(st.History)
	final, err := te.follow(ctx, runID, shown, t)
	return te.report(final, err)
}

// SetBudget is refused: a run on Temporal carries its budget in its
// workflow's input.
func (te *temporalEngine) SetBudget(context.Context, string, float64) error {
	return requestf("--budget is not supported for runs on Temporal yet")
}

// Unfinished finds the unfinished run of workflow whose key is key (on
// Temporal a run's key is in its meta, as the issue workflow's slug).
func (te *temporalEngine) Unfinished(ctx context.Context, workflow, key string) (string, bool, error) {
	runs, err := te.client.List(ctx, 0)
	if err != nil {
		return "", false, err
	}
	for _, st := range runs {
		if st.Workflow == workflow && st.Meta["slug"] == key && !st.Ended {
			return st.RunID, true, nil
		}
	}
	return "", false, nil
}

// Answer takes an answer through the one answer path and sends it to
// the run as the "answer" Update; the cluster's workers continue the run.
func (te *temporalEngine) Answer(ctx context.Context, ref string, r Reply) (Accepted, error) {
	if err := te.sealing(); err != nil {
		return Accepted{}, err
	}
	return take(ctx, te.env, &temporal.Runs{Client: te.client}, ref, r)
}

// canAsk reports whether t can ask a question now: it has an answerer
// that does not say it cannot (a prompter without a terminal).
func canAsk(t Terminal) bool {
	if t.Answerer == nil {
		return false
	}
	p, ok := t.Answerer.(interface{ CanPrompt() bool })
	return !ok || p.CanPrompt()
}

// follow shows a Temporal run's steps as they complete (at t, as events)
// and answers its questions from t until it ends or stops. The error maps
// to the exit code as the local engine's would.
func (te *temporalEngine) follow(ctx context.Context, runID string, shown int, t Terminal) (temporal.Status, error) {
	show := func(st temporal.Status) {
		// History is the last steps only; count from where it begins.
		first := st.Steps + countNotOK(st.History) - len(st.History)
		for i, h := range st.History {
			if first+i < shown {
				continue
			}
			ev := event.Event{RunID: runID, Node: h.Node, At: h.Finished}
			switch h.Outcome {
			case "ok":
				ev.Kind = event.NodeDone
				ev = ev.WithData(event.NodeDoneData{Next: h.Next, DurationMS: h.Finished.Sub(h.Started).Milliseconds(), Worker: h.Worker})
			case "moved":
				ev.Kind, ev.Tone, ev.Text = event.Warning, event.Warn, fmt.Sprintf("%s: %s; the run moves to another worker", h.Node, h.Error)
			default:
				ev.Kind, ev.Tone, ev.Text = event.Warning, event.Bad, fmt.Sprintf("%s %s: %s", h.Node, h.Outcome, h.Error)
			}
			t.watch(ev)
		}
		shown = first + len(st.History)
	}
	for {
		st, err := te.client.Follow(ctx, runID, show)
		if err != nil {
			if ctx.Err() != nil {
				t.note(fmt.Sprintf("azero: stopped following run %s; it goes on on Temporal (see azero runs --engine temporal)", runID))
				return st, &flow.InterruptedError{RunID: runID, Node: st.Node, Resume: te.env.ResumeCommand(runID, true)}
			}
			return st, err
		}
		switch {
		case st.Question != nil:
			if !canAsk(t) {
				t.watch(questionEvent(runID, *st.Question))
				return st, &flow.WaitingError{RunID: runID, Node: st.Node, Cause: human.ErrNoTerminal, Resume: te.env.ResumeCommand(runID, true)}
			}
			if err := te.ask(ctx, runID, *st.Question, t); err != nil {
				if ctx.Err() != nil {
					// Ctrl-C at the prompt: the question stays the run's,
					// answerable anywhere.
					return st, &flow.InterruptedError{RunID: runID, Node: st.Node, Waiting: true, Resume: te.env.ResumeCommand(runID, true)}
				}
				return st, err
			}
		case st.Status == store.StatusWaiting:
			return st, &flow.WaitingError{RunID: runID, Node: st.Node, Cause: &human.NobodyError{Reason: st.Error}, Resume: te.env.ResumeCommand(runID, true)}
		case st.Status == store.StatusFailed && !st.Ended:
			return st, &flow.NodeError{RunID: runID, Node: st.Node, Err: errors.New(st.Error)}
		case st.Status == store.StatusFailed && st.Node != flow.End:
			return st, fmt.Errorf("run %s failed at %s: %s", runID, st.Node, st.Error)
		case st.Status == store.StatusAborted && st.Node != flow.End:
			return st, fmt.Errorf("run %s aborted at %s: %s: %w", runID, st.Node, st.Error, flow.ErrAborted)
		default:
			return st, nil
		}
	}
}

func questionEvent(runID string, q human.Question) event.Event {
	return event.Event{Kind: event.Question, RunID: runID, Node: q.Gate, Text: q.Prompt}.WithData(q)
}

func countNotOK(h []temporal.Step) int {
	n := 0
	for _, s := range h {
		if s.Outcome != "ok" {
			n++
		}
	}
	return n
}

// ask asks q at t and sends the answer to the run through the answer
// path. A refused answer (the run's validator, or one that does not
// answer the question) is shown and the question asked again.
func (te *temporalEngine) ask(ctx context.Context, runID string, q human.Question, t Terminal) error {
	t.watch(questionEvent(runID, q))
	local, cleanup, err := localFiles(q)
	if err != nil {
		return err
	}
	defer cleanup()
	// Another channel (the page of azero serve, another terminal) may
	// answer first: the prompt then stops, and the run goes on with that
	// answer.
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	elsewhere := make(chan string, 1)
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-actx.Done():
				return
			case <-tick.C:
			}
			st, err := te.client.Status(actx, runID)
			if err != nil || st.Question != nil && st.Question.ID == q.ID {
				continue
			}
			elsewhere <- answeredBy(st.Events, q.Gate)
			cancel()
			return
		}
	}()
	a, err := t.Answerer.Answer(actx, local)
	if err != nil {
		select {
		case channel := <-elsewhere:
			t.watch(event.Event{Kind: event.Warning, RunID: runID, Node: q.Gate, Tone: event.Warn,
				Text: fmt.Sprintf("%s was answered %s first; the run goes on with that answer", q.Gate, channel)})
			return nil
		default:
		}
		return err
	}
	cancel()
	acc, err := te.Answer(ctx, runID, Reply{Gate: q.Gate, QuestionID: q.ID, Parsed: &a, Channel: human.ChannelTerminal, By: answerer()})
	if err != nil {
		t.watch(event.Event{Kind: event.Warning, RunID: runID, Node: q.Gate, Tone: event.Bad, Text: "refused: " + err.Error()})
		return nil
	}
	t.watch(event.Event{Kind: event.Info, RunID: runID, Node: q.Gate, Tone: event.Good, Text: acc.Gate + ": " + acc.Decision})
	return nil
}

// localFiles gives an editor question's files working copies on this
// machine: the run's working copies are on the worker that asked.
func localFiles(q human.Question) (human.Question, func(), error) {
	if len(q.Files) == 0 {
		return q, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "azero-answer-")
	if err != nil {
		return q, nil, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	files := make([]human.File, len(q.Files))
	for i, fl := range q.Files {
		p := filepath.Join(dir, fmt.Sprintf("%d-%s", i, filepath.Base(fl.Name)))
		if err := os.WriteFile(p, []byte(fl.Content), 0o600); err != nil {
			cleanup()
			return q, nil, err
		}
		fl.Path = p
		files[i] = fl
	}
	q.Files = files
	return q, cleanup, nil
}

// report is where a run on Temporal stands after it was followed, with
// what its workflow says of it, shaped as the local engine's.
func (te *temporalEngine) report(st temporal.Status, err error) (Outcome, error) {
	o := Outcome{RunID: st.RunID, Workflow: st.Workflow, Engine: Temporal, Status: st.Status, Node: st.Node, Error: st.Error,
		Ended: st.Ended, state: st.State}
	if !st.Status.Finished() && st.Status != store.StatusRunning || st.Question != nil {
		o.Resume = te.env.ResumeCommand(st.RunID, true)
		if o.Status == store.StatusRunning {
			o.Status = store.StatusWaiting
		}
	}
	if wf, ok := te.wfs.Lookup(st.Workflow); ok {
		if r, ok := wf.def().(interface {
			temporalReport(*Env, temporal.Status, error, *Outcome) error
		}); ok {
			err = r.temporalReport(te.env, st, err, &o)
		}
	}
	return o, err
}

// temporalReport reports a run on Temporal from the state it carries:
// a finished run gets the error its graph's Finish gives it, so that exit
// codes match the local engine's.
func (w *workflow[S, D]) temporalReport(env *Env, st temporal.Status, err error, o *Outcome) error {
	if w.spec.Report == nil {
		return err
	}
	s := new(S)
	if len(st.State) == 0 || json.Unmarshal(st.State, s) != nil {
		return err
	}
	if err == nil && st.Node == flow.End {
		err = w.shape().Judge(s)
	}
	return w.spec.Report(env, s, err, o)
}

// List lists the runs on Temporal with where each stands and the
// question it waits for.
func (te *temporalEngine) List(ctx context.Context, q Query) (Listing, error) {
	src := &temporal.Runs{Client: te.client, Fresh: time.Minute}
	views, err := rundoc.List(ctx, src, q, te.env.now())
	var bad *rundoc.ErrStatus
	if errors.As(err, &bad) {
		return Listing{}, &RequestError{Err: err}
	}
	if err != nil {
		return Listing{}, err
	}
	// The same list, read once (Fresh): the records behind the views.
	records, err := src.ListRuns(ctx, store.Filter{})
	if err != nil {
		return Listing{}, err
	}
	byID := map[string]store.Run{}
	for _, r := range records {
		byID[r.ID] = r
	}
	out := Listing{Engine: Temporal, Runs: make([]View, 0, len(views))}
	for _, v := range views {
		r := byID[v.ID]
		qn, err := rundoc.Question(r)
		if err != nil {
			return Listing{}, err
		}
		out.Runs = append(out.Runs, View{View: v, Worker: r.Meta["worker"], Question: qn})
	}
	return out, nil
}

// Show describes one run on Temporal: where it stands, its question in
// full, its steps with the worker of each, and its model calls.
func (te *temporalEngine) Show(ctx context.Context, ref string, withEvents bool) (Shown, error) {
	src := &temporal.Runs{Client: te.client, Fresh: time.Minute}
	r, err := src.FindRun(ctx, ref)
	if err != nil {
		return Shown{}, err
	}
	st, err := te.client.Status(ctx, r.ID)
	if err != nil {
		return Shown{}, err
	}
	dir, _ := te.env.RunDir(r.ID)
	d, err := rundoc.DetailOf(ctx, src, r, te.env.now(), dir, withEvents)
	if err != nil {
		return Shown{}, err
	}
	s := Shown{Detail: d, Engine: Temporal, Worker: st.Holder.Identity, Moves: st.Moves, Ended: st.Ended,
		Resume: te.env.ResumeCommand(d.Run.ID, true)}
	for _, h := range st.History {
		s.Steps = append(s.Steps, Step(h))
	}
	return s, nil
}

// gone says why a worker's worktree of run runID on Temporal,
// made by the worker named worker, is no longer the run's: the run ended
// there, is no longer there, or is held by another worker. "" when the
// run's holder is that worker (restarted with its --identity, it takes
// the run's next step in that worktree).
func (te *temporalEngine) gone(ctx context.Context, runID, worker string) (string, error) {
	st, err := te.client.Status(ctx, runID)
	switch {
	case errors.Is(err, temporal.ErrUnknownRun):
		return "the run is no longer on Temporal", nil
	case err != nil:
		return "", err
	case st.Ended:
		return "the run has ended on Temporal (" + string(st.Status) + ")", nil
	case st.Holder.Identity != "" && st.Holder.Identity != worker:
		return "the run moved to worker " + st.Holder.Identity, nil
	}
	return "", nil
}

// registry is every workflow of wfs as a worker of this azero runs it,
// with the dependencies of each run built as the local engine builds
// them, from the worker's Env: its state directory, config and
// environment.
func registry(env *Env, wfs Workflows) (*temporal.Registry, error) {
	reg := temporal.NewRegistry()
	for _, w := range wfs {
		r, ok := w.def().(interface {
			register(*temporal.Registry, *Env) error
		})
		if !ok {
			return nil, fmt.Errorf("workflow %s cannot run on Temporal", w.Name())
		}
		if err := r.register(reg, env); err != nil {
			return nil, err
		}
	}
	return reg, nil
}

func (w *workflow[S, D]) register(reg *temporal.Registry, env *Env) error {
	d := temporal.Definition[S]{
		Shape: w.shape(),
		// On a worker nobody is asked in place, and the events go to the
		// worker.
		Build: func(ctx context.Context, run temporal.Run, s *S) (*flow.Graph[S], error) {
			g, _, err := w.build(ctx, env, Run{ID: run.ID, Events: run.Events}, s)
			return g, err
		},
		Stops: w.spec.Stops,
	}
	if w.spec.Worktree != nil {
		d.Worktree = func(s *S) *temporal.Worktree {
			wt := w.spec.Worktree(s)
			if wt == nil {
				return nil
			}
			return &temporal.Worktree{Repo: wt.Repo, Branch: wt.Branch, Base: wt.Base, Dir: wt.Dir}
		}
	}
	return temporal.Register(reg, d)
}

// NewWorker builds a worker of the workflows of wfs on c, over env's
// store, audit log and state directory. A worker never asks anyone: its
// gates are answered through Temporal, its file writes never ask. watch
// receives the events of the runs it works on.
func NewWorker(ctx context.Context, env *Env, wfs Workflows, c client.Client, queue, identity string, watch func(event.Event)) (*temporal.Worker, error) {
	reg, err := registry(env, wfs)
	if err != nil {
		return nil, err
	}
	st, err := env.Store(ctx)
	if err != nil {
		return nil, err
	}
	a, err := env.Audit()
	if err != nil {
		return nil, err
	}
	dir, err := env.StateDir()
	if err != nil {
		return nil, err
	}
	return temporal.NewWorker(c, temporal.WorkerConfig{Registry: reg, TaskQueue: queue, Identity: identity,
		Store: st, Audit: a, StateDir: dir, Watch: watch, Now: env.Now})
}

// RunWorker runs a worker of the catalog's workflows on the cluster the
// flags (else the user's [engine] table) name, until ctx ends; then it
// lets the steps under way finish.
func RunWorker(ctx context.Context, env *Env, fl EngineFlags, identity string, h WorkerHooks) error {
	fl.Kind = Temporal
	cfg, err := env.Config("")
	if err != nil {
		return err
	}
	c, err := Choose(env, fl, cfg)
	if err != nil {
		return err
	}
	conn, _ := connectOptions(c)
	cl, err := temporal.Dial(ctx, conn)
	if err != nil {
		return err
	}
	defer cl.Close()
	w, err := NewWorker(ctx, env, Catalog(), cl, c.TaskQueue, identity, h.Watch)
	if err != nil {
		return err
	}
	if err := w.Start(); err != nil {
		return err
	}
	h.started(WorkerStarted{Identity: w.Identity(), Address: c.Address, Namespace: nsOrDefault(c.Namespace), Queue: c.TaskQueue, OwnQueue: w.Queue()})
	<-ctx.Done()
	h.stopping()
	w.Stop()
	return nil
}
