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
func workerRun(ctx context.Context, opts *WorkerOptions) error {
	opts.IO.SetTTY(false, opts.IO.IsStdoutTTY(), opts.IO.IsStderrTTY())
	cs := opts.IO.ColorScheme()
	return runs.RunWorker(ctx, opts.Env, opts.Engine, opts.Identity, runs.WorkerHooks{
		Watch: func(ev event.Event) {
			if s := renderEvent(ev, cs); s != "" {
				fmt.Fprintf(opts.IO.ErrOut, "%s %s", cs.Faint(ev.RunID), s)
			}
		},
		Started: func(w runs.WorkerStarted) {
			fmt.Fprintf(opts.IO.ErrOut, "%s worker %s on %s (namespace %s): task queues %s and %s; stop with Ctrl-C\n",
				cs.Bold("azero:"), w.Identity, w.Address, w.Namespace, w.Queue, w.OwnQueue)
		},
		Stopping: func() { fmt.Fprintln(opts.IO.ErrOut, "azero: stopping the worker; the steps under way finish first") },
	})
}
