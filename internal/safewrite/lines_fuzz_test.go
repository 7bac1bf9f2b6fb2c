package safewrite

import (
	"bytes"
	"strings"
	"testing"

	udiff "github.com/aymanbagabas/go-udiff"
)

// FuzzLines: splitting keeps every byte, each line but the last ends with
// exactly one line ending ("\n", "\r\n" or a lone "\r") and has none
// inside, and the counts agree; the line edits of any two texts turn one
// into the other, and the diff's counts match the edits.
func FuzzLines(f *testing.F) {
	for _, seed := range [][2]string{
		{"a\nb\n", "a\nc\n"},
		{"a\rb\rc\r", "a\rx\rc\r"},
		{"a\r\nb\r\n", "a\rb\r"},
		{"a\rb\nc\r\nd", "d\r\nc\nb\ra"},
		{"\r\r\n\n\r", "\n\r\r\n"},
		{"", "x\r"},
		{"x\r", ""},
		{"same\r", "same\r"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, before, after string) {
		for _, s := range []string{before, after} {
			lines := splitLinesKeep(s)
			if strings.Join(lines, "") != s {
				t.Fatalf("split %q lost bytes: %q", s, lines)
			}
			if countLines([]byte(s)) != len(lines) || len(splitKeep([]byte(s))) != len(lines) {
				t.Fatalf("%q: countLines %d, splitKeep %d, splitLinesKeep %d", s, countLines([]byte(s)), len(splitKeep([]byte(s))), len(lines))
			}
			for i, l := range lines {
				body := l
				switch {
				case strings.HasSuffix(l, "\r\n"):
					body = l[:len(l)-2]
				case strings.HasSuffix(l, "\n"), strings.HasSuffix(l, "\r"):
					body = l[:len(l)-1]
				}
				if l == "" || strings.ContainsAny(body, "\r\n") {
					t.Fatalf("%q: line %d %q is not one line", s, i, l)
				}
				if strings.HasSuffix(l, "\r") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "\n") {
					t.Fatalf("%q: a CRLF was split between lines %d and %d", s, i, i+1)
				}
				if i < len(lines)-1 && !endsWithNewline(l) {
					t.Fatalf("%q: line %d %q has no line ending", s, i, l)
				}
			}
			starts := lineStarts(s)
			if s != "" && len(starts) != len(lines)+1 {
				t.Fatalf("%q: %d starts for %d lines", s, len(starts), len(lines))
			}
		}
		edits := lineEdits(before, after)
		got, err := udiff.Apply(before, edits)
		if err != nil || got != after {
			t.Fatalf("edits %v of %q give %q (%v), want %q", edits, before, got, err, after)
		}
		_, st := renderUnified("a", "b", before, edits, 3, 1<<30)
		if before == after && (st.Added != 0 || st.Deleted != 0) {
			t.Fatalf("identical texts differ: %+v", st)
		}
		if d := countLines([]byte(after)) - countLines([]byte(before)); st.Added-st.Deleted != d {
			t.Fatalf("%q -> %q: +%d -%d, but the line count changes by %d", before, after, st.Added, st.Deleted, d)
		}
		if m := matchEndings([]byte(before), []byte(after)); !bytes.Equal(lineEnding([]byte(before)), []byte("\n")) &&
			!strings.Contains(after, "\r") && countLines(m) != countLines([]byte(after)) {
			t.Fatalf("matchEndings changed the line count of %q: %q", after, m)
		}
	})
}
