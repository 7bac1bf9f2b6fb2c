package cli

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/azero-dev/azero/internal/config"
	"github.com/azero-dev/azero/internal/sandbox"
	"github.com/azero-dev/azero/internal/testrun"
)

// addSandboxFlag adds --sandbox to a command that runs a model's code.
func addSandboxFlag(cmd *cobra.Command, mode *string) {
	cmd.Flags().StringVar(mode, "sandbox", "", "how the model's code (its tests, its code, the project's scripts) is confined: "+
		"auto (bubblewrap and Landlock, the default), landlock (without bubblewrap) or off (UNCONFINED, with your full powers: only when you mean it); default: [sandbox] mode in your config")
}

// sandboxMode resolves the mode a new run's model code runs in: --sandbox,
// else [sandbox] mode of the user's config, else auto. A mode that is not
// one of sandbox.Modes is a usage error.
func sandboxMode(flag string, cfg config.Config) (sandbox.Mode, error) {
	choice := flag
	if choice == "" {
		choice = cfg.Sandbox.Mode
	}
	m, err := sandbox.ParseMode(choice)
	if err != nil {
		return "", &UsageError{Err: fmt.Errorf("--sandbox: %w", err)}
	}
	return m, nil
}

// sandboxFor is the sandbox a model's code runs in: mode and network as
// the run recorded them, the limits and extra variables of the user's
// [sandbox], and azero's state, configuration and caches hidden from it.
func (f *Factory) sandboxFor(cfg config.Config, mode sandbox.Mode, network bool) (*sandbox.Sandbox, error) {
	state, err := f.StateDir()
	if err != nil {
		return nil, err
	}
	c := sandbox.Config{Mode: mode, Network: network, MaxProcesses: cfg.Sandbox.MaxProcesses, Env: cfg.Sandbox.Env,
		TempRoot: filepath.Join(state, "sandbox"), Home: f.Getenv("HOME"), LookPath: f.LookPath,
		Hide: []string{state, filepath.Join(f.UserConfigDir(), "azero"), filepath.Dir(testrun.DefaultSeeds(f.Environ()))}}
	if cfg.Sandbox.MaxFileSize != "" {
		// config.Load checked it.
		c.MaxFileSize, _ = config.ParseSize(cfg.Sandbox.MaxFileSize)
	}
	return sandbox.New(c)
}

// runCaches is the build cache layer of one run, removed when it ends
// (and by azero runs gc).
func runCaches(state, runID string) string {
	return filepath.Join(state, "sandbox", "cache", runID)
}
