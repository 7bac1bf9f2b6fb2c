// Package testrun runs a project's real test runner and reports what
// happened, so that azero, never a model, decides whether tests passed.
//
// Each runner is an adapter that turns the runner's exit code (and, where
// the code alone is ambiguous, its machine-readable output) into an Outcome:
//
//   - pytest: 0 pass, 1 fail, 2 interrupted or collection errors, 3 internal
//     error, 4 usage error, 5 no tests collected;
//   - go test: run with -json, so a package that does not build is Broken,
//     never mistaken for a red test.
//
// Tests run in their own process group with a timeout (300 s by default);
// on timeout or cancellation the whole group is killed. Credentials in the
// environment (names ending in _KEY, _TOKEN, _SECRET, _PASSWORD) are not
// passed to the tests, which may have been written by a model.
package testrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/azero-dev/azero/internal/audit"
)

// Outcome classifies a test run for routing.
type Outcome string

// Outcomes.
const (
	Pass    Outcome = "pass"     // tests ran and all passed
	Fail    Outcome = "fail"     // tests ran and some failed: a real red
	Broken  Outcome = "broken"   // tests could not be collected or built (syntax, imports, compile errors, usage)
	NoTests Outcome = "no_tests" // nothing to run
	Error   Outcome = "error"    // the runner itself failed, was interrupted or timed out
)

// DefaultTimeout bounds one run.
const DefaultTimeout = 300 * time.Second

// maxOutput caps the output kept; the end of a test log matters most.
const maxOutput = 256 << 10

// Result is what one run of the tests showed.
type Result struct {
	Runner      string        `json:"runner"`
	Command     []string      `json:"command"`
	ExitCode    int           `json:"exit_code"`
	Outcome     Outcome       `json:"outcome"`
	Passed      int           `json:"passed"`
	Failed      int           `json:"failed"`
	FailedTests []string      `json:"failed_tests,omitempty"`
	TimedOut    bool          `json:"timed_out,omitempty"`
	Duration    time.Duration `json:"duration_ns"`
	Output      string        `json:"-"`
	Summary     string        `json:"summary"`
}

// FailedError reports tests that had to pass and did not; its TestsFailed
// method maps it to exit code 5.
type FailedError struct {
	Result Result
	Reason string
}

func (e *FailedError) Error() string {
	return fmt.Sprintf("%s: %s", e.Reason, e.Result.Summary)
}

// TestsFailed marks the error for the exit-code mapping.
func (e *FailedError) TestsFailed() bool { return true }

// Runner runs a project's tests.
type Runner interface {
	Name() string
	Run(ctx context.Context, dir string) (Result, error)
}

// Options configure a runner.
type Options struct {
	// TestCmd replaces the runner's command; it runs through sh -c and its
	// exit code is read with the runner's conventions.
	TestCmd  string
	Timeout  time.Duration
	Environ  []string // the environment to start from; os.Environ() by default
	LookPath func(string) (string, error)
}

// New returns the runner called kind: "pytest" or "go".
func New(kind string, opts Options) (Runner, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Environ == nil {
		opts.Environ = os.Environ()
	}
	if opts.LookPath == nil {
		opts.LookPath = exec.LookPath
	}
	switch kind {
	case "pytest":
		return &pytest{opts: opts}, nil
	case "go":
		return &goTest{opts: opts}, nil
	default:
		return nil, fmt.Errorf("unknown test runner %q: use pytest or go", kind)
	}
}

// DetectFiles names the runner the test files call for: go for *_test.go,
// pytest for Python tests, "" when they do not agree or say nothing.
func DetectFiles(tests []string) string {
	kind := ""
	for _, t := range tests {
		k := ""
		switch {
		case strings.HasSuffix(t, "_test.go"):
			k = "go"
		case strings.HasSuffix(t, ".py"):
			k = "pytest"
		}
		if k == "" || (kind != "" && k != kind) {
			return ""
		}
		kind = k
	}
	return kind
}

// Detect guesses the runner of the project in dir: go when it has a go.mod,
// pytest when it has Python test configuration or test files.
func Detect(dir string) (string, error) {
	if exists(filepath.Join(dir, "go.mod")) {
		return "go", nil
	}
	for _, f := range []string{"pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini", "conftest.py"} {
		if exists(filepath.Join(dir, f)) {
			return "pytest", nil
		}
	}
	for _, pattern := range []string{"test_*.py", "*_test.py", "tests/test_*.py", "tests/*_test.py"} {
		if m, _ := filepath.Glob(filepath.Join(dir, pattern)); len(m) > 0 {
			return "pytest", nil
		}
	}
	return "", fmt.Errorf("cannot tell which test runner %s uses: pass --runner pytest or --runner go", dir)
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// cleanEnv drops credentials and adds extra settings.
func cleanEnv(environ []string, extra ...string) []string {
	out := make([]string, 0, len(environ)+len(extra))
	for _, kv := range environ {
		if k, _, _ := strings.Cut(kv, "="); audit.IsSecretName(k) {
			continue
		}
		out = append(out, kv)
	}
	return append(out, extra...)
}

// execResult is the raw outcome of one process.
type execResult struct {
	stdout, stderr []byte
	exitCode       int
	timedOut       bool
	duration       time.Duration
}

// execute runs argv in dir in its own process group, killing the group on
// timeout or cancellation. A non-zero exit is not an error; failing to
// start is.
func execute(ctx context.Context, dir string, argv []string, env []string, timeout time.Duration) (execResult, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stdout, stderr capped
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return execResult{}, fmt.Errorf("start %s: %w", argv[0], err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var res execResult
	var waitErr error
	select {
	case waitErr = <-done:
	case <-timer.C:
		res.timedOut = true
		killGroup(cmd)
		waitErr = <-done
	case <-ctx.Done():
		killGroup(cmd)
		<-done
		return execResult{}, ctx.Err()
	}
	res.duration = time.Since(start)
	res.stdout, res.stderr = stdout.Bytes(), stderr.Bytes()
	var exitErr *exec.ExitError
	switch {
	case waitErr == nil:
	case errors.As(waitErr, &exitErr):
		res.exitCode = exitErr.ExitCode()
	default:
		return res, fmt.Errorf("run %s: %w", argv[0], waitErr)
	}
	return res, nil
}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// capped keeps the first and last parts of a long output.
type capped struct {
	head, tail bytes.Buffer
	dropped    int
}

func (c *capped) Write(p []byte) (int, error) {
	n := len(p)
	if room := maxOutput/2 - c.head.Len(); room > 0 {
		k := min(room, len(p))
		c.head.Write(p[:k])
		p = p[k:]
	}
	if len(p) > 0 {
		c.tail.Write(p)
		if extra := c.tail.Len() - maxOutput/2; extra > 0 {
			c.dropped += extra
			rest := append([]byte(nil), c.tail.Bytes()[extra:]...)
			c.tail.Reset()
			c.tail.Write(rest)
		}
	}
	return n, nil
}

func (c *capped) Bytes() []byte {
	if c.dropped == 0 {
		return append(c.head.Bytes(), c.tail.Bytes()...)
	}
	var b bytes.Buffer
	b.Write(c.head.Bytes())
	fmt.Fprintf(&b, "\n... %d bytes of output omitted ...\n", c.dropped)
	b.Write(c.tail.Bytes())
	return b.Bytes()
}

func shellCommand(cmd string) []string { return []string{"sh", "-c", cmd} }
