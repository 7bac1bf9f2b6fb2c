package testrun_test

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/testenv"
	"github.com/azero-dev/azero/internal/testrun"
)

// What a model is shown of a failing run: every failing test's name and
// assertion first, true counts (36 failures: 10 shown, "… and 26 more";
// the lines left out of the output counted over all it printed), and the
// backtraces last.
func TestFeedbackOfARealRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// 36 failing cases, each printing a long log first, and a panic with
	// its goroutine dump in a test of its own.
	testenv.WriteFiles(t, dir, map[string]string{"go.mod": "module example.com/calc\n\ngo 1.22\n",
		"calc_test.go": "package calc\n\nimport (\n\t\"fmt\"\n\t\"testing\"\n)\n\n" +
			"func TestMul(t *testing.T) {\n\tfor i := range 36 {\n\t\tt.Run(fmt.Sprint(\"case\", i), func(t *testing.T) {\n\t\t\tfor j := range 200 {\n\t\t\t\tt.Log(\"noise\", j)\n\t\t\t}\n\t\t\tt.Errorf(\"mul(%d, 2) = 0, want %d\", i, 2*i)\n\t\t})\n\t}\n}\n\n" +
			"func TestOK(t *testing.T) {}\n"})
	r, err := testrun.New(testrun.KindGo, sandboxed(t, testrun.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Run(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != testrun.Fail || res.Failed != 37 {
		t.Fatalf("%s: %d failed\n%s", res.Summary, res.Failed, res.Output)
	}
	fb := res.Feedback()
	for _, want := range []string{"Failing tests (37):", "FAIL example.com/calc.TestMul/case0\n", "mul(0, 2) = 0, want 0", "… and 27 more: "} {
		if !strings.Contains(fb, want) {
			t.Errorf("feedback lacks %q:\n%s", want, fb)
		}
	}
	m := regexp.MustCompile(`The end of the runner's output \((\d+) lines omitted\):\n`).FindStringSubmatchIndex(fb)
	if m == nil {
		t.Fatalf("no count of the lines omitted:\n%s", fb)
	}
	omitted, _ := strconv.Atoi(fb[m[2]:m[3]])
	shown := strings.Count(strings.TrimRight(fb[m[1]:], "\n"), "\n") + 1
	if omitted+shown != res.OutputLines || res.OutputLines < 36*200 {
		t.Errorf("%d lines omitted and %d shown, of %d printed", omitted, shown, res.OutputLines)
	}
	// The digest appended to a long output says the true number too.
	if !strings.Contains(res.Output, "... and 27 more\n") {
		t.Errorf("the output's digest miscounts:\n%s", res.Output[max(0, len(res.Output)-2000):])
	}
}

func TestFeedbackPutsBacktracesLast(t *testing.T) {
	t.Parallel()
	res := testrun.Result{Summary: "cargo exited 101 (fail): 2 failed, 1 passed", Failed: 2, Passed: 1,
		FailedTests: []string{"tests/it.rs::a", "tests/it.rs::b"},
		Failures: []testrun.Failure{
			{Test: "tests/it.rs::a", Message: "thread 'a' panicked at tests/it.rs:3:5:\nassertion `left == right` failed\n  left: 1\n right: 2\nstack backtrace:\n   0: rust_begin_unwind\n   1: core::panicking::panic_fmt\nnote: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.\n"},
			{Test: "tests/it.rs::b", Message: "thread 'b' panicked at tests/it.rs:7:5:\nboom\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n"},
		},
		Output:      "running 3 tests\ntest a ... FAILED\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\ntest result: FAILED. 1 passed; 2 failed\n",
		OutputLines: 4,
	}
	fb := res.Feedback()
	assertion, trace := strings.Index(fb, "left: 1"), strings.Index(fb, "rust_begin_unwind")
	if assertion < 0 || trace < assertion || strings.Index(fb, "Backtraces:") > trace || strings.Index(fb, "The end of the runner's output") > trace {
		t.Errorf("the assertion is not first and the backtrace last:\n%s", fb)
	}
	if strings.Contains(fb, "RUST_BACKTRACE") {
		t.Errorf("the noise about RUST_BACKTRACE is shown:\n%s", fb)
	}
	if !strings.Contains(fb, "(1 lines omitted)") {
		t.Errorf("the line left out is not counted:\n%s", fb)
	}

	py := testrun.Result{Summary: "pytest exited 1 (fail)", Failed: 1, Failures: []testrun.Failure{{Test: "test_calc.py::test_mul",
		Message: "def test_mul():\n>       assert calc.mul(3, 4) == 12\nE       assert 0 == 12\nE        +  where 0 = <function mul>(3, 4)\n\ntest_calc.py:5: AssertionError"}}}
	fb = py.Feedback()
	if i, j := strings.Index(fb, "E       assert 0 == 12"), strings.Index(fb, ">       assert calc.mul"); i < 0 || j < i || !strings.Contains(fb, "test_calc.py:5: AssertionError") {
		t.Errorf("pytest's E lines are not first:\n%s", fb)
	}
}

// azero passes no backtrace switch of its own into a test run, and none
// of the user's environment unless their sandbox config names it.
func TestNoBacktraceNoiseInTestRuns(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "cargo")
	dir := t.TempDir()
	testenv.WriteFiles(t, dir, map[string]string{"Cargo.toml": "[package]\nname = \"env\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"src/lib.rs": "#[test]\nfn shows() {\n    assert_eq!(std::env::var(\"RUST_BACKTRACE\").ok(), Some(\"none\".to_string()));\n}\n"})
	opts := sandboxed(t, testrun.Options{})
	opts.Environ = append(os.Environ(), "RUST_BACKTRACE=1", "RUST_LIB_BACKTRACE=1")
	r, err := testrun.New(testrun.KindCargo, opts)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Run(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != testrun.Fail || !strings.Contains(res.Output, "left: None") {
		t.Fatalf("the test saw a RUST_BACKTRACE: %s\n%s", res.Summary, res.Output)
	}
	if strings.Contains(res.Output, "stack backtrace:") {
		t.Errorf("a backtrace was printed:\n%s", res.Output)
	}
}
