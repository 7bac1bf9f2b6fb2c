package governance

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/safewrite"
)

// Clerk does the loop's I/O for a workflow's nodes and gates: it asks the
// models, keeps the trail and prepares the files the human edits. Nothing
// else is reached: no globals.
type Clerk struct {
	Writer *safewrite.Writer // every file write: trail, working copies
	Events event.Sink        // messages for the human; nil discards
	Audit  *audit.Logger     // cut-off replies; nil discards
	// MaxOutput is, per role, the most output a retry of a cut-off reply
	// may ask for (the model's maximum or the configured
	// max_output_tokens); 0 lets it double.
	MaxOutput map[llm.Role]int
	// StateDir holds the working copies the human edits
	// (StateDir/runs/<run>/edit/...), outside the repository, so an
	// unfinished edit never shows up in the user's git status.
	StateDir string
	// Actor names the workflow in safewrite's records ("azero issue").
	Actor string
}

// Say tells the human something.
func (c *Clerk) Say(ctx context.Context, tone event.Tone, format string, args ...any) {
	if c.Events == nil {
		return
	}
	kind := event.Info
	if tone == event.Warn || tone == event.Bad {
		kind = event.Warning
	}
	c.Events.Emit(ctx, event.New(kind, tone, format, args...))
}

// maxReplyAttempts bounds the asking for one reply: a reply cut off at its
// token limit is asked again with twice the room, up to this many times.
const maxReplyAttempts = 3

// TruncatedError reports a reply cut off at its token limit every time it
// was asked for. A truncated draft is never passed on as if complete.
type TruncatedError struct {
	Role      llm.Role
	Attempts  int
	MaxTokens int
}

func (e *TruncatedError) Error() string {
	return fmt.Sprintf("the %s's reply was cut off at its token limit %d times (last limit %d tokens); nothing was saved as a draft or verdict. Shorten the brief, raise [roles.<role>] max_output_tokens if the model allows more, or use a model with longer replies, then resume the run",
		e.Role, e.Attempts, e.MaxTokens)
}

// Generate asks m and returns its complete reply. A truncated reply is
// asked again with twice the room; an empty or refused one is an error.
func (c *Clerk) Generate(ctx context.Context, m llm.Model, role llm.Role, req llm.Request) (string, error) {
	if m == nil {
		return "", fmt.Errorf("no %s model is open", role)
	}
	ceiling := c.MaxOutput[role]
	if ceiling > 0 {
		req.MaxTokens = min(req.MaxTokens, ceiling)
	}
	for attempt := 1; ; attempt++ {
		resp, err := m.Generate(ctx, req)
		if err != nil {
			return "", fmt.Errorf("%s (%s): %w", role, m.Name(), err)
		}
		switch {
		case resp.Truncated() || resp.Stop == llm.StopMaxTokens:
			next := 2 * req.MaxTokens
			if ceiling > 0 {
				next = min(next, ceiling)
			}
			// Never the same call again: more room, or stop.
			if attempt >= maxReplyAttempts || next <= req.MaxTokens {
				return "", &TruncatedError{Role: role, Attempts: attempt, MaxTokens: req.MaxTokens}
			}
			c.Say(ctx, event.Warn, "%s: reply cut off at %d tokens; asking again with %d", role, req.MaxTokens, next)
			_ = c.Audit.Event(ctx, "reply_truncated", flow.RunID(ctx), slog.String("role", string(role)),
				slog.Int("output_limit", req.MaxTokens), slog.Int("next_output_limit", next))
			req.MaxTokens = next
			continue
		case resp.Stop == llm.StopRefused:
			return "", fmt.Errorf("the %s (%s) declined to answer; reword the brief or feedback and resume the run", role, m.Name())
		case strings.TrimSpace(resp.Text) == "":
			return "", fmt.Errorf("the %s (%s) returned an empty reply; resume the run to ask again", role, m.Name())
		}
		return resp.Text, nil
	}
}

// Reply returns the model's reply for this step: the trail's last entry
// when it is of kind (an earlier attempt of the node saved it before the
// run was killed: the model is not asked twice for one step), else what
// ask returns, recorded in the trail. count is the number of entries of
// kind in the trail.
func (c *Clerk) Reply(ctx context.Context, t Trail, kind string, ask func() (string, error)) (Entry, string, int, error) {
	entries, err := t.Entries()
	if err != nil {
		return Entry{}, "", 0, err
	}
	if last, _ := Last(entries); last.Kind == kind {
		b, err := t.Read(last)
		return last, string(b), Count(entries, kind), err
	}
	text, err := ask()
	if err != nil {
		return Entry{}, "", 0, err
	}
	e, err := t.Record(ctx, kind, []byte(text))
	if err != nil {
		return Entry{}, "", 0, err
	}
	return e, text, Count(append(entries, e), kind), nil
}

