package edit

import "strings"

// maxProse bounds the prose Prose returns: an explanation, not a second
// reply.
const maxProse = 4 << 10

// Prose returns what a model's reply says outside its code: the reply
// without its fenced code blocks, its SEARCH/REPLACE blocks, and the
// labels of the spec's edit blocks (### CHANGE n headings are kept: they
// describe the change), with runs of blank lines made one and its ends
// trimmed; at most maxProse bytes. A reply that is all code has none.
// What it returns is the model's text, never a judgement of it: show it
// as what the model said.
func Prose(reply string) string {
	lines := splitReply(reply)
	var out []string
	m := markers{indent: -1}
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if f, ok := openFence(l); ok {
			if _, closeAt, ok := readFence(lines, i, f); ok {
				i = closeAt
				continue
			}
			break // an unclosed fence runs to the end
		}
		if m.search(l) {
			for i++; i < len(lines) && !m.replace(lines[i]); i++ {
			}
			continue
		}
		if isFindLabel(l) || isReplaceLabel(l) {
			continue
		}
		if strings.TrimSpace(l) == "" && (len(out) == 0 || out[len(out)-1] == "") {
			continue
		}
		out = append(out, strings.TrimRight(l, " \t"))
	}
	text := strings.TrimSpace(strings.Join(out, "\n"))
	if len(text) > maxProse {
		cut := maxProse
		for cut > 0 && text[cut]&0xC0 == 0x80 {
			cut--
		}
		text = text[:cut] + " …"
	}
	return text
}
