package testrun

import (
	"fmt"
	"strings"

	"github.com/azero-dev/azero/internal/lazyre"
)

// What Feedback shows at most.
const (
	feedbackFailures     = 10 // failing tests shown with their messages
	feedbackMessageLines = 12 // lines of one failure's message (its backtrace apart)
	feedbackHead         = 4  // of which its first lines; the rest are its last
	feedbackNames        = 20 // names of the further failing tests
	feedbackErrors       = 30 // runner error lines
	feedbackTail         = 40 // lines of the end of the output
	feedbackTraces       = 40 // backtrace lines, last
)

// Feedback is what a model is shown of a run that did not go as it had to
// (the one place that decides it: callers show it as it is, never cut it
// again): the summary; every failing test's name and the message of its
// assertion, the first feedbackFailures with their messages and the rest
// by name, with true counts ("… and 26 more" after 10 of 36); the runner's
// own error lines; the end of its output ("(N lines omitted)" with the
// real N, counted over everything it printed); and last the backtraces
// cut out of the messages, the part least often needed. Lines that only
// advertise more noise ("run with RUST_BACKTRACE=1 ...") are left out.
func (r Result) Feedback() string {
	var b strings.Builder
	b.WriteString(r.Summary + "\n")
	var traces []string
	if failing := r.Failed + r.Errored; len(r.Failures) > 0 {
		shown := r.Failures[:min(len(r.Failures), feedbackFailures)]
		fmt.Fprintf(&b, "\nFailing tests (%d):\n", failing)
		for _, f := range shown {
			word := "FAIL"
			if f.Error {
				word = "ERROR"
			}
			fmt.Fprintf(&b, "%s %s\n", word, f.Test)
			main, trace := splitTrace(f.Message)
			for _, l := range headAndTail(main, feedbackHead, feedbackMessageLines-feedbackHead) {
				b.WriteString("    " + l + "\n")
			}
			if len(trace) > 0 {
				traces = append(traces, "in "+f.Test+":")
				traces = append(traces, trace...)
			}
		}
		if rest := failing - len(shown); rest > 0 {
			var names []string
			for _, n := range r.FailedTests {
				if !shownFailure(shown, n) && len(names) < feedbackNames {
					names = append(names, n)
				}
			}
			fmt.Fprintf(&b, "… and %d more", rest)
			if len(names) > 0 {
				fmt.Fprintf(&b, ": %s", strings.Join(names, ", "))
				if unnamed := rest - len(names); unnamed > 0 {
					fmt.Fprintf(&b, " and %d others", unnamed)
				}
			}
			b.WriteString("\n")
		}
	}
	if len(r.Errors) > 0 {
		b.WriteString("\nThe runner's errors:\n")
		shown := r.Errors[:min(len(r.Errors), feedbackErrors)]
		for _, l := range shown {
			if !noise(l) {
				b.WriteString(l + "\n")
			}
		}
		if more := len(r.Errors) - len(shown) + r.MoreErrors; more > 0 {
			fmt.Fprintf(&b, "… and %d more error lines\n", more)
		}
	}
	if tail, omitted := r.outputTail(feedbackTail); len(tail) > 0 {
		b.WriteString("\nThe end of the runner's output")
		if omitted > 0 {
			fmt.Fprintf(&b, " (%d lines omitted)", omitted)
		}
		b.WriteString(":\n" + strings.Join(tail, "\n") + "\n")
	}
	if len(traces) > 0 {
		b.WriteString("\nBacktraces:\n")
		if len(traces) > feedbackTraces {
			traces = append(traces[:feedbackTraces:feedbackTraces], fmt.Sprintf("… (%d more lines)", len(traces)-feedbackTraces))
		}
		b.WriteString(strings.Join(traces, "\n") + "\n")
	}
	return b.String()
}

// headAndTail keeps the first head and last tail lines of lines, saying
// how many are left out between them: a message says what failed at its
// start (JavaScript's AssertionError) or at its end (a Go test's t.Errorf
// after its logs, a Rust panic after the test's own output).
func headAndTail(lines []string, head, tail int) []string {
	if len(lines) <= head+tail+1 {
		return lines
	}
	out := append([]string(nil), lines[:head]...)
	out = append(out, fmt.Sprintf("… (%d lines omitted)", len(lines)-head-tail))
	return append(out, lines[len(lines)-tail:]...)
}

