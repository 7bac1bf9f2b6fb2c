package implement

import (
	"testing"

	"github.com/azero-dev/azero/internal/testrun"
)

func TestMissingTests(t *testing.T) {
	t.Parallel()
	red := &testrun.Result{Outcome: testrun.Fail, Passed: 1, Failed: 2}
	tests := []struct {
		name  string
		red   *testrun.Result
		green testrun.Result
		want  string
	}{
		{"all ran and passed", red, testrun.Result{Outcome: testrun.Pass, Passed: 3}, ""},
		{"more ran (a parametrized case)", red, testrun.Result{Outcome: testrun.Pass, Passed: 4}, ""},
		{"one stopped running", red, testrun.Result{Outcome: testrun.Pass, Passed: 2, Skipped: 1}, "only 2 of the 3 tests that ran at the red gate ran"},
		{"a failing green is judged as it is", red, testrun.Result{Outcome: testrun.Fail, Passed: 1, Failed: 1}, ""},
		{"no red yet", nil, testrun.Result{Outcome: testrun.Pass, Passed: 1}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := missingTests(tt.red, tt.green)
			if got != tt.want {
				t.Fatalf("missingTests = %q, want %q", got, tt.want)
			}
			if got == "" {
				return
			}
			res := notAllRan(tt.green, got)
			if res.Outcome != testrun.Broken || RouteGreen(res.Outcome, 1) != NodeImplement || len(res.Errors) == 0 {
				t.Errorf("a green that lost tests routes to %s (%+v)", RouteGreen(res.Outcome, 1), res)
			}
		})
	}
}
