package testrun

import (
	"slices"
	"strings"
	"testing"
)

// The JUnit dialects of the runners that write it, read test by test.
func TestReadJUnitDialects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                             string
		report                           string
		passed, failed, errored, skipped int
		names                            []string // FailedTests: failed, then errored
		message                          string   // in a failure's message
		errs                             string   // in the error lines
		broken                           bool     // something outside any test
	}{
		{"pytest", seedPytestJUnit, 1, 1, 1, 1,
			[]string{"tests.test_calc.TestK > test_p[2]", "pytest > tests.test_bad"}, "assert 2 == 1", "ModuleNotFoundError", false},
		{"node: a file that cannot load, nested suites", seedNodeJUnit, 1, 1, 1, 1,
			[]string{"adds wrong", "exp/node/broken.test.js"}, "3 !== 4", "broken.test.js: [Error: test failed]", false},
		{"vitest: a file that cannot load", seedVitestJUnit, 1, 1, 1, 0,
			[]string{"calc.test.js > adds wrong", "broken2.test.js"}, "expected 3 to be 4", "Cannot find module", false},
		{"surefire: a flaky pass and an error", seedSurefire, 1, 0, 1, 0,
			[]string{"com.x.CalcTest > db"}, "refused", "ERROR com.x.CalcTest > db", true},
		{"jest-junit", `<testsuites name="jest tests" tests="3" failures="1" errors="0">
  <testsuite name="add" errors="0" failures="1" skipped="1" tests="3">
    <testcase classname="add adds" name="add adds" time="0.002"></testcase>
    <testcase classname="add adds wrong" name="add adds wrong" time="0.003"><failure>Error: expect(received).toBe(expected)

Expected: 4
Received: 3</failure></testcase>
    <testcase classname="add later" name="add later" time="0"><skipped/></testcase>
  </testsuite>
</testsuites>`, 1, 1, 0, 1, []string{"add adds wrong"}, "Expected: 4", "", false},
		{"jest-junit reporting a suite that failed to run", `<testsuites tests="0" failures="0" errors="1">
  <testsuite name="sub.test.js" errors="1" failures="0" skipped="0" tests="0">
    <testcase classname="Test suite failed to run" name="sub.test.js" time="0"><error>Cannot find module './sub' from 'sub.test.js'</error></testcase>
  </testsuite>
</testsuites>`, 0, 0, 1, 0, []string{"Test suite failed to run > sub.test.js"}, "Cannot find module", "Cannot find module './sub'", false},
		{"cargo-nextest", `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="nextest-run" tests="3" failures="1" errors="0" uuid="x" timestamp="2026-01-01T00:00:00Z" time="0.1">
    <testsuite name="calc" tests="2" disabled="0" errors="0" failures="1">
        <testcase name="tests::adds" classname="calc" timestamp="t" time="0.001"></testcase>
        <testcase name="tests::adds_wrong" classname="calc" timestamp="t" time="0.002">
            <failure type="test failure">thread &apos;tests::adds_wrong&apos; panicked at src/lib.rs:8:23:
assertion ` + "`left == right`" + ` failed</failure>
            <system-out>some output</system-out>
            <system-err>thread &apos;tests::adds_wrong&apos; panicked</system-err>
        </testcase>
    </testsuite>
    <testsuite name="calc::it" tests="1" disabled="0" errors="0" failures="0">
        <testcase name="multiplies" classname="calc::it" timestamp="t" time="0.001"/>
    </testsuite>
</testsuites>`, 2, 1, 0, 0, []string{"calc > tests::adds_wrong"}, "panicked at src/lib.rs:8:23", "", false},
		{"nested suites, system-out before and after the failure, CDATA", `<testsuites>
<testsuite name="all" tests="3" failures="1" errors="0">
  <testsuite name="CalcTest" tests="2" failures="1" errors="0">
    <testcase classname="CalcTest" name="adds"><system-out><![CDATA[<not a failure/>]]></system-out></testcase>
    <testcase classname="CalcTest" name="divides">
      <system-out>before</system-out>
      <failure message="expected: &lt;2&gt; but was: &lt;3&gt;" type="org.opentest4j.AssertionFailedError"><![CDATA[at CalcTest.divides(CalcTest.java:12)]]></failure>
      <system-err>after</system-err>
    </testcase>
  </testsuite>
  <testsuite name="OtherTest" tests="1"><testcase classname="OtherTest" name="ok"/></testsuite>
</testsuite>
</testsuites>`, 2, 1, 0, 0, []string{"CalcTest > divides"}, "expected: <2> but was: <3>\nat CalcTest.divides(CalcTest.java:12)", "", false},
		{"an error wins over a failure in one case, a failure over a skip", `<testsuite name="s">
<testcase classname="s" name="both"><failure message="f"/><error message="e"/></testcase>
<testcase classname="s" name="skipped then failed"><skipped/><failure message="late"/></testcase>
<testcase classname="s" name="rerun"><rerunFailure message="once"/></testcase>
</testsuite>`, 1, 1, 1, 0, []string{"s > skipped then failed", "s > both"}, "e", "ERROR s > both", false},
		{"a suite's error outside its cases", `<testsuite name="DbTest" tests="1" errors="1" failures="0"><testcase classname="DbTest" name="reads"/></testsuite>`,
			1, 0, 0, 0, nil, "", "suite DbTest: 1 errors outside any test case", true},
		{"a failure element of a suite", `<testsuites><testsuite name="setup"><error message="beforeAll hook failed"/><testcase classname="setup" name="a"/></testsuite></testsuites>`,
			1, 0, 0, 0, nil, "", "suite setup: beforeAll hook failed", true},
		{"zero tests", `<testsuites name="vitest tests" tests="0" failures="0" errors="0" time="0"></testsuites>`, 0, 0, 0, 0, nil, "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var tl tally
			if err := tallyJUnit(strings.NewReader(tt.report), &tl, junitName, "/tmp"); err != nil {
				t.Fatal(err)
			}
			if tl.passed != tt.passed || tl.failed != tt.failed || tl.errored != tt.errored || tl.skipped != tt.skipped {
				t.Errorf("passed %d failed %d errored %d skipped %d, want %d %d %d %d", tl.passed, tl.failed, tl.errored, tl.skipped, tt.passed, tt.failed, tt.errored, tt.skipped)
			}
			if got := append(append([]string(nil), tl.failedNames...), tl.erroredNames...); !slices.Equal(got, tt.names) {
				t.Errorf("names %q, want %q", got, tt.names)
			}
			if tt.message != "" && !slices.ContainsFunc(tl.failures, func(f Failure) bool { return strings.Contains(f.Message, tt.message) }) {
				t.Errorf("failures %+v lack %q", tl.failures, tt.message)
			}
			if tt.errs != "" && !slices.ContainsFunc(tl.errors, func(l string) bool { return strings.Contains(l, tt.errs) }) {
				t.Errorf("error lines %q lack %q", tl.errors, tt.errs)
			}
			if tl.broken != tt.broken {
				t.Errorf("broken %v, want %v (errors %q)", tl.broken, tt.broken, tl.errors)
			}
			// The rules: a red only without errors; never a green without a test.
			v := verdict{tally: tl, exitCode: 1}
			switch o := v.outcome(); {
			case tl.errored > 0 || tl.broken:
				if o != Broken {
					t.Errorf("outcome %s with errors", o)
				}
			case tl.failed > 0:
				if o != Fail {
					t.Errorf("outcome %s with failures only", o)
				}
			}
			if v.exitCode = 0; tl.passed == 0 && v.outcome() == Pass {
				t.Error("zero tests passed as green")
			}
		})
	}
}

