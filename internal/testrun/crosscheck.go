package testrun

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/azero-dev/azero/internal/lazyre"
)

// A run speaks through channels the tested code can reach: the report is
// a file it can rewrite after the runner wrote it (a conftest.py atexit
// hook, a Node exit hook), the exit code is what an exit hook makes it,
// and the console is a pipe it can write into (go test's stdout through
// /proc/PPID/fd/1, a Rust test writing to fd 1 past libtest's capture).
// Each adapter reads the report; crossCheck then holds it against the
// console's own summary and the exit code, and a run whose witnesses
// disagree is Broken: it never counts as a green (nor as a red).

// witness is what one run said about itself, besides its report (the
// verdict's tally).
type witness struct {
	runner string // "pytest"
	report string // what the tally was read from: "JUnit report", "event stream"
	// console is the console's own summary of the run; nil when it printed
	// none, or azero knows no summary of this runner.
	console *counts
	// exitRule: the runner exits 0 exactly when no test failed or errored
	// (false for a custom command, whose script may say otherwise).
	exitRule bool
	// problem is a disagreement found within one channel: go's test events
	// with themselves, libtest's test lines with its summary.
	problem string
}

// counts are a summary's numbers.
type counts struct{ passed, failed, errored int }

func (c counts) String() string {
	var parts []string
	if c.failed > 0 {
		parts = append(parts, strconv.Itoa(c.failed)+" failed")
	}
	if c.errored > 0 {
		parts = append(parts, plural(c.errored, "error", "errors"))
	}
	return strings.Join(append(parts, strconv.Itoa(c.passed)+" passed"), ", ")
}

