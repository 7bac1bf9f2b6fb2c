// Package testrun runs a project's real test runner and reports what
// happened, so that azero, never a model, decides whether tests passed.
//
// Each runner is an adapter that reads the runner's own per-test report
// (not the tail of its log) and its exit code, and turns them into an
// Outcome. The rules are the same for every runner:
//
//   - Broken: the tests could not run as tests: a build or compile error,
//     a test file that cannot be collected or loaded (syntax, imports), a
//     test that errored rather than failed where the report tells the two
//     apart (pytest's and JUnit's <error>, a failing fixture or hook), or a
//     usage error of the runner;
//   - Fail: at least one test failed and nothing is Broken: the only valid
//     red;
//   - Error: the run timed out, the runner crashed or was interrupted, or it
//     exited non-zero although no test failed (a green needs a clean exit);
//   - NoTests: nothing above, and no test ran (zero tests is never green);
//   - Pass: at least one test ran, every test passed, and the runner exited 0.
//
// A run whose report, exit code and console summary disagree is Broken
// whatever they say (Result.Disagreement): the tested code can reach each
// of them, and a red or a green needs all three (see crosscheck.go).
//
// Checked in that order: Broken wins over Fail, so a red is only ever a run
// whose every problem is an assertion failure.
//
// The adapters:
//
//   - go: `go test -json`, read event by event while it runs, so a failing
//     test is found however long the log (only what is kept for display is
//     capped);
//   - pytest: `python -m pytest --junitxml`, with one interpreter (the
//     project's virtual environment, else the one that has pytest) for the
//     tests and the lint step; exit codes 2 (interrupted), 3 (internal
//     error), 4 (usage error) and 5 (no tests) keep their documented meaning;
//   - node: node's test runner with its JUnit reporter, through the
//     project's test script when that runs `node --test`; a test file that
//     cannot load is reported by node as a failing "test" named by the file,
//     which is Broken;
//   - vitest: its JUnit reporter, through the project's script when it runs
//     vitest; a file that fails to load (a test case named like its file) is
//     Broken;
//   - jest: its JSON results (`--json`), through the project's script when
//     it runs jest; a suite that failed to run is Broken;
//   - cargo: libtest's output of `cargo test --no-fail-fast` (every member
//     of a workspace), read line by line (cargo-nextest's JUnit report when
//     cargo-nextest is installed); compiler errors are Broken;
//   - junit: any command with a JUnit XML report (Options.Report): the
//     report decides, the exit code only vetoes a green, and a console
//     saying that a test file could not load or the build failed (which
//     some reporters leave out of the report) makes the run Broken.
//
// When a run is Broken, Result.Errors carries the runner's own error lines
// (the compiler's `file.go:3:2: undefined: X`, pytest's `E   ModuleNotFoundError`),
// and Result.Failures the failing tests with their messages, so a terminal or
// a prompt can show them even when the log was too long to keep.
//
// Every process testrun starts (the tests, the baseline, the lint steps,
// the interpreter probe) may execute code a model wrote, so each runs in a
// jail of Options.Sandbox (package sandbox): it may write the project
// directory (not its .git) and its private temporary directory, read the
// system, the toolchains and the checkout's installed dependencies, and
// nothing else; its environment is the sandbox's allowlist plus the
// runner's own settings. There is no unconfined default: a run without a
// sandbox is an error (ErrNoSandbox). A run has a timeout (300 s by
// default); on timeout or cancellation the whole jail is killed, with
// every process the tests started.
//
// Reports go to the jail's temporary directory, never into the project;
// the reports a custom command writes into the project (Options.Report) are
// removed once read. Build caches are azero's, never the user's: Go's
// build cache (GOCACHE) and cargo's target directory live in a cache
// layer, one per azero run (Options.Caches) or one per process, made by
// copying trusted seeds (Options.Seeds). Only CheckBaseline, which runs the
// base commit's own tests before any model wrote anything, adds to the
// seeds, so one run's code cannot poison another run's results.
package testrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/azero-dev/azero/internal/sandbox"
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

