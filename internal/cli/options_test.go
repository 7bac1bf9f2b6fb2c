package cli

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/runs"
	"github.com/azero-dev/azero/internal/store"
)

// The command half of each command: its flags reach its options, its
// dependencies are bound from the Factory, and a command line it cannot
// mean is a usage error that runs nothing.
func TestImplementCommandFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		args  []string
		check func(*ImplementOptions) bool
	}{
		{"the design", []string{"--lld", "d.md"}, func(o *ImplementOptions) bool { return o.LLD == "d.md" && !o.Auto && o.Budget == 0 }},
		{"everything", []string{"--lld", "d.md", "--issue", "7", "--repo", "r", "--context", "a.go", "--context", "b", "--runner", "pytest",
			"--coder", "openai:gpt-4.1", "--budget", "1.5", "--auto", "--force", "--json", "--sandbox", "off", "--engine", "local"},
			func(o *ImplementOptions) bool {
				return o.Issue == "7" && o.Repo == "r" && len(o.Context) == 2 && o.Context[1] == "b" && o.Runner == "pytest" && o.Coder == "openai:gpt-4.1" &&
					o.Budget == 1.5 && o.Auto && o.Force && o.JSON && o.Sandbox == "off" && o.Engine.Kind == "local"
			}},
		{"a command and its report", []string{"--lld", "d.md", "--test-cmd", "make test", "--report", "junit:out.xml"},
			func(o *ImplementOptions) bool { return o.TestCmd == "make test" && o.Report == "junit:out.xml" }},
		{"no design", nil, nil},
		{"force without auto", []string{"--lld", "d.md", "--force"}, nil},
		{"a negative budget", []string{"--lld", "d.md", "--budget", "-1"}, nil},
		{"a budget that is no amount", []string{"--lld", "d.md", "--budget", "NaN"}, nil},
		{"a coder that is no model", []string{"--lld", "d.md", "--coder", "gpt"}, nil},
		{"an argument", []string{"--lld", "d.md", "extra"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, f, err := parseFlags(NewCmdImplement, tt.args)
			if tt.check == nil {
				wantUsageError(t, err, got != nil)
				return
			}
			if err != nil || got == nil || !tt.check(got) {
				t.Fatalf("options = %+v, %v", got, err)
			}
			if got.IO != f.IO || got.Env != f.Env() || got.WorkDir != "/work" || got.Terminal == nil {
				t.Errorf("dependencies not bound: %+v", got.RunDeps)
			}
		})
	}
}

func TestRunCommandsFlags(t *testing.T) {
	t.Parallel()
	t.Run("resume", func(t *testing.T) {
		t.Parallel()
		got, f, err := parseFlags(NewCmdResume, []string{"261124-x", "--json"})
		if err != nil || got.RunID != "261124-x" || !got.JSON || got.SetBudget || got.Env != f.Env() {
			t.Fatalf("options = %+v, %v", got, err)
		}
		// --budget 0 removes the budget: given, it is set.
		got, _, err = parseFlags(NewCmdResume, []string{"261124-x", "--budget", "0"})
		if err != nil || !got.SetBudget || got.Budget != 0 {
			t.Fatalf("options = %+v, %v", got, err)
		}
		for _, args := range [][]string{nil, {"a", "b"}, {"x", "--budget", "-2"}} {
			got, _, err := parseFlags(NewCmdResume, args)
			wantUsageError(t, err, got != nil)
		}
	})
	t.Run("runs", func(t *testing.T) {
		t.Parallel()
		got, f, err := parseFlags(NewCmdRuns, []string{"--workflow", "issue", "--status", "waiting", "--limit", "0", "--json"})
		if err != nil || got.Workflow != "issue" || got.Status != "waiting" || got.Limit != 0 || !got.JSON || got.Env != f.Env() || got.Now == nil {
			t.Fatalf("options = %+v, %v", got, err)
		}
		if got, _, _ := parseFlags(NewCmdRuns, nil); got == nil || got.Limit != 50 {
			t.Errorf("the default limit: %+v", got)
		}
		for _, args := range [][]string{{"--limit", "-1"}, {"--workflow", "nope"}, {"extra"}} {
			got, _, err := parseFlags(NewCmdRuns, args)
			wantUsageError(t, err, got != nil)
		}
	})
	t.Run("runs show", func(t *testing.T) {
		t.Parallel()
		got, _, err := parseFlags(NewCmdRunsShow, []string{"261124", "--events", "--json"})
		if err != nil || got.Ref != "261124" || !got.Events || !got.JSON {
			t.Fatalf("options = %+v, %v", got, err)
		}
		got, _, err = parseFlags(NewCmdRunsShow, nil)
		wantUsageError(t, err, got != nil)
	})
	t.Run("runs gc", func(t *testing.T) {
		t.Parallel()
		got, _, err := parseFlags(NewCmdRunsGC, []string{"--all", "--dry-run", "--json", "--temporal", "h:7233"})
		if err != nil || !got.All || !got.DryRun || !got.JSON || got.Engine.Address != "h:7233" {
			t.Fatalf("options = %+v, %v", got, err)
		}
	})
	t.Run("selftest", func(t *testing.T) {
		t.Parallel()
		got, _, err := parseFlags(NewCmdSelftest, []string{"--steps", "5", "--delay", "1s", "--dir", "d"})
		if err != nil || got.Steps != 5 || got.Delay != time.Second || got.Dir != "d" {
			t.Fatalf("options = %+v, %v", got, err)
		}
		for _, args := range [][]string{{"--steps", "0"}, {"--delay", "-1s"}} {
			got, _, err := parseFlags(NewCmdSelftest, args)
			wantUsageError(t, err, got != nil)
		}
	})
	t.Run("demo", func(t *testing.T) {
		t.Parallel()
		got, _, err := parseFlags(NewCmdDemo, []string{"--dir", "d", "--sandbox", "landlock", "--json"})
		if err != nil || got.Dir != "d" || got.Sandbox != "landlock" || !got.JSON || got.Writer == nil {
			t.Fatalf("options = %+v, %v", got, err)
		}
	})
	t.Run("worker", func(t *testing.T) {
		t.Parallel()
		got, _, err := parseFlags(NewCmdWorker, []string{"--identity", "w1", "--temporal", "h:7233"})
		if err != nil || got.Identity != "w1" || got.Engine.Address != "h:7233" {
			t.Fatalf("options = %+v, %v", got, err)
		}
	})
}

