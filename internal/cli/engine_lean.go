//go:build lean && !temporalserver

package cli

import (
	"context"
	"errors"
	"time"

	"github.com/azero-dev/azero/internal/answerkey"
	"github.com/azero-dev/azero/internal/config"
	"github.com/azero-dev/azero/internal/web"
	"github.com/azero-dev/azero/internal/workflow/implement"
	"github.com/azero-dev/azero/internal/workflow/issue"
)

// This build has no Temporal engine (engine_kind.go says why): a command
// whose engine is temporal is handed to azero-temporal before it does
// anything, so nothing below ever runs with a connection.

// temporalEngine would be a connection to Temporal; this build never has
// one.
type temporalEngine struct{}

func (te *temporalEngine) Close() {}

// errNoEngine is what the functions of the Temporal engine return in this
// build; they are unreachable, since temporalEngine never returns one.
var errNoEngine = errors.New("the Temporal engine is not in this build of azero")

// checkEngine refuses, before any work, an engine choice that cannot be
// used (an unknown kind, Temporal without an address): a usage error,
// said here rather than by azero-temporal.
func (f *Factory) checkEngine(cfg config.Config) error {
	kind, err := f.engineKind(cfg)
	if err == nil && kind == engineTemporal && f.engineAddress(cfg) == "" {
		err = &UsageError{Err: errNoAddress}
	}
	return err
}

// handOffEngine hands the command to azero-temporal when the engine
// chosen (flags, then cfg) is temporal; it returns only when that is not
// the case, or the hand-off failed.
func (f *Factory) handOffEngine(cfg config.Config) error {
	if err := f.checkEngine(cfg); err != nil {
		return err
	}
	if kind, _ := f.engineKind(cfg); kind != engineTemporal {
		return nil
	}
	return f.handOff()
}

// temporalEngine hands the command to azero-temporal when the engine
// chosen for repoRoot is temporal; otherwise it returns nil, the local
// engine.
func (f *Factory) temporalEngine(_ context.Context, repoRoot string) (*temporalEngine, error) {
	cfg, err := f.Config(repoRoot)
	if err != nil {
		return nil, err
	}
	return nil, f.handOffEngine(cfg)
}

// workerRun hands `azero worker` to azero-temporal (a worker is the
// Temporal engine), once its settings can be used.
func workerRun(_ context.Context, f *Factory, _ *WorkerOptions) error {
	f.EngineFlags.Kind = engineTemporal
	cfg, err := f.Config("")
	if err != nil {
		return err
	}
	if err := f.checkEngine(cfg); err != nil {
		return err
	}
	return f.handOff()
}

func temporalRunGone(context.Context, *temporalEngine, string, string) (string, error) {
	return "", errNoEngine
}

func temporalSource(*temporalEngine, *answerkey.Key) (web.Source, time.Duration, string) {
	return nil, 0, ""
}

func implementTemporal(context.Context, *Factory, *temporalEngine, string, *implement.State, bool) error {
	return errNoEngine
}

func issueTemporal(context.Context, *Factory, *temporalEngine, string, *issue.State, map[string]string, bool) error {
	return errNoEngine
}

func resumeIssueTemporal(context.Context, *Factory, *temporalEngine, string, bool) error {
	return errNoEngine
}

func resumeTemporal(context.Context, *Factory, *temporalEngine, string, bool) error {
	return errNoEngine
}

func runsTemporal(context.Context, *Factory, *temporalEngine, *RunsOptions) error {
	return errNoEngine
}

func runsShowTemporal(context.Context, *Factory, *temporalEngine, string, bool, bool) error {
	return errNoEngine
}
