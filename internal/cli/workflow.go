package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/safewrite"
	"github.com/azero-dev/azero/internal/store"
)

// engine returns a flow engine over the factory's store and audit log:
// gates are answered at this terminal, the run's events are shown on
// stderr as they happen, and the user's notifications are sent when a run
// waits, ends or fails.
func (f *Factory) engine(ctx context.Context) (*flow.Engine, error) {
	st, err := f.Store(ctx)
	if err != nil {
		return nil, err
	}
	a, err := f.Audit()
	if err != nil {
		return nil, err
	}
	return &flow.Engine{Store: st, Audit: a, Answerer: f.Prompter(), Watch: f.watch(renderer(f.IO)), Now: f.Now,
		Resume: func(id string) string { return f.resumeCommand(id, false) }}, nil
}

// writer returns the single file-writing function's front door, asking on
// the terminal when there is one.
func (f *Factory) writer(auto, force bool) (*safewrite.Writer, error) {
	return f.newWriter(auto, force, true)
}

// gateWriter is writer for a workflow that asks about a write needing
// approval at a gate of its graph (the implementation's write reviews),
// where the terminal, the web page and a Temporal Update can answer it
// and a run without a terminal waits with its question stored. It never
// asks in place: such a write reaching it unapproved is refused.
func (f *Factory) gateWriter(auto, force bool) (*safewrite.Writer, error) {
	return f.newWriter(auto, force, false)
}

func (f *Factory) newWriter(auto, force, ask bool) (*safewrite.Writer, error) {
	a, err := f.Audit()
	if err != nil {
		return nil, err
	}
	w := &safewrite.Writer{Audit: a, Auto: auto, Force: force}
	if ask && f.IO.CanPrompt() {
		w.Approver = safewrite.NewTerminalApprover(f.IO, f.Prompter())
	}
	return w, nil
}

// runOutcome is what a workflow command reports with --json.
type runOutcome struct {
	RunID    string       `json:"run_id"`
	Workflow string       `json:"workflow"`
	Status   store.Status `json:"status"`
	Node     string       `json:"node"`
	Error    string       `json:"error,omitempty"`
	Resume   string       `json:"resume,omitempty"`
	Result   any          `json:"result,omitempty"`
	// ExitCode is the command's exit code when it fails (0: omitted).
	ExitCode int `json:"exit_code,omitempty"`
}

// failed makes the document say why the command fails: the run's own
// error names a node that failed, but a command can fail before or after
// driving it (another process drives the run, the store cannot be read),
// and then only the command's error says why.
func (o *runOutcome) failed(err error) {
	if err == nil {
		return
	}
	if o.Error == "" || !strings.Contains(err.Error(), o.Error) {
		o.Error = err.Error()
	}
	o.ExitCode = ExitCode(err)
}

// reportRun prints where a run stands after driving it, as JSON when
// asked, and returns the drive error for the exit code.
func (f *Factory) reportRun(ctx context.Context, runID string, result any, driveErr error, asJSON bool) error {
	if !asJSON {
		return driveErr
	}
	st, err := f.Store(ctx)
	if err != nil {
		return errors.Join(driveErr, err)
	}
	r, err := st.GetRun(context.WithoutCancel(ctx), runID)
	if errors.Is(err, store.ErrRunForged) {
		// Nothing of the row is reported as the run's: only why it fails.
		if driveErr == nil || !errors.Is(driveErr, store.ErrRunForged) {
			driveErr = errors.Join(driveErr, err)
		}
		out := runOutcome{RunID: runID}
		out.failed(driveErr)
		return errors.Join(driveErr, writeJSON(f.IO.Out, out))
	}
	if err != nil {
		return errors.Join(driveErr, err)
	}
	out := runOutcome{RunID: r.ID, Workflow: r.Workflow, Status: effectiveStatus(st, r), Node: r.Node, Error: r.Error, Result: result}
	if !r.Status.Finished() && r.Status != store.StatusRunning {
		out.Resume = f.resumeCommand(r.ID, false)
	}
	out.failed(driveErr)
	if err := writeJSON(f.IO.Out, out); err != nil {
		return errors.Join(driveErr, err)
	}
	return driveErr
}

// reportForged records err as run_forged in the audit log, once for each
// forged row, when it says a run's stored row was changed outside azero
// (by names the command that refused it); it returns err.
func (f *Factory) reportForged(ctx context.Context, st *store.Store, by string, err error) error {
	if !errors.Is(err, store.ErrRunForged) {
		return err
	}
	a, aerr := f.Audit()
	if aerr != nil {
		return errors.Join(err, aerr)
	}
	st.ReportForged(ctx, a, by, err)
	return err
}

// decodeState reads a run's stored state.
func decodeState(r store.Run, v any) error {
	if err := json.Unmarshal(r.State, v); err != nil {
		return fmt.Errorf("decode state of run %s: %w", r.ID, err)
	}
	return nil
}
