package implement

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/integrity"
	"github.com/azero-dev/azero/internal/testrun"
)

// The code a run executes (the tests, the code, a conftest.py) was
// written by a model nobody has reviewed yet. Whether or not a sandbox
// confines it, azero trusts nothing it could have changed:
//
//   - every run of it (baseline, red, green, lint) is watched (watch): the
//     shared git directory must be as it was (else the run stops before
//     azero's next git call: stopRun), and the work tree too (else what
//     it changed is put back and the run does not count: changedTheChange);
//   - the test files hash at the green run, the diff review, the human
//     review and the commit as they did after the valid red (checkTests);
//   - the change reviewed and committed is the change tested
//     (checkTested: its content as a git tree, taken after the green run);
//   - the run's branch and its work tree's HEAD are where azero left them
//     at every review, the commit and the merge (checkBranch), and the
//     merge merges exactly azero's commit;
//   - what a run printed is scrubbed of the secrets azero knows before
//     anything keeps or shows it (redact).

// ResultIntegrity ends a run whose executed code changed the shared git
// directory: nothing git would run is trusted, so nothing more runs (no
// clean-up either: the work tree and the branch stay for inspection).
const ResultIntegrity = "integrity_stop"

// IntegrityError ends a run stopped by ResultIntegrity.
type IntegrityError struct{ Problem string }

func (e *IntegrityError) Error() string { return e.Problem }

// watch runs fn (one run of the change's code: by says what, "the test
// run") between integrity.Begin and End. A changed git directory is a
// *integrity.GitChangedError (stopRun makes it end the run); a changed
// work tree is put back and reported in the Outcome, audited and shown.
func (n *nodes) watch(ctx context.Context, s *State, by, phase string, fn func(context.Context) error) (integrity.Outcome, error) {
	w, err := integrity.Begin(ctx, integrity.Scope{Worktree: s.Worktree, Branch: s.Branch})
	if err != nil {
		return integrity.Outcome{}, fmt.Errorf("before %s: %w", by, err)
	}
	runErr := fn(ctx)
	// Checked and put back even when the run was interrupted: what it
	// changed must not become the next run's starting point.
	out, err := w.End(context.WithoutCancel(ctx), by)
	runID := flow.RunID(ctx)
	var ge *integrity.GitChangedError
	switch {
	case errors.As(err, &ge):
		_ = n.d.Audit.Event(ctx, "git_dir_changed", runID, slog.String("phase", phase), slog.Any("paths", ge.Paths),
			slog.String("git_dir", ge.CommonDir))
		return out, err
	case err != nil:
		return out, err
	}
	if !out.Counts() || len(out.Lost) > 0 {
		_ = n.d.Audit.Event(ctx, "test_run_changed_worktree", runID, slog.String("phase", phase),
			slog.Any("added", nonNil(out.Changed.Added)), slog.Any("removed", nonNil(out.Changed.Removed)),
			slog.Any("modified", nonNil(out.Changed.Modified)), slog.Any("lost", nonNil(out.Lost)))
		n.say(ctx, event.Warn, "%s changed the worktree (%s): put back as it was%s; a run that changes the change never counts",
			by, out.Changed, lostNote(out.Lost))
	}
	return out, runErr
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func lostNote(lost []string) string {
	if len(lost) == 0 {
		return ""
	}
	return fmt.Sprintf(" but for %s, ignored files whose content nothing kept (removed)", strings.Join(lost, ", "))
}

// changedTheChange makes a run that changed the work tree Broken, whatever
// its runner said: a red or a green the tested code arranged is neither.
func changedTheChange(res testrun.Result, by string, out integrity.Outcome) testrun.Result {
	if out.Counts() {
		return res
	}
	why := fmt.Sprintf("%s changed the worktree: %s; a run that changes the change never counts", by, out.Changed)
	res.Outcome = testrun.Broken
	res.Summary = why + " (the runner said: " + res.Summary + ")"
	res.Errors, res.MoreErrors = []string{why}, 0
	res.Failures, res.FailedTests = nil, nil
	res.Output = "azero: " + why + lostNote(out.Lost) + "\n\n" + res.Output
	return res
}

// stopRun ends the run at once when err is a changed git directory:
// s.Result says so and the graph goes to End without another git call.
// Any other error is returned as it is.
func (n *nodes) stopRun(ctx context.Context, s *State, err error) (string, error) {
	var ge *integrity.GitChangedError
	if !errors.As(err, &ge) {
		return "", err
	}
	s.Result, s.IntegrityProblem = ResultIntegrity, err.Error()
	n.say(ctx, event.Bad, "%s", err.Error())
	return flow.End, nil
}

// redactor scrubs what runs printed of the secrets the run knows (its
// dependencies' and the process's own environment's).
func (n *nodes) redactor() *audit.Redactor {
	return audit.NewRedactor(append(append([]string(nil), n.d.Secrets...), audit.SecretsFromEnv(os.Environ())...))
}

// redact scrubs a test run's result: everything of it that is kept (the
// lineage, the run's state), shown (events) or sent to the model.
func (n *nodes) redact(res testrun.Result) testrun.Result {
	r := n.redactor()
	res.Output, res.Summary, res.Disagreement = r.Scrub(res.Output), r.Scrub(res.Summary), r.Scrub(res.Disagreement)
	res.Errors = scrubAll(r, res.Errors)
	res.FailedTests = scrubAll(r, res.FailedTests)
	if res.Tests != nil {
		t := *res.Tests
		t.Passed, t.Failed, t.Errored, t.Skipped = scrubAll(r, t.Passed), scrubAll(r, t.Failed), scrubAll(r, t.Errored), scrubAll(r, t.Skipped)
		for _, names := range [][]string{t.Passed, t.Failed, t.Errored, t.Skipped} {
			slices.Sort(names) // a scrubbed name may sort elsewhere: Tests.Status searches
		}
		res.Tests = &t
	}
	if res.Failures != nil {
		fs := make([]testrun.Failure, len(res.Failures))
		for i, f := range res.Failures {
			fs[i] = testrun.Failure{Test: r.Scrub(f.Test), Error: f.Error, Message: r.Scrub(f.Message)}
		}
		res.Failures = fs
	}
	return res
}

func (n *nodes) redactLint(res testrun.LintResult) testrun.LintResult {
	r := n.redactor()
	res.Output = r.Scrub(res.Output)
	res.Notes = scrubAll(r, res.Notes)
	return res
}

func scrubAll(r *audit.Redactor, ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = r.Scrub(s)
	}
	return out
}

