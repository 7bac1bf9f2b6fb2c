package review

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/iostreams"
)

// Decision is how a gate ended (spec #171, with DESIGN.md's NOT_REQUIRED).
type Decision string

// Decisions, as written to the audit log and --json output.
const (
	Approved              Decision = "APPROVED"
	Rejected              Decision = "REJECTED"
	AbortedNonInteractive Decision = "ABORTED_NON_INTERACTIVE"
	NotRequired           Decision = "NOT_REQUIRED"
)

// ApproveWord is what the human types to let a commit through.
const ApproveWord = "approve"

// RejectWord is what the human types to stop it.
const RejectWord = "reject"

// Approver asks a human for a typed word; *prompt.Prompter is one. Its
// errors whose NeedsHuman method reports true mean nobody could answer.
type Approver interface {
	Approve(ctx context.Context, question, word, reject string) (bool, error)
}

// Gate is the diff review before a commit. It deliberately has no way to
// be skipped: there is no auto, yes or force field and no environment
// variable; a commit passes only with a typed approve, or with nothing
// flagged when nobody can be asked.
type Gate struct {
	IO       *iostreams.IOStreams // the report and the question go to IO.ErrOut
	Prompter Approver             // asks when IO.CanPrompt()
	Audit    *audit.Logger        // every decision is recorded; nil discards
	Now      func() time.Time     // default time.Now
}

// GateOptions say what to review.
type GateOptions struct {
	Repo   string // a directory inside the repository; "" is the working directory
	Staged bool   // review the index against HEAD only (a pre-commit hook)
	RunID  string // the workflow run, recorded in the audit log
	// AllDiffs shows every file's diff before asking, not only the flagged
	// ones: a workflow's reviewer approves a change nobody has seen yet.
	AllDiffs bool
	// Quiet shows only the flagged files (banner and diff) and the
	// question, and nothing when nothing is flagged. It decides the same.
	Quiet bool
}

// Outcome is what the gate saw and decided. Its JSON is `azero gate
// --json`'s document.
type Outcome struct {
	Repository    string         `json:"repository"`
	Files         []FileAnalysis `json:"files"`
	Flagged       []string       `json:"flagged_files"`
	Decision      Decision       `json:"decision,omitempty"`
	HumanApproved bool           `json:"human_approved"`
	ApprovedAt    time.Time      `json:"approved_at,omitzero"`
}

// ErrRejected is matched by the error of a gate the human rejected; that
// error also matches human.ErrAborted (exit code 4).
var ErrRejected = errors.New("changes rejected at the diff review")

// NeedsReviewError reports flagged files when nobody can be asked. Its
// NeedsHuman method reports true: a command exits 3, a workflow run waits
// at the gate.
type NeedsReviewError struct {
	Repository string
	Flagged    []string
	Cause      error // why nobody could be asked, if known
}

func (e *NeedsReviewError) Error() string {
	names := make([]string, 0, 3)
	for _, p := range e.Flagged[:min(3, len(e.Flagged))] {
		names = append(names, displayPath(p))
	}
	list := strings.Join(names, ", ")
	if len(e.Flagged) > 3 {
		list += fmt.Sprintf(" and %d more", len(e.Flagged)-3)
	}
	why := "stdin or stderr is not a terminal"
	if e.Cause != nil {
		why = e.Cause.Error()
	}
	return fmt.Sprintf("%s in %s need a human review (%s) and nobody can be asked here (%s): run `azero gate` from a terminal there to see the diff and type approve or reject",
		plural(len(e.Flagged), "file", "files"), e.Repository, list, why)
}

// NeedsHuman marks the error as "a human must answer first".
func (e *NeedsReviewError) NeedsHuman() bool { return true }

// Unwrap returns the cause.
func (e *NeedsReviewError) Unwrap() error { return e.Cause }

func (g *Gate) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

