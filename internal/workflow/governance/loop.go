package governance

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/azero-dev/azero/internal/human"
)

// The two gates of the loop, named alike in every workflow (spec #62's N3
// and N5): what the human wrote is recorded with the gate's name.
const (
	GateDraft   = "edit_draft"   // between the drafter and the reviewer
	GateVerdict = "edit_verdict" // between the reviewer and the workflow's output (or the drafter)
)

// The files the gates open in the editor, by name in the question.
const (
	FileDraft   = "draft.md"
	FileVerdict = "verdict.md"
)

// Answers at the gates (spec 2.3, HumanDecision).
const (
	AnswerSend    = "S"
	AnswerApprove = "A"
	AnswerRevise  = "R"
	AnswerManual  = "M"
	// OverrideWord confirms approving over the reviewer's BLOCK.
	OverrideWord = "override"
)

// Loop is the draft-review loop's part of a run's state. Workflows embed
// it in their State, so its fields are saved as the State's own.
type Loop struct {
	Iteration int `json:"iteration"` // times the human was shown a draft at the draft gate
	Drafts    int `json:"drafts"`    // drafter replies
	Verdicts  int `json:"verdicts"`  // reviewer replies

	Draft      string `json:"draft"`       // the current draft, as the human last left it
	ModelDraft string `json:"model_draft"` // the drafter's last draft, before the human's edits
	// DraftWarning says why the drafter's last reply could not be cut
	// cleanly to the document; the human reads it at the next gate.
	DraftWarning string `json:"draft_warning,omitempty"`
	DraftFile    string `json:"draft_file"`   // its trail file
	Verdict      string `json:"verdict"`      // the current verdict, as the human last left it
	VerdictFile  string `json:"verdict_file"` // its trail file

	// Feedback is the human's request for a revision, consumed by the next
	// draft; FeedbackVerdict the verdict that goes with it (set at the
	// verdict gate).
	Feedback        string `json:"feedback,omitempty"`
	FeedbackVerdict string `json:"feedback_verdict,omitempty"`

	// HumanWords is what the human wrote themselves at the gates, in
	// order: their feedback and the lines they added to a draft. The
	// reviewer checks the draft against them as against the workflow's
	// input.
	HumanWords []HumanWords `json:"human_words,omitempty"`

	// Manual is set when the human stopped the run for manual handling, at
	// the gate named by StoppedAt.
	Manual    bool   `json:"manual,omitempty"`
	StoppedAt string `json:"stopped_at,omitempty"`

	// Pending are the records of the human's last answer, written to the
	// trail by the next node (Clerk.Flush).
	Pending []PendingRecord `json:"pending,omitempty"`
	// ReviewerVerdict is the reviewer's own verdict word on the current
	// draft (before any edit by the human); Override is set when the human
	// approved over a BLOCK.
	ReviewerVerdict string `json:"reviewer_verdict,omitempty"`
	Override        bool   `json:"override,omitempty"`
}

// PendingRecord is a trail file to write for the human's answer: After is
// the number of the trail's last entry when the question was asked.
type PendingRecord struct {
	Gate    string `json:"gate,omitempty"` // the gate that asked
	After   int    `json:"after"`
	Kind    string `json:"kind"`
	Content string `json:"content"`
}

// Routes are where a workflow's gates lead.
type Routes struct {
	Pass   string // the draft gate's Send (the review), the verdict gate's Approve (the output)
	Revise string // back to the drafter
	Manual string // the human takes over
}

// AfterDraft routes the draft gate: Send goes to the review, Revise back to
// the drafter, Manual ends the run.
func (r Routes) AfterDraft(choice string) (string, error) {
	switch choice {
	case AnswerSend:
		return r.Pass, nil
	case AnswerRevise:
		return r.Revise, nil
	case AnswerManual:
		return r.Manual, nil
	}
	return "", fmt.Errorf("%s: unknown choice %q", GateDraft, choice)
}

// AfterVerdict routes the verdict gate: Approve goes to the workflow's
// output, Revise back to the drafter, Manual ends the run.
func (r Routes) AfterVerdict(choice string) (string, error) {
	switch choice {
	case AnswerApprove:
		return r.Pass, nil
	case AnswerRevise:
		return r.Revise, nil
	case AnswerManual:
		return r.Manual, nil
	}
	return "", fmt.Errorf("%s: unknown choice %q", GateVerdict, choice)
}

