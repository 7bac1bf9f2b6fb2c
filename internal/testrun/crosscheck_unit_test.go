package testrun

import (
	"slices"
	"strings"
	"testing"
)

func TestCrossCheckRules(t *testing.T) {
	t.Parallel()
	pass := func(n int) tally { return tally{passed: n} }
	failing := tally{passed: 2, failed: 1}
	console := func(p, f, e int) *counts { return &counts{p, f, e} }
	tests := []struct {
		name   string
		v      verdict
		w      witness
		broken bool
		says   string
	}{
		{"all three agree on a green", verdict{tally: pass(3)}, witness{runner: "pytest", report: "JUnit report", console: console(3, 0, 0), exitRule: true}, false, ""},
		{"all three agree on a red", verdict{tally: failing, exitCode: 1}, witness{runner: "pytest", report: "JUnit report", console: console(2, 1, 0), exitRule: true}, false, ""},
		{"no console summary: the exit code still agrees", verdict{tally: pass(3)}, witness{runner: "pytest", report: "JUnit report", exitRule: true}, false, ""},
		{"a report rewritten to a green", verdict{tally: pass(3), exitCode: 1}, witness{runner: "pytest", report: "JUnit report", console: console(2, 1, 0), exitRule: true}, true,
			"pytest's JUnit report says 3 passed, its console says 1 failed, 2 passed, and it exited 1: the report and the console disagree"},
		{"a report rewritten and the exit code forced", verdict{tally: pass(3)}, witness{runner: "pytest", report: "JUnit report", console: console(2, 1, 0), exitRule: true}, true,
			"its console says 1 failed, 2 passed, and it exited 0"},
		{"passes added to a report", verdict{tally: pass(5)}, witness{runner: "vitest", report: "JUnit report", console: console(3, 0, 0), exitRule: true}, true,
			"vitest's JUnit report says 5 passed, its console says 3 passed"},
		{"an error the report hides", verdict{tally: failing, exitCode: 1}, witness{runner: "pytest", report: "JUnit report", console: console(2, 1, 1), exitRule: true}, true,
			"its console says 1 failed, 1 error, 2 passed"},
		{"a failing run that exits 0", verdict{tally: failing}, witness{runner: "pytest", report: "JUnit report", exitRule: true}, true,
			"something changed the exit code"},
		{"a custom command may exit 0 with failures", verdict{tally: failing}, witness{runner: "pytest", report: "console"}, false, ""},
		{"tests passed but the runner failed, and the console agrees: the runner's own error", verdict{tally: pass(3), exitCode: 1},
			witness{runner: "jest", report: "JSON results", console: console(3, 0, 0), exitRule: true}, false, ""},
		{"one channel disagrees with itself", verdict{tally: pass(2)}, witness{runner: "go test", report: "event stream", exitRule: true, problem: "go's test events disagree with themselves: x"}, true,
			"go test's event stream says 2 passed, and it exited 0: go's test events disagree with themselves: x, so the run cannot count"},
		{"a broken run stays as it is", verdict{tally: tally{errored: 1}, exitCode: 2}, witness{runner: "pytest", report: "JUnit report", console: console(0, 0, 3), exitRule: true}, false, ""},
		{"a timed-out run stays as it is", verdict{tally: pass(3), timedOut: true}, witness{runner: "pytest", report: "JUnit report", console: console(1, 0, 0)}, false, ""},
		{"no tests stays as it is", verdict{}, witness{runner: "pytest", report: "JUnit report", console: console(1, 0, 0)}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			before := tt.v.outcome()
			v := tt.v
			crossCheck(&v, tt.w)
			if got := v.outcome() == Broken && before != Broken; got != tt.broken {
				t.Fatalf("broken = %v (outcome %s, was %s), want %v: %s", got, v.outcome(), before, tt.broken, v.disagreement)
			}
			if !strings.Contains(v.disagreement, tt.says) || (tt.says == "") != (v.disagreement == "") {
				t.Errorf("disagreement %q, want it to say %q", v.disagreement, tt.says)
			}
			if tt.broken {
				r := v.result("pytest", nil, execResult{exitCode: v.exitCode}, &display{})
				if r.Disagreement != v.disagreement || !strings.Contains(r.Summary, v.disagreement) || r.Errors[0] != clip(v.disagreement, maxErrorLine) {
					t.Errorf("result %+v does not carry the disagreement", r)
				}
			}
		})
	}
}

func TestPytestWitnessReadsTheSummaryLine(t *testing.T) {
	t.Parallel()
	for console, want := range map[string]*counts{
		"===== 1 failed, 2 passed, 1 skipped, 1 xfailed, 1 xpassed in 0.10s =====\n": {3, 1, 0},
		"= 3 passed, 2 warnings in 0.01s =\n":                                        {3, 0, 0},
		"=== 1 passed, 2 errors in 0.02s ===\n":                                      {1, 0, 2},
		"no summary here\n":                                                          nil,
	} {
		w := pytestWitness(true, console, true)
		if (w.console == nil) != (want == nil) || w.console != nil && *w.console != *want {
			t.Errorf("%q: console %v, want %v", console, w.console, want)
		}
	}
	if w := pytestWitness(false, "= 3 passed in 0.01s =\n", true); w.console != nil {
		t.Error("a run read from its console has no second witness in it")
	}
}

