package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/azero-dev/azero/internal/config"
)

// The Temporal engine (engine.go, temporal.go, worker.go) is in every
// build but a lean one (the lean tag, the release's azero): its SDK and
// the Temporal API's protobuf registrations cost every command, `azero
// version` and the pre-commit gate included, about 3.5 ms of start-up
// (more than all the rest of azero) and 12 MB of the binary
// (scripts/bench-startup.sh). A lean build hands a command whose engine
// is temporal to azero-temporal, a build with the engine, found next to
// this executable or on the PATH (handOff below).

// Engine kinds.
const (
	engineLocal    = "local"
	engineTemporal = "temporal"
)

// temporalCommand is the executable holding the Temporal engine, for a
// build without it.
const temporalCommand = "azero-temporal"

// handOffVar marks a process started by a hand-off, so that a build
// without the engine installed as azero-temporal fails instead of
// handing the command on forever.
const handOffVar = "AZERO_HANDED_OFF"

// metaEngine is the meta key internal/temporal writes on a worker's rows
// of a run on Temporal, with the value engineTemporal (checked against
// that package in engine_test.go).
const metaEngine = "engine"

// runOnTemporal reports whether a row of this machine's store is a
// worker's bookkeeping of a run on Temporal.
func runOnTemporal(meta map[string]string) bool { return meta[metaEngine] == engineTemporal }

// EngineFlags are the engine choice given on the command line; they win
// over the [engine] table of the config.
type EngineFlags struct {
	Kind      string // --engine
	Address   string // --temporal HOST:PORT
	Namespace string // --namespace
	TaskQueue string // --task-queue
	// TLS: --tls-cert, --tls-key, --tls-ca, --tls-server-name.
	TLSCert, TLSKey, TLSCA, ServerName string
}

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

// engineKind resolves which engine drives runs: --engine, else --temporal
// (which implies temporal), else [engine] kind, else local.
func (f *Factory) engineKind(cfg config.Config) (string, error) {
	kind := cfg.Engine.Kind
	if f.EngineFlags.Address != "" && f.EngineFlags.Kind == "" {
		kind = engineTemporal
	}
	if f.EngineFlags.Kind != "" {
		kind = f.EngineFlags.Kind
	}
	switch kind {
	case "", engineLocal:
		if f.EngineFlags.Address != "" {
			return "", usagef("--temporal %s needs --engine temporal, not --engine %s", f.EngineFlags.Address, kind)
		}
		return engineLocal, nil
	case engineTemporal:
		return engineTemporal, nil
	}
	return "", usagef("--engine %q: use local or temporal", kind)
}

// errNoAddress is the usage error of a Temporal engine chosen without the
// cluster's address (internal/temporal.ErrNoAddress, in the same words).
var errNoAddress = errors.New("the Temporal engine needs the cluster's address: --temporal HOST:PORT, or address in the [engine] table of the config")

// engineAddress is the Temporal cluster's address: --temporal, else
// [engine] address.
func (f *Factory) engineAddress(cfg config.Config) string {
	if f.EngineFlags.Address != "" {
		return f.EngineFlags.Address
	}
	return cfg.Engine.Address
}

// TemporalMissingError says that this build has no Temporal engine and no
// azero-temporal was found to hand the command to.
type TemporalMissingError struct {
	Dir string // the directory of this executable, looked in first
}

func (e *TemporalMissingError) Error() string {
	return fmt.Sprintf("the Temporal engine is not in this build of azero, and no %s was found next to it (in %s) or on the PATH: "+
		"install the release's %s-OS-ARCH as %s next to azero, or a build with the engine: go install github.com/azero-dev/azero/cmd/azero@latest",
		temporalCommand, e.Dir, temporalCommand, temporalCommand)
}

// findTemporal finds azero-temporal: next to this executable (after
// resolving symlinks, so a linked azero finds the release's pair), else on
// the PATH.
func (f *Factory) findTemporal() (string, error) {
	exe, _ := os.Executable()
	p, dir := temporalNextTo(exe)
	if p != "" {
		return p, nil
	}
	if p, err := f.LookPath(temporalCommand); err == nil {
		return p, nil
	}
	return "", &TemporalMissingError{Dir: dir}
}

// temporalNextTo returns the executable azero-temporal in the directory of
// exe (symlinks resolved), and that directory.
func temporalNextTo(exe string) (path, dir string) {
	if exe == "" {
		return "", ""
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	dir = filepath.Dir(exe)
	p := filepath.Join(dir, temporalCommand)
	if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
		return p, dir
	}
	return "", dir
}

// handOff runs this command line in azero-temporal instead, with the same
// arguments, environment, standard streams and (on Unix) process: it
// returns only when that cannot happen.
func (f *Factory) handOff() error {
	if f.Getenv(handOffVar) != "" {
		return errors.New("the Temporal engine is not in this build of azero, which was itself started as " + temporalCommand +
			": install a build with the engine as " + temporalCommand + " (go build -o " + temporalCommand + " ./cmd/azero)")
	}
	path, err := f.findTemporal()
	if err != nil {
		return err
	}
	if f.exec == nil {
		return errors.New("this azero cannot hand the command to " + path)
	}
	argv := append([]string{path}, f.args...)
	return f.exec(path, argv, append(f.Environ(), handOffVar+"=1"))
}

// runConfig reads the configuration for root and settles the engine
// before a command does any work: a choice that cannot be used is a usage
// error, and a lean build hands a command whose engine is temporal to
// azero-temporal (handOffEngine does not return then).
func (f *Factory) runConfig(root string) (config.Config, error) {
	cfg, err := f.Config(root)
	if err != nil {
		return cfg, err
	}
	if err := f.checkEngine(cfg); err != nil {
		return cfg, err
	}
	return cfg, f.handOffEngine(cfg)
}
