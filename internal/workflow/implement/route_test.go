package implement

import (
	"testing"

	"github.com/azero-dev/azero/internal/testrun"
)

func TestRouteRed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		outcome   testrun.Outcome
		scaffolds int
		want      string
	}{
		{"assertion failure is a valid red", testrun.Fail, 1, NodeImplement},
		{"premature pass is rejected (TS-02)", testrun.Pass, 1, NodeScaffold},
		{"syntax error in tests re-scaffolds", testrun.Broken, 1, NodeScaffold},
		{"no tests re-scaffolds", testrun.NoTests, 2, NodeScaffold},
		{"third broken scaffold escalates", testrun.Broken, 3, NodeEscalate},
		{"third premature pass escalates", testrun.Pass, 3, NodeEscalate},
		{"internal error escalates", testrun.Error, 1, NodeEscalate},
	}
	for _, tt := range tests {
		if got := RouteRed(tt.outcome, tt.scaffolds); got != tt.want {
			t.Errorf("%s: RouteRed(%s, %d) = %s, want %s", tt.name, tt.outcome, tt.scaffolds, got, tt.want)
		}
	}
}

func TestRouteGreen(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		outcome testrun.Outcome
		impls   int
		want    string
	}{
		{"green goes to lint", testrun.Pass, 1, NodeLint},
		{"first failure retries (TS-04)", testrun.Fail, 1, NodeImplement},
		{"second failure retries", testrun.Fail, 2, NodeImplement},
		{"third failure stops", testrun.Fail, 3, NodeCleanup},
		{"code that does not build retries", testrun.Broken, 1, NodeImplement},
		{"runner error escalates", testrun.Error, 1, NodeEscalate},
	}
	for _, tt := range tests {
		if got := RouteGreen(tt.outcome, tt.impls); got != tt.want {
			t.Errorf("%s: RouteGreen(%s, %d) = %s, want %s", tt.name, tt.outcome, tt.impls, got, tt.want)
		}
	}
}

func TestRouteLint(t *testing.T) {
	t.Parallel()
	if RouteLint(true, 1) != NodeDiffGate || RouteLint(false, 1) != NodeImplement || RouteLint(false, 3) != NodeDiffGate {
		t.Error("RouteLint")
	}
}

func TestNeedsStubs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		r    testrun.Result
		want bool
	}{
		{testrun.Result{Outcome: testrun.Broken, Output: "./slug_test.go:9:7: undefined: Slugify"}, true},
		{testrun.Result{Outcome: testrun.Broken, Output: "E   ModuleNotFoundError: No module named 'calc'"}, true},
		{testrun.Result{Outcome: testrun.Broken, Output: "E   SyntaxError: invalid syntax"}, false},
		{testrun.Result{Outcome: testrun.Fail, Output: "undefined: x"}, false},
	}
	for _, tt := range tests {
		if got := needsStubs(tt.r); got != tt.want {
			t.Errorf("needsStubs(%q) = %v", tt.r.Output, got)
		}
	}
}

func TestRouteRevisedRed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name             string
		outcome          testrun.Outcome
		missing, stubbed bool
		rounds           int
		want             string
	}{
		{"the feedback's new behaviour fails: the code next", testrun.Fail, false, false, 1, NodeImplement},
		{"revised tests that pass on the reviewed code: the code next", testrun.Pass, false, false, 1, NodeImplement},
		{"a new function the tests use: stubs first", testrun.Broken, true, false, 1, NodeScaffold},
		{"still missing after stubs: the tests again", testrun.Broken, true, true, 1, NodeRevise},
		{"a syntax error: the tests again", testrun.Broken, false, false, 2, NodeRevise},
		{"no tests: the tests again", testrun.NoTests, false, false, 1, NodeRevise},
		{"rounds spent: the human", testrun.Broken, false, false, MaxScaffolds, NodeEscalate},
		{"the runner failed: the human", testrun.Error, false, false, 1, NodeEscalate},
	}
	for _, tt := range tests {
		if got := RouteRevisedRed(tt.outcome, tt.missing, tt.stubbed, tt.rounds); got != tt.want {
			t.Errorf("%s: RouteRevisedRed(%s, %v, %v, %d) = %s, want %s", tt.name, tt.outcome, tt.missing, tt.stubbed, tt.rounds, got, tt.want)
		}
	}
}
