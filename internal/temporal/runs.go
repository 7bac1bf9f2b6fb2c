package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/store"
)

// Runs presents the runs on Temporal as the store presents its own, so
// that what describes runs (the documents of package rundoc, the pages of
// azero serve) describes them too: a run is a store.Run, its steps
// store.Steps, and an answer posted for its question is sent to it as the
// "answer" Update (the first valid answer, from any channel, wins).
//
// It satisfies rundoc.Source and web.Source without importing them.
type Runs struct {
	Client *Client
	// Fresh is how long a run's status read from Temporal is used again
	// (default 500 ms): one page reads a run several times.
	Fresh time.Duration

	mu     sync.Mutex
	status map[string]cachedStatus
	list   cachedList
}

type cachedStatus struct {
	st Status
	at time.Time
}

type cachedList struct {
	runs []Status
	at   time.Time
}

func (r *Runs) fresh() time.Duration {
	if r.Fresh <= 0 {
		return 500 * time.Millisecond
	}
	return r.Fresh
}

// Record is the store record of a run on Temporal: a run asking a question
// is waiting; a run not ended is driven by its cluster (its lease names
// the worker holding it, with no process id); meta names the engine and
// the worker.
func Record(st Status) store.Run {
	r := store.Run{ID: st.RunID, Workflow: st.Workflow, Status: st.Status, Node: st.Node, Steps: st.Steps, Error: st.Error,
		State: st.State, CreatedAt: st.Started, UpdatedAt: st.Updated}
	if r.Status == "" {
		r.Status = store.StatusRunning
	}
	if r.UpdatedAt.IsZero() {
		r.UpdatedAt = r.CreatedAt
	}
	r.Meta = map[string]string{}
	for k, v := range st.Meta {
		r.Meta[k] = v
	}
	r.Meta[MetaEngine] = EngineName
	if st.Holder.Identity != "" {
		r.Meta["worker"] = st.Holder.Identity
	}
	if st.Question != nil {
		r.Status = store.StatusWaiting
		r.Question, _ = json.Marshal(st.Question)
	}
	if !st.Ended {
		host := st.Holder.Identity
		if host == "" {
			host = "Temporal"
		}
		r.Lease = store.Lease{Token: mirrorLease, Host: host}
	}
	return r
}

// Steps are a run's steps as the store reports history.
func Steps(st Status) []store.Step {
	out := make([]store.Step, 0, len(st.History))
	for _, h := range st.History {
		out = append(out, store.Step{Node: h.Node, Next: h.Next, Outcome: h.Outcome, Error: h.Error, Started: h.Started,
			Finished: h.Finished, Duration: h.Finished.Sub(h.Started), DurationMS: h.DurationMS})
	}
	return out
}

// get returns the run's status, read again when older than Fresh.
func (r *Runs) get(ctx context.Context, id string) (Status, error) {
	r.mu.Lock()
	c, ok := r.status[id]
	r.mu.Unlock()
	if ok && time.Since(c.at) < r.fresh() {
		return c.st, nil
	}
	st, err := r.Client.Status(ctx, id)
	if errors.Is(err, ErrUnknownRun) {
		return Status{}, fmt.Errorf("%w: %s (list runs with `azero runs --engine temporal`)", store.ErrNotFound, id)
	}
	if err != nil {
		return Status{}, err
	}
	r.mu.Lock()
	if r.status == nil {
		r.status = map[string]cachedStatus{}
	}
	r.status[id] = cachedStatus{st: st, at: time.Now()}
	r.mu.Unlock()
	return st, nil
}

// forget drops what is known of a run, after it was answered.
func (r *Runs) forget(id string) {
	r.mu.Lock()
	delete(r.status, id)
	r.list = cachedList{}
	r.mu.Unlock()
}

