package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/rundoc"
	"github.com/azero-dev/azero/internal/store"
)

// Open opens the engine c chose, with the workflows of wfs (Catalog()
// unless a test has its own): the local engine over env's store, or a
// connection to the Temporal cluster.
func Open(ctx context.Context, env *Env, c Choice, wfs Workflows) (Engine, error) {
	if c.Kind == Temporal {
		return openTemporal(ctx, env, c, wfs)
	}
	return OpenLocal(ctx, env, wfs)
}

// OpenLocal opens the local engine over env's store.
func OpenLocal(ctx context.Context, env *Env, wfs Workflows) (Engine, error) {
	st, err := env.Store(ctx)
	if err != nil {
		return nil, err
	}
	return &localEngine{env: env, wfs: wfs, st: st}, nil
}

// localEngine drives runs in this process over this machine's store:
// flow's graph engine, one process at a time per run (a lease in the
// store).
type localEngine struct {
	env  *Env
	wfs  Workflows
	st   *store.Store
	cont continuer
}

func (l *localEngine) Kind() string         { return Local }
func (l *localEngine) Source() Source       { return l.st }
func (l *localEngine) Workflows() Workflows { return l.wfs }
func (l *localEngine) Close() error         { l.stopContinuing(); return nil }

// Describe says whose runs these are.
func (l *localEngine) Describe() string {
	dir, _ := l.env.StateDir()
	return "the runs of " + dir
}

// flowEngine is flow's engine over env's store and audit log for a drive
// watched and answered from t: the user's notifications are sent when a
// run waits, ends or fails. holder names who drives in the run's lease
// ("" for a person's command).
func (e *Env) flowEngine(ctx context.Context, t Terminal, holder string) (*flow.Engine, error) {
	st, err := e.Store(ctx)
	if err != nil {
		return nil, err
	}
	a, err := e.Audit()
	if err != nil {
		return nil, err
	}
	return &flow.Engine{Store: st, Audit: a, Answerer: t.Answerer, Watch: e.Watch(t.Watch), Now: e.Now, Holder: holder,
		Resume: func(id string) string { return e.ResumeCommand(id, false) }}, nil
}

// reportForged records err as run_forged in the audit log, once for each
// forged row, when it says a run's stored row was changed outside azero
// (by names who refused it); it returns err.
func (e *Env) reportForged(ctx context.Context, st *store.Store, by string, err error) error {
	if !errors.Is(err, store.ErrRunForged) {
		return err
	}
	a, aerr := e.Audit()
	if aerr != nil {
		return errors.Join(err, aerr)
	}
	st.ReportForged(ctx, a, by, err)
	return err
}

// Start creates the run p prepared and drives it from p's terminal.
func (l *localEngine) Start(ctx context.Context, p *Prepared) (Outcome, error) {
	fe := p.fe
	if fe == nil {
		var err error
		if fe, err = l.env.flowEngine(ctx, p.term, ""); err != nil {
			return Outcome{}, err
		}
	}
	if err := p.wf.create(ctx, fe, p); err != nil {
		return Outcome{}, err
	}
	return p.wf.local(ctx, l, fe, p.term, store.Run{ID: p.ID, Workflow: p.wf.Name()}, p)
}

// Drive drives the run ref names on from t.
func (l *localEngine) Drive(ctx context.Context, ref string, t Terminal) (Outcome, error) {
	return l.drive(ctx, ref, t, "resume", "")
}

// drive drives the run ref names on; by names who drives it in what the
// audit log records of a forged row, holder in the run's lease.
func (l *localEngine) drive(ctx context.Context, ref string, t Terminal, by, holder string) (Outcome, error) {
	r, wf, err := l.resumable(ctx, ref, by)
	if err != nil {
		return Outcome{}, err
	}
	fe, err := l.env.flowEngine(ctx, t, holder)
	if err != nil {
		return Outcome{}, err
	}
	return wf.local(ctx, l, fe, t, r, nil)
}

// resumable finds the run ref names and its workflow, if it can be
// driven on here.
func (l *localEngine) resumable(ctx context.Context, ref, by string) (store.Run, Workflow, error) {
	r, err := l.st.FindRun(ctx, ref)
	if err != nil {
		// A row changed outside azero: nothing it holds is read to act
		// on (not its workflow, state or config).
		return r, nil, l.env.reportForged(ctx, l.st, by, err)
	}
	if runOnTemporal(r.Meta) {
		// A worker's bookkeeping of a run on Temporal: driving it here
		// would run it twice.
		return r, nil, fmt.Errorf("run %s runs on Temporal (this machine's store only mirrors the steps its worker ran): use %s", r.ID, l.env.ResumeCommand(r.ID, true))
	}
	if r.Status.Finished() {
		return r, nil, fmt.Errorf("run %s is already %s; nothing to resume", r.ID, r.Status)
	}
	wf, ok := l.wfs.Lookup(r.Workflow)
	if !ok {
		return r, nil, fmt.Errorf("run %s belongs to workflow %q, which this azero cannot run", r.ID, r.Workflow)
	}
	return r, wf, nil
}

