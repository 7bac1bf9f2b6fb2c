//go:build lean && !temporalserver

package runs

import (
	"context"
	"errors"
)

// This build has no Temporal engine (handoff.go says why): a command
// whose engine is temporal is handed to azero-temporal before it does
// anything (Choose), so nothing below ever runs with a connection.

// errNoEngine is what the Temporal engine's functions return in this
// build; they are unreachable, since Choose hands the command off first.
var errNoEngine = errors.New("the Temporal engine is not in this build of azero")

// settle hands the command line to azero-temporal when the engine chosen
// is Temporal; it returns only when that is not the case, or the hand-off
// failed.
func (e *Env) settle(c Choice) error {
	if c.Kind != Temporal {
		return nil
	}
	return e.handOff()
}

func openTemporal(context.Context, *Env, Choice, Workflows) (Engine, error) { return nil, errNoEngine }

// RunWorker hands `azero worker` to azero-temporal (a worker is the
// Temporal engine), once its settings can be used.
func RunWorker(_ context.Context, env *Env, fl EngineFlags, _ string, _ WorkerHooks) error {
	fl.Kind = Temporal
	cfg, err := env.Config("")
	if err != nil {
		return err
	}
	if _, err := Choose(env, fl, cfg); err != nil {
		return err
	}
	return errNoEngine
}