// Runner kinds New accepts.
const (
	KindGo     = "go"
	KindPytest = "pytest"
	KindNode   = "node"
	KindVitest = "vitest"
	KindJest   = "jest"
	KindCargo  = "cargo"
	KindJUnit  = "junit" // any command writing a JUnit XML report (Options.TestCmd and Options.Report)
)

// Kinds lists the runner kinds New accepts.
func Kinds() []string {
	return []string{KindGo, KindPytest, KindNode, KindVitest, KindJest, KindCargo, KindJUnit}
}

// DefaultTimeout bounds one run.
const DefaultTimeout = 300 * time.Second

// maxOutput caps the output kept for display (its first and last halves).
const maxOutput = 256 << 10

// Caps on what a Result carries besides the output.
const (
	maxFailures   = 20      // failures kept with their messages (a Result is saved with every checkpoint)
	maxMessage    = 2 << 10 // bytes of one failure message
	maxErrorLines = 60      // runner error lines
	maxErrorLine  = 500     // bytes of one error line
	maxNames      = 1000    // names in FailedTests
)

// Result is what one run of the tests showed.
type Result struct {
	Runner   string   `json:"runner"`
	Command  []string `json:"command"`
	ExitCode int      `json:"exit_code"`
	Outcome  Outcome  `json:"outcome"`
	Passed   int      `json:"passed"`
	Failed   int      `json:"failed"`            // tests that failed (assertions)
	Errored  int      `json:"errored,omitempty"` // tests that errored (setup, collection, a file that cannot load)
	Skipped  int      `json:"skipped,omitempty"`
	// FailedTests names the tests that failed, then those that errored.
	FailedTests []string `json:"failed_tests,omitempty"`
	// Tests names every test the run reported, by outcome (bounded:
	// MaxTestNames); nil when the runner named none.
	Tests *Tests `json:"tests,omitempty"`
	// Failures are the first failed or errored tests with their messages.
	Failures []Failure `json:"failures,omitempty"`
	// Errors are the runner's own error lines when tests could not run:
	// compiler errors, import or collection errors, usage errors.
	Errors []string `json:"errors,omitempty"`
	// MoreErrors counts the runner's error lines beyond those kept.
	MoreErrors int  `json:"more_errors,omitempty"`
	TimedOut   bool `json:"timed_out,omitempty"`
	// Disagreement says how the runner's report, its console and its exit
	// code disagreed: the tested code changed one of them (see
	// crosscheck.go), and the run is Broken.
	Disagreement string        `json:"disagreement,omitempty"`
	Duration     time.Duration `json:"-"`
	DurationMS   int64         `json:"duration_ms"`
	// Output is the runner's output as shown to a human or a model: its
	// first and last parts when it is long, followed by a digest of the
	// failures and errors when they may have fallen out of it.
	Output string `json:"-"`
	// OutputLines is how many lines the runner printed in all, of which
	// Output may keep only the first and last parts.
	OutputLines int    `json:"output_lines,omitempty"`
	Summary     string `json:"summary"`
}

// Failure is one test that did not pass.
type Failure struct {
	Test    string `json:"test"`
	Error   bool   `json:"error,omitempty"` // errored (setup, collection, load) rather than failed
	Message string `json:"message,omitempty"`
}

// MissingCode reports whether a Broken run failed only because what the
// tests use does not exist yet (an undefined name, a module or export not
// found): the tests are fine and need stubs of the code, not a rewrite.
func (r Result) MissingCode() bool {
	if r.Outcome != Broken {
		return false
	}
	text := strings.Join(r.Errors, "\n")
	if text == "" {
		text = r.Output
	}
	for _, sign := range missingSigns {
		if strings.Contains(text, sign) {
			return true
		}
	}
	return false
}