// WorkCopy returns the path of a working copy the human edits, creating
// it with content unless it exists: a copy left by an attempt that was
// killed holds the human's unfinished edits, which a resume keeps.
func (c *Clerk) WorkCopy(ctx context.Context, runID, dir, name, content string) (string, error) {
	rel := filepath.Join("runs", runID, "edit", dir, name)
	abs := filepath.Join(c.StateDir, rel)
	if _, err := os.Stat(abs); err == nil {
		return abs, nil
	}
	_, err := c.Writer.Write(ctx, safewrite.Request{Root: c.StateDir, Path: rel, Content: []byte(content),
		Base: &safewrite.Snapshot{Exists: false}, Mode: 0o600, Actor: c.Actor, RunID: runID})
	if err != nil {
		return "", fmt.Errorf("prepare %s for the editor: %w", name, err)
	}
	return abs, nil
}

// Flush writes the gate's pending records to the trail, in order, and
// applies them to the loop: among others, what the human wrote is kept
// for the reviewer (HumanWords; here, not in the gate's decide, which must
// stay a plain routing of the answer). A record an earlier, killed
// attempt of the node already wrote (an entry numbered after the gate's
// view of the trail, of the same kind and content) is not written twice.
func (c *Clerk) Flush(ctx context.Context, t Trail, l *Loop) error {
	if len(l.Pending) == 0 {
		return nil
	}
	entries, err := t.Entries()
	if err != nil {
		return err
	}
	for _, p := range l.Pending {
		var rec Entry
		found := false
		for _, e := range entries {
			if e.N > p.After && e.Kind == p.Kind {
				if b, err := t.Read(e); err == nil && bytes.Equal(b, Normalise(p.Kind, []byte(p.Content))) {
					rec, found = e, true
				}
			}
		}
		if !found {
			if rec, err = t.Record(ctx, p.Kind, []byte(p.Content)); err != nil {
				return err
			}
			entries = append(entries, rec)
		}
		// Later records of the same gate must come after this one.
		for i := range l.Pending {
			l.Pending[i].After = max(l.Pending[i].After, rec.N)
		}
		switch p.Kind {
		case KindDraftEdited:
			l.heard(p.Gate, WordsEdits, AddedLines(l.Draft, p.Content))
			l.Draft, l.DraftFile = string(Normalise(KindDraftEdited, []byte(p.Content))), rec.Name
			c.Say(ctx, event.Plain, "Your edits to the draft are recorded as %s.", rec.Name)
		case KindVerdictEdited:
			l.Verdict, l.VerdictFile = string(Normalise(KindVerdictEdited, []byte(p.Content))), rec.Name
			c.Say(ctx, event.Plain, "Your edits to the verdict are recorded as %s.", rec.Name)
		case KindFeedback:
			l.heard(p.Gate, WordsFeedback, p.Content)
			c.Say(ctx, event.Plain, "Feedback recorded as %s.", rec.Name)
		}
	}
	l.Pending = nil
	return nil
}

// LastEntry is the number of the trail's last entry (0 when empty).
func LastEntry(t Trail) (int, error) {
	entries, err := t.Entries()
	if err != nil {
		return 0, err
	}
	last, _ := Last(entries)
	return last.N, nil
}

// View is what a workflow adds to its gates' questions.
type View struct {
	Workflow string // the question's facts name it
	Slug     string
	// Drafter and Reviewer name the models, as the prompts do.
	Drafter, Reviewer string
	// Warnings come first in the report, each marked WARNING; Notes
	// last, one a line.
	Warnings, Notes []string
	// Approve says what approving at the verdict gate does ("File the
	// issue on github owner/name"); Overriding how it reads over a BLOCK
	// ("filing the issue anyway").
	Approve, Overriding string
	// Facts are more facts recorded with the question (and so with the
	// decision in the audit log).
	Facts map[string]any
}

func (v View) facts(base map[string]any) map[string]any {
	for k, x := range v.Facts {
		base[k] = x
	}
	return base
}

