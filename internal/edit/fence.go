package edit

import "strings"

// fence is an open Markdown code fence (``` or ~~~). Closing follows
// CommonMark: the same character, at least as many of it, nothing else on
// the line. So a ``` line inside a ```` fence is content, which lets a
// model quote code that itself contains fences.
type fence struct {
	char   byte
	size   int
	indent int // bytes of leading whitespace before the opener
	line   int // 1-based reply line of the opener
}

// openFence reports whether line opens a code fence. Any indentation is
// accepted because models indent whole answers inside list items.
func openFence(line string) (fence, bool) {
	indent := leadingSpace(line)
	rest := line[indent:]
	if rest == "" || (rest[0] != '`' && rest[0] != '~') {
		return fence{}, false
	}
	size := runOf(rest, rest[0])
	if size < 3 {
		return fence{}, false
	}
	// A backtick fence's info string may not contain a backtick
	// (CommonMark), so "```a``` b" is inline code, not a fence.
	if rest[0] == '`' && strings.IndexByte(rest[size:], '`') >= 0 {
		return fence{}, false
	}
	return fence{char: rest[0], size: size, indent: indent}, true
}

// closes reports whether line closes f.
func (f fence) closes(line string) bool {
	indent := leadingSpace(line)
	if indent > f.indent+3 {
		return false
	}
	rest := line[indent:]
	size := runOf(rest, f.char)
	return size >= f.size && strings.TrimSpace(rest[size:]) == ""
}

// content removes the opener's indentation from a content line, as
// CommonMark does, so a fence indented inside a list yields the code as
// written in the file.
func (f fence) content(line string) string {
	n := min(leadingSpace(line), f.indent)
	return line[n:]
}

// readFence reads the body of the fence opened at lines[open] and returns
// its lines and the index of the closing line. ok is false when the fence
// is never closed.
func readFence(lines []string, open int, f fence) (body []string, closeAt int, ok bool) {
	for i := open + 1; i < len(lines); i++ {
		if f.closes(lines[i]) {
			return body, i, true
		}
		body = append(body, f.content(lines[i]))
	}
	return body, len(lines), false
}

// leadingSpace counts the spaces and tabs that start s.
func leadingSpace(s string) int {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// runOf counts how many times c repeats at the start of s.
func runOf(s string, c byte) int {
	i := 0
	for i < len(s) && s[i] == c {
		i++
	}
	return i
}

// splitReply splits a reply into lines without their line endings; a CRLF
// reply parses like an LF one.
func splitReply(reply string) []string {
	lines := strings.Split(reply, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// joinLines joins whole lines, each ending in "\n", the representation of
// Block.Find and Block.Replace.
func joinLines(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}
