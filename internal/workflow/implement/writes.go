package implement

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/safewrite"
	"github.com/azero-dev/azero/internal/workflow/gates"
)

// writeFact is what the audit log and the question's fingerprint record
// of one pending write: an answer to the question approves these bytes
// over those, nothing else.
type writeFact struct {
	Path      string `json:"path"`
	OldSHA256 string `json:"old_sha256"`
	NewSHA256 string `json:"new_sha256"`
	OldLines  int    `json:"original_lines"`
	NewLines  int    `json:"lines_after"`
}

// askWriteReview asks about the whole-file replacements of large files the
// last round left unwritten (spec #173): safewrite's warning and the diff
// of each, recomputed from the worktree, so the human sees what approving
// writes. A file changed since the coder read it is said to be stale: an
// approval would write nothing of it.
func (n *nodes) askWriteReview(ctx context.Context, s *State) (human.Question, error) {
	if len(s.PendingWrites) == 0 {
		return human.Question{}, errors.New("write review: no write is pending")
	}
	var warnings, diffs strings.Builder
	paths := make([]string, 0, len(s.PendingWrites))
	facts := make([]writeFact, 0, len(s.PendingWrites))
	for _, w := range s.PendingWrites {
		p, err := safewrite.ProposeContext(ctx, safewrite.Request{Root: s.Worktree, Path: w.Path, Content: []byte(w.Content),
			Strategy: safewrite.Strategy(w.Strategy)})
		if err != nil {
			return human.Question{}, fmt.Errorf("write review of %s: %w", w.Path, err)
		}
		fmt.Fprintf(&warnings, "!! WARNING: %s: %s: %d lines would be deleted and %d added\n", w.Path, replaceWarning(p), p.Deleted, p.Added)
		if p.Snapshot().SHA256 != w.OldSHA256 {
			fmt.Fprintf(&warnings, "!! WARNING: %s changed since the coder read it: approving writes nothing of it, the coder is asked again\n", w.Path)
		}
		diffs.WriteString(strings.TrimRight(p.Diff, "\n"))
		diffs.WriteString("\n\n")
		paths = append(paths, w.Path)
		facts = append(facts, writeFact{Path: w.Path, OldSHA256: w.OldSHA256, NewSHA256: w.NewSHA256, OldLines: w.OldLines, NewLines: w.NewLines})
	}
	what, files := "it", "a file"
	if len(paths) > 1 {
		what, files = "them", "files"
	}
	purpose := s.PendingWrites[0].Purpose
	q := human.Question{
		Kind: human.Word,
		Title: fmt.Sprintf("The coder wrote %s whole (%s), replacing %s of more than %d lines", strings.Join(paths, ", "), purposeName(purpose),
			files, safewrite.ApprovalLines),
		Report: warnings.String() + "\n" + diffs.String(),
		Format: gates.ReportFormat,
		Prompt: fmt.Sprintf("Write %s as shown? Nothing is written unless you type %s.", what, AnswerApprove),
		Options: []human.Option{
			{Key: AnswerApprove, Label: "to write exactly this content", Decision: "APPROVED"},
		},
		Facts: map[string]any{"files": paths, "writes": facts, "purpose": purpose},
	}
	if canRegenerate(s, purpose) {
		q.Options = append(q.Options, human.Option{Key: AnswerRevise, Label: "to send it back to the coder with your feedback", Decision: "REVISE",
			Text: "What should the coder do instead?"})
	}
	q.Options = append(q.Options, human.Option{Key: AnswerAbort, Label: "to stop the run", Decision: "ABORTED"})
	return q, nil
}

// purposeName says what a round writes.
func purposeName(purpose string) string {
	switch purpose {
	case PurposeScaffold:
		return "the tests"
	case PurposeStub:
		return "compiling stubs"
	case PurposeRevise:
		return "the tests, for your feedback"
	}
	return "the code"
}

// canRegenerate reports whether a round may be done again at the human's
// request: while its attempts remain, as at the human review.
func canRegenerate(s *State, purpose string) bool {
	switch purpose {
	case PurposeImplement:
		return s.Implementations < MaxImplementations
	case PurposeRevise:
		return s.ReviseRounds < MaxScaffolds
	}
	return s.Scaffolds < MaxScaffolds
}