// The console words that make a run broken whatever its report says.
func TestBrokenMark(t *testing.T) {
	t.Parallel()
	tests := []struct {
		line string
		want bool
	}{
		{"  ● Test suite failed to run", true},
		{"\x1b[1m\x1b[31m  \x1b[1m● \x1b[22m\x1b[1mTest suite failed to run\x1b[39m\x1b[22m", true},
		{"⎯⎯⎯⎯⎯⎯ Failed Suites 1 ⎯⎯⎯⎯⎯⎯⎯", true},
		{"⎯⎯⎯⎯⎯ Uncaught Exception ⎯⎯⎯⎯⎯", true},
		{"⎯⎯⎯⎯ Unhandled Rejection ⎯⎯⎯⎯", true},
		{"\x1b[31m⎯⎯⎯⎯⎯⎯\x1b[39m\x1b[1m\x1b[41m Unhandled Errors \x1b[49m\x1b[22m\x1b[31m⎯⎯⎯⎯⎯⎯\x1b[39m", true},
		{"_____________ ERROR collecting tests/test_calc.py _____________", true},
		{"ERROR collecting tests/test_calc.py", true},
		{"error: could not compile `calc` (test \"it\") due to 1 previous error", true},
		{"FAIL\texample.com/calc/sub [build failed]", true},
		{"FAIL\texample.com/calc [setup failed]", true},
		{"FAIL\texample.com/calc\t0.01s", false},
		{"    expect(log).toContain('● Test suite failed to run')", false},
		{"console.log: Uncaught Exception in my app", false},
		{"error: test failed, to rerun pass `--lib`", false},
		{"⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯", false},
		{"FAILED tests/test_calc.py::test_add - assert 3 == 4", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := brokenMark(tt.line); got != tt.want {
			t.Errorf("brokenMark(%q) = %v, want %v", tt.line, got, tt.want)
		}
	}
}
