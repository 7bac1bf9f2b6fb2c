package governance

import (
	"strings"

	"github.com/azero-dev/azero/internal/lazyre"
)

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

// SplitDraft takes the document (an issue, a design) out of a drafter's
// reply. A reply that is the document is returned as it is (without a
// fence wrapping all of it). A reply of prose around one fenced Markdown
// block holding the document (its "# " title inside the block, none
// outside) gives the block's content; the prose is returned separately
// (it stays in the run's lineage with the whole reply). So does a reply
// that wraps the document in the <draft> and </draft> lines the prompts
// delimit it with. When the reply cannot be cut cleanly (several
// candidate blocks, a block never closed) it is returned whole with a
// warning for the human.
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
		return reply, "", "" // the reply is the document (its code blocks are part of it)
	case len(candidates) > 1:
		return reply, "", "the drafter's reply holds several Markdown blocks that look like the document; it is kept whole: delete what is not the document"
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

// Blocked reports a verdict word that tells the human not to approve.
func Blocked(word string) bool {
	switch word {
	case "BLOCK", "BLOCKED", "REJECT", "REJECTED":
		return true
	}
	return false
}