// SetBudget gives the run ref names a new budget, audited.
func (l *localEngine) SetBudget(ctx context.Context, ref string, usd float64) error {
	r, wf, err := l.resumable(ctx, ref, "resume")
	if err != nil {
		return err
	}
	if !wf.hasBudget() {
		return requestf("runs of the %s workflow have no budget: --budget applies to implement runs", r.Workflow)
	}
	err = l.st.EditState(ctx, r.ID, func(raw json.RawMessage) (json.RawMessage, error) { return wf.budget(l.env, raw, usd) })
	if err != nil {
		return l.env.reportForged(ctx, l.st, "resume", err)
	}
	a, err := l.env.Audit()
	if err != nil {
		return err
	}
	_ = a.Event(ctx, "budget_set", r.ID, slog.Float64("budget_usd", usd))
	return nil
}

// Unfinished returns the newest run of workflow with key that can still
// continue.
func (l *localEngine) Unfinished(ctx context.Context, workflow, key string) (string, bool, error) {
	runs, err := l.st.ListRuns(ctx, store.Filter{Workflow: workflow, Key: key})
	if err != nil {
		return "", false, err
	}
	for _, r := range runs {
		if !r.Status.Finished() {
			return r.ID, true, nil
		}
	}
	return "", false, nil
}

// outcome reads where run runID stands after a drive.
func (l *localEngine) outcome(ctx context.Context, runID string) Outcome {
	o := Outcome{RunID: runID, Engine: Local}
	r, err := l.st.GetRun(context.WithoutCancel(ctx), runID)
	if err != nil {
		o.Unreadable, o.Forged = err, errors.Is(err, store.ErrRunForged)
		return o
	}
	o.Workflow, o.Status, o.Node, o.Error, o.state = r.Workflow, rundoc.Status(l.st, r), r.Node, r.Error, r.State
	if !r.Status.Finished() && r.Status != store.StatusRunning {
		o.Resume = l.env.ResumeCommand(r.ID, false)
	}
	return o
}

func (w *workflow[S, D]) create(ctx context.Context, fe *flow.Engine, p *Prepared) error {
	s := p.state.(*S)
	g, _ := p.graph.(*flow.Graph[S])
	if g == nil {
		// Create only records the run: the shape will do.
		g = w.shape()
	}
	id, err := flow.Create(ctx, fe, g, s, flow.CreateOptions{ID: p.ID, Key: p.key, Meta: p.meta})
	if err != nil {
		return err
	}
	p.ID = id
	return nil
}

// local drives run r on fe: with the graph its preparation built (p),
// else with one built now from the dependencies its state records, once
// the workflow found this process ready for it.
func (w *workflow[S, D]) local(ctx context.Context, l *localEngine, fe *flow.Engine, t Terminal, r store.Run, p *Prepared) (Outcome, error) {
	var (
		g *flow.Graph[S]
		s *S
	)
	if p != nil {
		s = p.state.(*S)
		g, _ = p.graph.(*flow.Graph[S])
	} else {
		var err error
		if s, err = w.decode(r.ID, r.State); err != nil {
			return Outcome{}, err
		}
	}
	if g == nil {
		var (
			d   D
			err error
		)
		if g, d, err = w.build(ctx, l.env, Run{ID: r.ID, Events: fe, Approver: t.Approver}, s); err != nil {
			return Outcome{}, err
		}
		if p == nil && w.spec.Ready != nil {
			if err := w.spec.Ready(ctx, d, s, r, t); err != nil {
				return Outcome{}, err
			}
		}
	}
	final, err := flow.Drive(ctx, fe, g, r.ID)
	if w.spec.HandOver != nil {
		if id, ok := w.spec.HandOver(err); ok {
			return l.drive(ctx, id, t, w.Name(), fe.Holder)
		}
	}
	o := l.outcome(ctx, r.ID)
	if w.spec.Report != nil {
		err = w.spec.Report(l.env, final, err, &o)
	}
	return o, err
}
