// Package gates builds the questions workflows share: the mandatory diff
// review before a commit (spec #171), asked as a human.Question so that a
// terminal, a web page or a Temporal Update can answer it. The gate's
// routing stays in each workflow's graph, where the graph walk proves that
// no path reaches a commit without it.
package gates

import (
	"context"
	"fmt"

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

// Describe analyses the change in dir (tracked changes against base and
// untracked files) and renders the report with every file's diff. base is
// the commit the change started from (a workflow's run records it when it
// begins): a commit made on the branch since then is part of what is
// shown. "" compares with HEAD.
func Describe(ctx context.Context, dir, base string) (Change, error) {
	files, err := review.Analyze(ctx, dir, review.AnalyzeOptions{Base: base})
	if err != nil {
		return Change{}, fmt.Errorf("diff review: %w", err)
	}
	diffs, err := review.Diffs(ctx, dir, files, review.DiffOptions{Base: base})
	if err != nil {
		return Change{}, fmt.Errorf("diff review: %w", err)
	}
	return Change{Files: files, Flagged: review.Flagged(files),
		Report: review.FormatReport(files, diffs, review.ReportOptions{AllDiffs: true})}, nil
}

// DiffReview builds the diff review question for the change in dir since
// the commit base (see Describe): the report with every file's diff (a
// workflow's reviewer approves a change nobody has seen yet), then approve
// or reject, typed in full. Only when nothing is flagged may it pass
// unattended (NOT_REQUIRED); a flagged change waits for a human however
// long it takes.
func DiffReview(ctx context.Context, dir, base string) (human.Question, error) {
	c, err := Describe(ctx, dir, base)
	if err != nil {
		return human.Question{}, err
	}
	prompt := fmt.Sprintf("Commit the changes to %s? Nothing is committed unless you type %s.", plural(len(c.Files), "file", "files"), Approve)
	if n := len(c.Flagged); n > 0 {
		prompt = fmt.Sprintf("!! %s flagged above. %s", plural(n, "file is", "files are"), prompt)
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
	if len(c.Flagged) == 0 {
		q.Unattended = &human.Option{Key: NotRequired, Decision: string(review.NotRequired)}
	}
	return q, nil
}

// Flagged returns the flagged files a diff review question recorded
// (review.FlaggedIn).
func Flagged(q human.Question) []string { return review.FlaggedIn(q) }

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
