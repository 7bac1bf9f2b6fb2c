package implement

import (
	"fmt"

	"github.com/azero-dev/azero/internal/testrun"
)

// missingTests compares a passing green run with the red run before it.
// The code cannot change the tests, so every test that ran at the red gate
// must run again: fewer passing means the code stopped some from running
// (a test process it ended early, a test file that no longer reports), and
// a runner may still count the rest as a pass. It says why, or "".
func missingTests(red *testrun.Result, green testrun.Result) string {
	if red == nil || green.Outcome != testrun.Pass {
		return ""
	}
	ran := red.Passed + red.Failed
	if green.Passed >= ran {
		return ""
	}
	return fmt.Sprintf("only %d of the %d tests that ran at the red gate ran", green.Passed, ran)
}

// notAllRan makes a passing run that lost tests broken: not a green.
func notAllRan(res testrun.Result, why string) testrun.Result {
	res.Outcome = testrun.Broken
	res.Summary += "; but " + why
	res.Errors = append(res.Errors, why+": the code ended or skipped the others")
	return res
}
