package implement

import (
	"github.com/azero-dev/azero/internal/testrun"
)

// Retry limits from the specification (#87, section 3.5).
const (
	MaxScaffolds       = 3 // scaffolding attempts before escalating to the human
	MaxImplementations = 3 // implementation attempts before giving up
)

// Node names of the implementation graph.
const (
	NodeWorktree  = "worktree"
	NodeBaseline  = "baseline"
	NodeScaffold  = "scaffold"
	NodeRed       = "red"
	NodeImplement = "implement"
	NodeGreen     = "green"
	NodeLint      = "lint"
	NodeEscalate  = "escalate"
	NodeDiffGate  = "diff_review"
	NodeReview    = "human_review"
	NodeCommit    = "commit"
	NodeMerge     = "merge"
	NodeCleanup   = "cleanup"
	NodeRevise    = "revise" // the test files, for the human's feedback at the review

	// The write reviews: a whole file replacing an existing file of more
	// than safewrite.ApprovalLines lines is written only after a human
	// approves it there. The scaffold's (tests or stubs) go on to red, the
	// implementation's to green, so that the graph shows, and its walk
	// proves, that no approval skips either.
	NodeScaffoldWriteReview = "scaffold_write_review"
	NodeScaffoldApplyWrites = "scaffold_apply_writes"
	NodeWriteReview         = "write_review"
	NodeApplyWrites         = "apply_writes"
	NodeReviseWriteReview   = "revise_write_review" // the revised tests' (on to red)
	NodeReviseApplyWrites   = "revise_apply_writes"
)

// RouteRed decides where a run goes after the red gate ran the tests
// written by the scaffold, which must fail before any code is written:
//
//   - a real failure (pytest 1, go test failures) is a valid red: implement;
//   - a pass means the tests test nothing new: scaffold again;
//   - tests that cannot run (collection or build errors, usage errors) or
//     that do not exist: scaffold again;
//   - both of those only while scaffolds remain, then the human decides;
//   - an internal error or interruption of the runner: the human decides.
func RouteRed(outcome testrun.Outcome, scaffolds int) string {
	switch outcome {
	case testrun.Fail:
		return NodeImplement
	case testrun.Pass, testrun.Broken, testrun.NoTests:
		if scaffolds < MaxScaffolds {
			return NodeScaffold
		}
		return NodeEscalate
	default:
		return NodeEscalate
	}
}

// RouteRevisedRed decides where a revision goes after its red run, when
// the coder changed test files for the human's feedback. The revised tests
// run on the code the human reviewed, before any code changes:
//
//   - a real failure is a valid red (the feedback asks for behaviour the
//     code lacks): the code is asked next;
//   - a pass is accepted too, unlike a first red: a revision may only
//     restore, rename or tighten tests the code already passes (the human
//     asked for it; a test that fails on purpose is not what they asked),
//     and the human reads at the next review that the revised tests passed
//     on the reviewed code; the code is still asked next;
//   - tests that do not build because what they use does not exist yet
//     get compiling stubs first (once);
//   - tests that cannot run or do not exist go back to the coder while
//     revise rounds remain, then to the human.
func RouteRevisedRed(outcome testrun.Outcome, missingCode, stubbed bool, rounds int) string {
	switch outcome {
	case testrun.Fail, testrun.Pass:
		return NodeImplement
	case testrun.Broken, testrun.NoTests:
		switch {
		case outcome == testrun.Broken && missingCode && !stubbed:
			return NodeScaffold
		case rounds < MaxScaffolds:
			return NodeRevise
		}
	}
	return NodeEscalate
}

// RouteGreen decides where a run goes after the green gate: on to lint
// when every test passes; back to the coder, with the test output, while
// implementation attempts remain; else to cleanup with the tests failed.
// A runner error goes to the human.
func RouteGreen(outcome testrun.Outcome, implementations int) string {
	switch outcome {
	case testrun.Pass:
		return NodeLint
	case testrun.Fail, testrun.Broken, testrun.NoTests:
		if implementations < MaxImplementations {
			return NodeImplement
		}
		return NodeCleanup
	default:
		return NodeEscalate
	}
}

// RouteLint sends lint findings back to the coder while attempts remain;
// once they are spent the findings go to the human with the diff.
func RouteLint(passed bool, implementations int) string {
	if passed || implementations >= MaxImplementations {
		return NodeDiffGate
	}
	return NodeImplement
}

// needsStubs reports whether tests failed to build or import only because
// what they test does not exist yet: the scaffold then writes compiling
// stubs (no logic) so that the red gate sees real assertion failures.
func needsStubs(r testrun.Result) bool { return r.MissingCode() }