func shownFailure(shown []Failure, name string) bool {
	for _, f := range shown {
		if f.Test == name {
			return true
		}
	}
	return false
}

// outputTail returns the last n lines of the runner's output (without
// azero's digest, which Feedback shows better, and without noise), and
// how many of the lines the runner printed are not among them.
func (r Result) outputTail(n int) ([]string, int) {
	out := r.Output
	if i := strings.LastIndex(out, "\n--- azero: "); i >= 0 {
		out = out[:i]
	}
	out = strings.TrimRight(out, "\n")
	if strings.TrimSpace(out) == "" {
		return nil, 0
	}
	lines := strings.Split(out, "\n")
	total := max(r.OutputLines, len(lines))
	// Only the lines after the cut of a long output are its last lines;
	// the first of them may be cut in the middle.
	for i := len(lines) - 1; i >= 0; i-- {
		if omittedMark().MatchString(lines[i]) {
			lines = lines[min(i+2, len(lines)):]
			break
		}
	}
	var kept []string
	for i := len(lines) - 1; i >= 0 && len(kept) < n; i-- {
		if !noise(lines[i]) {
			kept = append(kept, lines[i])
		}
	}
	for i, j := 0, len(kept)-1; i < j; i, j = i+1, j-1 {
		kept[i], kept[j] = kept[j], kept[i]
	}
	return kept, max(total-len(kept), 0)
}

var omittedMark = lazyre.New(`^\.\.\. \d+ bytes of output omitted \.\.\.$`)

// noise reports whether a line only advertises more output.
func noise(line string) bool {
	t := strings.TrimSpace(line)
	return strings.HasPrefix(t, "note: run with `RUST_BACKTRACE=1`") || strings.HasPrefix(t, "note: Some details are omitted, run with `RUST_BACKTRACE=full`")
}

var (
	jsFrame     = lazyre.New(`^\s+at \S`)
	pyFrame     = lazyre.New(`^\s*File "[^"]*", line \d+`)
	goroutine   = lazyre.New(`^goroutine \d+ \[`)
	pyErrorLine = lazyre.New(`^E\s`)
	pyLocation  = lazyre.New(`^\S+\.py:\d+: \w`)
	// goProgress: go test's lines around a test's own output, which
	// repeat its name.
	goProgress = lazyre.New(`^\s*(=== (RUN|PAUSE|CONT|NAME)|--- (FAIL|PASS|SKIP):) `)
)

// splitTrace splits a failure's message into what it says (the assertion,
// the values) and its backtrace: stack frames of JavaScript ("    at
// f (file.js:1:2)"), a Go panic's goroutine dump, Rust's "stack
// backtrace:", Python's traceback frames; for a pytest report (its "E"
// lines), the source it quotes around them is the trace, and the "E"
// lines and the failing line's location are what it says.
func splitTrace(msg string) (main, trace []string) {
	lines := strings.Split(strings.TrimRight(msg, "\n"), "\n")
	if strings.TrimSpace(msg) == "" {
		return nil, nil
	}
	pytest := false
	for _, l := range lines {
		if pyErrorLine().MatchString(l) {
			pytest = true
			break
		}
	}
	rest := false // the rest of the message is a trace
	for _, l := range lines {
		switch {
		case noise(l), goProgress().MatchString(l):
		case rest:
			trace = append(trace, l)
		case goroutine().MatchString(l), strings.TrimSpace(l) == "stack backtrace:":
			rest = true
			trace = append(trace, l)
		case pytest:
			if pyErrorLine().MatchString(l) || pyLocation().MatchString(l) {
				main = append(main, l)
			} else if strings.TrimSpace(l) != "" {
				trace = append(trace, l)
			}
		case jsFrame().MatchString(l), pyFrame().MatchString(l):
			trace = append(trace, l)
		default:
			main = append(main, l)
		}
	}
	for len(main) > 0 && strings.TrimSpace(main[len(main)-1]) == "" {
		main = main[:len(main)-1]
	}
	return main, trace
}
