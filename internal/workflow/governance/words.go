package governance

import (
	"fmt"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
)

// Kinds of HumanWords.
const (
	WordsFeedback = "feedback" // the feedback asking for a revision
	WordsEdits    = "edits"    // the lines the human added to a draft in the editor
)

// HumanWords is one thing the human wrote at a gate: Text is their
// feedback, or the lines they added to draft #Draft (each marked "+",
// hunks apart; never a line of the model's).
type HumanWords struct {
	Gate    string `json:"gate"` // GateDraft or GateVerdict
	Kind    string `json:"kind"` // WordsFeedback or WordsEdits
	Draft   int    `json:"draft"`
	Verdict int    `json:"verdict,omitempty"` // the verdict read at the verdict gate
	Text    string `json:"text"`
}

// Section writes text between <tag> lines: every part of every prompt is
// delimited this way.
func Section(b *strings.Builder, tag, text string) {
	fmt.Fprintf(b, "<%s>\n%s\n</%s>\n\n", tag, strings.TrimSpace(text), tag)
}

// HumanEdits is the diff from the drafter's last draft to the draft as the
// human left it, or "" when the human changed nothing. It is shown to the
// drafter, whose own lines are in it.
func HumanEdits(model, human string) string {
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

// AddedLines returns the lines the human added going from before to after,
// each marked "+" as a diff marks it, with a line "..." between the places
// they were added; "" when they added none. Unlike HumanEdits it leaves
// out the lines removed and the unchanged lines around, and a line before
// already had (moved, not written): those are the model's words, and
// another model may be shown only what the human passed on or wrote.
func AddedLines(before, after string) string {
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

// HumanWordsText lays out what the human wrote, each part headed by where
// and when they wrote it, for the reviewer.
func HumanWordsText(words []HumanWords) string {
	var parts []string
	for _, w := range words {
		where := "at the draft gate"
		if w.Gate == GateVerdict {
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