// missingSigns are the runners' words for a name the tests use that does
// not exist, per language.
var missingSigns = []string{
	// Go
	"undefined: ", "has no field or method", "undefined (type",
	// Python
	"ModuleNotFoundError", "ImportError", "cannot import name", "NameError", "AttributeError: module",
	// JavaScript and TypeScript
	"does not provide an export named", "Cannot find module", "is not a function", "is not defined",
	"is not a constructor", "Failed to resolve import", "Failed to load url",
	// Rust
	"cannot find function", "cannot find value", "cannot find type", "cannot find struct",
	"unresolved import", "no function or associated item named", "no method named",
	"error[E0425]", "error[E0432]", "error[E0433]", "error[E0412]", "error[E0599]",
	// Compilers of projects run through a JUnit report: javac, kotlinc, C#
	"cannot find symbol", "Unresolved reference", "does not exist in the current context", "could not be found (are you missing",
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
	// TestCmd replaces the runner's command; it runs through sh -c. Without
	// Report its output is read with the runner's conventions.
	TestCmd string
	// Report names the report TestCmd writes, as FORMAT:PATH with PATH
	// relative to the project: "junit:build/test-results.xml". With a
	// report, the report decides the outcome (the kind still chooses the
	// lint step). The file must be written by the run: a report left from
	// an earlier run is not read. PATH may be a directory (ending in "/",
	// or one that exists): every *.xml report the run writes there is read,
	// as Maven and Gradle write one per test class. A report the run creates
	// inside the project is removed once read, so it never becomes part of
	// a change.
	Report  string
	Timeout time.Duration
	// Checkout is the user's checkout when the tests run in a worktree made
	// from it: a virtual environment there (.venv, venv), which git leaves
	// out of the worktree as an ignored directory, runs the worktree's
	// Python tests and lint when the worktree has none of its own.
	Checkout string
	// Environ is the environment to start from, os.Environ() by default;
	// the sandbox passes only its allowlist of it.
	Environ  []string
	LookPath func(string) (string, error)
	// Sandbox confines every process the runner starts. Required: Run and
	// Lint fail with ErrNoSandbox without one.
	Sandbox *sandbox.Sandbox
	// Caches is the run's cache layer (Go's build cache, cargo's target
	// directories), made from the seeds on first use; "" makes a fresh
	// layer for each process, in its jail.
	Caches string
	// Seeds holds the trusted caches layers are made from; default
	// DefaultSeeds(Environ). Only CheckBaseline writes them.
	Seeds string
}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Environ == nil {
		o.Environ = os.Environ()
	}
	if o.LookPath == nil {
		o.LookPath = exec.LookPath
	}
	return o
}

// New returns the runner called kind (see Kinds). With opts.Report the
// outcome comes from that report whatever the kind.
func New(kind string, opts Options) (Runner, error) {
	opts = opts.withDefaults()
	if !slices.Contains(Kinds(), kind) {
		return nil, fmt.Errorf("unknown test runner %q: use one of %s", kind, strings.Join(Kinds(), ", "))
	}
	if opts.Report != "" || kind == KindJUnit {
		rep, err := parseReport(opts.Report)
		if err != nil {
			return nil, err
		}
		if opts.TestCmd == "" {
			return nil, fmt.Errorf("a report (%s) needs the command that writes it: pass --test-cmd", opts.Report)
		}
		return &reportRunner{kind: kind, opts: opts, report: rep}, nil
	}
	switch kind {
	case KindPytest:
		return &pytest{opts: opts}, nil
	case KindGo:
		return &goTest{opts: opts}, nil
	case KindNode, KindVitest, KindJest:
		return &jsRunner{kind: kind, opts: opts}, nil
	case KindCargo:
		return &cargo{opts: opts}, nil
	}
	return nil, fmt.Errorf("unknown test runner %q", kind)
}

