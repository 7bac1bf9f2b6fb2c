package design

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/workflow/governance"
)

// The prompts and the template are compiled into the binary. Neither the
// review prompt nor the template has an override of any kind: a flag, a
// config key or a file in the repository that replaced them would let an
// agent substitute a weaker review, or a design shape the mechanical
// check and the implementation do not expect.
var (
	//go:embed template.md
	lldTemplate string
	//go:embed drafter.md
	drafterInstructions string
	//go:embed review.md
	reviewPrompt string
)

// Template returns the LLD template the drafter follows.
func Template() string { return lldTemplate }

// ReviewPrompt returns the reviewer's instructions.
func ReviewPrompt() string { return reviewPrompt }

// ReviewPromptSHA256 identifies the review prompt in the audit log.
func ReviewPromptSHA256() string {
	sum := sha256.Sum256([]byte(reviewPrompt))
	return hex.EncodeToString(sum[:])
}

// Purposes of the two calls (they name the lineage files, and the
// scripted model's built-in replies answer them).
const (
	purposeDraft  = "design"
	purposeReview = "design-review"
)

// Token limits of the two calls; a reply cut off is asked again with
// twice the room (governance.Clerk.Generate).
const (
	draftMaxTokens  = 8192
	reviewMaxTokens = 4096
)

// inputPart writes what the design is for: the issue, or the brief.
func inputPart(b *strings.Builder, s *State) {
	if s.Issue == nil {
		governance.Section(b, "brief", s.Brief)
		return
	}
	governance.Section(b, "issue", issueText(s.Issue))
}

// issueText is the issue as the models (and the trail's first file) show
// it: its title, where it is, its labels, then its body.
func issueText(is *Issue) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\nIssue #%d", is.Title, is.Number)
	if is.URL != "" {
		fmt.Fprintf(&b, " (%s)", is.URL)
	}
	if is.State != "" && is.State != "open" {
		fmt.Fprintf(&b, ", %s", is.State)
	}
	if len(is.Labels) > 0 {
		fmt.Fprintf(&b, ", labels: %s", strings.Join(is.Labels, ", "))
	}
	b.WriteString("\n\n")
	b.WriteString(strings.TrimSpace(is.Body))
	b.WriteString("\n")
	return b.String()
}

// draftRequest builds the drafter's request. Every part is delimited:
// <issue> or <brief>, <repository>, <draft>, <check>, <human_edits>,
// <verdict>, <feedback>. A first draft gets the issue and the map; a
// draft the check sent back gets them, the draft and the findings; a
// revision the human asked for gets them, the current draft, the human's
// edits of the drafter's last draft, the verdict the human left (when
// revised at the verdict gate) and the feedback.
func draftRequest(s *State) llm.Request {
	var b strings.Builder
	inputPart(&b, s)
	governance.Section(&b, "repository", s.Map)
	switch {
	case s.CheckFeedback != "":
		governance.Section(&b, "draft", s.Draft)
		b.WriteString("azero's mechanical check of the Files Changed table of your draft found these problems:\n\n")
		governance.Section(&b, "check", s.CheckFeedback)
		b.WriteString("Fix every problem above, using the repository's real paths: reply with the complete corrected design, following the template.\n")
	case s.Feedback != "":
		governance.Section(&b, "draft", s.Draft)
		if edits := governance.HumanEdits(s.ModelDraft, s.Draft); edits != "" {
			b.WriteString("The human edited your last draft; these are their changes (lines starting with + are theirs). Keep them unless the feedback asks otherwise:\n\n")
			governance.Section(&b, "human_edits", edits)
		}
		if s.FeedbackVerdict != "" {
			b.WriteString("A reviewer's verdict on the design, as the human left it after reading:\n\n")
			governance.Section(&b, "verdict", s.FeedbackVerdict)
		}
		b.WriteString("The human's feedback:\n\n")
		governance.Section(&b, "feedback", s.Feedback)
		b.WriteString("Revise the design: reply with the complete revised design, following the template.\n")
	default:
		what := "issue"
		if s.Issue == nil {
			what = "problem statement"
		}
		fmt.Fprintf(&b, "Write the design for the %s above, for the repository mapped above, following the template.\n", what)
	}
	return llm.Request{
		System:    drafterInstructions + lldTemplate,
		Messages:  []llm.Message{{Role: llm.SpeakerUser, Text: b.String()}},
		MaxTokens: draftMaxTokens,
		Purpose:   purposeDraft,
	}
}

// reviewRequest builds the reviewer's request: the built-in review
// prompt, the issue (or brief), what the human wrote themselves, the
// design as the human sent it and what the mechanical check says of it
// (azero's code, not a model). Nothing else a model wrote is in it: no
// draft the human did not send, no line they took out, no draft the
// check sent back.
func reviewRequest(s *State, check []Finding) llm.Request {
	var b strings.Builder
	inputPart(&b, s)
	if words := governance.HumanWordsText(s.HumanWords); words != "" {
		b.WriteString("What the human responsible for this design wrote themselves while it was drafted, in order: their feedback to the drafter and the lines they added to the drafts. Like the issue, it is the reference the design is checked against:\n\n")
		governance.Section(&b, "human", words)
	}
	governance.Section(&b, "draft", s.Draft)
	if len(check) == 0 {
		governance.Section(&b, "check", "The Files Changed table passed: every path is inside the repository, Modify and Delete targets exist, Add targets do not and none lies below a file, and it lists a test file and a code file.")
	} else {
		governance.Section(&b, "check", "The Files Changed table fails the check; the design cannot be committed until these are fixed:\n"+FindingsText(check))
	}
	if s.Issue == nil {
		b.WriteString("Review the design above, written for the problem statement above it.\n")
	} else {
		b.WriteString("Review the design above, written for the issue above it.\n")
	}
	return llm.Request{
		System:    reviewPrompt,
		Messages:  []llm.Message{{Role: llm.SpeakerUser, Text: b.String()}},
		MaxTokens: reviewMaxTokens,
		Purpose:   purposeReview,
	}
}
