//go:build !lean || temporalserver

package cli

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/config"
	"github.com/azero-dev/azero/internal/temporal"
	"github.com/azero-dev/azero/internal/workflow/implement"
	"github.com/azero-dev/azero/internal/workflow/issue"
	"github.com/azero-dev/azero/internal/workflow/selftest"
)

func TestEngineSettings(t *testing.T) {
	t.Parallel()
	cloud := config.Engine{Kind: "temporal", Address: "azero.a1b2c.tmprl.cloud:7233", Namespace: "azero.a1b2c", TaskQueue: "team",
		TLSCert: "/etc/azero/client.pem", TLSKey: "/etc/azero/client.key", MoveAfter: "45s"}
	for _, c := range []struct {
		name   string
		cfg    config.Engine
		flags  EngineFlags
		env    map[string]string
		kind   string
		conn   temporal.ConnectOptions
		queue  string
		move   time.Duration
		usage  bool
		noAddr bool
	}{
		{name: "nothing chosen: local", kind: engineLocal},
		{name: "--engine local over a temporal config", cfg: cloud, flags: EngineFlags{Kind: "local"}, kind: engineLocal},
		{name: "--temporal alone chooses temporal", flags: EngineFlags{Address: "localhost:7233"}, kind: engineTemporal,
			conn: temporal.ConnectOptions{Address: "localhost:7233"}, queue: temporal.DefaultTaskQueue},
		{name: "the config's cluster, with its mTLS and API key", cfg: cloud, env: map[string]string{"TEMPORAL_API_KEY": "key"}, kind: engineTemporal,
			conn:  temporal.ConnectOptions{Address: cloud.Address, Namespace: cloud.Namespace, TLSCert: cloud.TLSCert, TLSKey: cloud.TLSKey, APIKey: "key"},
			queue: "team", move: 45 * time.Second},
		{name: "flags win over the config", cfg: cloud,
			flags: EngineFlags{Address: "temporal.internal:7233", Namespace: "ops", TaskQueue: "q2", TLSCert: "/c.pem", TLSKey: "/c.key", TLSCA: "/ca.pem", ServerName: "temporal.internal"},
			kind:  engineTemporal, queue: "q2", move: 45 * time.Second,
			conn: temporal.ConnectOptions{Address: "temporal.internal:7233", Namespace: "ops", TLSCert: "/c.pem", TLSKey: "/c.key", TLSCA: "/ca.pem", ServerName: "temporal.internal"}},
		{name: "an unknown engine", flags: EngineFlags{Kind: "kubernetes"}, usage: true},
		{name: "--temporal with --engine local", flags: EngineFlags{Kind: "local", Address: "localhost:7233"}, usage: true},
		{name: "temporal without an address", cfg: config.Engine{Kind: "temporal"}, usage: true, noAddr: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := &Factory{Getenv: func(k string) string { return c.env[k] }, EngineFlags: c.flags}
			kind, conn, queue, opts, err := f.engineSettings(config.Config{Engine: c.cfg})
			if c.usage {
				var ue *UsageError
				if !errors.As(err, &ue) {
					t.Fatalf("want a usage error, got %v", err)
				}
				if c.noAddr && !errors.Is(err, temporal.ErrNoAddress) {
					t.Errorf("want ErrNoAddress, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if kind != c.kind || conn != c.conn || queue != c.queue || opts.MoveAfter != c.move {
				t.Errorf("got %s %+v queue %q move %v\nwant %s %+v queue %q move %v", kind, conn, queue, opts.MoveAfter, c.kind, c.conn, c.queue, c.move)
			}
		})
	}
}

// The worker runs one workflow type per graph azero has, named as the
// graph.
func TestTemporalRegistryHasOneWorkflowPerGraph(t *testing.T) {
	t.Parallel()
	reg, err := temporalRegistry(&Factory{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := reg.Names(), []string{implement.Name, issue.Name, selftest.Name}; !slices.Equal(got, want) {
		t.Errorf("workflow types %v, want %v", got, want)
	}
}

// TestRunOnTemporalNames: the names this package reads on a worker's rows
// of a run on Temporal are the ones internal/temporal writes, and a build
// without the engine refuses a missing address in the same words.
func TestRunOnTemporalNames(t *testing.T) {
	t.Parallel()
	if metaEngine != temporal.MetaEngine || engineTemporal != temporal.EngineName {
		t.Errorf("cli reads meta %q = %q; internal/temporal writes %q = %q", metaEngine, engineTemporal, temporal.MetaEngine, temporal.EngineName)
	}
	if !runOnTemporal(map[string]string{temporal.MetaEngine: temporal.EngineName}) {
		t.Error("a worker's row of a run on Temporal is not recognised")
	}
	if errNoAddress.Error() != temporal.ErrNoAddress.Error() {
		t.Errorf("without the engine: %q; with it: %q", errNoAddress, temporal.ErrNoAddress)
	}
}
