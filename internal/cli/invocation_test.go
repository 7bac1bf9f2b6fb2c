package cli

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/testenv"
)

// The command azero's hints name is one that works where the person
// stands: the azero on the PATH when it is this executable, go run in
// azero's checkout when this is a build of go run, else the executable's
// absolute path.
func TestInvocationCommand(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	checkout := filepath.Join(root, "src", "azero")
	testenv.WriteFiles(t, checkout, map[string]string{
		"go.mod":            "// azero\nmodule github.com/azero-dev/azero\n\ngo 1.26.0\n",
		"cmd/azero/main.go": "package main\n",
		"internal/cli/x.go": "package cli\n",
	})
	other := filepath.Join(root, "other")
	testenv.WriteFiles(t, other, map[string]string{"go.mod": "module example.com/other\n", "cmd/azero/main.go": "package main\n"})
	exe := func(rel string) string {
		p := filepath.Join(root, rel)
		testenv.WriteFiles(t, root, map[string]string{rel: "#!/bin/sh\n"})
		return p
	}
	goRun := exe("tmp/go-build2031441064/b001/exe/azero")
	cached := exe("cache/go-build/57/" + strings.Repeat("5a", 32) + "-d/azero")
	installed := exe("bin/azero")
	spaced := exe("my tools/azero")
	notGoBuild := exe("opt/exe/azero")
	linkDir := filepath.Join(root, "path")
	if err := os.MkdirAll(linkDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(installed, filepath.Join(linkDir, "azero")); err != nil {
		t.Fatal(err)
	}
	onPath := func(p string) func(string) (string, error) {
		return func(name string) (string, error) {
			if name == "azero" {
				return p, nil
			}
			return "", errors.New("not found")
		}
	}
	notOnPath := func(string) (string, error) { return "", errors.New("not found") }
	tests := []struct {
		name string
		inv  Invocation
		want string
	}{
		{"go run at the checkout's root", Invocation{Exe: goRun, WorkDir: checkout, LookPath: notOnPath}, "go run ./cmd/azero"},
		{"go run from a directory of the checkout", Invocation{Exe: goRun, WorkDir: filepath.Join(checkout, "internal", "cli"), LookPath: notOnPath}, "go run ../../cmd/azero"},
		{"go run's copy in the build cache", Invocation{Exe: cached, WorkDir: checkout, LookPath: notOnPath}, "go run ./cmd/azero"},
		{"go run of a release, outside a checkout", Invocation{Exe: goRun, WorkDir: root, LookPath: notOnPath, Version: "v1.2.0"},
			"go run github.com/azero-dev/azero/cmd/azero@v1.2.0"},
		{"go run of a dirty checkout, from elsewhere", Invocation{Exe: goRun, WorkDir: root, LookPath: notOnPath, Version: "v0.0.0-20260101-abcdef+dirty"}, goRun},
		{"go run in another module's checkout", Invocation{Exe: goRun, WorkDir: other, LookPath: notOnPath, Version: "(devel)"}, goRun},
		{"the azero on the PATH, through a link", Invocation{Exe: installed, WorkDir: checkout, LookPath: onPath(filepath.Join(linkDir, "azero"))}, "azero"},
		{"another azero on the PATH", Invocation{Exe: spaced, WorkDir: root, LookPath: onPath(installed)}, "'" + spaced + "'"},
		{"no azero on the PATH", Invocation{Exe: installed, WorkDir: checkout, LookPath: notOnPath}, installed},
		{"a directory named exe is not go run's", Invocation{Exe: notGoBuild, WorkDir: checkout, LookPath: notOnPath}, notGoBuild},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.inv.Command(); got != tt.want {
				t.Errorf("Command() = %q, want %q", got, tt.want)
			}
		})
	}
}

// The resume hint of a real azero process names the azero on the PATH
// when that is the executable that ran, else its absolute path.
func TestResumeHintWorksFromWhereTheUserStands(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	if err := os.Symlink(os.Args[0], filepath.Join(bin, "azero")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		exe  string
		path string
		want string
	}{
		{"azero on the PATH", filepath.Join(bin, "azero"), bin + string(os.PathListSeparator) + os.Getenv("PATH"), "azero resume "},
		{"not on the PATH", os.Args[0], os.Getenv("PATH"), selfCommand(t) + " resume "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			state, dir := t.TempDir(), t.TempDir()
			cmd := withoutTerminal(exec.Command(tt.exe, "selftest", "--dir", dir, "--steps", "1", "--delay", "1ms", "--json"))
			cmd.Dir, cmd.Env = dir, azeroEnv(state, "PATH="+tt.path)
			out, err := cmd.Output()
			if code := exitCode(err); code != ExitNeedsHuman {
				t.Fatalf("exit %d, want 3 at the gate: %v", code, err)
			}
			id := onlyRun(t, state).ID
			if !strings.Contains(string(out), `"resume": "`+tt.want+id+`"`) {
				t.Errorf("--json names %q, want %q:\n%s", out, tt.want+id, out)
			}
		})
	}
}
