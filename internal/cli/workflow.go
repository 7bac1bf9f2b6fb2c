package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/azero-dev/azero/internal/config"
	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/runs"
	"github.com/azero-dev/azero/internal/store"
)

// The commands that start, drive or list runs ask the run service
// (internal/runs); what is here is the terminal's side: who watches and
// answers a drive, and how its outcome is printed.

// RunDeps is what a command that starts, drives or lists runs depends on,
// and the engine its command line chose; its Options embed it.
type RunDeps struct {
	IO *iostreams.IOStreams
	// Env is the run service's environment.
	Env     *runs.Env
	WorkDir string
	// Terminal is this terminal as a drive's watcher and answerer.
	Terminal func() runs.Terminal
	// Engine is the engine chosen on the command line (--engine,
	// --temporal and the connection's flags: addEngineFlags).
	Engine runs.EngineFlags
}

// config reads the configuration for root and settles the engine before
// a command does any work (runs.Choose): a choice that cannot be used is
// a usage error, and a lean build hands a command whose engine is
// temporal to azero-temporal (Choose does not return then).
func (d *RunDeps) config(root string) (config.Config, error) {
	cfg, err := d.Env.Config(root)
	if err != nil {
		return cfg, err
	}
	_, err = runs.Choose(d.Env, d.Engine, cfg)
	return cfg, err
}

// start starts the prepared run p on the engine chosen with cfg, drives
// it with this terminal and reports its outcome.
func (d *RunDeps) start(ctx context.Context, cfg config.Config, p *runs.Prepared, asJSON bool) error {
	eng, err := d.open(ctx, cfg)
	if err != nil {
		return err
	}
	defer eng.Close()
	out, err := eng.Start(ctx, p)
	return d.report(out, err, asJSON)
}

// resumeSlug drives the unfinished run of workflow whose key is slug (the
// --resume SLUG of issue and design) on the engine chosen with cfg.
func (d *RunDeps) resumeSlug(ctx context.Context, cfg config.Config, workflow, slug string, asJSON bool) error {
	eng, err := d.open(ctx, cfg)
	if err != nil {
		return err
	}
	defer eng.Close()
	id, ok, err := eng.Unfinished(ctx, workflow, slug)
	if err != nil {
		return err
	}
	if !ok {
		on, flag := "", ""
		if eng.Kind() == runs.Temporal {
			on, flag = " on Temporal", " --engine temporal"
		}
		return fmt.Errorf("no unfinished %s run%s has the slug %q; see 'azero runs%s --workflow %s'", workflow, on, slug, flag, workflow)
	}
	out, err := eng.Drive(ctx, id, d.Terminal())
	return d.report(out, err, asJSON)
}

// open opens the engine chosen with cfg over the catalog's workflows.
func (d *RunDeps) open(ctx context.Context, cfg config.Config) (runs.Engine, error) {
	c, err := runs.Choose(d.Env, d.Engine, cfg)
	if err != nil {
		return nil, err
	}
	return runs.Open(ctx, d.Env, c, runs.Catalog())
}

// openHere settles the engine chosen for the repository of the working
// directory, if any (flags, then config), and opens it.
func (d *RunDeps) openHere(ctx context.Context) (runs.Engine, error) {
	cfg, err := d.Env.Config(repoRoot(ctx, d.WorkDir))
	if err != nil {
		return nil, err
	}
	return d.open(ctx, cfg)
}

// repoRoot is the git work tree holding dir, or "" outside one: a
// project's config applies only inside it.
func repoRoot(ctx context.Context, dir string) string {
	root, err := gitx.TopLevel(ctx, dir)
	if err != nil {
		return ""
	}
	return root
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
func (d *RunDeps) report(o runs.Outcome, driveErr error, asJSON bool) error {
	for _, n := range o.Notes {
		fmt.Fprintln(d.IO.ErrOut, n)
	}
	if !asJSON {
		if driveErr == nil && o.Done != "" {
			fmt.Fprintf(d.IO.ErrOut, "\n%s\n", o.Done)
		}
		return driveErr
	}
	switch {
	case o.RunID == "":
		return driveErr
	case o.Doc != nil:
		return errors.Join(driveErr, writeJSON(d.IO.Out, o.Doc))
	case o.Forged:
		// Nothing of the row is reported as the run's: only why it fails.
		if driveErr == nil || !errors.Is(driveErr, store.ErrRunForged) {
			driveErr = errors.Join(driveErr, o.Unreadable)
		}
		out := runOutcome{RunID: o.RunID}
		out.failed(driveErr)
		return errors.Join(driveErr, writeJSON(d.IO.Out, out))
	case o.Unreadable != nil:
		return errors.Join(driveErr, o.Unreadable)
	}
	out := runOutcome{RunID: o.RunID, Workflow: o.Workflow, Status: o.Status, Node: o.Node, Error: o.Error, Resume: o.Resume, Result: o.Result}
	out.failed(driveErr)
	var doc any = out
	if top, ok := o.Result.(interface{ TopLevel() map[string]any }); ok {
		doc = withTopLevel(out, top.TopLevel())
	}
	if err := writeJSON(d.IO.Out, doc); err != nil {
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
