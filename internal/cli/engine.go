//go:build !lean || temporalserver

package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/azero-dev/azero/internal/answerkey"
	"github.com/azero-dev/azero/internal/config"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/temporal"
	"github.com/azero-dev/azero/internal/web"
	"github.com/azero-dev/azero/internal/workflow/implement"
	"github.com/azero-dev/azero/internal/workflow/issue"
	"github.com/azero-dev/azero/internal/workflow/selftest"
)

// temporalEngine is a connection to the Temporal cluster runs go to.
type temporalEngine struct {
	client *temporal.Client
	opts   temporal.Options
	conn   temporal.ConnectOptions
}

func (te *temporalEngine) Close() { te.client.C.Close() }

// engineSettings resolves the engine choice: flags over config.
func (f *Factory) engineSettings(cfg config.Config) (kind string, conn temporal.ConnectOptions, queue string, opts temporal.Options, err error) {
	e := cfg.Engine
	if kind, err = f.engineKind(cfg); err != nil || kind != engineTemporal {
		return kind, conn, "", opts, err
	}
	conn = temporal.ConnectOptions{Address: e.Address, Namespace: e.Namespace, TLSCert: e.TLSCert, TLSKey: e.TLSKey,
		TLSCA: e.TLSCA, ServerName: e.ServerName, APIKey: f.Getenv("TEMPORAL_API_KEY")}
	if f.EngineFlags.Address != "" {
		conn.Address = f.EngineFlags.Address
	}
	if f.EngineFlags.Namespace != "" {
		conn.Namespace = f.EngineFlags.Namespace
	}
	for _, o := range []struct {
		dst  *string
		flag string
	}{
		{&conn.TLSCert, f.EngineFlags.TLSCert}, {&conn.TLSKey, f.EngineFlags.TLSKey},
		{&conn.TLSCA, f.EngineFlags.TLSCA}, {&conn.ServerName, f.EngineFlags.ServerName},
	} {
		if o.flag != "" {
			*o.dst = o.flag
		}
	}
	queue = e.TaskQueue
	if f.EngineFlags.TaskQueue != "" {
		queue = f.EngineFlags.TaskQueue
	}
	if queue == "" {
		queue = temporal.DefaultTaskQueue
	}
	if e.MoveAfter != "" {
		// config.Load checked it.
		opts.MoveAfter, _ = time.ParseDuration(e.MoveAfter)
	}
	if conn.Address == "" {
		return "", conn, "", opts, &UsageError{Err: temporal.ErrNoAddress}
	}
	return engineTemporal, conn, queue, opts, nil
}

// checkEngine refuses, before any work, an engine choice that cannot be
// used (an unknown kind, Temporal without an address): a usage error.
func (f *Factory) checkEngine(cfg config.Config) error {
	_, _, _, _, err := f.engineSettings(cfg)
	return err
}

// temporalEngine connects to Temporal when the engine chosen for repoRoot
// (flags, then config) is temporal; nil means the local engine.
func (f *Factory) temporalEngine(ctx context.Context, repoRoot string) (*temporalEngine, error) {
	cfg, err := f.Config(repoRoot)
	if err != nil {
		return nil, err
	}
	kind, conn, queue, opts, err := f.engineSettings(cfg)
	if err != nil || kind != engineTemporal {
		return nil, err
	}
	c, err := temporal.Dial(ctx, conn)
	if err != nil {
		return nil, err
	}
	return &temporalEngine{client: &temporal.Client{C: c, TaskQueue: queue}, opts: opts, conn: conn}, nil
}

// temporalRunGone says why a worker's worktree of run runID on Temporal,
// made by the worker named worker, is no longer the run's: the run ended
// there, is no longer there, or is held by another worker. "" when the
// run's holder is that worker (restarted with its --identity, it takes the
// run's next step in that worktree).
func temporalRunGone(ctx context.Context, te *temporalEngine, runID, worker string) (string, error) {
	st, err := te.client.Status(ctx, runID)
	switch {
	case errors.Is(err, temporal.ErrUnknownRun):
		return "the run is no longer on Temporal", nil
	case err != nil:
		return "", err
	case st.Ended:
		return "the run has ended on Temporal (" + string(st.Status) + ")", nil
	case st.Holder.Identity != "" && st.Holder.Identity != worker:
		return "the run moved to worker " + st.Holder.Identity, nil
	}
	return "", nil
}

// handOffEngine does nothing: this build drives runs on Temporal itself.
func (f *Factory) handOffEngine(config.Config) error { return nil }

// temporalSource is what the page of azero serve shows for the runs on
// Temporal: the runs, how often to look again, and whose runs they are.
// The answers it sends are sealed with key, which proves their channel to
// the workers that share it.
func temporalSource(te *temporalEngine, key *answerkey.Key) (web.Source, time.Duration, string) {
	te.client.Key = key
	return &temporal.Runs{Client: te.client}, time.Second,
		fmt.Sprintf("the runs on Temporal at %s (namespace %s, task queue %s)", te.conn.Address, nsOrDefault(te.conn.Namespace), te.client.TaskQueue)
}

// temporalRegistry is every workflow a worker of this azero runs, with
// the dependencies of each run built as the local commands build them,
// from this worker's state directory, config and environment.
func temporalRegistry(f *Factory) (*temporal.Registry, error) {
	reg := temporal.NewRegistry()
	err := temporal.Register(reg, temporal.Definition[implement.State]{
		Shape: implement.Graph(implement.Deps{}),
		Build: func(ctx context.Context, run temporal.Run, s *implement.State) (*flow.Graph[implement.State], error) {
			cfg, err := f.Config(s.Repo)
			if err != nil {
				return nil, err
			}
			// On a worker the events go to the worker.
			deps, err := implementDeps(ctx, f, cfg, run.ID, s, run.Events)
			if err != nil {
				return nil, err
			}
			return implement.Graph(deps), nil
		},
		Worktree: func(s *implement.State) *temporal.Worktree {
			return &temporal.Worktree{Repo: s.Repo, Branch: s.Branch, Base: s.BaseCommit, Dir: &s.Worktree}
		},
		// An approved change that cannot be merged waits at its merge for
		// the user: retrying it at once changes nothing.
		Stops: func(err error) bool {
			var stopped *implement.MergeStoppedError
			return errors.As(err, &stopped)
		},
	})
	if err != nil {
		return nil, err
	}
	err = temporal.Register(reg, temporal.Definition[issue.State]{
		Shape: issue.New(issue.Deps{}),
		Build: func(ctx context.Context, run temporal.Run, s *issue.State) (*flow.Graph[issue.State], error) {
			deps, err := issueDeps(ctx, f, run.ID, s, run.Events)
			if err != nil {
				return nil, err
			}
			return issue.New(deps), nil
		},
	})
	if err != nil {
		return nil, err
	}
	err = temporal.Register(reg, temporal.Definition[selftest.State]{
		Shape: selftest.Graph(selftest.Deps{}),
		Build: func(ctx context.Context, run temporal.Run, s *selftest.State) (*flow.Graph[selftest.State], error) {
			deps, err := selftestDeps(f)
			if err != nil {
				return nil, err
			}
			return selftest.Graph(deps), nil
		},
	})
	if err != nil {
		return nil, err
	}
	return reg, nil
}