func TestOtherCommandsFlags(t *testing.T) {
	t.Parallel()
	t.Run("models ping", func(t *testing.T) {
		t.Parallel()
		got, f, err := parseFlags(NewCmdModelsPing, []string{"coder", "--json"})
		if err != nil || got.Role != llm.RoleCoder || !got.JSON || got.Env != f.Env() {
			t.Fatalf("options = %+v, %v", got, err)
		}
		for _, args := range [][]string{nil, {"planner"}} {
			got, _, err := parseFlags(NewCmdModelsPing, args)
			wantUsageError(t, err, got != nil)
		}
	})
	t.Run("apply", func(t *testing.T) {
		t.Parallel()
		got, _, err := parseFlags(NewCmdApply, []string{"f.py", "--edits", "-", "--root", "r", "--dry-run", "--json"})
		if err != nil || got.File != "f.py" || got.Edits != "-" || got.Root != "r" || !got.DryRun || !got.JSON || got.Writer == nil {
			t.Fatalf("options = %+v, %v", got, err)
		}
		got, _, err = parseFlags(NewCmdApply, []string{"f.py"})
		wantUsageError(t, err, got != nil)
	})
	t.Run("mcp", func(t *testing.T) {
		t.Parallel()
		got, f, err := parseFlags(NewCmdMCP, []string{"--root", "r"})
		if err != nil || got.Root != "r" || got.Version != f.Version || got.Env != f.Env() {
			t.Fatalf("options = %+v, %v", got, err)
		}
	})
	t.Run("version", func(t *testing.T) {
		t.Parallel()
		got, _, err := parseFlags(NewCmdVersion, []string{"--json"})
		if err != nil || !got.JSON {
			t.Fatalf("options = %+v, %v", got, err)
		}
	})
}

// testRunDeps is RunDeps over a fresh state directory, nobody to ask, and
// buffers for the terminal.
func testRunDeps(t *testing.T) (RunDeps, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	io, _, out, errOut := iostreams.Test()
	state := t.TempDir()
	vars := map[string]string{"AZERO_STATE_DIR": state, "XDG_CONFIG_HOME": filepath.Join(state, "config")}
	env := &runs.Env{Getenv: func(k string) string { return vars[k] }, Environ: func() []string { return nil }, LookPath: exec.LookPath,
		WorkDir: state, Now: time.Now, Version: "test"}
	t.Cleanup(func() { env.Close() })
	return RunDeps{IO: io, Env: env, WorkDir: state, Terminal: func() runs.Terminal { return runs.Terminal{} }}, out, errOut
}

// The run half of the run commands, given their options: no Factory, no
// process, no terminal.
func TestRunCommandsRun(t *testing.T) {
	t.Parallel()
	t.Run("runs, none yet", func(t *testing.T) {
		t.Parallel()
		d, out, errOut := testRunDeps(t)
		if err := runsRun(t.Context(), &RunsOptions{RunDeps: d, Now: time.Now, Limit: 50}); err != nil || out.Len() != 0 || !strings.Contains(errOut.String(), "No runs yet") {
			t.Fatalf("err %v, stdout %q, stderr %q", err, out, errOut)
		}
		if err := runsRun(t.Context(), &RunsOptions{RunDeps: d, Now: time.Now, JSON: true}); err != nil || strings.TrimSpace(out.String()) != "{\n  \"runs\": []\n}" {
			t.Fatalf("err %v, stdout %q", err, out)
		}
	})
	t.Run("selftest waits at its gate, then runs lists it", func(t *testing.T) {
		t.Parallel()
		d, out, _ := testRunDeps(t)
		err := selftestRun(t.Context(), &SelftestOptions{RunDeps: d, Dir: t.TempDir(), Steps: 2, JSON: true})
		if ExitCode(err) != ExitNeedsHuman {
			t.Fatalf("err = %v (exit %d), want the run waiting (exit 3)", err, ExitCode(err))
		}
		var doc runOutcome
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil || doc.RunID == "" || doc.Status != store.StatusWaiting || doc.ExitCode != ExitNeedsHuman ||
			doc.Resume != "azero resume "+doc.RunID {
			t.Fatalf("document %q (%v)", out, err)
		}
		out.Reset()
		if err := runsRun(t.Context(), &RunsOptions{RunDeps: d, Now: time.Now, JSON: true}); err != nil || !strings.Contains(out.String(), doc.RunID) {
			t.Fatalf("err %v, stdout %q", err, out)
		}
	})
	t.Run("resume of no run", func(t *testing.T) {
		t.Parallel()
		d, _, _ := testRunDeps(t)
		if err := resumeRun(t.Context(), &ResumeOptions{RunDeps: d, RunID: "261124-nothing"}); err == nil || ExitCode(err) == ExitOK {
			t.Fatalf("err = %v", err)
		}
	})
}
