package testrun

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Baseline is what the project's tests do before any change.
type Baseline struct {
	// Startable: the suite ran: it passed, some tests failed, or it has no
	// tests yet. Only then can a red and a green mean something.
	Startable bool `json:"startable"`
	// Result is the run, when the runner started.
	Result *Result `json:"result,omitempty"`
	// Problem says why the suite cannot start, with the runner's own
	// error lines.
	Problem string `json:"problem,omitempty"`
}

// ErrBaseline is wrapped by the error of a Baseline that cannot start.
var ErrBaseline = errors.New("the project's tests cannot run before any change")

// Err returns nil when the suite can start, else an error wrapping
// ErrBaseline that carries Problem.
func (b Baseline) Err() error {
	if b.Startable {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrBaseline, b.Problem)
}

// CheckBaseline runs the tests once in dir, which must hold the base
// commit (a fresh worktree before any model wrote to it), and says whether
// the suite can start at all: a missing runner, existing tests that cannot
// be imported or built, a usage error of the command, or a runner that
// crashes or hangs make every later red and green meaningless, so the
// workflow stops before the first model call. Failing tests or no tests
// are startable (Result says which: tests that fail already will have to
// pass for a green). The error is only for a cancelled ctx.
//
// The run's build caches are trusted (no model wrote anything yet): what
// it built is added to the seeds (Options.Seeds) later runs start from.
func CheckBaseline(ctx context.Context, r Runner, dir string) (Baseline, error) {
	res, err := r.Run(context.WithValue(ctx, baselineKey{}, true), dir)
	if err != nil {
		if ctx.Err() != nil {
			return Baseline{}, ctx.Err()
		}
		return Baseline{Problem: fmt.Sprintf("the %s runner cannot start: %v", r.Name(), err)}, nil
	}
	b := Baseline{Result: &res}
	switch res.Outcome {
	case Pass, Fail, NoTests:
		b.Startable = true
		return b, nil
	case Broken:
		b.Problem = "the existing tests cannot run: " + res.Summary
	default:
		b.Problem = "the test runner failed: " + res.Summary
	}
	var lines []string
	for _, l := range res.Errors {
		if !strings.Contains(res.Summary, strings.TrimSpace(l)) {
			lines = append(lines, l)
		}
	}
	if len(res.Errors) == 0 && !res.TimedOut {
		lines = lastLines(res.Output, 20)
	}
	if len(lines) > 0 {
		b.Problem += "\n" + strings.Join(lines, "\n")
	}
	return b, nil
}

func lastLines(s string, n int) []string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if len(lines) == 1 && lines[0] == "" {
		return nil
	}
	return lines
}
