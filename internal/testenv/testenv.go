// Package testenv supports azero's tests: tools they drive for real, and
// scratch git repositories. It is imported only by _test files.
package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// RequireTool returns the path of an external program a test drives. When
// it is missing the test is skipped on a developer's machine, but fails when
// AZERO_REQUIRE_TOOLS is set (as .ci/run does), so CI never hides a skipped
// requirement behind a green run.
func RequireTool(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	msg := name + " is not installed (" + installHint(name) + ")"
	if os.Getenv("AZERO_REQUIRE_TOOLS") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// installHint says how to install the tool name: Debian's package, or
// npm's for the tools Debian does not package.
func installHint(name string) string {
	switch name {
	case "pytest":
		return "apt-get install python3-pytest"
	case "pyflakes", "pyflakes3":
		return "apt-get install python3-pyflakes"
	case "bwrap":
		return "apt-get install bubblewrap"
	case "lefthook", "husky":
		return "npm install -g " + name
	}
	return "apt-get install " + name
}

// GitEnv returns an environment for git that ignores the user's and the
// system's configuration and has an identity, so tests behave the same on
// every machine.
func GitEnv(base []string) []string {
	var out []string
	for _, kv := range base {
		if strings.HasPrefix(kv, "GIT_") {
			continue
		}
		out = append(out, kv)
	}
	return append(out,
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=azero test", "GIT_AUTHOR_EMAIL=test@azero.invalid",
		"GIT_COMMITTER_NAME=azero test", "GIT_COMMITTER_EMAIL=test@azero.invalid",
		"GIT_TERMINAL_PROMPT=0")
}

// Git runs git in dir and fails the test on error.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = GitEnv(os.Environ())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// WriteFiles writes files (path relative to dir -> content), creating
// directories as needed.
func WriteFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// NewRepo creates a git repository in a temporary directory with files
// committed on branch main, and returns its path.
func NewRepo(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	Git(t, dir, "init", "-q", "-b", "main")
	WriteFiles(t, dir, files)
	Git(t, dir, "add", "-A")
	Git(t, dir, "commit", "-q", "--allow-empty", "-m", "initial")
	return dir
}

// Patience bounds every wait for something a test expects to happen (a
// prompt, a process exit, a file). It is not a timing assertion: it only
// turns a hang into a failure, and is generous enough for a loaded 2-core
// machine running the race detector.
const Patience = 3 * time.Minute
