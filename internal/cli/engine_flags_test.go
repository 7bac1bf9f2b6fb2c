//go:build !lean || temporalserver

package cli

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/azero-dev/azero/internal/config"
	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/runs"
)

// Every command that takes --temporal takes --namespace, --task-queue and
// the TLS flags as azero worker does, and each reaches the connection the
// command dials, over the config's [engine] table.
func TestEveryTemporalCommandTakesTheConnectionFlags(t *testing.T) {
	t.Parallel()
	commands := []struct {
		args  []string
		build func(*Factory, *runs.EngineFlags) *cobra.Command
	}{
		{[]string{"implement", "--lld", "design.md"}, engineOf(NewCmdImplement)}, {[]string{"issue", "--brief", "notes.md"}, engineOf(NewCmdIssue)},
		{[]string{"design", "--issue", "1"}, engineOf(NewCmdDesign)},
		{[]string{"demo"}, engineOf(NewCmdDemo)}, {[]string{"runs"}, engineOf(NewCmdRuns)}, {[]string{"runs", "show", "261124-x"}, engineOf(NewCmdRunsShow)},
		{[]string{"resume", "261124-x"}, engineOf(NewCmdResume)}, {[]string{"serve"}, engineOf(NewCmdServe)}, {[]string{"worker"}, engineOf(NewCmdWorker)},
	}
	flags := []string{"--temporal", "temporal.internal:7233", "--namespace", "ops", "--task-queue", "q2",
		"--tls-cert", "/etc/azero/c.pem", "--tls-key", "/etc/azero/c.key", "--tls-ca", "/etc/azero/ca.pem", "--tls-server-name", "temporal.internal"}
	want := runs.Choice{Kind: runs.Temporal, Address: "temporal.internal:7233", Namespace: "ops", TaskQueue: "q2", TLSCert: "/etc/azero/c.pem", TLSKey: "/etc/azero/c.key",
		TLSCA: "/etc/azero/ca.pem", ServerName: "temporal.internal"}
	cfg := config.Config{Engine: config.Engine{Kind: "temporal", Address: "cfg:7233", Namespace: "cfg-ns", TaskQueue: "cfg-q",
		TLSCert: "/cfg/c.pem", TLSKey: "/cfg/c.key", TLSCA: "/cfg/ca.pem", ServerName: "cfg.internal"}}
	for _, c := range commands {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			t.Parallel()
			// The command azero's root runs for these arguments is the
			// one built here.
			f := newFlagsFactory()
			found, operands, err := rootFor(f, c.args).Find(c.args)
			if err != nil || found.CommandPath() != "azero "+strings.Join(c.args[:len(c.args)-len(operands)], " ") || found.Name() != c.build(f, new(runs.EngineFlags)).Name() {
				t.Fatalf("root finds %v (%v) for %q", found, err, c.args)
			}
			// Each flag alone reaches the connection, over the config.
			for i := 0; i < len(flags); i += 2 {
				f := newFlagsFactory()
				var engine runs.EngineFlags
				cmd := c.build(f, &engine)
				cmd.SetArgs(append(slices.Clone(operands), flags[i], flags[i+1]))
				if err := cmd.Execute(); err != nil {
					t.Fatalf("%s %s: %v", flags[i], flags[i+1], err)
				}
				ch, err := runs.Choose(f.Env(), engine, cfg)
				if err != nil {
					t.Fatal(err)
				}
				got := map[string]string{"--temporal": ch.Address, "--namespace": ch.Namespace, "--task-queue": ch.TaskQueue, "--tls-cert": ch.TLSCert,
					"--tls-key": ch.TLSKey, "--tls-ca": ch.TLSCA, "--tls-server-name": ch.ServerName}
				fromConfig := map[string]string{"--temporal": "cfg:7233", "--namespace": "cfg-ns", "--task-queue": "cfg-q", "--tls-cert": "/cfg/c.pem",
					"--tls-key": "/cfg/c.key", "--tls-ca": "/cfg/ca.pem", "--tls-server-name": "cfg.internal"}
				fromConfig[flags[i]] = flags[i+1]
				for name, v := range got {
					if v != fromConfig[name] {
						t.Errorf("with %s %s, %s is %q, want %q", flags[i], flags[i+1], name, v, fromConfig[name])
					}
				}
			}
			// All of them, without a config.
			f = newFlagsFactory()
			var engine runs.EngineFlags
			cmd := c.build(f, &engine)
			cmd.SetArgs(append(slices.Clone(operands), flags...))
			if err := cmd.Execute(); err != nil {
				t.Fatal(err)
			}
			ch, err := runs.Choose(f.Env(), engine, config.Config{})
			if err != nil || ch != want {
				t.Errorf("got %+v (%v), want %+v", ch, err, want)
			}
		})
	}
}

// deps lets a test reach the RunDeps every run command's options embed.
func (d *RunDeps) deps() *RunDeps { return d }

// engineOf builds a run command whose run function only keeps the engine
// its command line chose.
func engineOf[O any, P interface {
	*O
	deps() *RunDeps
}](newCmd func(*Factory, func(*O) error) *cobra.Command) func(*Factory, *runs.EngineFlags) *cobra.Command {
	return func(f *Factory, got *runs.EngineFlags) *cobra.Command {
		cmd := newCmd(f, func(o *O) error { *got = P(o).deps().Engine; return nil })
		io := f.IO
		cmd.SetOut(io.Out)
		cmd.SetErr(io.ErrOut)
		return cmd
	}
}

// A TLS flag given to a command other than worker reaches the dial of a
// real azero process: the certificate it names is read.
func TestTLSFlagsReachTheDial(t *testing.T) {
	t.Parallel()
	tests := []struct {
		flags []string
		want  string
	}{
		{[]string{"--tls-cert", "/nonexistent/c.pem", "--tls-key", "/nonexistent/c.key"}, "load the Temporal client certificate: open /nonexistent/c.pem"},
		{[]string{"--tls-ca", "/nonexistent/ca.pem"}, "read the Temporal CA: open /nonexistent/ca.pem"},
	}
	for _, tt := range tests {
		t.Run(tt.flags[0], func(t *testing.T) {
			t.Parallel()
			state := t.TempDir()
			res := runAzeroIn(t, state, state, nil, append([]string{"runs", "--temporal", "127.0.0.1:1", "--namespace", "ops"}, tt.flags...)...)
			if res.code != ExitError || !strings.Contains(res.stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want 1 and %q", res.code, res.stderr, tt.want)
			}
		})
	}
}

func newFlagsFactory() *Factory {
	io, _, _, _ := iostreams.Test()
	return &Factory{IO: io, Getenv: func(string) string { return "" }, Environ: func() []string { return nil },
		LookPath: exec.LookPath, WorkDir: "/work", Now: time.Now, Version: "test"}
}