// crossCheck makes v Broken when its witnesses disagree. It looks only at
// runs whose outcome means something (a green, a red, or a run that
// failed although its report says every test passed), as any other
// outcome already does not count.
func crossCheck(v *verdict, w witness) {
	report := counts{v.passed, v.failed, v.errored}
	failing := report.failed+report.errored > 0
	switch o := v.outcome(); {
	case o == Pass, o == Fail:
	case o == Error && !v.timedOut && !v.crashed && !failing && v.exitCode != 0:
	default:
		return
	}
	says := fmt.Sprintf("%s's %s says %s", w.runner, w.report, report)
	if w.console != nil {
		says += fmt.Sprintf(", its console says %s", w.console)
	}
	says += fmt.Sprintf(", and it exited %d", v.exitCode)
	var why string
	switch {
	case w.problem != "":
		why = w.problem
	case w.console != nil && *w.console != report:
		why = "the report and the console disagree: something changed the report after the run, or printed a summary of its own"
	case w.exitRule && failing && v.exitCode == 0:
		why = "a run with failing tests exits non-zero: something changed the exit code (an exit hook)"
	case w.exitRule && w.console != nil && w.console.failed+w.console.errored > 0 && v.exitCode == 0:
		why = "a run with failing tests exits non-zero: something changed the exit code (an exit hook)"
	default:
		return
	}
	v.broken = true
	v.disagreement = says + ": " + why + ", so the run cannot count"
	v.errors = append([]string{clip(v.disagreement, maxErrorLine)}, v.errors...)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// pytestWitness: the console's last summary line ("1 failed, 2 passed in
// 0.03s"), an xpassed test counted as passed as the JUnit report counts
// it; pytest exits 0 exactly when every test passed (5, no tests, is read
// as 0 already).
func pytestWitness(fromReport bool, console string, own bool) witness {
	w := witness{runner: "pytest", report: "JUnit report", exitRule: own}
	if !fromReport {
		w.report = "console"
		return w
	}
	m := summaryLine().FindAllStringSubmatch(console, -1)
	if len(m) == 0 {
		return w
	}
	var c counts
	for _, n := range pytestCountRe().FindAllStringSubmatch(m[len(m)-1][1], -1) {
		k, _ := strconv.Atoi(n[1])
		switch n[2] {
		case "passed", "xpassed":
			c.passed += k
		case "failed":
			c.failed += k
		case "error", "errors":
			c.errored += k
		}
	}
	w.console = &c
	return w
}

var (
	pytestCountRe = lazyre.New(`(\d+) (passed|xpassed|failed|errors?)\b`)
	nodeFilePass  = lazyre.New(`(?m)^\s*✔ (/|file://|[A-Za-z]:[\\/]).* \([\d.]+m?s\)\s*$`)
)

// jsWitness: the summary node's spec reporter, vitest and jest print
// ("ℹ pass 2", " Tests  1 failed | 2 passed (3)", "Tests: 1 failed, 2
// passed, 3 total"); each exits 0 exactly when no test failed.
func jsWitness(kind, console string, own bool) witness {
	w := witness{runner: kind, report: "JUnit report", exitRule: own}
	if kind == KindJest {
		w.report = "JSON results"
	}
	var c counts
	seen := false
	switch kind {
	case KindNode:
		for _, m := range nodeCountRe().FindAllStringSubmatch(console, -1) {
			n, _ := strconv.Atoi(m[2])
			switch m[1] {
			case "pass":
				c.passed, seen = n, true
			case "fail":
				c.failed, seen = n, true
			}
		}
		// node counts a test file that ran no test (one that ended early)
		// as a passing test named by its path; the report's reading
		// leaves those out.
		c.passed -= len(nodeFilePass().FindAllString(console, -1))
	default:
		re := vitestTestsRe
		if kind == KindJest {
			re = jestTestsRe
		}
		if m := re().FindAllStringSubmatch(console, -1); len(m) > 0 {
			seen = true
			for _, n := range countWordRe().FindAllStringSubmatch(m[len(m)-1][1], -1) {
				k, _ := strconv.Atoi(n[1])
				switch n[2] {
				case "passed":
					c.passed = k
				case "failed":
					c.failed = k
				}
			}
		}
	}
	if seen {
		w.console = &c
	}
	return w
}

// goWitness reads go test's stdout a second time, for what the events say
// of themselves: a test's result comes once, after the test ran and
// printed its "--- PASS"/"--- FAIL" line; a package's once, after its
// tests, agreeing with them and with go's own "ok"/"FAIL" line. In a
// command's plain text output (no -json), lines shaped like events were
// printed by the tests.
type goWitness struct {
	ran     map[string]bool   // package\x00test: a "run" event came
	framed  map[string]string // package\x00test: the framing line's result ("pass", "fail", "skip")
	ended   map[string]string // package\x00test, or package\x00 for a package: its result
	failed  map[string]bool   // packages with a failing test
	okLine  map[string]string // package: "pass" or "fail" from go's summary line
	plain   bool              // a plain go test text line on stdout
	events  int
	problem string
}

func newGoWitness() *goWitness {
	return &goWitness{ran: map[string]bool{}, framed: map[string]string{}, ended: map[string]string{},
		failed: map[string]bool{}, okLine: map[string]string{}}
}

var (
	goFrameRe   = lazyre.New(`^\s*--- (PASS|FAIL|SKIP): (\S+)`)
	goSummaryRe = lazyre.New(`^(ok|FAIL)\s+(\S+)`)
)

func (g *goWitness) line(line []byte) {
	var ev testEvent
	if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil || ev.Action == "" {
		if goFrameRe().Match(line) || goSummaryRe().Match(line) {
			g.plain = true
		}
		return
	}
	g.events++
	key := ev.Package + "\x00" + ev.Test
	if g.ended[ev.Package+"\x00"] != "" {
		g.found(fmt.Sprintf("an event of %s came after the package's result", name(ev)))
	}
	switch ev.Action {
	case "run":
		g.ran[key] = true
	case "output":
		if m := goFrameRe().FindStringSubmatch(ev.Output); m != nil && ev.Test != "" {
			g.framed[key] = strings.ToLower(m[1])
		}
		if m := goSummaryRe().FindStringSubmatch(ev.Output); m != nil && ev.Test == "" {
			g.okLine[ev.Package] = map[string]string{"ok": "pass", "FAIL": "fail"}[m[1]]
		}
	case "pass", "fail", "skip":
		switch {
		case g.ended[key] != "":
			g.found(fmt.Sprintf("%s's result came twice (%s, then %s)", name(ev), g.ended[key], ev.Action))
		case ev.Test != "" && !g.ran[key]:
			g.found(fmt.Sprintf("%s %sed without running", name(ev), ev.Action))
		case ev.Test != "" && g.framed[key] != ev.Action:
			g.found(fmt.Sprintf("%s %sed, but its output says %q", name(ev), ev.Action, g.framed[key]))
		case ev.Test == "" && ev.Action == "pass" && g.failed[ev.Package]:
			g.found(fmt.Sprintf("package %s passed with a failing test", ev.Package))
		case ev.Test == "" && g.okLine[ev.Package] != "" && g.okLine[ev.Package] != ev.Action:
			g.found(fmt.Sprintf("package %s %sed, but go's summary line says %s", ev.Package, ev.Action, g.okLine[ev.Package]))
		}
		g.ended[key] = ev.Action
		if ev.Action == "fail" && ev.Test != "" {
			g.failed[ev.Package] = true
		}
	}
}

func name(ev testEvent) string {
	if ev.Test == "" {
		return "package " + ev.Package
	}
	return ev.Test
}

func (g *goWitness) found(problem string) {
	if g.problem == "" {
		g.problem = "go's test events disagree with themselves: " + problem
	}
}

// witness is what the events said; own: azero ran `go test -json`.
func (g *goWitness) witness(own bool) witness {
	w := witness{runner: "go test", report: "event stream", exitRule: own, problem: g.problem}
	if g.events > 0 && g.plain && w.problem == "" {
		w.problem = "its plain output holds lines shaped like go's test events, which the tests printed"
	}
	if g.events == 0 {
		w.report = "console"
	}
	return w
}

// libtestWitness reads cargo test's console a second time: each test
// binary announces its tests ("running 3 tests"), reports each once
// ("test a ... ok") and sums them up ("test result: ok. 3 passed; 0
// failed; 0 ignored"); a summary whose numbers are not the lines above it,
// or that comes without its binary, was printed by a test.
type libtestWitness struct {
	open                    bool
	announced               int
	passed, failed, ignored int
	seen                    map[string]bool
	problem                 string
}

var libtestSummary = lazyre.New(`^test result: (ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored; (\d+) measured`)

func (l *libtestWitness) line(s string) {
	switch {
	case libtestRun().MatchString(s):
		l.open = true
		l.announced, _ = strconv.Atoi(libtestRun().FindStringSubmatch(s)[1])
		l.passed, l.failed, l.ignored, l.seen = 0, 0, 0, map[string]bool{}
	case l.open && libtestLine().MatchString(s):
		m := libtestLine().FindStringSubmatch(s)
		if l.seen[m[1]] {
			l.found(fmt.Sprintf("test %s reported twice", m[1]))
		}
		l.seen[m[1]] = true
		switch {
		case m[2] == "ok", strings.HasPrefix(m[2], "bench:"):
			l.passed++
		case m[2] == "FAILED":
			l.failed++
		default:
			l.ignored++
		}
	case libtestSummary().MatchString(s):
		m := libtestSummary().FindStringSubmatch(s)
		p, _ := strconv.Atoi(m[2])
		f, _ := strconv.Atoi(m[3])
		i, _ := strconv.Atoi(m[4])
		me, _ := strconv.Atoi(m[5])
		switch {
		case !l.open:
			l.found(fmt.Sprintf("%q came without a test binary running", s))
		case p != l.passed || f != l.failed || i != l.ignored:
			l.found(fmt.Sprintf("a summary says %d passed, %d failed, %d ignored where its test lines say %d, %d, %d", p, f, i, l.passed, l.failed, l.ignored))
		case p+f+i+me != l.announced:
			l.found(fmt.Sprintf("a summary counts %d tests of the %d its binary announced", p+f+i+me, l.announced))
		case (m[1] == "ok") != (f == 0):
			l.found(fmt.Sprintf("a summary says %s with %d failed", m[1], f))
		}
		l.open = false
	}
}

func (l *libtestWitness) found(problem string) {
	if l.problem == "" {
		l.problem = "libtest's console disagrees with itself: " + problem
	}
}

// witness is what the console said; own: azero ran `cargo test`.
func (l *libtestWitness) witness(own bool) witness {
	return witness{runner: "cargo test", report: "libtest output", exitRule: own, problem: l.problem}
}
