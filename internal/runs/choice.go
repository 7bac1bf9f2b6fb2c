package runs

import (
	"errors"
	"time"

	"github.com/azero-dev/azero/internal/config"
)

// The engines runs are driven by.
const (
	// Local drives runs in this process, over this machine's store.
	Local = "local"
	// Temporal drives runs on a Temporal cluster (azero worker).
	Temporal = "temporal"
)

// DefaultTaskQueue is the task queue azero's workers share when none is
// configured (internal/temporal's, which a build without the engine
// cannot import).
const DefaultTaskQueue = "azero"

// metaEngine is the meta key internal/temporal writes on a worker's rows
// of a run on Temporal, with the value Temporal (checked against that
// package in a test).
const metaEngine = "engine"

// runOnTemporal reports whether a row of this machine's store is a
// worker's bookkeeping of a run on Temporal.
func runOnTemporal(meta map[string]string) bool { return meta[metaEngine] == Temporal }

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

// Choice is where runs are driven: this machine, or a Temporal cluster
// and how to reach it.
type Choice struct {
	Kind string // Local or Temporal
	// The cluster (Temporal): its frontend, namespace and shared task
	// queue; TLS (any of the four turns it on); the API key of Temporal
	// Cloud ($TEMPORAL_API_KEY, never a flag or a file); how long an
	// activity waits on the queue of its run's holder before the run
	// moves to another worker (0: the engine's default).
	Address, Namespace, TaskQueue      string
	TLSCert, TLSKey, TLSCA, ServerName string
	APIKey                             string
	MoveAfter                          time.Duration
}

// errNoAddress is the request error of a Temporal engine chosen without
// the cluster's address (internal/temporal.ErrNoAddress, in the same
// words, checked in a test).
var errNoAddress = errors.New("the Temporal engine needs the cluster's address: --temporal HOST:PORT, or address in the [engine] table of the config")

// kind resolves which engine drives runs: --engine, else --temporal
// (which implies temporal), else [engine] kind, else local.
func (fl EngineFlags) kind(cfg config.Config) (string, error) {
	kind := cfg.Engine.Kind
	if fl.Address != "" && fl.Kind == "" {
		kind = Temporal
	}
	if fl.Kind != "" {
		kind = fl.Kind
	}
	switch kind {
	case "", Local:
		if fl.Address != "" {
			return "", requestf("--temporal %s needs --engine temporal, not --engine %s", fl.Address, kind)
		}
		return Local, nil
	case Temporal:
		return Temporal, nil
	}
	return "", requestf("--engine %q: use local or temporal", kind)
}

// Choose settles where runs are driven, before a command does any work:
// the flags over the [engine] table of cfg. A choice that cannot be used
// (an unknown engine, Temporal without an address) is a RequestError. A
// build without the Temporal engine hands the command line to
// azero-temporal when the choice is Temporal: Choose returns only when
// that is not the case, or the hand-off failed.
func Choose(env *Env, fl EngineFlags, cfg config.Config) (Choice, error) {
	kind, err := fl.kind(cfg)
	if err != nil || kind != Temporal {
		return Choice{Kind: kind}, err
	}
	e := cfg.Engine
	c := Choice{Kind: Temporal, Address: e.Address, Namespace: e.Namespace, TaskQueue: e.TaskQueue,
		TLSCert: e.TLSCert, TLSKey: e.TLSKey, TLSCA: e.TLSCA, ServerName: e.ServerName, APIKey: env.Getenv("TEMPORAL_API_KEY")}
	for _, o := range []struct {
		dst  *string
		flag string
	}{
		{&c.Address, fl.Address}, {&c.Namespace, fl.Namespace}, {&c.TaskQueue, fl.TaskQueue},
		{&c.TLSCert, fl.TLSCert}, {&c.TLSKey, fl.TLSKey}, {&c.TLSCA, fl.TLSCA}, {&c.ServerName, fl.ServerName},
	} {
		if o.flag != "" {
			*o.dst = o.flag
		}
	}
	if c.TaskQueue == "" {
		c.TaskQueue = DefaultTaskQueue
	}
	if e.MoveAfter != "" {
		// config.Load checked it.
		c.MoveAfter, _ = time.ParseDuration(e.MoveAfter)
	}
	if c.Address == "" {
		return Choice{}, &RequestError{Err: errNoAddress}
	}
	return c, env.settle(c)
}
