// Package gates builds the questions workflows share: the mandatory diff
// review before a commit (spec #171), asked as a human.Question so that a
// terminal, a web page or a Temporal Update can answer it. The gate's
// routing stays in each workflow's graph, where the graph walk proves that
// no path reaches a commit without it.
package gates

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/review"
)

// Answers of the diff review.
const (
	Approve     = review.ApproveWord // typed in full: the change may be committed
	Reject      = review.RejectWord  // typed in full: nothing is committed
	NotRequired = "not_required"     // unattended only: nothing flagged, nobody to ask
)

// ReportFormat names the layout of review.FormatReport's text, so that
// channels can colour it (review.ColorizeReport for terminals).
const ReportFormat = review.ReportFormat

// Change is the analysis and report of a change.
type Change struct {
	Files   []review.FileAnalysis
	Flagged []string
	Report  string // plain text: every file's diff, flagged files first with their banners
}

// Options are what a workflow knows of its change beyond its files.
type Options struct {
	// Base is the commit the change started from (a workflow's run
	// records it when it begins): a commit made on the branch since then
	// is part of what is shown. "" compares with HEAD.
	Base string
	// Tests says which paths are the change's test files: one that loses
	// any line is flagged, with the lines it loses (review.AnalyzeOptions).
	Tests func(path string) bool
	// Eroded lists the tests the change loses, in the words of how each
	// was found (a test that passed before the change and is missing
	// later; a test declaration a test file no longer has). They are
	// shown first, recorded with the decision (eroded_tests), and a
	// question with any has no unattended answer: losing a test needs a
	// human's typed approval.
	Eroded []string
	// Notes are shown after the eroded tests, before the change (what the
	// coder said about a revision, say).
	Notes string
	// Reviewed and Now are trees of the work tree: the one a human last
	// reviewed, and the one under review. When both are set and differ,
	// the report shows first what changed between them (the revision),
	// then the whole change against Base.
	Reviewed, Now string
}

// Describe analyses the change in dir (tracked changes against base and
// untracked files) and renders the report with every file's diff. base is
// the commit the change started from (a workflow's run records it when it
// begins): a commit made on the branch since then is part of what is
// shown. "" compares with HEAD.
func Describe(ctx context.Context, dir, base string) (Change, error) {
	return DescribeWith(ctx, dir, Options{Base: base})
}

// DescribeWith is Describe with what the workflow knows (Options).
func DescribeWith(ctx context.Context, dir string, o Options) (Change, error) {
	files, err := review.Analyze(ctx, dir, review.AnalyzeOptions{Base: o.Base, Tests: o.Tests})
	if err != nil {
		return Change{}, fmt.Errorf("diff review: %w", err)
	}
	diffs, err := review.Diffs(ctx, dir, files, review.DiffOptions{Base: o.Base})
	if err != nil {
		return Change{}, fmt.Errorf("diff review: %w", err)
	}
	var b strings.Builder
	if len(o.Eroded) > 0 {
		fmt.Fprintf(&b, "!! %s LOST: the tests are the referee's evidence; losing any needs your typed approval.\n", strings.ToUpper(plural(len(o.Eroded), "test", "tests")))
		for _, e := range o.Eroded {
			fmt.Fprintf(&b, "!!   %s\n", e)
		}
		b.WriteString("\n")
	}
	if o.Notes != "" {
		b.WriteString(strings.TrimRight(o.Notes, "\n") + "\n\n")
	}
	if o.Reviewed != "" && o.Now != "" && o.Reviewed != o.Now {
		since, err := Revision(ctx, dir, o.Reviewed, o.Now)
		if err != nil {
			return Change{}, err
		}
		b.WriteString(since)
		b.WriteString("\nThe whole change (against the base commit):\n\n")
	} else if o.Reviewed != "" && o.Reviewed == o.Now {
		b.WriteString("Nothing changed since your last review.\n\nThe whole change (against the base commit):\n\n")
	}
	b.WriteString(review.FormatReport(files, diffs, review.ReportOptions{AllDiffs: true}))
	return Change{Files: files, Flagged: review.Flagged(files), Report: b.String()}, nil
}

