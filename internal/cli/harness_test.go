package cli

// The harness every end-to-end test of the command uses: this test binary
// acts as azero (TestMain), started as a real process with stdin from
// /dev/null, from a string, or on a real pseudo-terminal.

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/sandbox"
	"github.com/azero-dev/azero/internal/shell"
	"github.com/azero-dev/azero/internal/testenv"
)

// TestMain lets the test binary act as the azero command: with
// AZERO_TEST_MAIN=1 in its environment it runs Main instead of the tests,
// so end-to-end tests start real azero processes (killable with SIGKILL,
// attachable to a pseudo-terminal) without building anything.
func TestMain(m *testing.M) {
	sandbox.Init()
	if os.Getenv("AZERO_TEST_MAIN") == "1" {
		os.Exit(Main("test"))
	}
	code := m.Run()
	removeHostileCache()
	os.Exit(code)
}

// azeroEnv is the environment of an azero process under test: git isolated
// from the developer's configuration, a private state directory and config
// directory, and none of the developer's azero, editor, model or GitHub
// settings; extra comes last.
func azeroEnv(state string, extra ...string) []string {
	return testenv.AzeroEnviron(state, append([]string{"AZERO_TEST_MAIN=1", "TERM=xterm"}, extra...)...)
}

// runResult is a finished azero process.
type runResult struct {
	code           int
	stdout, stderr string
}

// runAzeroIn runs azero in dir with stdin a pipe that stays open and
// silent (nobody can be asked, and a command that waited for input would
// never end), and stdout and stderr to pipes.
func runAzeroIn(t *testing.T, state, dir string, env []string, args ...string) runResult {
	t.Helper()
	return runAzeroInput(t, state, dir, env, nil, args...)
}

// runAzeroInput is runAzeroIn with stdin from a string.
func runAzeroInput(t *testing.T, state, dir string, env []string, stdin *string, args ...string) runResult {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	cmd.Env = azeroEnv(state, env...)
	if stdin != nil {
		cmd.Stdin = strings.NewReader(*stdin)
	} else {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		defer w.Close()
		cmd.Stdin = r
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	withoutTerminal(cmd)
	err := cmd.Run()
	res := runResult{stdout: out.String(), stderr: errOut.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("azero %v: %v", args, err)
	}
	return res
}

// withoutTerminal starts cmd in a session of its own, without a
// controlling terminal: nobody can be asked, even when the tests run from
// a terminal (azero gate would ask through /dev/tty, as git does).
func withoutTerminal(cmd *exec.Cmd) *exec.Cmd {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return cmd
}

// session is a process running on a real pseudo-terminal: stdin and
// stderr are the terminal, stdout a buffer (as when --json is piped).
type session struct {
	*testenv.Terminal
	cmd    *exec.Cmd
	stdout bytes.Buffer
	stderr bytes.Buffer // when the process's stderr is not the terminal (runBehindPipes)
	done   chan struct{}
	code   int
}

// startOnTerminal starts name with args in dir on a new pseudo-terminal.
// The process is killed if it is still running when the test ends.
func startOnTerminal(t *testing.T, dir string, env []string, name string, args ...string) *session {
	t.Helper()
	return newSession(t).run(t, dir, env, name, args...)
}

// newSession is a new pseudo-terminal nothing runs on yet.
func newSession(t *testing.T) *session {
	return &session{Terminal: testenv.NewTerminal(t), done: make(chan struct{})}
}

// run starts name with args in dir on the session's terminal; the process
// is killed if it is still running when the test ends.
func (s *session) run(t *testing.T, dir string, env []string, name string, args ...string) *session {
	t.Helper()
	s.cmd = exec.Command(name, args...)
	s.cmd.Dir, s.cmd.Env, s.cmd.Stdout = dir, env, &s.stdout
	s.Start(t, s.cmd)
	return s.watch(t)
}

// runBehindPipes starts name with args in dir with its stdin a silent pipe
// that stays open, stdout and stderr to the session's buffers, and the
// session's terminal as its controlling terminal only: a hook run by a
// framework that pipes it, from a shell on that terminal.
func (s *session) runBehindPipes(t *testing.T, dir string, env []string, name string, args ...string) *session {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	s.cmd = exec.Command(name, args...)
	s.cmd.Dir, s.cmd.Env, s.cmd.Stdin, s.cmd.Stdout, s.cmd.Stderr = dir, env, r, &s.stdout, &s.stderr
	s.StartControlling(t, s.cmd)
	r.Close()
	return s.watch(t)
}

// watch waits for the process in the background; it is killed if it is
// still running when the test ends.
func (s *session) watch(t *testing.T) *session {
	t.Helper()
	go func() {
		s.code = exitCode(s.cmd.Wait())
		close(s.done)
	}()
	t.Cleanup(func() {
		select {
		case <-s.done:
		default:
			s.cmd.Process.Kill()
			<-s.done
		}
	})
	return s
}

// startAzero starts azero with args in dir on a new pseudo-terminal.
func startAzero(t *testing.T, state, dir string, env []string, args ...string) *session {
	t.Helper()
	return startOnTerminal(t, dir, azeroEnv(state, env...), os.Args[0], args...)
}

// exit waits for the process and returns its exit code (128+n for signal n).
func (s *session) exit(t *testing.T) int {
	t.Helper()
	select {
	case <-s.done:
	case <-time.After(testenv.Patience):
		s.cmd.Process.Kill()
		t.Fatalf("the process did not exit; screen:\n%s", s.Text())
	}
	select {
	case <-s.Drained():
	case <-time.After(testenv.Patience):
	}
	return s.code
}

// selfCommand is the command this test binary, acting as azero, names in
// its hints (resume RUN): not the azero on the PATH, nor a build of go run,
// so its absolute path.
func selfCommand(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return shell.Quote(exe)
}

// exitCode turns cmd.Wait's error into an exit code.
func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	case err != nil:
		return -1
	}
	return 0
}

