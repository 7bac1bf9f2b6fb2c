package cli

import (
	"github.com/spf13/cobra"

	"github.com/azero-dev/azero/internal/runs"
)

// addEngineFlags adds --engine and the Temporal connection's flags to a
// command that drives or lists runs.
func addEngineFlags(cmd *cobra.Command, fl *runs.EngineFlags) {
	cmd.Flags().StringVar(&fl.Kind, "engine", "", "where runs are driven: local (this machine's store, the default) or temporal (default: [engine] kind in the config)")
	addTemporalFlags(cmd, fl, "implies --engine temporal; ")
}

// addTemporalFlags binds how azero reaches a Temporal cluster, the same
// on every command that can: --temporal, --namespace, --task-queue and
// the TLS flags, each over its key in the [engine] table of the config.
// implies says what --temporal implies on this command.
func addTemporalFlags(cmd *cobra.Command, e *runs.EngineFlags, implies string) {
	fl := cmd.Flags()
	fl.StringVar(&e.Address, "temporal", "", "the Temporal frontend as HOST:PORT ("+implies+"default: [engine] address)")
	fl.StringVar(&e.Namespace, "namespace", "", "the Temporal namespace (default: [engine] namespace, else default)")
	fl.StringVar(&e.TaskQueue, "task-queue", "", "the task queue azero's workers share (default: [engine] task_queue, else azero)")
	fl.StringVar(&e.TLSCert, "tls-cert", "", "mTLS: the client certificate, PEM (default: [engine] tls_cert)")
	fl.StringVar(&e.TLSKey, "tls-key", "", "mTLS: the client certificate's private key, PEM (default: [engine] tls_key)")
	fl.StringVar(&e.TLSCA, "tls-ca", "", "a CA certificate to trust instead of the system's, PEM (default: [engine] tls_ca)")
	fl.StringVar(&e.ServerName, "tls-server-name", "", "the name to verify on the server's certificate (default: [engine] server_name, else the host of --temporal)")
}
