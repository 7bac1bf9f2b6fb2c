package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/sandbox"
	"github.com/azero-dev/azero/internal/testenv"
)

// testSandbox is a real sandbox for the tests that run a project's tests
// themselves, with this test binary as its helper (TestMain).
func testSandbox(t *testing.T) *sandbox.Sandbox {
	t.Helper()
	s, err := sandbox.New(sandbox.Config{Mode: sandbox.Auto, TempRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSandboxFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		args  []string
		usage bool
		argv  []string
		write []string
	}{
		{"a command", []string{"--write", ".", "--write", "out", "--network", "--", "make", "-j2", "test"}, false, []string{"make", "-j2", "test"}, []string{".", "out"}},
		{"the command's own flags", []string{"--", "ls", "--all"}, false, []string{"ls", "--all"}, nil},
		{"no command", nil, true, nil, nil},
		{"a command without --", []string{"make"}, true, nil, nil},
		{"--json without --check", []string{"--json", "--", "true"}, true, nil, nil},
		{"--check runs nothing", []string{"--check", "--", "true"}, true, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts, _, err := parseFlags(NewCmdSandbox, tt.args)
			if tt.usage {
				wantUsageError(t, err, opts != nil)
				return
			}
			if err != nil || !slices.Equal(opts.Argv, tt.argv) || !slices.Equal(opts.Write, tt.write) {
				t.Fatalf("opts %+v, err %v", opts, err)
			}
		})
	}
}

// azero sandbox runs the command confined and exits with its status.
func TestSandboxCommand(t *testing.T) {
	t.Parallel()
	home, state, dir := t.TempDir(), t.TempDir(), t.TempDir()
	testenv.WriteFiles(t, home, map[string]string{".ssh/id_rsa": "SECRET-SSH\n"})
	testenv.WriteFiles(t, dir, map[string]string{"in.txt": "input\n", "out/.keep": ""})
	env := []string{"HOME=" + home, "GH_TOKEN=SECRET-TOKEN"}
	script := "cat in.txt; echo made > out/made; echo no > here; cat " + home + "/.ssh/id_rsa; env; exit 7"
	res := runAzeroIn(t, state, dir, env, "sandbox", "--write", "out", "--", "sh", "-c", script)
	if res.code != 7 {
		t.Fatalf("exit %d, want the command's 7\n%s%s", res.code, res.stdout, res.stderr)
	}
	if !strings.Contains(res.stdout, "input") || strings.Contains(res.stdout+res.stderr, "SECRET") {
		t.Errorf("output:\n%s%s", res.stdout, res.stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "out", "made")); string(got) != "made\n" {
		t.Errorf("the --write directory was not written: %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "here")); err == nil {
		t.Error("the current directory was written without --write")
	}
	// A sandbox that cannot be set up runs nothing and exits 125.
	res = runAzeroIn(t, state, dir, []string{"TMPDIR=/proc/azero-nowhere"}, "sandbox", "--write", "out", "--", "sh", "-c", "echo ran > out/ran")
	if res.code != 125 || !strings.Contains(res.stderr, "azero: sandbox:") {
		t.Errorf("exit %d, want 125 with the reason\n%s", res.code, res.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "ran")); err == nil {
		t.Error("the command ran without its sandbox")
	}
}

func TestSandboxCheck(t *testing.T) {
	t.Parallel()
	res := runAzeroIn(t, t.TempDir(), t.TempDir(), nil, "sandbox", "--check", "--json")
	var r sandbox.Report
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil || res.code != 0 || r.Mechanism == "" || r.OS == "" {
		t.Fatalf("exit %d, report %+v (%v)\n%s%s", res.code, r, err, res.stdout, res.stderr)
	}
	res = runAzeroIn(t, t.TempDir(), t.TempDir(), nil, "sandbox", "--check")
	if res.code != 0 || !strings.Contains(res.stdout, "sandbox: "+r.Mechanism) {
		t.Errorf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}

// azero sandbox confines as the user's [sandbox] says: its mode, its
// limits; a mode there that is not one is refused before anything runs.
func TestSandboxCommandReadsTheUsersSettings(t *testing.T) {
	t.Parallel()
	state, dir := t.TempDir(), t.TempDir()
	// azeroEnv makes XDG_CONFIG_HOME state/config.
	testenv.WriteFiles(t, state, map[string]string{"config/azero/config.toml": "[sandbox]\nmode = \"landlock\"\nmax_file_size = \"1M\"\n"})
	res := runAzeroIn(t, state, dir, nil, "sandbox", "--check", "--json")
	var r sandbox.Report
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil || res.code != 0 || r.Mechanism != "landlock" {
		t.Errorf("--check with mode landlock in the config: exit %d, mechanism %q (%v)\n%s", res.code, r.Mechanism, err, res.stderr)
	}
	testenv.WriteFiles(t, dir, map[string]string{"out/.keep": ""})
	res = runAzeroIn(t, state, dir, nil, "sandbox", "--write", "out", "--", "sh", "-c", "head -c 2097152 /dev/zero > out/big")
	info, err := os.Stat(filepath.Join(dir, "out", "big"))
	if res.code == 0 || err != nil || info.Size() > 1<<20 {
		t.Errorf("a 2 MiB write under max_file_size 1M: exit %d, file %v %v\n%s", res.code, info, err, res.stderr)
	}
	testenv.WriteFiles(t, state, map[string]string{"config/azero/config.toml": "[sandbox]\nmode = \"none\"\n"})
	res = runAzeroIn(t, state, dir, nil, "sandbox", "--", "sh", "-c", "echo ran > ran")
	if res.code == 0 || !strings.Contains(res.stderr, "sandbox.mode") {
		t.Errorf("a mode that is not one: exit %d\n%s", res.code, res.stderr)
	}
}