// ListRuns lists the runs f selects, newest first.
func (r *Runs) ListRuns(ctx context.Context, f store.Filter) ([]store.Run, error) {
	r.mu.Lock()
	l := r.list
	r.mu.Unlock()
	if l.at.IsZero() || time.Since(l.at) >= r.fresh() {
		runs, err := r.Client.List(ctx, 0)
		if err != nil {
			return nil, err
		}
		l = cachedList{runs: runs, at: time.Now()}
		r.mu.Lock()
		r.list = l
		r.mu.Unlock()
	}
	out := []store.Run{}
	for _, st := range l.runs {
		rec := Record(st)
		if f.Workflow != "" && rec.Workflow != f.Workflow || f.Status != "" && rec.Status != f.Status {
			continue
		}
		out = append(out, rec)
		if f.Limit > 0 && len(out) >= f.Limit {
			break
		}
	}
	return out, nil
}

// GetRun returns the run with exactly this id.
func (r *Runs) GetRun(ctx context.Context, id string) (store.Run, error) {
	st, err := r.get(ctx, id)
	if err != nil {
		return store.Run{}, err
	}
	return Record(st), nil
}

// FindRun returns the run whose id is ref or uniquely starts with ref.
func (r *Runs) FindRun(ctx context.Context, ref string) (store.Run, error) {
	run, err := r.GetRun(ctx, ref)
	if err == nil || !errors.Is(err, store.ErrNotFound) || ref == "" {
		return run, err
	}
	runs, lerr := r.ListRuns(ctx, store.Filter{})
	if lerr != nil {
		return store.Run{}, lerr
	}
	var ids []string
	for _, x := range runs {
		if strings.HasPrefix(x.ID, ref) {
			ids = append(ids, x.ID)
		}
	}
	switch len(ids) {
	case 0:
		return store.Run{}, err
	case 1:
		return r.GetRun(ctx, ids[0])
	default:
		return store.Run{}, fmt.Errorf("run id %q is ambiguous (%s, ...): type more of it", ref, strings.Join(ids[:min(len(ids), 3)], ", "))
	}
}

// LeaseLive reports whether the run is driven: every run on Temporal
// that has not ended is.
func (r *Runs) LeaseLive(run store.Run) bool { return run.Lease.Token == mirrorLease }

// History returns the run's steps, oldest first (the last ones the run
// keeps).
func (r *Runs) History(ctx context.Context, runID string) ([]store.Step, error) {
	st, err := r.get(ctx, runID)
	if err != nil {
		return nil, err
	}
	return Steps(st), nil
}

// Calls returns the run's model calls.
func (r *Runs) Calls(ctx context.Context, runID string) ([]store.Call, error) {
	st, err := r.get(ctx, runID)
	if err != nil {
		return nil, err
	}
	return st.Calls, nil
}

// Spent returns what the run's model calls cost.
func (r *Runs) Spent(ctx context.Context, runID string) (float64, error) {
	calls, err := r.Calls(ctx, runID)
	total := 0.0
	for _, c := range calls {
		total += c.CostUSD
	}
	return total, err
}

// Events returns the run's events after sequence number after, at most
// limit of them (0: all).
func (r *Runs) Events(ctx context.Context, runID string, after int64, limit int) ([]event.Event, error) {
	st, err := r.get(ctx, runID)
	if err != nil {
		return nil, err
	}
	var out []event.Event
	for _, ev := range st.Events {
		if ev.Seq <= after {
			continue
		}
		out = append(out, ev)
		if limit > 0 && len(out) >= limit {
			break
		}
	}
	return out, nil
}

// PostedAnswer reports no answer: an answer sent to a run on Temporal is
// taken at once or refused, never left waiting.
func (r *Runs) PostedAnswer(store.Run) (human.Answer, bool, error) { return human.Answer{}, false, nil }

// PostAnswer sends answer (a human.Answer) to the run's question
// questionID as an Update (sealed with the Client's key), and returns
// once the run acted on it.
func (r *Runs) PostAnswer(ctx context.Context, runID, questionID string, answer json.RawMessage) error {
	var a human.Answer
	if err := json.Unmarshal(answer, &a); err != nil {
		return fmt.Errorf("decode the answer to run %s: %w", runID, err)
	}
	a.QuestionID = questionID
	defer r.forget(runID)
	_, err := r.Client.Answer(ctx, runID, a)
	if errors.Is(err, ErrRefused) {
		// The pages checked the answer against the question they showed:
		// the run refusing it asks another one now.
		return fmt.Errorf("%v: %w", err, store.ErrNotAsked)
	}
	return err
}