// Run analyses the repository, shows the report and decides:
//   - no changes at all: NOT_REQUIRED, nil;
//   - a terminal (IO.CanPrompt): the report is shown and the human must
//     type approve (APPROVED, nil) or reject (REJECTED, an error matching
//     ErrRejected and human.ErrAborted); anything else asks again;
//   - no terminal, nothing flagged: NOT_REQUIRED, nil;
//   - no terminal, something flagged: ABORTED_NON_INTERACTIVE at once, a
//     *NeedsReviewError.
//
// Any failure to analyse is an error with an empty Decision: the gate
// fails closed. Every decision is audited as "gate_decision".
func (g *Gate) Run(ctx context.Context, opts GateOptions) (Outcome, error) {
	out := Outcome{Repository: opts.Repo, Files: []FileAnalysis{}, Flagged: []string{}}
	repo, err := openRepo(ctx, opts.Repo)
	if err != nil {
		return out, g.failed(ctx, opts, out, err)
	}
	out.Repository = repo.Dir
	progress := g.IO.StartProgress("Analysing changes")
	files, err := analyzeRepo(ctx, repo, AnalyzeOptions{Staged: opts.Staged, Progress: progress.Update})
	progress.Done()
	if err != nil {
		return out, g.failed(ctx, opts, out, err)
	}
	out.Files = files
	out.Flagged = Flagged(files)
	errOut := g.IO.ErrOut
	report := ReportOptions{Color: g.IO.ColorScheme(), Staged: opts.Staged, FlaggedOnly: opts.Quiet}

	if len(files) == 0 {
		fmt.Fprint(errOut, FormatReport(files, nil, report))
		return g.decide(ctx, opts, out, NotRequired, nil)
	}
	interactive := g.IO.CanPrompt()
	// Nothing flagged passes without a question when nobody can be asked,
	// and, with Quiet (the pre-commit hook), without one at all.
	if (!interactive || opts.Quiet) && len(out.Flagged) == 0 {
		fmt.Fprint(errOut, FormatReport(files, nil, report))
		return g.decide(ctx, opts, out, NotRequired, nil)
	}

	shown := files
	if !opts.AllDiffs {
		shown = nil
		for _, f := range files {
			if f.RequiresReview {
				shown = append(shown, f)
			}
		}
	}
	report.AllDiffs = opts.AllDiffs
	diffs, err := diffs(ctx, repo, shown, DiffOptions{Staged: opts.Staged})
	if err != nil {
		return out, g.failed(ctx, opts, out, err)
	}
	fmt.Fprint(errOut, FormatReport(files, diffs, report))

	if !interactive {
		return g.decide(ctx, opts, out, AbortedNonInteractive, &NeedsReviewError{Repository: repo.Dir, Flagged: out.Flagged})
	}
	if g.Prompter == nil {
		return out, g.failed(ctx, opts, out, errors.New("no prompter to ask for approval"))
	}
	question := fmt.Sprintf("\nCommit the changes to %s? Nothing is committed unless you type %s.",
		plural(len(files), "file", "files"), ApproveWord)
	if n := len(out.Flagged); n > 0 {
		question = fmt.Sprintf("\n%s %s flagged above. %s", g.IO.ColorScheme().Red("!!"), plural(n, "file is", "files are"),
			strings.TrimPrefix(question, "\n"))
	}
	ok, err := g.Prompter.Approve(ctx, question, ApproveWord, RejectWord)
	switch {
	case err != nil && human.Needed(err):
		return g.decide(ctx, opts, out, AbortedNonInteractive, &NeedsReviewError{Repository: repo.Dir, Flagged: out.Flagged, Cause: err})
	case err != nil:
		// Interrupted while asking: no decision was made.
		return out, fmt.Errorf("diff review: %w", err)
	case ok:
		out.HumanApproved = true
		out.ApprovedAt = g.now().UTC()
		return g.decide(ctx, opts, out, Approved, nil)
	default:
		return g.decide(ctx, opts, out, Rejected,
			fmt.Errorf("%w (%w): nothing was committed and the changes are still in the working tree; review them with git diff HEAD", ErrRejected, human.ErrAborted))
	}
}

// decide records the decision, tells the human and returns err. A
// decision the audit log cannot take is not acted on: the gate fails
// closed with the write error, whatever the human answered.
func (g *Gate) decide(ctx context.Context, opts GateOptions, out Outcome, d Decision, err error) (Outcome, error) {
	// Only approve and reject are a human's answers, typed at the
	// terminal; the other decisions were taken with nobody asked.
	channel := human.ChannelUnattended
	if d == Approved || d == Rejected {
		channel = human.ChannelTerminal
	}
	if aerr := g.Audit.Event(ctx, "gate_decision", opts.RunID,
		slog.String("gate", "diff_review"),
		slog.String("decision", string(d)),
		slog.String("channel", channel),
		slog.Any("flagged_files", out.Flagged),
		slog.String("repository", out.Repository),
		slog.Int("files", len(out.Files)),
		slog.Bool("staged", opts.Staged),
		slog.Bool("quiet", opts.Quiet),
		slog.Bool("human_approved", out.HumanApproved)); aerr != nil {
		out.HumanApproved, out.ApprovedAt = false, time.Time{}
		fmt.Fprintln(g.IO.ErrOut, g.IO.ColorScheme().Red("Diff review: FAILED")+": the decision could not be recorded, so nothing passes.")
		return out, fmt.Errorf("diff review: the decision %s could not be recorded in the audit log, so it was not acted on: %w; free disk space or fix the log's permissions and run the review again", d, aerr)
	}
	out.Decision = d
	cs := g.IO.ColorScheme()
	var line string
	switch d {
	case Approved:
		line = cs.Green("Diff review: APPROVED") + " by the human at the terminal."
	case NotRequired:
		switch {
		case opts.Quiet:
			return out, err
		case len(out.Files) == 0:
			line = "Diff review: NOT_REQUIRED (no changes)."
		default:
			line = "Diff review: NOT_REQUIRED (nothing flagged and nobody to ask)."
		}
	case Rejected:
		line = cs.Red("Diff review: REJECTED") + ": nothing will be committed."
	case AbortedNonInteractive:
		line = cs.Red("Diff review: ABORTED_NON_INTERACTIVE") + ": flagged files need a human and nobody can be asked."
	}
	fmt.Fprintln(g.IO.ErrOut, line)
	return out, err
}

// failed records a gate that could not decide and returns err.
func (g *Gate) failed(ctx context.Context, opts GateOptions, out Outcome, err error) error {
	_ = g.Audit.Event(ctx, "gate_failed", opts.RunID, slog.String("repository", out.Repository), slog.String("error", err.Error()))
	return fmt.Errorf("diff review: %w", err)
}

// FlaggedFacts is the fact of a diff review's question that lists the
// files it flags.
const FlaggedFacts = "flagged_files"

// FlaggedIn returns the files a diff review question flags (its
// FlaggedFacts), as asked or as read back from JSON.
func FlaggedIn(q human.Question) []string {
	switch v := q.Facts[FlaggedFacts].(type) {
	case []string:
		return slices.Clone(v)
	case []any:
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
