// Package roles opens the models a workflow run talks to, one per role
// (drafter, reviewer, coder), wired to the run: every call's tokens and
// cost are recorded in the store with the node that made it, the budget is
// checked against what the run has already spent (across restarts), every
// prompt and response is saved as a numbered lineage file under the run's
// folder in the state directory (through the single safe-write function),
// every call is reported as a model_call event of the run (stored in its
// history for every viewer), and the scripted model counts its turns from
// the store so a resumed run gets the same replies.
package roles

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/llm/provider"
	"github.com/azero-dev/azero/internal/safewrite"
	"github.com/azero-dev/azero/internal/store"
)

// Run is what the models of one run share.
type Run struct {
	Store    *store.Store
	Writer   *safewrite.Writer
	StateDir string // lineage goes to StateDir/runs/<RunID>/
	RunID    string
	Env      provider.Env // Getenv, provider config, prices, mock settings
	Budget   float64      // USD for the whole run; 0 means none
	Secrets  []string     // values scrubbed from lineage and recorded errors
	// Lineage numbers and saves the run's files; share one per run (see
	// NewLineage) so models and the workflow's own records count together.
	Lineage *llm.DirLineage
	// Events receives a model_call event after every call, once it is
	// recorded; nil reports nothing.
	Events event.Sink
}

// NewLineage returns the lineage of a run: numbered files in
// StateDir/runs/<runID>/, written through safewrite.
func NewLineage(w *safewrite.Writer, stateDir, runID string) *llm.DirLineage {
	return llm.NewDirLineage(LineageDir(stateDir, runID), lineageWriter{w: w, root: stateDir, runID: runID})
}

// LineageDir returns the run's lineage folder.
func LineageDir(stateDir, runID string) string {
	return filepath.Join(stateDir, "runs", runID)
}

// Open opens the model named spec for role, metered for the run. A missing
// key or a bad name fails here, before any work.
func Open(role llm.Role, spec string, r Run) (llm.Model, error) {
	env := r.Env
	env.Role = role
	env.MockTurns = func(ctx context.Context) (int, error) {
		// A node run again after a crash asks the turn it asked before.
		return r.Store.Turns(ctx, r.RunID, string(role), flow.Attempt(ctx))
	}
	m, err := provider.Open(spec, env)
	if err != nil {
		return nil, fmt.Errorf("%s model: %w", role, err)
	}
	lineage := r.Lineage
	if lineage == nil {
		lineage = NewLineage(r.Writer, r.StateDir, r.RunID)
	}
	return llm.Meter(m, role, llm.MeterOptions{
		Recorder: recorder{st: r.Store, runID: r.RunID, events: r.Events},
		Lineage:  lineage,
		Budget:   r.Budget,
		Prices:   env.Prices,
		Secrets:  r.Secrets,
	}), nil
}

// recorder stores a run's calls, tagged with the node that made them, and
// reports each as an event.
type recorder struct {
	st     *store.Store
	runID  string
	events event.Sink
}

func (r recorder) Spent(ctx context.Context) (float64, error) { return r.st.Spent(ctx, r.runID) }

func (r recorder) Record(ctx context.Context, c llm.Call) error {
	err := r.st.RecordCall(ctx, store.Call{
		RunID: r.runID, Node: flow.CurrentNode(ctx), Role: c.Role, Purpose: c.Purpose, Model: c.Model,
		InputTokens: c.InputTokens, OutputTokens: c.OutputTokens, CostUSD: c.CostUSD,
		Latency: c.Latency, Stop: string(c.Stop), Error: c.Err, Attempt: flow.Attempt(ctx),
	})
	if r.events != nil {
		r.events.Emit(ctx, CallEvent(c))
	}
	return err
}

// CallEvent is the model_call event reporting c.
func CallEvent(c llm.Call) event.Event {
	tone, text := event.Plain, fmt.Sprintf("%s %s", c.Role, c.Model)
	if c.Purpose != "" {
		text += " (" + c.Purpose + ")"
	}
	text += fmt.Sprintf(": %d tokens in, %d out, $%.4f", c.InputTokens, c.OutputTokens, c.CostUSD)
	if c.Err != "" {
		tone, text = event.Bad, text+": "+c.Err
	}
	return event.New(event.ModelCall, tone, "%s", text).WithData(event.ModelCallData{
		Role: c.Role, Model: c.Model, Purpose: c.Purpose, InputTokens: c.InputTokens, OutputTokens: c.OutputTokens,
		CostUSD: c.CostUSD, DurationMS: c.Latency.Milliseconds(), Stop: string(c.Stop), Error: c.Err,
	})
}

// lineageWriter writes lineage files inside the state directory through
// safewrite.
type lineageWriter struct {
	w     *safewrite.Writer
	root  string
	runID string
}

func (l lineageWriter) WriteFile(ctx context.Context, path string, data []byte) error {
	_, err := l.w.Write(ctx, safewrite.Request{Root: l.root, Path: path, Content: data, Mode: 0o600, Actor: "lineage", RunID: l.runID})
	return err
}
