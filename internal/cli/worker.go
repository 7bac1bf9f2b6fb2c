//go:build !lean || temporalserver

package cli

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/client"

	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/temporal"
)

func workerRun(ctx context.Context, f *Factory, opts *WorkerOptions) error {
	f.EngineFlags.Kind = engineTemporal
	cfg, err := f.Config("")
	if err != nil {
		return err
	}
	_, conn, queue, _, err := f.engineSettings(cfg)
	if err != nil {
		return err
	}
	c, err := temporal.Dial(ctx, conn)
	if err != nil {
		return err
	}
	defer c.Close()
	w, err := newTemporalWorker(ctx, f, c, queue, opts.Identity)
	if err != nil {
		return err
	}
	if err := w.Start(); err != nil {
		return err
	}
	cs := f.IO.ColorScheme()
	fmt.Fprintf(f.IO.ErrOut, "%s worker %s on %s (namespace %s): task queues %s and %s; stop with Ctrl-C\n",
		cs.Bold("azero:"), w.Identity(), conn.Address, nsOrDefault(conn.Namespace), queue, w.Queue())
	<-ctx.Done()
	fmt.Fprintln(f.IO.ErrOut, "azero: stopping the worker; the steps under way finish first")
	w.Stop()
	return nil
}

func nsOrDefault(ns string) string {
	if ns == "" {
		return temporal.DefaultNamespace
	}
	return ns
}

// newTemporalWorker builds a worker over this azero's workflows, its
// store, audit log and state directory. A worker never prompts: its
// gates are answered through Temporal, its file writes never ask.
func newTemporalWorker(ctx context.Context, f *Factory, c client.Client, queue, identity string) (*temporal.Worker, error) {
	f.IO.SetTTY(false, f.IO.IsStdoutTTY(), f.IO.IsStderrTTY())
	reg, err := temporalRegistry(f)
	if err != nil {
		return nil, err
	}
	st, err := f.Store(ctx)
	if err != nil {
		return nil, err
	}
	a, err := f.Audit()
	if err != nil {
		return nil, err
	}
	dir, err := f.StateDir()
	if err != nil {
		return nil, err
	}
	cs := f.IO.ColorScheme()
	watch := func(ev event.Event) {
		if s := renderEvent(ev, cs); s != "" {
			fmt.Fprintf(f.IO.ErrOut, "%s %s", cs.Faint(ev.RunID), s)
		}
	}
	return temporal.NewWorker(c, temporal.WorkerConfig{Registry: reg, TaskQueue: queue, Identity: identity,
		Store: st, Audit: a, StateDir: dir, Watch: watch, Now: f.Now})
}
