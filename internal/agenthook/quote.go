package agenthook

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// What an ask's reason quotes of the lines a change deletes: enough for
// the human to see what goes, never a whole file.
const (
	quotedLines     = 20
	quotedLineBytes = 200
)

// quoteDeleted renders, for the reason of an ask, the lines a change
// would delete: the first quotedLines of them, each cut at
// quotedLineBytes, and how many more there are. total is how many lines it
// deletes; lines may hold fewer (a capped diff).
func quoteDeleted(lines []string, total int) string {
	if total <= 0 {
		return ""
	}
	shown := min(len(lines), quotedLines, total)
	var b strings.Builder
	b.WriteString("\nThe lines it would delete")
	if total > shown {
		fmt.Fprintf(&b, " (the first %d of %d)", shown, total)
	}
	b.WriteByte(':')
	for _, l := range lines[:shown] {
		b.WriteString("\n-")
		b.WriteString(printableLine(l))
	}
	if total > shown {
		fmt.Fprintf(&b, "\n… and %d more", total-shown)
	}
	return b.String()
}

// printableLine cuts a line at quotedLineBytes (on a character boundary)
// and shows control characters as escapes, so that a quoted line is one
// line of plain text wherever the reason is shown.
func printableLine(l string) string {
	l = strings.ToValidUTF8(l, "\uFFFD")
	cut := false
	if len(l) > quotedLineBytes {
		i := quotedLineBytes
		for i > 0 && !utf8.RuneStart(l[i]) {
			i--
		}
		l, cut = l[:i], true
	}
	var b strings.Builder
	for _, r := range l {
		switch {
		case r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			fmt.Fprintf(&b, "\\x%02x", r)
		default:
			b.WriteRune(r)
		}
	}
	if cut {
		b.WriteString("…")
	}
	return b.String()
}

// diffDeletions returns the deleted lines of a unified diff of one file
// (safewrite's Proposal.Diff), in order and without their line endings:
// the lines starting with "-" after the first hunk header.
func diffDeletions(diff string) []string {
	var out []string
	inHunk := false
	for _, l := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "@@ "):
			inHunk = true
		case inHunk && strings.HasPrefix(l, "-"):
			out = append(out, strings.TrimSuffix(l[1:], "\r"))
		}
	}
	return out
}
