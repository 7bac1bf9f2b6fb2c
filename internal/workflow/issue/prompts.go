package issue

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/azero-dev/azero/internal/lazyre"
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

// draftRequest builds the drafter's request. Every part is delimited the
// same way, in every prompt: <brief>, <labels>, <draft>, <human_edits>,
// <verdict>, <feedback>. A first draft gets the brief and the tracker's
// labels; a revision gets them, the current draft, the human's edits of
// the drafter's last draft (a diff, to keep), the verdict the human left
// (when revised at N5) and the feedback.
func draftRequest(s *State) llm.Request {
	var b strings.Builder
	section(&b, "brief", s.Brief)
	labelsPart(&b, s)
	if s.Feedback == "" {
		b.WriteString("Write the issue for the brief above, following the template.\n")
	} else {
		section(&b, "draft", s.Draft)
		if edits := humanEdits(s.ModelDraft, s.Draft); edits != "" {
			b.WriteString("The human edited your last draft; these are their changes (lines starting with + are theirs). Keep them unless the feedback asks otherwise:\n\n")
			section(&b, "human_edits", edits)
		}
		if s.FeedbackVerdict != "" {
			b.WriteString("A reviewer's verdict on the draft, as the human left it after reading:\n\n")
			section(&b, "verdict", s.FeedbackVerdict)
		}
		b.WriteString("The human's feedback:\n\n")
		section(&b, "feedback", s.Feedback)
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
		section(b, "labels", strings.Join(s.Labels, "\n"))
		b.WriteString("Put only labels from this list on the **Labels:** line. If the issue needs a label that is not in the list, " + propose + ".\n\n")
	case s.LabelsRead && s.LabelsError == "":
		b.WriteString("No labels are known: the repository's tracker has none yet. For every label you name, " + propose + ".\n\n")
	default:
		b.WriteString("No labels are known: the repository's labels could not be read from its tracker. For every label you name, " + propose + ".\n\n")
	}
}

// section writes text between <tag> lines.
func section(b *strings.Builder, tag, text string) {
	fmt.Fprintf(b, "<%s>\n%s\n</%s>\n\n", tag, strings.TrimSpace(text), tag)
}

// humanEdits is the diff from the drafter's last draft to the draft as the
// human left it, or "" when the human changed nothing.
func humanEdits(model, human string) string {
	if model == "" || strings.TrimSpace(model) == strings.TrimSpace(human) {
		return ""
	}
	d := udiff.Unified("drafter", "human", strings.TrimSpace(model)+"\n", strings.TrimSpace(human)+"\n")
	// The file header lines say nothing to a model.
	lines := strings.Split(d, "\n")
	for len(lines) > 0 && (strings.HasPrefix(lines[0], "--- ") || strings.HasPrefix(lines[0], "+++ ")) {
		lines = lines[1:]
	}
	return strings.Join(lines, "\n")
}

// addedLines returns the lines the human added going from before to after,
// each marked "+" as a diff marks it, with a line "..." between the places
// they were added; "" when they added none. Unlike humanEdits it leaves
// out the lines removed and the unchanged lines around, and a line before
// already had (moved, not written): those are the model's words, and
// another model may be shown only what the human passed on or wrote.
func addedLines(before, after string) string {
	if strings.TrimSpace(before) == strings.TrimSpace(after) {
		return ""
	}
	had := map[string]bool{}
	for _, l := range strings.Split(before, "\n") {
		had[strings.TrimSpace(l)] = true
	}
	d := udiff.Unified("before", "after", strings.TrimSpace(before)+"\n", strings.TrimSpace(after)+"\n")
	var hunks [][]string
	for _, l := range strings.Split(d, "\n") {
		switch {
		case strings.HasPrefix(l, "@@"):
			hunks = append(hunks, nil)
		case strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++ ") && len(hunks) > 0:
			if t := strings.TrimSpace(l[1:]); t != "" && !had[t] {
				hunks[len(hunks)-1] = append(hunks[len(hunks)-1], l)
			}
		}
	}
	var parts []string
	for _, h := range hunks {
		if len(h) > 0 {
			parts = append(parts, strings.Join(h, "\n"))
		}
	}
	return strings.Join(parts, "\n...\n")
}

