package cli

import (
	"github.com/spf13/cobra"

	"github.com/azero-dev/azero/internal/config"
	"github.com/azero-dev/azero/internal/runs"
)

// addEngineFlags adds --engine and the Temporal connection's flags to a
// command that drives or lists runs.
func addEngineFlags(cmd *cobra.Command, f *Factory) {
	cmd.Flags().StringVar(&f.EngineFlags.Kind, "engine", "", "where runs are driven: local (this machine's store, the default) or temporal (default: [engine] kind in the config)")
	addTemporalFlags(cmd, f, "implies --engine temporal; ")
}

// addTemporalFlags binds how azero reaches a Temporal cluster, the same
// on every command that can: --temporal, --namespace, --task-queue and
// the TLS flags, each over its key in the [engine] table of the config.
// implies says what --temporal implies on this command.
func addTemporalFlags(cmd *cobra.Command, f *Factory, implies string) {
	fl := cmd.Flags()
	fl.StringVar(&f.EngineFlags.Address, "temporal", "", "the Temporal frontend as HOST:PORT ("+implies+"default: [engine] address)")
	fl.StringVar(&f.EngineFlags.Namespace, "namespace", "", "the Temporal namespace (default: [engine] namespace, else default)")
	fl.StringVar(&f.EngineFlags.TaskQueue, "task-queue", "", "the task queue azero's workers share (default: [engine] task_queue, else azero)")
	fl.StringVar(&f.EngineFlags.TLSCert, "tls-cert", "", "mTLS: the client certificate, PEM (default: [engine] tls_cert)")
	fl.StringVar(&f.EngineFlags.TLSKey, "tls-key", "", "mTLS: the client certificate's private key, PEM (default: [engine] tls_key)")
	fl.StringVar(&f.EngineFlags.TLSCA, "tls-ca", "", "a CA certificate to trust instead of the system's, PEM (default: [engine] tls_ca)")
	fl.StringVar(&f.EngineFlags.ServerName, "tls-server-name", "", "the name to verify on the server's certificate (default: [engine] server_name, else the host of --temporal)")
}

// runConfig reads the configuration for root and settles the engine
// before a command does any work (runs.Choose): a choice that cannot be
// used is a usage error, and a lean build hands a command whose engine is
// temporal to azero-temporal (Choose does not return then).
func (f *Factory) runConfig(root string) (config.Config, error) {
	cfg, err := f.Env().Config(root)
	if err != nil {
		return cfg, err
	}
	_, err = runs.Choose(f.Env(), f.EngineFlags, cfg)
	return cfg, err
}