// AskDraft builds the draft gate's question (spec #62's N3), between the
// drafter and the reviewer: the human reads (and may edit) the draft in
// their editor, then sends it to the reviewer, asks for a revision with
// feedback, or stops.
func (c *Clerk) AskDraft(ctx context.Context, t Trail, l *Loop, v View) (human.Question, error) {
	p, err := c.WorkCopy(ctx, flow.RunID(ctx), "n3-"+numberOf(l.DraftFile), FileDraft, l.Draft)
	if err != nil {
		return human.Question{}, err
	}
	after, err := LastEntry(t)
	if err != nil {
		return human.Question{}, err
	}
	report := fmt.Sprintf("Opening draft #%d (a copy of %s/%s) in your editor: read it, edit it if you like, save and close to continue.",
		l.Drafts, t.Dir, l.DraftFile)
	warnings := v.Warnings
	if l.DraftWarning != "" {
		warnings = append([]string{l.DraftWarning}, warnings...)
	}
	for i := len(warnings) - 1; i >= 0; i-- {
		report = "WARNING: " + warnings[i] + "\n" + report
	}
	for _, n := range v.Notes {
		report += "\n" + strings.TrimSuffix(n, "\n")
	}
	return human.Question{
		Kind:   human.Editor,
		Title:  fmt.Sprintf("Iteration %d | Draft #%d", l.Iteration+1, l.Drafts),
		Report: report,
		Prompt: "Send this draft to the reviewer (" + v.Reviewer + "), ask the drafter to revise it, or stop to handle it yourself?",
		Files:  []human.File{{Name: FileDraft, Path: p, Content: l.Draft}},
		Options: []human.Option{
			{Key: AnswerSend, Label: "Send", Decision: "send"},
			{Key: AnswerRevise, Label: "Revise", Decision: "revise", Text: "Enter feedback for the drafter (" + v.Drafter + "):"},
			{Key: AnswerManual, Label: "Manual", Decision: "manual"},
		},
		Facts: v.facts(map[string]any{"workflow": v.Workflow, "slug": v.Slug, "iteration": l.Iteration + 1, "drafts": l.Drafts,
			"verdicts": l.Verdicts, "draft_file": l.DraftFile, "trail_last": after}),
	}, nil
}

// AskVerdict builds the verdict gate's question (spec #62's N5), between
// the reviewer and the workflow's output (or the drafter): the human reads,
// and may edit, the draft and the verdict, then approves, asks for a
// revision, or stops. Approving over the reviewer's BLOCK needs the word
// override typed as well.
func (c *Clerk) AskVerdict(ctx context.Context, t Trail, l *Loop, v View) (human.Question, error) {
	runID := flow.RunID(ctx)
	dir := "n5-" + numberOf(l.VerdictFile)
	dp, err := c.WorkCopy(ctx, runID, dir, FileDraft, l.Draft)
	if err != nil {
		return human.Question{}, err
	}
	vp, err := c.WorkCopy(ctx, runID, dir, FileVerdict, l.Verdict)
	if err != nil {
		return human.Question{}, err
	}
	after, err := LastEntry(t)
	if err != nil {
		return human.Question{}, err
	}
	var b strings.Builder
	for _, w := range v.Warnings {
		fmt.Fprintf(&b, "WARNING: %s\n", w)
	}
	fmt.Fprintf(&b, "Opening the draft and verdict #%d (copies of %s/%s and %s) in your editor: edit either (remove from the verdict anything that should not reach the drafter), save and close to continue.\n",
		l.Verdicts, t.Dir, l.DraftFile, l.VerdictFile)
	word := l.ReviewerWord()
	switch word {
	case "":
		b.WriteString("The verdict states no decision.\n")
	default:
		fmt.Fprintf(&b, "Reviewer's verdict: %s\n", word)
	}
	for _, n := range v.Notes {
		b.WriteString(strings.TrimSuffix(n, "\n") + "\n")
	}
	approve := human.Option{Key: AnswerApprove, Label: "Approve", Decision: "approve"}
	if Blocked(word) {
		approve.Confirm = OverrideWord
		approve.ConfirmWhy = fmt.Sprintf("The reviewer's verdict is %s: %s overrides it, and the override is recorded in the audit log.", word, v.Overriding)
	}
	return human.Question{
		Kind:   human.Editor,
		Title:  fmt.Sprintf("Iteration %d | Draft #%d | Verdict #%d", l.Iteration, l.Drafts, l.Verdicts),
		Report: b.String(),
		Prompt: v.Approve + ", ask the drafter to revise it, or stop to handle it yourself?",
		Files:  []human.File{{Name: FileDraft, Path: dp, Content: l.Draft}, {Name: FileVerdict, Path: vp, Content: l.Verdict}},
		Options: []human.Option{
			approve,
			{Key: AnswerRevise, Label: "Revise", Decision: "revise", Text: "Enter feedback for the drafter (" + v.Drafter + "):"},
			{Key: AnswerManual, Label: "Manual", Decision: "manual"},
		},
		Facts: v.facts(map[string]any{"workflow": v.Workflow, "slug": v.Slug, "iteration": l.Iteration, "drafts": l.Drafts,
			"verdicts": l.Verdicts, "verdict": word, "draft_file": l.DraftFile, "verdict_file": l.VerdictFile, "trail_last": after}),
	}, nil
}
