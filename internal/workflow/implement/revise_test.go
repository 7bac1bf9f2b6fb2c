package implement

import (
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/testrun"
)

// Step messages say what comes next and why, not the round's name.
func TestStepsSayWhatHappensNext(t *testing.T) {
	t.Parallel()
	red := func(o testrun.Outcome, errs ...string) *testrun.Result {
		return &testrun.Result{Outcome: o, Errors: errs}
	}
	for _, tt := range []struct {
		s    State
		want string
	}{
		{State{}, ""},
		{State{Red: red(testrun.Broken, "./calc_test.go:6:5: syntax error")}, "the last ones did not build or load"},
		{State{Red: red(testrun.Pass)}, "the last ones passed before any code was written"},
		{State{Red: red(testrun.NoTests)}, "no test ran"},
		{State{Regenerate: PurposeScaffold, WriteFeedback: "keep it short"}, "as you asked at the write review"},
	} {
		if got := scaffoldAgain(&tt.s); got != tt.want {
			t.Errorf("scaffoldAgain(%+v) = %q, want %q", tt.s.Red, got, tt.want)
		}
	}
	for _, tt := range []struct {
		s    State
		want string
	}{
		{State{}, ""},
		{State{Green: &testrun.Result{Outcome: testrun.Fail, Failed: 2}, TestOutput: "x"}, "2 tests still fail"},
		{State{Green: &testrun.Result{Outcome: testrun.Broken}, TestOutput: "x"}, "the tests did not build or run"},
		{State{Green: &testrun.Result{Outcome: testrun.Pass}, Lint: &testrun.LintResult{Output: "unused x"}}, "lint findings"},
	} {
		if got := implementAgain(&tt.s); got != tt.want {
			t.Errorf("implementAgain(%+v) = %q, want %q", tt.s.Green, got, tt.want)
		}
	}
	for _, tt := range []struct {
		res  testrun.Result
		want string
	}{
		{testrun.Result{Outcome: testrun.Broken, Errors: []string{"./calc_test.go:6:5: undefined: Mul"}}, "compiling stubs of the code"},
		{testrun.Result{Outcome: testrun.Broken, Errors: []string{"SyntaxError: invalid syntax"}}, "the tests again (they did not build or load)"},
		{testrun.Result{Outcome: testrun.Pass}, "the tests again (they passed before any code was written)"},
	} {
		if got := redNext(tt.res); !strings.HasPrefix(got, tt.want) {
			t.Errorf("redNext(%s) = %q, want %q", tt.res.Outcome, got, tt.want)
		}
	}
}

// What the model is shown of a failing run is testrun's Feedback, put in
// the prompt whole: no second cut with counts of its own.
func TestPromptsShowTheFeedbackWhole(t *testing.T) {
	t.Parallel()
	var fb strings.Builder
	fb.WriteString("go exited 1 (fail): 36 failed, 1 passed\n\nFailing tests (36):\n")
	for i := range 300 {
		fb.WriteString("line " + strings.Repeat("x", i%5) + "\n")
	}
	fb.WriteString("… and 26 more: a, b\n")
	s := &State{TestOutput: fb.String(), Green: &testrun.Result{Outcome: testrun.Fail, Summary: "go exited 1 (fail)"}, Runner: testrun.KindGo,
		Red: &testrun.Result{Outcome: testrun.Broken, Summary: "broken"}}
	for name, text := range map[string]string{
		"implement": implementText(s, "calc.go", nil),
		"stub":      stubText(s, "calc.go", s.TestOutput, nil, true),
		"scaffold":  scaffoldText(s, "calc_test.go", nil),
	} {
		if !strings.Contains(text, fb.String()) || strings.Contains(text, "lines omitted") {
			t.Errorf("the %s prompt does not show the feedback whole", name)
		}
	}
	if text := stubText(s, "calc.go", "undefined: Mul", nil, true); !strings.Contains(text, "Keep every existing declaration\nand every existing body exactly as it is") {
		t.Errorf("the stub prompt of a Modify target does not ask to keep its code:\n%s", text)
	}
	if text := stubText(s, "calc.go", "undefined: Mul", nil, false); strings.Contains(text, "Keep every existing declaration") {
		t.Errorf("the stub prompt of a new file asks to keep code:\n%s", text)
	}
}