// parseFlags builds a command with newCmd over a test Factory, runs it on
// args with a run function that only captures its options, and returns
// them (nil when the command refused to run) with the Factory and error.
func parseFlags[O any](newCmd func(*Factory, func(*O) error) *cobra.Command, args []string) (*O, *Factory, error) {
	io, _, _, _ := iostreams.Test()
	f := &Factory{IO: io, Getenv: func(string) string { return "" }, LookPath: exec.LookPath, WorkDir: "/work", Now: time.Now}
	var got *O
	cmd := newCmd(f, func(o *O) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(io.Out)
	cmd.SetErr(io.ErrOut)
	return got, f, cmd.Execute()
}

// wantUsageError fails unless err is a usage error (exit 2) and the
// command did not run.
func wantUsageError(t *testing.T, err error, ran bool) {
	t.Helper()
	if code := ExitCode(err); code != ExitUsage || ran {
		t.Fatalf("err = %v (exit %d), ran = %v; want a usage error that runs nothing", err, code, ran)
	}
}

// waitingDemo runs `azero demo --json` without a terminal (with args), which
// stops at the diff review (exit 3), and returns the waiting run's id and
// the demo's result.
func waitingDemo(t *testing.T, state, base string, args ...string) (string, runResult) {
	t.Helper()
	demo := runAzeroIn(t, state, base, nil, append([]string{"demo", "--dir", base, "--json"}, args...)...)
	if demo.code != ExitNeedsHuman {
		t.Fatalf("demo: exit %d, want %d\n%s", demo.code, ExitNeedsHuman, demo.stderr)
	}
	var out struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(demo.stdout), &out); err != nil || out.RunID == "" {
		t.Fatalf("demo: %v\n%s", err, demo.stdout)
	}
	return out.RunID, demo
}
