package testrun

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

type pytest struct{ opts Options }

func (p *pytest) Name() string { return "pytest" }

func (p *pytest) command() ([]string, error) {
	if p.opts.TestCmd != "" {
		return shellCommand(p.opts.TestCmd), nil
	}
	// -p no:cacheprovider: no .pytest_cache appears in the change set.
	args := []string{"-v", "--tb=short", "-rfE", "-p", "no:cacheprovider"}
	if path, err := p.opts.LookPath("pytest"); err == nil {
		return append([]string{path}, args...), nil
	}
	if path, err := p.opts.LookPath("python3"); err == nil {
		return append([]string{path, "-m", "pytest"}, args...), nil
	}
	return nil, fmt.Errorf("pytest not found: install it (pip install pytest, or apt-get install python3-pytest) or pass --test-cmd")
}

func (p *pytest) Run(ctx context.Context, dir string) (Result, error) {
	argv, err := p.command()
	if err != nil {
		return Result{}, err
	}
	env := cleanEnv(p.opts.Environ, "PYTHONDONTWRITEBYTECODE=1")
	x, err := execute(ctx, dir, argv, env, p.opts.Timeout)
	if err != nil {
		return Result{}, err
	}
	out := string(x.stdout) + string(x.stderr)
	r := Result{Runner: p.Name(), Command: argv, ExitCode: x.exitCode, Output: out, Duration: x.duration, TimedOut: x.timedOut}
	r.Passed, r.Failed = pytestCounts(out)
	r.FailedTests = pytestFailures(out)
	r.Outcome = classifyPytest(x.exitCode, x.timedOut, out)
	r.Summary = summarize(r, lastSummaryLine(out))
	return r, nil
}

// classifyPytest maps pytest's documented exit codes. Code 2 means either
// an interruption or errors while collecting tests (a syntax error or a
// failed import in a test file); the latter is broken tests, not a crash.
func classifyPytest(code int, timedOut bool, out string) Outcome {
	if timedOut {
		return Error
	}
	switch code {
	case 0:
		return Pass
	case 1:
		return Fail
	case 2:
		if collectionErrors.MatchString(out) {
			return Broken
		}
		return Error
	case 4:
		return Broken
	case 5:
		return NoTests
	default:
		return Error
	}
}

var (
	collectionErrors = regexp.MustCompile(`(?m)(\d+ errors? during collection|^ERROR collecting |^E\s+(SyntaxError|IndentationError|ImportError|ModuleNotFoundError))`)
	countRe          = regexp.MustCompile(`(\d+) (passed|failed|error|errors)\b`)
	failedLine       = regexp.MustCompile(`(?m)^(FAILED|ERROR) (\S+)`)
	summaryLine      = regexp.MustCompile(`(?m)^=+ (.*(passed|failed|error|errors|no tests ran|deselected|skipped).*) =+\s*$`)
)

func pytestCounts(out string) (passed, failed int) {
	m := summaryLine.FindAllStringSubmatch(out, -1)
	if len(m) == 0 {
		return 0, 0
	}
	for _, c := range countRe.FindAllStringSubmatch(m[len(m)-1][1], -1) {
		n, _ := strconv.Atoi(c[1])
		switch c[2] {
		case "passed":
			passed += n
		default:
			failed += n
		}
	}
	return passed, failed
}

func pytestFailures(out string) []string {
	var names []string
	seen := map[string]bool{}
	for _, m := range failedLine.FindAllStringSubmatch(out, -1) {
		if !seen[m[2]] {
			seen[m[2]] = true
			names = append(names, m[2])
		}
	}
	return names
}

func lastSummaryLine(out string) string {
	m := summaryLine.FindAllStringSubmatch(out, -1)
	if len(m) == 0 {
		return ""
	}
	return strings.TrimSpace(m[len(m)-1][1])
}

func summarize(r Result, detail string) string {
	s := fmt.Sprintf("%s exited %d (%s)", r.Runner, r.ExitCode, r.Outcome)
	if r.TimedOut {
		s = fmt.Sprintf("%s timed out after %s and was killed", r.Runner, r.Duration.Round(1e9))
	}
	if detail != "" {
		s += ": " + detail
	}
	return s
}
