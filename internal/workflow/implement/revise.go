package implement

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/integrity"
	"github.com/azero-dev/azero/internal/safewrite"
	"github.com/azero-dev/azero/internal/testrun"
	"github.com/azero-dev/azero/internal/workflow/gates"
)

// A revision: at the final review the human sent the change back with
// feedback. The feedback may concern any file of the change, tests
// included, so the coder is asked once per file whether and how that file
// changes for it (one call per file, as every other round: the edit
// package reads a reply as one file's content or one file's edit blocks,
// and a file's own prompt shows its current content whole), and may
// answer that it stays as it is (coder.NoChangeWord). What it says around
// its code is shown to the human as it answers, and again at the next
// review with what it changed.
//
// The test files are asked first (the revise node). When one changed, the
// tests run on the reviewed code before any code changes (red again,
// RouteRevisedRed): a failure is the red of the new behaviour the feedback
// asks for; a pass is accepted (a revision may restore or rename tests the
// code passes) and said so at the next review; tests that cannot build
// get stubs, or go back to the coder. Then the code files are asked
// (implement, which runs every code file through the same question while
// a revision is under way), and the tests must pass as always (green).
// Nothing of the graph's guarantees changes: the test files are those of
// the last red, the change reviewed is the one tested, and the next review
// shows what the revision changed since the last one (Options.Reviewed).

// revise asks the coder, test file by test file, whether and how the file
// changes for the human's feedback.
func (n *nodes) revise(ctx context.Context, s *State) (string, error) {
	s.ReviseRounds++
	s.PendingWrites = nil
	again := ""
	if s.ReviseRounds > 1 && s.Red != nil {
		again = scaffoldAgain(s)
	}
	for _, f := range s.TestFiles() {
		step := "revise " + f.Path + ": does it change for your feedback?"
		if again != "" {
			step = "revised tests again: " + f.Path + " (" + again + ")"
		}
		r, err := n.generate(ctx, s, f, PurposeRevise, reviseText(s, f.Path, currentFiles(s, f.Path)), genOpts{step: step, mayKeep: true})
		if err != nil {
			return "", err
		}
		n.revisionNote(ctx, s, f.Path, r)
		if r.changed {
			s.RevisedTests = true
		}
	}
	switch {
	case len(s.PendingWrites) > 0:
		s.RevisedTests = true
		return NodeReviseWriteReview, nil
	case s.RevisedTests:
		n.say(ctx, event.Plain, "the revised tests run on the code you reviewed before any code changes")
		return NodeRed, nil
	}
	return NodeImplement, nil
}

// revisionNote shows what the coder answered about one file and keeps it
// for the next review (the last answer about a file stands).
func (n *nodes) revisionNote(ctx context.Context, s *State, path string, r genResult) {
	note := RevisionNote{Path: path, Changed: r.changed, Prose: r.prose}
	what := "changed"
	if !r.changed {
		what = "no change"
	}
	says := ""
	if r.prose != "" {
		says = "; the coder says:\n" + indentLines(r.prose, "      ")
	}
	n.say(ctx, event.Plain, "%s: %s%s", path, what, says)
	_ = n.d.Audit.Event(ctx, "revision_answer", flow.RunID(ctx), slog.String("path", path), slog.Bool("changed", r.changed), slog.String("prose", r.prose))
	for i, old := range s.RevisionNotes {
		if old.Path == path {
			// A file asked again keeps its change if it changed before.
			note.Changed = note.Changed || old.Changed
			s.RevisionNotes[i] = note
			return
		}
	}
	s.RevisionNotes = append(s.RevisionNotes, note)
}

// revisedRed routes the red run of revised tests (RouteRevisedRed).
func (n *nodes) revisedRed(ctx context.Context, s *State, res testrun.Result) (string, error) {
	next := RouteRevisedRed(res.Outcome, res.MissingCode(), s.Stubbed, s.ReviseRounds)
	switch next {
	case NodeImplement:
		if err := recordTests(s); err != nil {
			return "", err
		}
		if res.Outcome == testrun.Pass {
			n.testResult(ctx, event.Warn, res, "the revised tests pass on the code you reviewed: %s; next: the code, for your feedback", res.Summary)
			s.TestOutput = "" // nothing failed: the code is asked for the feedback alone
		} else {
			n.testResult(ctx, event.Bad, res, "red: %s; next: the code, for your feedback", res.Summary)
		}
	case NodeScaffold, NodeRevise:
		n.testResult(ctx, event.Warn, res, "the revised tests are not a valid red: %s; next: %s", res.Summary, redNext(res))
	case NodeEscalate:
		n.testResult(ctx, event.Warn, res, "the revised tests are not a valid red: %s", res.Summary)
		s.Escalation = fmt.Sprintf("the revised tests are not a valid red after %d rounds: %s", s.ReviseRounds, res.Summary)
		s.EscalatedFrom = NodeRed
	}
	return next, nil
}

