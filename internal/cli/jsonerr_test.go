package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/runs"
	"github.com/azero-dev/azero/internal/testenv"
)

// jsonFailure checks the contract of a failing command run with --json:
// stdout is one JSON document whose "error" says why and whose
// "exit_code" is the process's exit code.
func jsonFailure(t *testing.T, res runResult) map[string]any {
	t.Helper()
	if res.code == ExitOK {
		t.Fatalf("exit 0 for a failing command\nstdout %s\nstderr %s", res.stdout, res.stderr)
	}
	dec := json.NewDecoder(strings.NewReader(res.stdout))
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("stdout is not a JSON document (%v):\n%s\nstderr %s", err, res.stdout, res.stderr)
	}
	if dec.More() {
		t.Fatalf("more than one JSON document:\n%s", res.stdout)
	}
	if msg, _ := doc["error"].(string); msg == "" {
		t.Errorf("the document says nothing about the error:\n%s\nstderr %s", res.stdout, res.stderr)
	}
	if code, _ := doc["exit_code"].(float64); int(code) != res.code {
		t.Errorf("exit_code %v in the document, the process exited %d:\n%s", doc["exit_code"], res.code, res.stdout)
	}
	return doc
}

// TestEveryCommandsJSONErrorIsOneDocument runs every command of azero
// with --json into a failure, as real processes: the failure is one JSON
// document on stdout saying why, with the exit code, whatever failed and
// whenever (a flag, the store, the config, a run, the work itself).
// Commands without --json (serve, hook, mcp, worker, docs, completion)
// refuse the flag the same way.
func TestEveryCommandsJSONErrorIsOneDocument(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	// A state directory that is a file: every command needing the store or
	// the audit log fails.
	broken := filepath.Join(t.TempDir(), "state-file")
	if err := os.WriteFile(broken, []byte("not a directory\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A state directory whose user config has a value of the wrong type.
	badConfig := t.TempDir()
	testenv.WriteFiles(t, badConfig, map[string]string{"config/azero/config.toml": "[models]\ncoder = 5\n"})
	// A repository with a flagged change and nobody to ask.
	repo := testenv.NewRepo(t, map[string]string{"big.txt": strings.Repeat("line\n", 200)})
	testenv.WriteFiles(t, repo, map[string]string{"big.txt": "line\n"})
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name  string
		state string
		args  []string
		want  string // in the error
	}{
		{"runs, the store unusable", broken, []string{"runs", "--json"}, "state directory"},
		{"runs show, the store unusable", broken, []string{"runs", "show", "x", "--json"}, "state directory"},
		{"runs gc, the store unusable", broken, []string{"runs", "gc", "--json"}, "state directory"},
		{"resume, the store unusable", broken, []string{"resume", "x", "--json"}, "state directory"},
		{"resume, no such run", state, []string{"resume", "nosuch", "--json"}, "not found"},
		{"runs show, no such run", state, []string{"runs", "show", "nosuch", "--json"}, "not found"},
		{"models, a config of the wrong type", badConfig, []string{"models", "--json"}, "models.coder must be a string"},
		{"models ping, no key", state, []string{"models", "ping", "coder", "--json"}, "no API key"},
		{"implement, no design", state, []string{"implement", "--json", "--lld", "missing.md"}, "missing.md"},
		{"implement, a usage error", state, []string{"implement", "--json", "--lld", "d.md", "--budget", "NaN"}, "--budget"},
		{"issue, no brief", state, []string{"issue", "--json", "--brief", "missing.md"}, "missing.md"},
		{"issue, the store unusable", broken, []string{"issue", "--json", "--brief", "missing.md"}, "state directory"},
		{"demo, no room for its repository", state, []string{"demo", "--json", "--dir", filepath.Join(file, "x")}, "a-file"},
		{"selftest, no room for its log", state, []string{"selftest", "--json", "--dir", filepath.Join(file, "x")}, "a-file"},
		{"apply, no file", state, []string{"apply", "missing.py", "--edits", "missing.txt", "--json"}, "missing"},
		{"write, no content", state, []string{"write", "x.py", "--content", "missing.txt", "--json"}, "missing.txt"},
		{"write, the audit log unusable", broken, []string{"write", "x.py", "--content", "big.txt", "--json"}, "audit"},
		{"gate, flagged and nobody to ask", state, []string{"gate", "--json"}, "need a human review"},
		{"gate, no repository", state, []string{"gate", "--json", "--repo", filepath.Join(file, "repo")}, "a-file"},
		{"gate, the audit log unusable", broken, []string{"gate", "--json"}, "audit log"},
		{"gate --install-hook", state, []string{"gate", "--json", "--install-hook"}, "--json does not apply"},
		{"version", state, []string{"version", "--json", "--nosuch"}, "unknown flag"},
		{"help", state, []string{"help", "nosuch", "--json"}, "--json"},
		{"serve", state, []string{"serve", "--json"}, "unknown flag: --json"},
		{"hook", state, []string{"hook", "claude-code", "--json"}, "unknown flag: --json"},
		{"mcp", state, []string{"mcp", "--json"}, "unknown flag: --json"},
		{"worker", state, []string{"worker", "--json"}, "unknown flag: --json"},
		{"docs", state, []string{"docs", "man", t.TempDir(), "--json"}, "unknown flag: --json"},
		{"completion", state, []string{"completion", "bash", "--json"}, "unknown flag: --json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// The user's config lives apart from a broken state directory.
			env := []string{"XDG_CONFIG_HOME=" + filepath.Join(tt.state, "config")}
			if tt.state == broken {
				env = []string{"XDG_CONFIG_HOME=" + t.TempDir()}
			}
			doc := jsonFailure(t, runAzeroIn(t, tt.state, repo, env, tt.args...))
			if msg, _ := doc["error"].(string); !strings.Contains(msg, tt.want) {
				t.Errorf("error %q does not say %q", msg, tt.want)
			}
		})
	}
}

