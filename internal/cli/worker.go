package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/runs"
)

// WorkerOptions are the inputs of `azero worker`.
type WorkerOptions struct {
	RunDeps

	Identity string
}

// NewCmdWorker is `azero worker`; runF nil runs workerRun.
func NewCmdWorker(f *Factory, runF func(*WorkerOptions) error) *cobra.Command {
	opts := &WorkerOptions{RunDeps: f.runDeps()}
	cmd := &cobra.Command{
		Use:   "worker --temporal HOST:PORT",
		Short: "Run azero's workflows for a team: a Temporal worker",
		Long: trimLines(`
  Connect to a Temporal cluster and run the steps of azero's workflows
  (implement, issue, selftest) that any azero started there with
  '--engine temporal' (or [engine] kind = "temporal" in its config). Start as
  many workers, on as many machines, as you like: they share the task queue.

  A run is held by the worker that took its first step: its worktree lives in
  that worker's state directory ($AZERO_STATE_DIR/worktrees/RUN) and every
  later step goes to that worker's own queue. If the worker stops, the run's
  next step moves to another worker, which recreates the worktree from the
  run's branch and its last snapshot (refs/azero/snapshots/RUN). Workers must
  see the run's repository itself at the path it was started from (a shared
  disk mounted at the same path everywhere; a clone is another repository).

  Gates are never answered here: a worker has no terminal. A question waits in
  the run until someone answers it with 'azero resume RUN' at a terminal, on
  the page of 'azero serve --engine temporal', or with any Temporal client
  sending the "answer" Update; a question that needs
  nobody (a diff with nothing flagged) passes unattended. The audit log and
  lineage of the steps a worker runs are written in its state directory.

  Connection: --temporal, --namespace and --task-queue, or the [engine] table
  of the config (address, namespace, task_queue). TLS: --tls-cert and
  --tls-key (mTLS, as Temporal Cloud and most self-hosted clusters ask),
  --tls-ca and --tls-server-name, or tls_cert, tls_key, tls_ca and
  server_name in [engine]; any of them turns TLS on. A Temporal Cloud API key
  is read from $TEMPORAL_API_KEY (never from a file or a flag) and turns TLS
  on. The worker runs until interrupted (SIGINT/SIGTERM), then lets the steps
  under way finish.`),
		Example: "  azero worker --temporal localhost:7233\n" +
			"  azero worker --temporal azero.a1b2c.tmprl.cloud:7233 --namespace azero.a1b2c --task-queue azero \\\n" +
			"    --tls-cert /etc/azero/client.pem --tls-key /etc/azero/client.key\n" +
			"  TEMPORAL_API_KEY=... azero worker --temporal us-east-1.aws.api.temporal.io:7233 --namespace azero.a1b2c",
		Args:        noArgs,
		Annotations: exitCodesAnnotation(ExitOK, ExitError, ExitUsage),
		RunE: func(cmd *cobra.Command, args []string) error {
			return run(cmd, runF, workerRun, opts)
		},
	}
	addTemporalFlags(cmd, &opts.Engine, "")
	cmd.Flags().StringVar(&opts.Identity, "identity", "", "this worker's name in Temporal and the audit log (default: host-pid-random)")
	return cmd
}

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
