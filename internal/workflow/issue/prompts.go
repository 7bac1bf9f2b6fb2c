package issue

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"strings"

	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/workflow/governance"
)

// The prompts are compiled into the binary. The review prompt in
// particular has no override of any kind: a workflow that let a flag, a
// config key or a file in the repository replace it would let an agent
// substitute a weaker review (spec #62, "Hard-coded 0701c").
var (
	//go:embed template.md
	issueTemplate string
	//go:embed drafter.md
	drafterInstructions string
	//go:embed review.md
	reviewPrompt string
)

// Template returns the issue template the drafter follows.
func Template() string { return issueTemplate }

// ReviewPrompt returns the reviewer's instructions.
func ReviewPrompt() string { return reviewPrompt }

// ReviewPromptSHA256 identifies the review prompt in the audit log, so a
// reader can tell which prompt reviewed a draft.
func ReviewPromptSHA256() string {
	sum := sha256.Sum256([]byte(reviewPrompt))
	return hex.EncodeToString(sum[:])
}

// Token limits of the two calls. A reply cut off at the limit is asked
// again with twice the room (governance.Clerk.Generate).
const (
	draftMaxTokens  = 4096
	reviewMaxTokens = 4096
)

// draftRequest builds the drafter's request. Every part is delimited the
// same way, in every prompt: <brief>, <labels>, <draft>, <human_edits>,
// <verdict>, <feedback>. A first draft gets the brief and the tracker's
// labels; a revision gets them, the current draft, the human's edits of
// the drafter's last draft (a diff, to keep), the verdict the human left
// (when revised at N5) and the feedback.
func draftRequest(s *State) llm.Request {
	var b strings.Builder
	governance.Section(&b, "brief", s.Brief)
	labelsPart(&b, s)
	if s.Feedback == "" {
		b.WriteString("Write the issue for the brief above, following the template.\n")
	} else {
		governance.Section(&b, "draft", s.Draft)
		if edits := governance.HumanEdits(s.ModelDraft, s.Draft); edits != "" {
			b.WriteString("The human edited your last draft; these are their changes (lines starting with + are theirs). Keep them unless the feedback asks otherwise:\n\n")
			governance.Section(&b, "human_edits", edits)
		}
		if s.FeedbackVerdict != "" {
			b.WriteString("A reviewer's verdict on the draft, as the human left it after reading:\n\n")
			governance.Section(&b, "verdict", s.FeedbackVerdict)
		}
		b.WriteString("The human's feedback:\n\n")
		governance.Section(&b, "feedback", s.Feedback)
		b.WriteString("Revise the draft: reply with the complete revised issue, following the template.\n")
	}
	return llm.Request{
		System:    drafterInstructions + issueTemplate,
		Messages:  []llm.Message{{Role: llm.SpeakerUser, Text: b.String()}},
		MaxTokens: draftMaxTokens,
		Purpose:   "draft",
	}
}

// labelsPart tells the drafter the tracker's labels and how to propose
// one it lacks; with none known it says so, and every label is proposed.
func labelsPart(b *strings.Builder, s *State) {
	const propose = "write it as new: NAME (for example **Labels:** bug, new: performance); it is created only if the human files the draft naming it"
	switch {
	case len(s.Labels) > 0:
		b.WriteString("The labels the repository's tracker has, one a line:\n\n")
		governance.Section(b, "labels", strings.Join(s.Labels, "\n"))
		b.WriteString("Put only labels from this list on the **Labels:** line. If the issue needs a label that is not in the list, " + propose + ".\n\n")
	case s.LabelsRead && s.LabelsError == "":
		b.WriteString("No labels are known: the repository's tracker has none yet. For every label you name, " + propose + ".\n\n")
	default:
		b.WriteString("No labels are known: the repository's labels could not be read from its tracker. For every label you name, " + propose + ".\n\n")
	}
}

// reviewRequest builds the reviewer's request: the built-in review prompt,
// the brief the draft was written from, what the human wrote themselves
// (their feedback and the lines they added to the drafts, in order), and
// the draft as the human sent it. Nothing else a model wrote is in it: no
// draft the human did not send, no line they took out.
func reviewRequest(s *State) llm.Request {
	var b strings.Builder
	governance.Section(&b, "brief", s.Brief)
	if words := governance.HumanWordsText(s.HumanWords); words != "" {
		b.WriteString("What the human responsible for this issue wrote themselves while it was drafted, in order: their feedback to the drafter and the lines they added to the drafts. Like the brief, it is the reference the draft is checked against:\n\n")
		governance.Section(&b, "human", words)
	}
	governance.Section(&b, "draft", s.Draft)
	if len(s.HumanWords) > 0 {
		b.WriteString("Review the issue draft above, written from the brief and the human's own words above it.\n")
	} else {
		b.WriteString("Review the issue draft above, written from the brief above it.\n")
	}
	return llm.Request{
		System:    reviewPrompt,
		Messages:  []llm.Message{{Role: llm.SpeakerUser, Text: b.String()}},
		MaxTokens: reviewMaxTokens,
		Purpose:   "review",
	}
}

// VerdictWord returns the decision a verdict states on its "Verdict:"
// line, upper-cased (APPROVED, BLOCK, ...), or "" when it states none.
func VerdictWord(verdict string) string { return governance.VerdictWord(verdict) }

// StripFence removes one code fence wrapping a whole reply.
func StripFence(reply string) string { return governance.StripFence(reply) }

// SplitDraft takes the issue out of a drafter's reply (governance.SplitDraft).
func SplitDraft(reply string) (draft, prose, warning string) { return governance.SplitDraft(reply) }

// StripVerdict takes the verdict out of a reviewer's reply.
func StripVerdict(reply string) string { return governance.StripVerdict(reply) }
