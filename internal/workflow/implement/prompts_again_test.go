package implement

import (
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/testrun"
)

// When the tests are written again, the model is told why the last ones
// were not a valid red, with the runner's own output.
func TestScaffoldAgainSaysWhy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		red    *testrun.Result
		output string
		want   []string // in the prompt; none: no such section
	}{
		{"first scaffold", nil, "", nil},
		{"premature pass", &testrun.Result{Outcome: testrun.Pass, Summary: "node exited 0 (pass): 0 failed, 2 passed"}, "ℹ pass 2",
			[]string{"Why again", "test nothing new", "node exited 0 (pass): 0 failed, 2 passed", "ℹ pass 2"}},
		{"no tests", &testrun.Result{Outcome: testrun.NoTests, Summary: "jest exited 0 (no_tests): no tests ran"}, "Tests: 1 todo, 1 total",
			[]string{"Why again", "No test ran", "Tests: 1 todo, 1 total"}},
		{"syntax error", &testrun.Result{Outcome: testrun.Broken, Summary: "junit exited 1 (broken): the tests cannot run"},
			"SyntaxError: Unexpected token ')'", []string{"Why again", "could not run", "SyntaxError: Unexpected token ')'"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := &State{Worktree: t.TempDir(), Runner: testrun.KindNode, Red: tt.red, TestOutput: tt.output,
				Files: []FileSpec{{Path: "calc.js", Change: "Add"}, {Path: "calc.test.js", Change: "Add", Test: true}}}
			text := scaffoldText(s, "calc.test.js", nil)
			if tt.want == nil && strings.Contains(text, "Why again") {
				t.Errorf("the first scaffold prompt says why again:\n%s", text)
			}
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("the prompt lacks %q:\n%s", w, text)
				}
			}
		})
	}
}

// The implementation prompt after a green that was not says what azero
// saw, which the runner's log may not show (zero tests, a stopped binary).
func TestImplementAgainSaysWhatTheRunnerSaw(t *testing.T) {
	t.Parallel()
	s := &State{Worktree: t.TempDir(), Runner: testrun.KindNode, TestOutput: "ℹ tests 1\nℹ pass 1",
		Green: &testrun.Result{Outcome: testrun.NoTests, Summary: "node exited 0 (no_tests): no tests ran"},
		Files: []FileSpec{{Path: "calc.js", Change: "Add"}, {Path: "calc.test.js", Change: "Add", Test: true}}}
	text := implementText(s, "calc.js", nil)
	if !strings.Contains(text, "The last test run failed (node exited 0 (no_tests): no tests ran):") || !strings.Contains(text, "ℹ pass 1") {
		t.Errorf("the prompt does not say what azero saw:\n%s", text)
	}
	s.Green = nil // the first implementation: the output is the red's
	if text := implementText(s, "calc.js", nil); !strings.Contains(text, "The last test run failed:\n") {
		t.Errorf("the first implementation prompt:\n%s", text)
	}
}
