package testrun

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
)

type goTest struct{ opts Options }

func (g *goTest) Name() string { return "go" }

func (g *goTest) command() ([]string, error) {
	if g.opts.TestCmd != "" {
		return shellCommand(g.opts.TestCmd), nil
	}
	goBin, err := g.opts.LookPath("go")
	if err != nil {
		return nil, err
	}
	// -count=1: a result from the test cache is not a run of the tests.
	return []string{goBin, "test", "-json", "-count=1", "./..."}, nil
}

// testEvent is one line of `go test -json` (cmd/test2json).
type testEvent struct {
	Action      string
	Package     string
	Test        string
	Output      string
	FailedBuild string
	ImportPath  string
}

// goRun is what the event stream says.
type goRun struct {
	events       int
	passed       int
	failed       []string
	buildFailed  bool
	noTestFiles  bool
	text         strings.Builder
	nonJSONLines []string
}

func parseGoTestJSON(stdout []byte) goRun {
	var r goRun
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var ev testEvent
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil || ev.Action == "" {
			r.nonJSONLines = append(r.nonJSONLines, string(line))
			r.text.Write(line)
			r.text.WriteByte('\n')
			continue
		}
		r.events++
		switch ev.Action {
		case "output", "build-output":
			r.text.WriteString(ev.Output)
			if strings.Contains(ev.Output, "[no test files]") {
				r.noTestFiles = true
			}
			if strings.Contains(ev.Output, "[build failed]") || strings.Contains(ev.Output, "[setup failed]") {
				r.buildFailed = true
			}
		case "build-fail":
			r.buildFailed = true
		case "pass":
			if ev.Test != "" {
				r.passed++
			}
		case "fail":
			if ev.FailedBuild != "" {
				r.buildFailed = true
			}
			if ev.Test != "" {
				r.failed = append(r.failed, ev.Package+"."+ev.Test)
			}
		}
	}
	return r
}

func (g *goTest) Run(ctx context.Context, dir string) (Result, error) {
	argv, err := g.command()
	if err != nil {
		return Result{}, err
	}
	x, err := execute(ctx, dir, argv, cleanEnv(g.opts.Environ), g.opts.Timeout)
	if err != nil {
		return Result{}, err
	}
	run := parseGoTestJSON(x.stdout)
	out := run.text.String() + string(x.stderr)
	r := Result{Runner: g.Name(), Command: argv, ExitCode: x.exitCode, Output: out, Duration: x.duration,
		TimedOut: x.timedOut, Passed: run.passed, Failed: len(run.failed), FailedTests: run.failed}
	r.Outcome = classifyGo(x.exitCode, x.timedOut, run, string(x.stderr))
	r.Summary = summarize(r, goDetail(r, run))
	return r, nil
}

// classifyGo decides from the event stream; the exit code alone cannot
// tell a failing test from a package that does not compile.
func classifyGo(code int, timedOut bool, run goRun, stderr string) Outcome {
	text := run.text.String() + stderr
	buildFailed := run.buildFailed ||
		// Without -json events (a custom --test-cmd) fall back to go's text.
		(run.events == 0 && (strings.Contains(text, "[build failed]") || strings.Contains(text, "[setup failed]")))
	switch {
	case timedOut:
		return Error
	case buildFailed:
		return Broken
	case code == 0 && run.events == 0:
		return Pass // a custom command without -json that succeeded
	case code == 0 && run.passed > 0:
		return Pass
	case code == 0:
		return NoTests
	case len(run.failed) > 0, run.events == 0 && strings.Contains(text, "--- FAIL"):
		return Fail
	case strings.Contains(text, "no Go files") || strings.Contains(text, "matched no packages"):
		return NoTests
	default:
		return Error
	}
}

func goDetail(r Result, run goRun) string {
	switch r.Outcome {
	case Broken:
		return "the code or its tests do not build"
	case Fail:
		return strings.Join(append([]string{strconv.Itoa(len(run.failed)) + " failed, " + strconv.Itoa(run.passed) + " passed:"}, first(run.failed, 5)...), " ")
	case Pass:
		return strconv.Itoa(run.passed) + " passed"
	case NoTests:
		return "no tests ran"
	}
	return ""
}

func first(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], "...")
	}
	return s
}