// reviewRequest builds the reviewer's request: the built-in review prompt,
// the brief the draft was written from, what the human wrote themselves
// (their feedback and the lines they added to the drafts, in order), and
// the draft as the human sent it. Nothing else a model wrote is in it: no
// draft the human did not send, no line they took out.
func reviewRequest(s *State) llm.Request {
	var b strings.Builder
	section(&b, "brief", s.Brief)
	if words := humanWordsText(s.HumanWords); words != "" {
		b.WriteString("What the human responsible for this issue wrote themselves while it was drafted, in order: their feedback to the drafter and the lines they added to the drafts. Like the brief, it is the reference the draft is checked against:\n\n")
		section(&b, "human", words)
	}
	section(&b, "draft", s.Draft)
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

// humanWordsText lays out what the human wrote, each part headed by where
// and when they wrote it.
func humanWordsText(words []HumanWords) string {
	var parts []string
	for _, w := range words {
		where := "at the draft gate"
		if w.Gate == NodeEditVerdict {
			where = fmt.Sprintf("at the verdict gate, after reading verdict #%d", w.Verdict)
		}
		var head string
		switch w.Kind {
		case WordsFeedback:
			head = fmt.Sprintf("The human's feedback on draft #%d, %s:", w.Draft, where)
		case WordsEdits:
			head = fmt.Sprintf("Lines the human wrote into draft #%d, %s (each marked +):", w.Draft, where)
		default:
			continue
		}
		parts = append(parts, head+"\n"+strings.TrimSpace(w.Text))
	}
	return strings.Join(parts, "\n\n")
}

var verdictLine = lazyre.New(`(?mi)^\W*verdict\W*:?\W*\s*([a-z_]+)`)

// VerdictWord returns the decision a verdict states on its "Verdict:"
// line, upper-cased (APPROVED, BLOCK, ...), or "" when it states none.
func VerdictWord(verdict string) string {
	m := verdictLine().FindStringSubmatch(verdict)
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

// SplitDraft takes the issue out of a drafter's reply. A reply that is the
// issue is returned as it is (without a fence wrapping all of it). A reply
// of prose around one fenced Markdown block holding the issue (its "# "
// title inside the block, none outside) gives the block's content; the
// prose is returned separately (it stays in the run's lineage with the
// whole reply). So does a reply that wraps the issue in the <draft> and
// </draft> lines the prompts delimit it with. When the reply cannot be
// cut cleanly (several candidate blocks, a block never closed) it is
// returned whole with a warning for the human.
func SplitDraft(reply string) (draft, prose, warning string) {
	if inner, outside, ok := cutTag(reply, "draft"); ok && hasTitle(strings.Split(inner, "\n")) && !hasTitle(strings.Split(outside, "\n")) {
		// The reply echoes the prompt's delimiters: <draft>...</draft>.
		d, p, w := SplitDraft(inner)
		if w != "" {
			return reply, "", w
		}
		return d, strings.TrimSpace(outside + "\n" + p), ""
	}
	stripped := StripFence(reply)
	if stripped != reply {
		return stripped, "", ""
	}
	lines := strings.Split(strings.ReplaceAll(reply, "\r\n", "\n"), "\n")
	type block struct{ start, end int } // fence lines
	var blocks []block
	open, ticks := -1, 0
	for i, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case open < 0 && strings.HasPrefix(t, "```"):
			open, ticks = i, countTicks(t)
		case open >= 0 && countTicks(t) >= ticks && strings.Trim(t, "`") == "":
			blocks = append(blocks, block{open, i})
			open = -1
		}
	}
	if open >= 0 {
		if hasTitle(lines[open+1:]) && !hasTitle(lines[:open]) {
			return reply, "", "the drafter's reply has a code block that is never closed (was it cut off?): read the draft carefully, it is kept as the drafter wrote it"
		}
		return reply, "", ""
	}
	outsideTitle := false
	var candidates []block
	inside := make([]bool, len(lines))
	for _, b := range blocks {
		for i := b.start; i <= b.end; i++ {
			inside[i] = true
		}
		info := strings.ToLower(strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(lines[b.start]), "`")))
		if (info == "" || info == "markdown" || info == "md") && hasTitle(lines[b.start+1:b.end]) {
			candidates = append(candidates, b)
		}
	}
	for i, l := range lines {
		if !inside[i] && strings.HasPrefix(l, "# ") {
			outsideTitle = true
		}
	}
	switch {
	case outsideTitle || len(candidates) == 0:
		return reply, "", "" // the reply is the issue (its code blocks are part of it)
	case len(candidates) > 1:
		return reply, "", "the drafter's reply holds several Markdown blocks that look like an issue; it is kept whole: delete what is not the issue"
	}
	b := candidates[0]
	draft = strings.Join(lines[b.start+1:b.end], "\n")
	prose = strings.TrimSpace(strings.Join(lines[:b.start], "\n") + "\n" + strings.Join(lines[b.end+1:], "\n"))
	return strings.TrimSpace(draft) + "\n", prose, ""
}

// cutTag finds the one <tag> line and the one </tag> line after it in
// reply (a model mirroring the prompt's delimiters) and returns what is
// between them, and what is around them. ok is false unless there is
// exactly one such pair.
func cutTag(reply, tag string) (inner, outside string, ok bool) {
	lines := strings.Split(strings.ReplaceAll(reply, "\r\n", "\n"), "\n")
	open, closing := -1, -1
	for i, l := range lines {
		switch strings.TrimSpace(l) {
		case "<" + tag + ">":
			if open >= 0 {
				return "", "", false
			}
			open = i
		case "</" + tag + ">":
			if closing >= 0 || open < 0 {
				return "", "", false
			}
			closing = i
		}
	}
	if open < 0 || closing < 0 {
		return "", "", false
	}
	inner = strings.Join(lines[open+1:closing], "\n") + "\n"
	outside = strings.TrimSpace(strings.Join(lines[:open], "\n") + "\n" + strings.Join(lines[closing+1:], "\n"))
	return inner, outside, true
}

// StripVerdict takes the verdict out of a reviewer's reply: without a
// fence wrapping all of it (StripFence), and without <verdict> tags
// mirroring the prompt's delimiters around all of it.
func StripVerdict(reply string) string {
	if inner, outside, ok := cutTag(reply, "verdict"); ok && outside == "" {
		reply = inner
	}
	return StripFence(reply)
}

func countTicks(s string) int { return len(s) - len(strings.TrimLeft(s, "`")) }

// hasTitle reports whether lines hold a "# " title line.
func hasTitle(lines []string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, "# ") {
			return true
		}
	}
	return false
}
