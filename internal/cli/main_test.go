package cli_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/cli"
	"github.com/azero-dev/azero/internal/testenv"
)

// TestMain lets the test binary act as the azero command: with
// AZERO_TEST_MAIN=1 in its environment it runs cli.Main instead of the
// tests, so end-to-end tests start real azero processes (killable with
// SIGKILL, attachable to a pseudo-terminal) without building anything.
func TestMain(m *testing.M) {
	if os.Getenv("AZERO_TEST_MAIN") == "1" {
		os.Exit(cli.Main("test"))
	}
	os.Exit(m.Run())
}

// azeroCmd returns a command running azero with args in a private state
// directory, with git isolated from the user's configuration.
func azeroCmd(t testing.TB, stateDir string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	env := testenv.GitEnv(os.Environ())
	cmd.Env = append(env, "AZERO_TEST_MAIN=1", "AZERO_STATE_DIR="+stateDir, "NO_COLOR=1",
		"XDG_CONFIG_HOME="+filepath.Join(stateDir, "config"))
	return cmd
}

// result is a finished azero process.
type result struct {
	code           int
	stdout, stderr string
}

// runAzero runs azero to completion with stdin from /dev/null.
func runAzero(t testing.TB, stateDir string, args ...string) result {
	t.Helper()
	cmd := azeroCmd(t, stateDir, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("azero %s: %v", strings.Join(args, " "), err)
	}
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}