// DecideDraft routes the draft gate and leaves the human's edits and
// feedback for the next node to record (Clerk.Flush). It is pure.
func DecideDraft(l *Loop, q human.Question, a human.Answer, r Routes) (string, error) {
	next, err := r.AfterDraft(a.Key)
	if err != nil {
		return "", err
	}
	l.Iteration++
	after := trailLast(q)
	if edited, ok := a.Files[FileDraft]; ok && changed(l.Draft, edited) {
		l.pending(GateDraft, after, KindDraftEdited, edited)
	}
	switch a.Key {
	case AnswerRevise:
		l.pending(GateDraft, after, KindFeedback, a.Text)
		l.Feedback, l.FeedbackVerdict = strings.TrimSpace(a.Text), ""
	case AnswerManual:
		l.Manual, l.StoppedAt = true, GateDraft
	}
	return next, nil
}

// DecideVerdict routes the verdict gate and leaves the human's edits and
// feedback for the next node to record. It is pure.
func DecideVerdict(l *Loop, q human.Question, a human.Answer, r Routes) (string, error) {
	next, err := r.AfterVerdict(a.Key)
	if err != nil {
		return "", err
	}
	after := trailLast(q)
	verdict := l.Verdict
	if edited, ok := a.Files[FileDraft]; ok && changed(l.Draft, edited) {
		l.pending(GateVerdict, after, KindDraftEdited, edited)
	}
	if edited, ok := a.Files[FileVerdict]; ok && changed(l.Verdict, edited) {
		l.pending(GateVerdict, after, KindVerdictEdited, edited)
		verdict = edited
	}
	switch a.Key {
	case AnswerApprove:
		l.Override = a.Confirm != ""
	case AnswerRevise:
		l.pending(GateVerdict, after, KindFeedback, a.Text)
		l.Feedback, l.FeedbackVerdict = strings.TrimSpace(a.Text), strings.TrimSpace(verdict)
	case AnswerManual:
		l.Manual, l.StoppedAt = true, GateVerdict
	}
	return next, nil
}

// pending records what the human answered at a gate, to be written to the
// audit trail by the node that follows (Clerk.Flush).
func (l *Loop) pending(gate string, after int, kind, content string) {
	l.Pending = append(l.Pending, PendingRecord{Gate: gate, After: after, Kind: kind, Content: content})
}

// heard keeps what the human wrote at a gate for the reviewer (nothing
// when they wrote nothing: a deletion adds no words of theirs). A record
// of a run started before records named their gate is not kept: its gate,
// and so what the words answered, is unknown.
func (l *Loop) heard(gate, kind, text string) {
	if strings.TrimSpace(text) == "" || gate == "" {
		return
	}
	w := HumanWords{Gate: gate, Kind: kind, Draft: l.Drafts, Text: strings.TrimSpace(text)}
	if gate == GateVerdict {
		w.Verdict = l.Verdicts
	}
	l.HumanWords = append(l.HumanWords, w)
}

// ReviewerWord is the reviewer's own verdict word on the current draft.
func (l *Loop) ReviewerWord() string {
	if l.ReviewerVerdict != "" {
		return l.ReviewerVerdict
	}
	return VerdictWord(l.Verdict)
}

// changed reports whether the human's text differs from the draft's,
// beyond the final newlines an editor adds or drops.
func changed(before, after string) bool {
	return !bytes.Equal(Normalise(KindDraft, []byte(before)), Normalise(KindDraft, []byte(after)))
}

// trailLast reads the trail position a gate's question recorded.
func trailLast(q human.Question) int {
	switch v := q.Facts["trail_last"].(type) {
	case int:
		return v
	case float64: // a question read back from JSON
		return int(v)
	}
	return 0
}

// numberOf is the number of a trail file's name, as three digits.
func numberOf(file string) string {
	if e, ok := ParseEntry(file); ok {
		return fmt.Sprintf("%03d", e.N)
	}
	return "000"
}