// TestResumeJSONSaysWhyItFailed: a resume refused because another process
// drives the run printed the run's document without any error (the run's
// own error field is empty: the run did not fail, the command did).
func TestResumeJSONSaysWhyItFailed(t *testing.T) {
	t.Parallel()
	state, dir := t.TempDir(), t.TempDir()
	first := spawnAzero(t, state, "selftest", "--dir", dir, "--steps", "2", "--delay", "10m")
	defer first.Process.Kill()
	id := runningRunID(t, state, dir)
	res := runAzeroIn(t, state, dir, nil, "resume", id, "--json")
	doc := jsonFailure(t, res)
	if msg, _ := doc["error"].(string); !strings.Contains(msg, "being driven by another azero process") {
		t.Errorf("error %q does not say the run is driven elsewhere", msg)
	}
	if doc["run_id"] != id {
		t.Errorf("the document is not the run's: %s", res.stdout)
	}
}

// TestRunsGCJSONReportsWhatItCouldNotRemove: with --json, a clean-up
// that failed for a run exited 0 with the failure buried in the list; it
// fails as it does without --json, and the document says so.
func TestRunsGCJSONReportsWhatItCouldNotRemove(t *testing.T) {
	t.Parallel()
	actions := []runs.GCAction{
		{RunID: "261101-aaaaaa", Worktree: "/w/a", OnDisk: true, Reason: "the run has ended (done)", Done: true},
		{RunID: "261101-bbbbbb", Worktree: "/w/b", OnDisk: true, Reason: "the run has ended (failed)", Error: "permission denied"},
	}
	for _, asJSON := range []bool{false, true} {
		io, _, out, errOut := iostreams.Test()
		err := gcReport(&GCOptions{RunDeps: RunDeps{IO: io}, JSON: asJSON}, runs.GCReport{Removed: actions})
		if err == nil || !strings.Contains(err.Error(), "261101-bbbbbb") || ExitCode(err) != ExitError {
			t.Fatalf("json %v: err = %v, want the run that could not be cleaned up (exit 1)", asJSON, err)
		}
		if !asJSON {
			if !strings.Contains(errOut.String(), "could not remove /w/b: permission denied") {
				t.Errorf("stderr:\n%s", errOut)
			}
			continue
		}
		doc := jsonFailure(t, runResult{code: ExitCode(err), stdout: out.String()})
		if removed, _ := doc["removed"].([]any); len(removed) != 2 {
			t.Errorf("the document lost what was removed:\n%s", out)
		}
	}
	// Nothing failed: no error.
	io, _, out, _ := iostreams.Test()
	if err := gcReport(&GCOptions{RunDeps: RunDeps{IO: io}, JSON: true}, runs.GCReport{Removed: actions[:1]}); err != nil || strings.Contains(out.String(), `"error"`) {
		t.Errorf("a clean-up that worked: %v\n%s", err, out)
	}
}