func TestJSWitnessReadsTheSummary(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kind, console string
		want          *counts
	}{
		{KindNode, "ℹ tests 3\nℹ suites 0\nℹ pass 2\nℹ fail 1\nℹ cancelled 0\nℹ skipped 1\n", &counts{2, 1, 0}},
		// A file that ran no test passes as a "test" named by its path.
		{KindNode, "✔ adds (13.8ms)\n✔ /tmp/my project/multiply.test.js (226.0ms)\nℹ tests 2\nℹ pass 2\nℹ fail 0\n", &counts{1, 0, 0}},
		{KindVitest, " Test Files  1 failed (1)\n      Tests  1 failed | 2 passed | 1 skipped (4)\n", &counts{2, 1, 0}},
		{KindJest, "Tests:       1 failed, 2 passed, 3 total\n", &counts{2, 1, 0}},
		{KindJest, "nothing\n", nil},
	}
	for _, tt := range tests {
		w := jsWitness(tt.kind, tt.console, true)
		if (w.console == nil) != (tt.want == nil) || w.console != nil && *w.console != *tt.want {
			t.Errorf("%s %q: console %v, want %v", tt.kind, tt.console, w.console, tt.want)
		}
	}
}

func TestGoWitness(t *testing.T) {
	t.Parallel()
	run := `{"Action":"run","Package":"p","Test":"TestA"}`
	frame := func(word string) string {
		return `{"Action":"output","Package":"p","Test":"TestA","Output":"--- ` + word + `: TestA (0.00s)\n"}`
	}
	genuine := []string{`{"Action":"start","Package":"p"}`, run, frame("PASS"), `{"Action":"pass","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Output":"ok  \tp\t0.01s\n"}`, `{"Action":"pass","Package":"p"}`}
	tests := []struct {
		name  string
		lines []string
		says  string
	}{
		{"genuine", genuine, ""},
		{"a result twice", append(genuine[:4:4], `{"Action":"pass","Package":"p","Test":"TestA"}`), "TestA's result came twice"},
		{"a result without its run", []string{`{"Action":"pass","Package":"p","Test":"TestB"}`}, "TestB passed without running"},
		{"a result its output contradicts", []string{run, frame("FAIL"), `{"Action":"pass","Package":"p","Test":"TestA"}`}, `TestA passed, but its output says "fail"`},
		{"a package passing with a failing test", []string{run, frame("FAIL"), `{"Action":"fail","Package":"p","Test":"TestA"}`, `{"Action":"pass","Package":"p"}`},
			"package p passed with a failing test"},
		{"a package result against go's line", []string{`{"Action":"output","Package":"p","Output":"FAIL\tp\t0.01s\n"}`, `{"Action":"pass","Package":"p"}`},
			"package p passed, but go's summary line says fail"},
		{"an event after the package's result", append(slices.Clone(genuine), `{"Action":"run","Package":"p","Test":"TestZ"}`), "an event of TestZ came after the package's result"},
		{"events among plain text", []string{"=== RUN   TestA", "--- FAIL: TestA (0.00s)", `{"Action":"run","Package":"p","Test":"TestA"}`}, "plain output holds lines shaped like go's test events"},
	}
	for _, tt := range tests {
		g := newGoWitness()
		for _, l := range tt.lines {
			g.line([]byte(l))
		}
		w := g.witness(true)
		if !strings.Contains(w.problem, tt.says) || (tt.says == "") != (w.problem == "") {
			t.Errorf("%s: problem %q, want %q", tt.name, w.problem, tt.says)
		}
	}
}

func TestLibtestWitness(t *testing.T) {
	t.Parallel()
	genuine := []string{"running 2 tests", "test a ... ok", "test b ... FAILED", "", "failures:", "", "test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s"}
	tests := []struct {
		name  string
		lines []string
		says  string
	}{
		{"genuine", genuine, ""},
		{"a summary of its own", []string{"running 3 tests", "test a ... ok", "test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s"},
			"a summary says 3 passed, 0 failed, 0 ignored where its test lines say 1, 0, 0"},
		{"a second summary", append(slices.Clone(genuine), "test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s"),
			"came without a test binary running"},
		{"a test line twice", []string{"running 1 test", "test a ... FAILED", "test a ... ok"}, "test a reported twice"},
		{"fewer than announced", []string{"running 3 tests", "test a ... ok", "test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s"},
			"a summary counts 1 tests of the 3 its binary announced"},
		{"ok with failures", []string{"running 1 test", "test a ... FAILED", "test result: ok. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s"},
			"a summary says ok with 1 failed"},
	}
	for _, tt := range tests {
		l := &libtestWitness{}
		for _, s := range tt.lines {
			l.line(s)
		}
		if w := l.witness(true); !strings.Contains(w.problem, tt.says) || (tt.says == "") != (w.problem == "") {
			t.Errorf("%s: problem %q, want %q", tt.name, w.problem, tt.says)
		}
	}
}

// FuzzWitnesses feeds any lines to the console readers: they never panic,
// and a problem, once found, is kept.
func FuzzWitnesses(f *testing.F) {
	f.Add("running 2 tests\ntest a ... ok\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n")
	f.Add(`{"Action":"run","Package":"p","Test":"T"}` + "\n" + `{"Action":"pass","Package":"p","Test":"T"}` + "\n--- PASS: T\n")
	f.Fuzz(func(t *testing.T, text string) {
		g, l := newGoWitness(), &libtestWitness{}
		var gp, lp string
		for _, line := range strings.Split(text, "\n") {
			g.line([]byte(line))
			l.line(line)
			if gp != "" && g.problem != gp || lp != "" && l.problem != lp {
				t.Fatal("a problem found was replaced")
			}
			gp, lp = g.problem, l.problem
		}
		_ = pytestWitness(true, text, true)
		_ = jsWitness(KindVitest, text, true)
		_ = jsWitness(KindNode, text, true)
	})
}
