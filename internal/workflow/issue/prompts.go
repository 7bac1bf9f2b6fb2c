package issue

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"regexp"
	"strings"

	"github.com/azero-dev/azero/internal/llm"
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
// again with twice the room, up to maxReplyAttempts times.
const (
	draftMaxTokens   = 4096
	reviewMaxTokens  = 4096
	maxReplyAttempts = 3
)

// draftRequest builds the drafter's request: the brief and the template
// for a first draft; the current draft, the human's feedback (and the
// verdict as the human left it, when the revision was asked at N5) and the
// template for a revision.
func draftRequest(s *State) llm.Request {
	system := drafterInstructions + issueTemplate
	var user string
	if s.Feedback == "" {
		// The brief alone: the instructions say what to do with it.
		user = strings.TrimSpace(s.Brief) + "\n"
	} else {
		var b strings.Builder
		// The current draft leads, title first, as the thing to revise.
		b.WriteString(strings.TrimSpace(s.Draft))
		b.WriteString("\n\n---\n\nRevise the issue draft above.\n")
		if s.FeedbackVerdict != "" {
			b.WriteString("\nA reviewer's verdict on it, as the human left it after reading:\n\n<verdict>\n")
			b.WriteString(strings.TrimSpace(s.FeedbackVerdict))
			b.WriteString("\n</verdict>\n")
		}
		b.WriteString("\nThe human's feedback:\n\n<feedback>\n")
		b.WriteString(strings.TrimSpace(s.Feedback))
		b.WriteString("\n</feedback>\n\nReply with the complete revised issue, following the template.\n")
		user = b.String()
	}
	return llm.Request{
		System:    system,
		Messages:  []llm.Message{{Role: llm.SpeakerUser, Text: user}},
		MaxTokens: draftMaxTokens,
		Purpose:   "draft",
	}
}

// reviewRequest builds the reviewer's request: the built-in review prompt
// and the draft as the human sent it.
func reviewRequest(draft string) llm.Request {
	return llm.Request{
		System: reviewPrompt,
		Messages: []llm.Message{{Role: llm.SpeakerUser,
			Text: "Review this issue draft.\n\n<draft>\n" + strings.TrimSpace(draft) + "\n</draft>\n"}},
		MaxTokens: reviewMaxTokens,
		Purpose:   "review",
	}
}

var verdictLine = regexp.MustCompile(`(?mi)^\W*verdict\W*:?\W*\s*([a-z_]+)`)

// VerdictWord returns the decision a verdict states on its "Verdict:"
// line, upper-cased (APPROVED, BLOCK, ...), or "" when it states none.
func VerdictWord(verdict string) string {
	m := verdictLine.FindStringSubmatch(verdict)
	if m == nil {
		return ""
	}
	return strings.ToUpper(m[1])
}

// StripFence removes one code fence wrapping a whole reply (models
// sometimes answer "```markdown ... ```" despite being told not to). A
// reply with anything outside the fence is returned unchanged.
func StripFence(reply string) string {
	t := strings.TrimSpace(reply)
	if !strings.HasPrefix(t, "```") || !strings.HasSuffix(t, "```") || len(t) < 6 {
		return reply
	}
	first, rest, ok := strings.Cut(t, "\n")
	if !ok || strings.ContainsAny(strings.TrimPrefix(first, "```"), "` ") {
		return reply
	}
	body := strings.TrimSuffix(rest, "```")
	if strings.Contains(body, "\n```") {
		// Fences inside: the outer ones may not pair up; leave it to the human.
		return reply
	}
	return strings.TrimSpace(body) + "\n"
}