// auditDisagreement records a run whose report, exit code and console
// disagreed (testrun's cross-check).
func (n *nodes) auditDisagreement(ctx context.Context, res testrun.Result, phase string) {
	if res.Disagreement != "" {
		_ = n.d.Audit.Event(ctx, "test_results_disagree", flow.RunID(ctx), slog.String("phase", phase), slog.String("disagreement", res.Disagreement))
	}
}

// testPaths are the change's test files, deleted ones too (which must stay
// deleted).
func testPaths(s *State) []string {
	var out []string
	for _, f := range s.Files {
		if f.Test {
			out = append(out, f.Path)
		}
	}
	return out
}

// recordTests keeps the hashes of the test files of a valid red.
func recordTests(s *State) error {
	h, err := integrity.HashFiles(s.Worktree, testPaths(s))
	if err != nil {
		return fmt.Errorf("record the test files: %w", err)
	}
	s.TestHashes = h
	return nil
}

// checkTests proves the test files are those of the valid red: the code
// step writes only code files (through safewrite), and nothing else may.
func (n *nodes) checkTests(ctx context.Context, s *State, where string) error {
	if s.TestHashes == nil {
		return nil
	}
	err := integrity.CheckFiles(s.Worktree, s.TestHashes)
	var fe *integrity.FilesChangedError
	if errors.As(err, &fe) {
		fe.What = "the test files changed since the red run (checked " + where + ")"
		_ = n.d.Audit.Event(ctx, "test_files_changed", flow.RunID(ctx), slog.String("at", where), slog.Any("paths", fe.Paths))
		n.say(ctx, event.Bad, "%s", err.Error())
	}
	return err
}

// recordTested keeps the change's content as the green run tested it.
func recordTested(ctx context.Context, s *State) error {
	snap, err := integrity.Snapshot(ctx, s.Worktree)
	if err != nil {
		return err
	}
	s.TestedTree = snap.Tree
	return nil
}

// TestedChangedError reports a change that is not the one the tests
// passed on: something wrote into the work tree after the green run.
type TestedChangedError struct {
	Paths  []string
	Where  string
	Tested string
}

func (e *TestedChangedError) Error() string {
	return fmt.Sprintf("the worktree changed after the tests passed (found %s): %s differ from what the green run tested (%s); something still running wrote into it: azero stopped, and reviews, commits and merges nothing; inspect the worktree",
		e.Where, strings.Join(e.Paths, ", "), gitx.ShortID(e.Tested))
}

// checkTested proves the work tree holds what the green run tested.
func (n *nodes) checkTested(ctx context.Context, s *State, where string) error {
	if s.TestedTree == "" {
		return nil
	}
	snap, err := integrity.Snapshot(ctx, s.Worktree)
	if err != nil {
		return err
	}
	if snap.Tree == s.TestedTree {
		return nil
	}
	paths, err := n.git(s.Worktree).ChangedPaths(ctx, s.TestedTree, snap.Tree)
	if err != nil {
		return err
	}
	e := &TestedChangedError{Paths: paths, Where: where, Tested: s.TestedTree}
	_ = n.d.Audit.Event(ctx, "worktree_changed_after_tests", flow.RunID(ctx), slog.String("at", where), slog.Any("paths", nonNil(paths)))
	n.say(ctx, event.Bad, "%s", e.Error())
	return e
}

// checkBranch proves the run's branch and work tree HEAD are at one of
// allowed (the base before azero's commit, azero's commit after it).
func (n *nodes) checkBranch(ctx context.Context, s *State, where string, allowed ...string) error {
	err := integrity.CheckBranch(ctx, s.Worktree, s.Branch, allowed...)
	var me *integrity.MovedError
	if errors.As(err, &me) {
		_ = n.d.Audit.Event(ctx, "branch_moved", flow.RunID(ctx), slog.String("at", where), slog.String("branch", s.Branch),
			slog.String("head", me.Head), slog.String("tip", me.Tip), slog.Any("allowed", me.Allowed))
		n.say(ctx, event.Bad, "%s", err.Error())
	}
	return err
}

// checkChange runs every check of the change before a human looks at it
// or azero commits it: the branch where azero left it, the test files of
// the red, the content the green run tested.
func (n *nodes) checkChange(ctx context.Context, s *State, where string) error {
	if err := n.checkBranch(ctx, s, where, s.BaseCommit); err != nil {
		return err
	}
	if err := n.checkTests(ctx, s, where); err != nil {
		return err
	}
	return n.checkTested(ctx, s, where)
}
