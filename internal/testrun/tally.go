package testrun

import (
	"fmt"
	"strconv"
	"strings"
)

// status is what happened to one test.
type status int

const (
	passed status = iota
	failed
	errored
	skipped
)

// tally is what a runner's report or output said, test by test. Every
// adapter fills one; verdict turns it into an Outcome by the package's
// rules.
type tally struct {
	passed, failed, errored, skipped int
	failedNames, erroredNames        []string
	failures                         []Failure
	errors                           []string
	moreErrors                       int // error lines not kept (beyond maxErrorLines)
	// broken: something outside any test could not build or load (a
	// compile error, a suite that failed to run).
	broken bool
	names  names // every test's name and outcome, for Result.Tests
}

// record counts one test; msg is kept for the first failures.
func (t *tally) record(name string, st status, msg string) {
	t.names.add(name, st)
	switch st {
	case passed:
		t.passed++
		return
	case skipped:
		t.skipped++
		return
	case failed:
		t.failed++
		if len(t.failedNames) < maxNames {
			t.failedNames = append(t.failedNames, name)
		}
	case errored:
		t.errored++
		if len(t.erroredNames) < maxNames {
			t.erroredNames = append(t.erroredNames, name)
		}
	}
	if len(t.failures) < maxFailures {
		t.failures = append(t.failures, Failure{Test: name, Error: st == errored, Message: clipMiddle(msg, maxMessage)})
	}
}

// errorLine keeps one of the runner's own error lines.
func (t *tally) errorLine(line string) {
	line = strings.TrimRight(line, " \t\r")
	if line == "" {
		return
	}
	if len(t.errors) >= maxErrorLines {
		t.moreErrors++
		return
	}
	t.errors = append(t.errors, clip(line, maxErrorLine))
}

// verdict is everything an Outcome is decided from.
type verdict struct {
	tally
	exitCode int
	timedOut bool
	// unusable: the runner says the tests cannot run (a usage error, a
	// collection error it reports only through its exit code, no report
	// after a failed run).
	unusable bool
	// crashed: the runner itself failed (an internal error, an interruption).
	crashed bool
	// quiet: the console need not show what failed (a command whose
	// report says it): the output always ends with the digest.
	quiet bool
	// disagreement says how the run's report, console and exit code
	// disagree (see crossCheck); the run is broken then.
	disagreement string
}

// outcome applies the package's rules, in the order documented there.
func (v verdict) outcome() Outcome {
	switch {
	case v.timedOut:
		return Error
	case v.broken || v.errored > 0 || v.unusable:
		return Broken
	case v.crashed:
		return Error
	case v.failed > 0:
		return Fail
	case v.exitCode != 0:
		return Error
	case v.passed == 0:
		return NoTests
	default:
		return Pass
	}
}

// result builds the Result of a run from its verdict and displayed output.
func (v verdict) result(runner string, argv []string, x execResult, out *display) Result {
	r := Result{
		Runner: runner, Command: argv, ExitCode: x.exitCode, Outcome: v.outcome(),
		Passed: v.passed, Failed: v.failed, Errored: v.errored, Skipped: v.skipped,
		FailedTests: append(append([]string(nil), v.failedNames...), v.erroredNames...),
		Failures:    v.failures, Errors: v.errors, MoreErrors: v.moreErrors,
		TimedOut: x.timedOut, Duration: x.duration, DurationMS: x.duration.Milliseconds(),
		Disagreement: v.disagreement, Tests: v.names.tests(),
	}
	r.Output, r.OutputLines = out.String(), out.lineCount()
	if digest := v.digest(r.Outcome); digest != "" && (v.quiet || out.dropped() > 0 || strings.Count(r.Output, "\n") > digestAfterLines) {
		r.Output += digest
	}
	r.Summary = summarize(r, v.detail(r.Outcome))
	return r
}

// digestAfterLines: a longer output ends with a digest of what failed, as
// readers (and prompts) look at a log's end.
const digestAfterLines = 150

// digest lists the errors and failures compactly.
func (v verdict) digest(o Outcome) string {
	if o != Fail && o != Broken && o != Error {
		return ""
	}
	if len(v.errors) == 0 && len(v.failures) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n--- azero: %s ---\n", v.counts())
	for _, e := range v.errors {
		b.WriteString(e + "\n")
	}
	for i, f := range v.failures {
		if i == 10 {
			// The true number: failures keeps only the first maxFailures.
			fmt.Fprintf(&b, "... and %d more\n", v.failed+v.errored-i)
			break
		}
		word := "FAIL"
		if f.Error {
			word = "ERROR"
		}
		fmt.Fprintf(&b, "%s %s\n", word, f.Test)
		if f.Message != "" {
			b.WriteString(indent(headLines(f.Message, 20), "    ") + "\n")
		}
	}
	return b.String()
}

func (v verdict) counts() string {
	parts := []string{strconv.Itoa(v.failed) + " failed", strconv.Itoa(v.passed) + " passed"}
	if v.errored > 0 {
		parts = append(parts, strconv.Itoa(v.errored)+" errors")
	}
	if v.skipped > 0 {
		parts = append(parts, strconv.Itoa(v.skipped)+" skipped")
	}
	return strings.Join(parts, ", ")
}

// detail is the Summary's explanation.
func (v verdict) detail(o Outcome) string {
	switch o {
	case Pass:
		return v.counts()
	case NoTests:
		return "no tests ran"
	case Fail:
		return v.counts() + ": " + strings.Join(first(v.failedNames, 5), " ")
	case Broken:
		if v.disagreement != "" {
			return v.disagreement
		}
		what := "the tests cannot run"
		if len(v.erroredNames) > 0 {
			what += " (" + strconv.Itoa(v.errored) + " errors: " + strings.Join(first(v.erroredNames, 3), " ") + ")"
		}
		if len(v.errors) > 0 {
			what += ": " + firstErrorLine(v.errors)
		}
		return what
	case Error:
		if v.timedOut {
			return ""
		}
		if v.failed == 0 && v.errored == 0 && v.exitCode != 0 && !v.crashed {
			return "the runner failed although no test failed (" + v.counts() + ")"
		}
		if len(v.errors) > 0 {
			return firstErrorLine(v.errors)
		}
	}
	return ""
}

// firstErrorLine picks the most telling line: one naming a place or an
// error (not a runner's heading such as jest's "● Test suite failed to
// run"), else the first.
func firstErrorLine(lines []string) string {
	for _, l := range lines {
		if brokenMark(l) {
			continue
		}
		if strings.Contains(l, "rror") || strings.Contains(l, "undefined") || strings.Contains(l, "annot") {
			return strings.TrimSpace(l)
		}
	}
	return strings.TrimSpace(lines[0])
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

func first(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], "...")
	}
	return s
}

// clip cuts s to at most n bytes, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// clipMiddle cuts s to about n bytes, keeping its start and, longer, its
// end, on rune boundaries: a failure says what failed at its start (an
// assertion error) or at its end (a Go test's t.Errorf after its logs, a
// Rust panic after the test's output).
func clipMiddle(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head, tail := n/4, len(s)-(n-n/4)
	for head > 0 && s[head]&0xC0 == 0x80 {
		head--
	}
	for tail < len(s) && s[tail]&0xC0 == 0x80 {
		tail++
	}
	return s[:head] + fmt.Sprintf("\n… (%d bytes omitted) …\n", tail-head) + s[tail:]
}

func headLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append(lines[:n:n], "…")
	}
	return strings.Join(lines, "\n")
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}
