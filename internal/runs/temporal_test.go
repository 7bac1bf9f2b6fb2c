//go:build !lean || temporalserver

package runs

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/config"
	"github.com/azero-dev/azero/internal/temporal"
	"github.com/azero-dev/azero/internal/workflow/design"
	"github.com/azero-dev/azero/internal/workflow/implement"
	"github.com/azero-dev/azero/internal/workflow/issue"
	"github.com/azero-dev/azero/internal/workflow/selftest"
)

// TestRunOnTemporalNames: the names this package reads on a worker's rows
// of a run on Temporal are the ones internal/temporal writes, and a build
// without the engine refuses a missing address in the same words.
func TestRunOnTemporalNames(t *testing.T) {
	t.Parallel()
	if metaEngine != temporal.MetaEngine || Temporal != temporal.EngineName {
		t.Errorf("runs reads meta %q = %q; internal/temporal writes %q = %q", metaEngine, Temporal, temporal.MetaEngine, temporal.EngineName)
	}
	if !runOnTemporal(map[string]string{temporal.MetaEngine: temporal.EngineName}) {
		t.Error("a worker's row of a run on Temporal is not recognised")
	}
	if DefaultTaskQueue != temporal.DefaultTaskQueue {
		t.Errorf("the default task queue is %q here, %q in internal/temporal", DefaultTaskQueue, temporal.DefaultTaskQueue)
	}
	if errNoAddress.Error() != temporal.ErrNoAddress.Error() {
		t.Errorf("without the engine: %q; with it: %q", errNoAddress, temporal.ErrNoAddress)
	}
}

// (A build without the engine hands a Temporal choice to azero-temporal:
// the cli tests of the lean build check that.)
func TestChoose(t *testing.T) {
	t.Parallel()
	cloud := config.Engine{Kind: "temporal", Address: "azero.a1b2c.tmprl.cloud:7233", Namespace: "azero.a1b2c", TaskQueue: "team",
		TLSCert: "/etc/azero/client.pem", TLSKey: "/etc/azero/client.key", MoveAfter: "45s"}
	for _, c := range []struct {
		name   string
		cfg    config.Engine
		flags  EngineFlags
		env    map[string]string
		want   Choice
		usage  bool
		noAddr bool
	}{
		{name: "nothing chosen: local", want: Choice{Kind: Local}},
		{name: "--engine local over a temporal config", cfg: cloud, flags: EngineFlags{Kind: "local"}, want: Choice{Kind: Local}},
		{name: "--temporal alone chooses temporal", flags: EngineFlags{Address: "localhost:7233"},
			want: Choice{Kind: Temporal, Address: "localhost:7233", TaskQueue: DefaultTaskQueue}},
		{name: "the config's cluster, with its mTLS and API key", cfg: cloud, env: map[string]string{"TEMPORAL_API_KEY": "key"},
			want: Choice{Kind: Temporal, Address: cloud.Address, Namespace: cloud.Namespace, TLSCert: cloud.TLSCert, TLSKey: cloud.TLSKey, APIKey: "key",
				TaskQueue: "team", MoveAfter: 45 * time.Second}},
		{name: "flags win over the config", cfg: cloud,
			flags: EngineFlags{Address: "temporal.internal:7233", Namespace: "ops", TaskQueue: "q2", TLSCert: "/c.pem", TLSKey: "/c.key", TLSCA: "/ca.pem", ServerName: "temporal.internal"},
			want: Choice{Kind: Temporal, Address: "temporal.internal:7233", Namespace: "ops", TLSCert: "/c.pem", TLSKey: "/c.key", TLSCA: "/ca.pem", ServerName: "temporal.internal",
				TaskQueue: "q2", MoveAfter: 45 * time.Second}},
		{name: "an unknown engine", flags: EngineFlags{Kind: "kubernetes"}, usage: true},
		{name: "--temporal with --engine local", flags: EngineFlags{Kind: "local", Address: "localhost:7233"}, usage: true},
		{name: "temporal without an address", cfg: config.Engine{Kind: "temporal"}, usage: true, noAddr: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env := &Env{Getenv: func(k string) string { return c.env[k] }}
			got, err := Choose(env, c.flags, config.Config{Engine: c.cfg})
			if c.usage {
				var re *RequestError
				if !errors.As(err, &re) {
					t.Fatalf("want a request error, got %v", err)
				}
				if c.noAddr && !errors.Is(err, errNoAddress) {
					t.Errorf("want errNoAddress, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// The worker runs one workflow type per graph azero has, named as the
// graph.
func TestTemporalRegistryHasOneWorkflowPerGraph(t *testing.T) {
	t.Parallel()
	reg, err := registry(&Env{}, Catalog())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := reg.Names(), []string{design.Name, implement.Name, issue.Name, selftest.Name}; !slices.Equal(got, want) {
		t.Errorf("workflow types %v, want %v", got, want)
	}
}
