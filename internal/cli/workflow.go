package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/azero-dev/azero/internal/config"
	"github.com/azero-dev/azero/internal/runs"
	"github.com/azero-dev/azero/internal/safewrite"
	"github.com/azero-dev/azero/internal/store"
)

// The commands that start, drive or list runs ask the run service
// (internal/runs); what is here is the terminal's side: who watches and
// answers a drive, and how its outcome is printed.

// terminal is this terminal as a drive's watcher, answerer and approver:
// the run's events are shown on stderr as they happen, its gates asked
// here, its file writes needing approval too when there is a terminal.
func (f *Factory) terminal() runs.Terminal {
	return runs.Terminal{Watch: renderer(f.IO), Answerer: f.Prompter(), Approver: f.approver(),
		Note: func(line string) { fmt.Fprintln(f.IO.ErrOut, line) }}
}

// approver asks about a file write needing approval at this terminal;
// nil when there is none.
func (f *Factory) approver() safewrite.Approver {
	if !f.IO.CanPrompt() {
		return nil
	}
	return safewrite.NewTerminalApprover(f.IO, f.Prompter())
}

// writer returns the single file-writing function's front door, asking on
// the terminal when there is one.
func (f *Factory) writer(auto, force bool) (*safewrite.Writer, error) {
	return f.Env().Writer(auto, force, f.approver())
}

// openRuns settles the engine chosen for repoRoot (flags, then config)
// and opens it over the catalog's workflows.
func (f *Factory) openRuns(ctx context.Context, repoRoot string) (runs.Engine, error) {
	cfg, err := f.Env().Config(repoRoot)
	if err != nil {
		return nil, err
	}
	return f.openEngine(ctx, cfg)
}

// openEngine opens the engine chosen with cfg.
func (f *Factory) openEngine(ctx context.Context, cfg config.Config) (runs.Engine, error) {
	c, err := runs.Choose(f.Env(), f.EngineFlags, cfg)
	if err != nil {
		return nil, err
	}
	return runs.Open(ctx, f.Env(), c, runs.Catalog())
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

// report prints where a run stands after a drive: the workflow's notes,
// then its document with --json or the line of what it achieved; it
// returns the drive's error for the exit code. A drive that never got to
// a run (its outcome names none) leaves its error alone.
func (f *Factory) report(o runs.Outcome, driveErr error, asJSON bool) error {
	for _, n := range o.Notes {
		fmt.Fprintln(f.IO.ErrOut, n)
	}
	if !asJSON {
		if driveErr == nil && o.Done != "" {
			fmt.Fprintf(f.IO.ErrOut, "\n%s\n", o.Done)
		}
		return driveErr
	}
	switch {
	case o.RunID == "":
		return driveErr
	case o.Doc != nil:
		return errors.Join(driveErr, writeJSON(f.IO.Out, o.Doc))
	case o.Forged:
		// Nothing of the row is reported as the run's: only why it fails.
		if driveErr == nil || !errors.Is(driveErr, store.ErrRunForged) {
			driveErr = errors.Join(driveErr, o.Unreadable)
		}
		out := runOutcome{RunID: o.RunID}
		out.failed(driveErr)
		return errors.Join(driveErr, writeJSON(f.IO.Out, out))
	case o.Unreadable != nil:
		return errors.Join(driveErr, o.Unreadable)
	}
	out := runOutcome{RunID: o.RunID, Workflow: o.Workflow, Status: o.Status, Node: o.Node, Error: o.Error, Resume: o.Resume, Result: o.Result}
	out.failed(driveErr)
	var doc any = out
	if top, ok := o.Result.(interface{ TopLevel() map[string]any }); ok {
		doc = withTopLevel(out, top.TopLevel())
	}
	if err := writeJSON(f.IO.Out, doc); err != nil {
		return errors.Join(driveErr, err)
	}
	return driveErr
}

// withTopLevel is out's document with a workflow's essentials at its top
// too (the design's lld_path, commit and issue), where a script reads
// them first; the document's own keys win.
func withTopLevel(out runOutcome, top map[string]any) any {
	raw, err := json.Marshal(out)
	if err != nil {
		return out
	}
	doc := map[string]any{}
	if json.Unmarshal(raw, &doc) != nil {
		return out
	}
	for k, v := range top {
		if _, taken := doc[k]; !taken {
			doc[k] = v
		}
	}
	return doc
}
