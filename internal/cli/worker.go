package cli

import (
	"context"
	"fmt"

	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/runs"
)

// workerRun runs a worker of the catalog's workflows (runs.RunWorker; a
// build without the Temporal engine hands the command to
// azero-temporal). A worker never prompts: its gates are answered
// through Temporal, its file writes never ask.
func workerRun(ctx context.Context, f *Factory, opts *WorkerOptions) error {
	f.IO.SetTTY(false, f.IO.IsStdoutTTY(), f.IO.IsStderrTTY())
	cs := f.IO.ColorScheme()
	return runs.RunWorker(ctx, f.Env(), f.EngineFlags, opts.Identity, runs.WorkerHooks{
		Watch: func(ev event.Event) {
			if s := renderEvent(ev, cs); s != "" {
				fmt.Fprintf(f.IO.ErrOut, "%s %s", cs.Faint(ev.RunID), s)
			}
		},
		Started: func(w runs.WorkerStarted) {
			fmt.Fprintf(f.IO.ErrOut, "%s worker %s on %s (namespace %s): task queues %s and %s; stop with Ctrl-C\n",
				cs.Bold("azero:"), w.Identity, w.Address, w.Namespace, w.Queue, w.OwnQueue)
		},
		Stopping: func() { fmt.Fprintln(f.IO.ErrOut, "azero: stopping the worker; the steps under way finish first") },
	})
}
