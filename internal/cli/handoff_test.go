//go:build unix && lean && !temporalserver

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/runs"
	"github.com/azero-dev/azero/internal/testenv"
)

// fakeTemporal puts an azero-temporal on a directory returned for PATH:
// it prints its arguments, one per line, and whether it was handed off,
// and exits 7.
func fakeTemporal(t *testing.T) (pathDir string) {
	t.Helper()
	dir := t.TempDir()
	script := "#!/bin/sh\nfor a in \"$@\"; do echo \"arg:$a\"; done\necho \"handed off: $" + runs.HandOffVar + "\"\nexit 7\n"
	if err := os.WriteFile(filepath.Join(dir, runs.TemporalCommand), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestTemporalHandOff: a build without the Temporal engine hands every
// command whose engine is temporal (from a flag or the config) to
// azero-temporal, with the same arguments and its exit code, before doing
// anything of its own; commands on the local engine stay here.
func TestTemporalHandOff(t *testing.T) {
	t.Parallel()
	fake := fakeTemporal(t)
	path := "PATH=" + fake + string(os.PathListSeparator) + os.Getenv("PATH")
	repo := testenv.NewRepo(t, map[string]string{"README.md": "hi\n"})
	for _, args := range [][]string{
		{"runs", "--temporal", "localhost:7233", "--json"},
		{"runs", "show", "--engine", "temporal", "--temporal", "t:1", "20260101-abc"},
		{"resume", "--temporal", "t:1", "20260101-abc"},
		{"serve", "--temporal", "t:1", "--addr", "127.0.0.1:0"},
		{"worker", "--temporal", "t:1", "--namespace", "ops"},
		{"implement", "--lld", "docs/missing.md", "--temporal", "t:1"},
		{"issue", "--brief", "missing.md", "--engine", "temporal", "--temporal", "t:1"},
		{"demo", "--temporal", "t:1"},
	} {
		t.Run(args[0], func(t *testing.T) {
			t.Parallel()
			state := t.TempDir()
			res := runAzeroIn(t, state, repo, []string{path}, args...)
			var want strings.Builder
			for _, a := range args {
				want.WriteString("arg:" + a + "\n")
			}
			want.WriteString("handed off: 1\n")
			if res.code != 7 || res.stdout != want.String() {
				t.Errorf("exit %d, stdout:\n%s\nwant exit 7 from azero-temporal, stdout:\n%s\nstderr:\n%s", res.code, res.stdout, want.String(), res.stderr)
			}
			if res.stderr != "" {
				t.Errorf("azero wrote before handing off:\n%s", res.stderr)
			}
			if _, err := os.Stat(filepath.Join(state, "azero.db")); err == nil {
				t.Error("azero opened its store before handing off")
			}
		})
	}

	// The engine from the repository's config, no flag.
	cfgRepo := testenv.NewRepo(t, map[string]string{".azero/config.toml": "[engine]\nkind = \"temporal\"\naddress = \"t:7233\"\n"})
	res := runAzeroIn(t, t.TempDir(), cfgRepo, []string{path}, "runs")
	if res.code != 7 || !strings.HasPrefix(res.stdout, "arg:runs\nhanded off: 1") {
		t.Errorf("[engine] kind = \"temporal\": exit %d, stdout %q, stderr %q; want the hand-off", res.code, res.stdout, res.stderr)
	}

	// The local engine never hands off.
	res = runAzeroIn(t, t.TempDir(), repo, []string{path}, "runs", "--engine", "local", "--json")
	if res.code != 0 || !strings.Contains(res.stdout, `"runs"`) {
		t.Errorf("--engine local: exit %d, stdout %q, stderr %q; want this azero's list", res.code, res.stdout, res.stderr)
	}
}

// TestTemporalHandOffMissing: without azero-temporal the command fails
// (exit 1, with --json as a document) saying how to get the engine; a
// build started as azero-temporal never hands the command on again.
func TestTemporalHandOffMissing(t *testing.T) {
	t.Parallel()
	repo := testenv.NewRepo(t, map[string]string{"README.md": "hi\n"})
	noTemporal := "PATH=" + filepath.Dir(testenv.RequireTool(t, "git"))
	res := runAzeroIn(t, t.TempDir(), repo, []string{noTemporal}, "runs", "--temporal", "t:1", "--json")
	if res.code != ExitError || !strings.Contains(res.stderr, "go install github.com/azero-dev/azero/cmd/azero@latest") || !strings.Contains(res.stdout, `"exit_code": 1`) {
		t.Errorf("exit %d\nstdout %s\nstderr %s\nwant exit 1 saying how to install the engine, and the error document", res.code, res.stdout, res.stderr)
	}

	fake := fakeTemporal(t)
	res = runAzeroIn(t, t.TempDir(), repo, []string{"PATH=" + fake + string(os.PathListSeparator) + os.Getenv("PATH"), runs.HandOffVar + "=1"}, "runs", "--temporal", "t:1")
	if res.code != ExitError || strings.Contains(res.stdout, "arg:") || !strings.Contains(res.stderr, "go build -o azero-temporal ./cmd/azero") {
		t.Errorf("started as azero-temporal: exit %d, stdout %q, stderr %q; want exit 1 without a second hand-off", res.code, res.stdout, res.stderr)
	}
}