// getenv reads name from an environment list (the last value wins).
func getenv(environ []string, name string) string {
	v := ""
	for _, kv := range environ {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

// execResult is the raw outcome of one process.
type execResult struct {
	exitCode int
	timedOut bool
	start    time.Time
	duration time.Duration
}

// execute runs argv in the invocation's jail, with the runner's settings
// added to the environment, streaming its output to stdout and stderr (the
// same writer for both keeps their order), and kills the jail's process
// group, and with it every process of the jail, on timeout or
// cancellation. A non-zero exit is not an error; failing to start is.
func execute(ctx context.Context, inv *invocation, argv, settings []string, timeout time.Duration, stdout, stderr io.Writer) (execResult, error) {
	// What tools write beside the project when nothing tells them
	// otherwise goes to the jail: a file a run leaves in the worktree
	// makes it a run that changed the change, which never counts.
	droppings := []string{"COVERAGE_FILE=" + filepath.Join(inv.jail.Tmp, ".coverage")}
	cmd, err := inv.jail.Command(context.WithoutCancel(ctx), argv, inv.opts.Environ, append(droppings, settings...))
	if err != nil {
		return execResult{}, err
	}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// A descendant that left the group may hold the pipes open: stop
	// waiting for them a little after the process itself is gone.
	cmd.WaitDelay = 5 * time.Second
	res := execResult{start: time.Now()}
	if err := cmd.Start(); err != nil {
		return execResult{}, fmt.Errorf("start %s: %w", argv[0], err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
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
	res.duration = time.Since(res.start)
	var exitErr *exec.ExitError
	switch {
	case waitErr == nil:
	case errors.As(waitErr, &exitErr):
		res.exitCode = exitErr.ExitCode()
	case errors.Is(waitErr, exec.ErrWaitDelay):
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

// display keeps the first and last halves of a long output for display;
// it is safe for the two writers of a process.
type display struct {
	mu     sync.Mutex
	head   []byte
	ring   []byte // the last bytes, circular
	next   int    // where the ring writes next
	filled int    // bytes of the ring in use
	total  int64
	lines  int  // newlines written
	last   byte // the last byte written
}

const half = maxOutput / 2

func (d *display) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := len(p)
	d.total += int64(n)
	d.lines += bytes.Count(p, []byte{'\n'})
	if n > 0 {
		d.last = p[n-1]
	}
	if room := half - len(d.head); room > 0 {
		k := min(room, len(p))
		d.head = append(d.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	if d.ring == nil {
		d.ring = make([]byte, half)
	}
	if len(p) >= half {
		copy(d.ring, p[len(p)-half:])
		d.next, d.filled = 0, half
		return n, nil
	}
	for len(p) > 0 {
		k := copy(d.ring[d.next:], p)
		p = p[k:]
		d.next = (d.next + k) % half
		d.filled = min(d.filled+k, half)
	}
	return n, nil
}

// lineCount is how many lines were written (a last line without a
// newline counts).
func (d *display) lineCount() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.total > 0 && d.last != '\n' {
		return d.lines + 1
	}
	return d.lines
}

// dropped is how many bytes are not kept.
func (d *display) dropped() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.total - int64(len(d.head)) - int64(d.filled)
}

func (d *display) String() string {
	dropped := d.dropped()
	d.mu.Lock()
	defer d.mu.Unlock()
	var b strings.Builder
	b.Write(d.head)
	if dropped > 0 {
		fmt.Fprintf(&b, "\n... %d bytes of output omitted ...\n", dropped)
	}
	if d.filled == half {
		b.Write(d.ring[d.next:])
		b.Write(d.ring[:d.next])
	} else {
		b.Write(d.ring[:d.filled])
	}
	return b.String()
}

// lineWriter calls fn with every line written to it (without the newline),
// as the bytes arrive. A line longer than maxLine is cut to maxLine.
type lineWriter struct {
	fn   func(line []byte)
	buf  []byte
	long bool
}

const maxLine = 1 << 20

func newLineWriter(fn func([]byte)) *lineWriter { return &lineWriter{fn: fn} }

func (w *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.keep(p)
			break
		}
		w.keep(p[:i])
		w.emit()
		p = p[i+1:]
	}
	return n, nil
}

func (w *lineWriter) keep(p []byte) {
	if room := maxLine - len(w.buf); room < len(p) {
		p = p[:max(room, 0)]
		w.long = true
	}
	w.buf = append(w.buf, p...)
}

func (w *lineWriter) emit() {
	line := w.buf
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	w.fn(line)
	w.buf, w.long = w.buf[:0], false
}

// Close passes on a last line without a newline.
func (w *lineWriter) Close() error {
	if len(w.buf) > 0 || w.long {
		w.emit()
	}
	return nil
}

func shellCommand(cmd string) []string { return []string{"sh", "-c", cmd} }

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func found(lookPath func(string) (string, error), name string) bool {
	_, err := lookPath(name)
	return err == nil
}