// Revision reports what changed from the tree a human last reviewed to
// the tree now (both trees of the work tree's content, such as
// integrity.Snapshot writes): the summary and every file's diff.
func Revision(ctx context.Context, dir, reviewed, now string) (string, error) {
	files, err := review.Analyze(ctx, dir, review.AnalyzeOptions{Base: reviewed, To: now})
	if err != nil {
		return "", fmt.Errorf("what changed since the last review: %w", err)
	}
	if len(files) == 0 {
		return "Nothing changed since your last review.\n", nil
	}
	diffs, err := review.Diffs(ctx, dir, files, review.DiffOptions{Base: reviewed, To: now})
	if err != nil {
		return "", fmt.Errorf("what changed since the last review: %w", err)
	}
	return "What changed since your last review:\n" +
		review.FormatReport(files, diffs, review.ReportOptions{Unflagged: true, Compare: reviewed + " " + now}), nil
}

// DiffReview builds the diff review question for the change in dir since
// the commit base (see Describe): the report with every file's diff (a
// workflow's reviewer approves a change nobody has seen yet), then approve
// or reject, typed in full. Only when nothing is flagged may it pass
// unattended (NOT_REQUIRED); a flagged change waits for a human however
// long it takes.
func DiffReview(ctx context.Context, dir, base string) (human.Question, error) {
	return Review(ctx, dir, Options{Base: base})
}

// Review is DiffReview with what the workflow knows (Options): eroded
// tests are shown first and, like a flagged file, leave the question no
// unattended answer.
func Review(ctx context.Context, dir string, o Options) (human.Question, error) {
	c, err := DescribeWith(ctx, dir, o)
	if err != nil {
		return human.Question{}, err
	}
	prompt := fmt.Sprintf("Commit the changes to %s? Nothing is committed unless you type %s.", plural(len(c.Files), "file", "files"), Approve)
	if n := len(c.Flagged); n > 0 {
		prompt = fmt.Sprintf("!! %s flagged above. %s", plural(n, "file is", "files are"), prompt)
	}
	if n := len(o.Eroded); n > 0 {
		prompt = fmt.Sprintf("!! %s lost (listed first). %s", plural(n, "test is", "tests are"), prompt)
	}
	q := human.Question{
		Kind:   human.Word,
		Title:  "Diff review",
		Report: c.Report,
		Format: ReportFormat,
		Prompt: prompt,
		Options: []human.Option{
			{Key: Approve, Decision: string(review.Approved)},
			{Key: Reject, Decision: string(review.Rejected)},
		},
		Facts: map[string]any{review.FlaggedFacts: nonNil(c.Flagged), "files": len(c.Files), "repository": dir},
	}
	if len(o.Eroded) > 0 {
		q.Facts["eroded_tests"] = slices.Clone(o.Eroded)
	}
	if len(c.Flagged) == 0 && len(o.Eroded) == 0 {
		q.Unattended = &human.Option{Key: NotRequired, Decision: string(review.NotRequired)}
	}
	return q, nil
}

// Flagged returns the flagged files a diff review question recorded
// (review.FlaggedIn).
func Flagged(q human.Question) []string { return review.FlaggedIn(q) }

// factList reads a list of strings from a question's facts, as built or
// read back from JSON.
func factList(fact any) []string {
	switch v := fact.(type) {
	case []string:
		return slices.Clone(v)
	case []any: // a question read back from JSON
		out := make([]string, 0, len(v))
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// Eroded returns the eroded tests a diff review question recorded.
func Eroded(q human.Question) []string {
	return factList(q.Facts["eroded_tests"])
}

// Decision is the review decision an answer to DiffReview stands for.
func Decision(a human.Answer) review.Decision {
	switch a.Key {
	case Approve:
		return review.Approved
	case NotRequired:
		return review.NotRequired
	}
	return review.Rejected
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