// decideWriteReview routes the human's answer at a write review: approve
// writes the pending files as shown, revise sends the round back to the
// coder with the feedback, abort ends the run.
func decideWriteReview(s *State, q human.Question, a human.Answer) (string, error) {
	scaffold, revise := q.Gate == NodeScaffoldWriteReview, q.Gate == NodeReviseWriteReview
	switch a.Key {
	case AnswerApprove:
		s.WritesChannel = a.Channel
		switch {
		case scaffold:
			return NodeScaffoldApplyWrites, nil
		case revise:
			return NodeReviseApplyWrites, nil
		}
		return NodeApplyWrites, nil
	case AnswerRevise:
		s.WriteFeedback = strings.TrimSpace(a.Text)
		s.WriteFeedbackPaths = nil
		for _, w := range s.PendingWrites {
			s.WriteFeedbackPaths = append(s.WriteFeedbackPaths, w.Path)
		}
		if scaffold {
			s.Regenerate = PurposeScaffold
			if len(s.PendingWrites) > 0 {
				s.Regenerate = s.PendingWrites[0].Purpose
			}
		}
		s.PendingWrites = nil
		switch {
		case revise:
			return NodeRevise, nil
		case scaffold:
			return NodeScaffold, nil
		}
		return NodeImplement, nil
	}
	s.Decision, s.Result = AnswerAbort, ResultAborted
	s.PendingWrites = nil
	return NodeCleanup, nil
}

func (n *nodes) applyScaffoldWrites(ctx context.Context, s *State) (string, error) {
	return n.applyWrites(ctx, s, NodeRed, NodeScaffold)
}

func (n *nodes) applyReviseWrites(ctx context.Context, s *State) (string, error) {
	return n.applyWrites(ctx, s, NodeRed, NodeRevise)
}

func (n *nodes) applyImplementWrites(ctx context.Context, s *State) (string, error) {
	return n.applyWrites(ctx, s, NodeGreen, NodeImplement)
}

// applyWrites writes the pending files the human approved, each through
// the Writer with the snapshot the coder's prompt was built from as its
// base and an approver that approves exactly the content the human saw,
// so the audit log records the approval with its channel. A file that
// changed since is refused as stale, and the round is done again from its
// current content (then). A file already holding the approved content (a
// repeat after a crash) is left as it is.
func (n *nodes) applyWrites(ctx context.Context, s *State, then, again string) (string, error) {
	if s.WritesChannel == "" {
		return "", errors.New("apply the approved writes: no approval is recorded")
	}
	stale := false
	for _, pw := range s.PendingWrites {
		_, now, err := safewrite.Read(s.Worktree, pw.Path)
		if err != nil {
			return "", err
		}
		if now.Exists && now.SHA256 == pw.NewSHA256 {
			continue
		}
		w := *n.d.Writer
		w.Approver = boundApprover{w: pw, channel: s.WritesChannel}
		_, err = w.Write(ctx, safewrite.Request{Root: s.Worktree, Path: pw.Path, Content: []byte(pw.Content), Strategy: safewrite.Strategy(pw.Strategy),
			Base: &safewrite.Snapshot{Exists: true, SHA256: pw.OldSHA256}, Actor: "implement:" + pw.Purpose, RunID: flow.RunID(ctx)})
		var changed *safewrite.StaleError
		switch {
		case errors.As(err, &changed):
			stale = true
			n.say(ctx, event.Warn, "%s: not written: %v", pw.Path, err)
		case err != nil:
			return "", err
		default:
			n.say(ctx, event.Plain, "%s written as approved", pw.Path)
		}
	}
	purpose := ""
	if len(s.PendingWrites) > 0 {
		purpose = s.PendingWrites[0].Purpose
	}
	s.PendingWrites, s.WritesChannel = nil, ""
	if stale {
		if purpose == PurposeStub || purpose == PurposeScaffold {
			s.Regenerate = purpose
		}
		n.say(ctx, event.Warn, "the approved content was not written where its file changed since the coder read it: asking the coder again")
		return again, nil
	}
	return then, nil
}

// boundApprover approves one write: the pending write the human approved
// at the write review, over the very content it was computed from. Any
// other proposal is refused.
type boundApprover struct {
	w       PendingWrite
	channel string
}

func (b boundApprover) Decide(_ context.Context, p safewrite.Proposal) (safewrite.Decision, error) {
	if filepath.ToSlash(p.Rel) != filepath.ToSlash(filepath.Clean(b.w.Path)) || string(p.Strategy) != b.w.Strategy ||
		p.Snapshot().SHA256 != b.w.OldSHA256 || sha256Hex(p.Result) != b.w.NewSHA256 {
		return safewrite.Decision{}, fmt.Errorf("write %s: the approval given at the write review is for other content; nothing was written", p.Rel)
	}
	return safewrite.Decision{Approved: true, Strategy: p.Strategy, Line: p.Line, Channel: b.channel}, nil
}