// redNext says what comes after a red run that is not a valid red.
func redNext(res testrun.Result) string {
	switch {
	case res.MissingCode():
		return "compiling stubs of the code (the tests use what does not exist yet)"
	case res.Outcome == testrun.Pass:
		return "the tests again (they passed before any code was written)"
	case res.Outcome == testrun.NoTests:
		return "the tests again (no test ran)"
	}
	return "the tests again (they did not build or load)"
}

// scaffoldAgain says why the tests are asked for again, or "" for a first
// round.
func scaffoldAgain(s *State) string {
	switch {
	case s.Regenerate != "" && s.WriteFeedback != "":
		return "as you asked at the write review"
	case s.Red == nil:
		return ""
	case s.Red.Outcome == testrun.Pass:
		return "the last ones passed before any code was written"
	case s.Red.Outcome == testrun.NoTests:
		return "no test ran"
	case s.Red.Outcome == testrun.Broken:
		return "the last ones did not build or load"
	case s.Red.Outcome == testrun.Fail:
		return ""
	}
	return "the runner failed"
}

// implementAgain says why the code is asked for again, or "" for a first
// round (or the first of a revision).
func implementAgain(s *State) string {
	switch {
	case s.Green == nil || s.TestOutput == "" && (s.Lint == nil || s.Lint.Passed):
		if s.WriteFeedback != "" && s.Implementations > 0 && !s.Revising {
			return "as you asked at the write review"
		}
		return ""
	case s.Green.Outcome == testrun.Fail:
		return fmt.Sprintf("%d %s still fail", s.Green.Failed+s.Green.Errored, plural(s.Green.Failed+s.Green.Errored, "test", "tests"))
	case s.Green.Outcome == testrun.Pass && s.Lint != nil && !s.Lint.Passed:
		return "lint findings"
	case s.Green.Outcome == testrun.Broken:
		return "the tests did not build or run"
	case s.Green.Outcome == testrun.NoTests:
		return "no test ran"
	}
	return "the last run failed"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// reviewOptions is what a review shows besides the change: the test
// files, the tests the change loses, what the coder said about a
// revision, and the tree reviewed last with the tree now.
func (n *nodes) reviewOptions(ctx context.Context, s *State) (gates.Options, error) {
	snap, err := integrity.Snapshot(ctx, s.Worktree)
	if err != nil {
		return gates.Options{}, err
	}
	tests := map[string]bool{}
	for _, f := range s.Files {
		if f.Test {
			tests[f.Path] = true
		}
	}
	eroded, err := n.eroded(ctx, s)
	if err != nil {
		return gates.Options{}, err
	}
	return gates.Options{Base: s.BaseCommit, Tests: func(p string) bool { return tests[p] }, Eroded: eroded,
		Notes: revisionReport(s), Reviewed: s.ReviewedTree, Now: snap.Tree}, nil
}

// eroded lists the tests the change loses: those that passed at the
// baseline and are missing or skipped at the last red or green (by the
// runner's names), and those a modified or deleted test file no longer
// declares (by its text, per language), even when the runner could not
// run the old ones.
func (n *nodes) eroded(ctx context.Context, s *State) ([]string, error) {
	var out []string
	var phases []testrun.Phase
	if s.Red != nil {
		phases = append(phases, testrun.Phase{Name: "red", Tests: s.Red.Tests})
	}
	if s.Green != nil {
		phases = append(phases, testrun.Phase{Name: "green", Tests: s.Green.Tests})
	}
	for _, e := range testrun.Eroded(s.BaselineTests, phases...) {
		out = append(out, e.String())
	}
	for _, f := range s.Files {
		if !f.Test || f.Change == "Add" {
			continue
		}
		before, err := n.git(s.Worktree).Run(ctx, "show", s.BaseCommit+":"+f.Path)
		if err != nil {
			continue // not at the base commit: nothing of it can be lost
		}
		now, _, err := safewrite.Read(s.Worktree, f.Path)
		if err != nil {
			return nil, err
		}
		for _, name := range testrun.RemovedTests(f.Path, string(before), string(now)) {
			how := "is no longer declared (removed or renamed)"
			if now == nil {
				how = "goes with the deleted file"
			}
			out = append(out, fmt.Sprintf("%s: %s %s", f.Path, name, how))
		}
	}
	return out, nil
}

// revisionReport says what the coder answered to the human's feedback,
// file by file, for the review that follows a revision.
func revisionReport(s *State) string {
	if len(s.RevisionNotes) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The coder's answer to your feedback (%q):\n", firstLines(s.Feedback, 1))
	for _, note := range s.RevisionNotes {
		what := "changed"
		if !note.Changed {
			what = "no change"
		}
		fmt.Fprintf(&b, "  %s: %s", note.Path, what)
		if note.Prose != "" {
			fmt.Fprintf(&b, "; the coder says:\n%s", indentLines(note.Prose, "      "))
		}
		b.WriteString("\n")
	}
	if s.RevisedTests && s.Red != nil && s.Red.Outcome == testrun.Pass {
		b.WriteString("  The revised tests passed on the code you reviewed, before the code changed: they check no behaviour it lacked.\n")
	}
	return b.String()
}
