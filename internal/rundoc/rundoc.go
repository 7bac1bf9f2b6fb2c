// Package rundoc builds the documents that describe runs to scripts and
// pages: the list of `azero runs --json` and the run of
// `azero runs show RUN --json`. The command line and the JSON API of
// `azero serve` print the same documents because both build them here.
//
// It reads runs through a Source (the store, or the runs of the Temporal
// engine presented as store records) and never writes them. A run whose
// stored row does not verify is listed, marked (View.Unverified), so that
// a person sees it; nothing that acts on runs reads them here.
package rundoc

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/store"
)

// Source is where the documents read runs: *store.Store, or another
// engine's runs presented as the store presents its own.
type Source interface {
	ListRuns(ctx context.Context, f store.Filter) ([]store.Run, error)
	// LeaseLive reports whether something drives the run now.
	LeaseLive(r store.Run) bool
	History(ctx context.Context, runID string) ([]store.Step, error)
	Calls(ctx context.Context, runID string) ([]store.Call, error)
	Events(ctx context.Context, runID string, after int64, limit int) ([]event.Event, error)
}

// View is a run as `azero runs` lists it.
type View struct {
	ID        string            `json:"id"`
	Workflow  string            `json:"workflow"`
	Key       string            `json:"key,omitempty"`
	Status    store.Status      `json:"status"`
	Node      string            `json:"node"`
	Steps     int               `json:"steps"`
	Error     string            `json:"error,omitempty"`
	CreatedAt time.Time         `json:"created_at"`
	UpdatedAt time.Time         `json:"updated_at"`
	AgeMS     int64             `json:"age_ms"`
	Meta      map[string]string `json:"meta,omitempty"`
	// Unverified says why the run's stored row does not verify (it was
	// changed outside azero, or the key to check it cannot be read): what
	// the view shows is then only what the row claims, and azero acts on
	// none of it. Empty for a verified run.
	Unverified string `json:"unverified,omitempty"`
}

// Status is where r stands for a person: a run stored as running whose
// driver died is interrupted (nobody runs it, and it can be resumed).
func Status(st Source, r store.Run) store.Status {
	if r.Status == store.StatusRunning && !st.LeaseLive(r) {
		return store.StatusInterrupted
	}
	return r.Status
}

// ViewOf describes r as seen at now.
func ViewOf(st Source, r store.Run, now time.Time) View {
	v := View{ID: r.ID, Workflow: r.Workflow, Key: r.Key, Status: Status(st, r), Node: r.Node,
		Steps: r.Steps, Error: r.Error, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		AgeMS: now.Sub(r.CreatedAt).Milliseconds(), Meta: r.Meta}
	if r.Unverified != nil {
		v.Unverified = r.Unverified.Error()
	}
	return v
}

// Filter selects the runs of a list; zero fields match everything.
type Filter struct {
	Workflow string
	Status   string // a status as Status reports it (interrupted included)
	Limit    int    // at most this many runs; 0: all
}

// ErrStatus reports a status filter naming no status.
type ErrStatus struct{ Status string }

func (e *ErrStatus) Error() string {
	return fmt.Sprintf("unknown status %q: use running, waiting, interrupted, done, failed or aborted", e.Status)
}

// Validate says whether f names a status that exists.
func (f Filter) Validate() error {
	switch s := store.Status(f.Status); s {
	case "", store.StatusRunning, store.StatusWaiting, store.StatusInterrupted, store.StatusDone, store.StatusFailed, store.StatusAborted:
		return nil
	}
	return &ErrStatus{Status: f.Status}
}

// List returns the runs f selects, newest first. The document of
// `azero runs --json` is {"runs": List(...)}.
func List(ctx context.Context, st Source, f Filter, now time.Time) ([]View, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	// The runs whose row does not verify are listed too, marked.
	filter := store.Filter{Workflow: f.Workflow, Limit: f.Limit, Unverified: true}
	// Interrupted runs are stored as running with a dead driver, so those
	// two are told apart after reading, and the limit counts after that.
	switch s := store.Status(f.Status); s {
	case store.StatusInterrupted, store.StatusRunning:
		filter.Limit = 0
	case "":
	default:
		filter.Status = s
	}
	runs, err := st.ListRuns(ctx, filter)
	if err != nil {
		return nil, err
	}
	views := make([]View, 0, len(runs))
	for _, r := range runs {
		v := ViewOf(st, r, now)
		if f.Status != "" && string(v.Status) != f.Status {
			continue
		}
		views = append(views, v)
		if len(views) == f.Limit {
			break
		}
	}
	return views, nil
}

// Age renders a duration the way people say it: 45s, 12m, 3h, 2d.
func Age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	default:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	}
}

// NodeCost sums the model calls made by one node.
type NodeCost struct {
	Node         string  `json:"node"`
	Calls        int     `json:"calls"`
	InputTokens  int     `json:"input_tokens"`
	OutputTokens int     `json:"output_tokens"`
	CostUSD      float64 `json:"cost_usd"`
}

// Detail is one run as `azero runs show RUN --json` reports it.
type Detail struct {
	Run View `json:"run"`
	// Question is what the run is waiting for (or is being asked now), in
	// full: the report to read and the answers allowed.
	Question   *human.Question `json:"question,omitempty"`
	History    []store.Step    `json:"history"`
	Calls      []store.Call    `json:"calls"`
	CostByNode []NodeCost      `json:"cost_by_node"`
	TotalUSD   float64         `json:"total_cost_usd"`
	LineageDir string          `json:"lineage_dir,omitempty"`
	// Events are what the run reported, in order (with --events).
	Events []event.Event `json:"events,omitempty"`
}

// Question decodes the question r is asking or waiting for; nil when none.
func Question(r store.Run) (*human.Question, error) {
	if len(r.Question) == 0 {
		return nil, nil
	}
	var q human.Question
	if err := json.Unmarshal(r.Question, &q); err != nil {
		return nil, fmt.Errorf("decode the question of run %s: %w", r.ID, err)
	}
	return &q, nil
}

// DetailOf describes r at now: its pending question, history, model calls
// and their cost per node, its lineage directory (lineageDir, named only
// when it exists) and, withEvents, every event it reported.
func DetailOf(ctx context.Context, st Source, r store.Run, now time.Time, lineageDir string, withEvents bool) (Detail, error) {
	hist, err := st.History(ctx, r.ID)
	if err != nil {
		return Detail{}, err
	}
	calls, err := st.Calls(ctx, r.ID)
	if err != nil {
		return Detail{}, err
	}
	d := Detail{Run: ViewOf(st, r, now), History: hist, Calls: calls}
	if d.Question, err = Question(r); err != nil {
		return Detail{}, err
	}
	if withEvents {
		if d.Events, err = st.Events(ctx, r.ID, 0, 0); err != nil {
			return Detail{}, err
		}
	}
	byNode := map[string]*NodeCost{}
	for _, c := range calls {
		nc := byNode[c.Node]
		if nc == nil {
			nc = &NodeCost{Node: c.Node}
			byNode[c.Node] = nc
		}
		nc.Calls++
		nc.InputTokens += c.InputTokens
		nc.OutputTokens += c.OutputTokens
		nc.CostUSD += c.CostUSD
		d.TotalUSD += c.CostUSD
	}
	for _, nc := range byNode {
		d.CostByNode = append(d.CostByNode, *nc)
	}
	sort.Slice(d.CostByNode, func(i, j int) bool { return d.CostByNode[i].Node < d.CostByNode[j].Node })
	if lineageDir != "" {
		if _, err := os.Stat(lineageDir); err == nil {
			d.LineageDir = lineageDir
		}
	}
	return d, nil
}
