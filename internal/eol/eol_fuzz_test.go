package eol

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzLines: splitting keeps every byte, each line but the last ends with
// exactly one line ending ("\n", "\r\n" or a lone "\r") and has none
// inside, and the counts agree; a piece given a file's line endings keeps
// its line count. (internal/safewrite's FuzzLineEdits checks its diffs
// against these lines.)
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
			lines := SplitKeepString(s)
			if strings.Join(lines, "") != s {
				t.Fatalf("split %q lost bytes: %q", s, lines)
			}
			if CountLines([]byte(s)) != len(lines) || len(SplitKeep([]byte(s))) != len(lines) {
				t.Fatalf("%q: CountLines %d, SplitKeep %d, SplitKeepString %d", s, CountLines([]byte(s)), len(SplitKeep([]byte(s))), len(lines))
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
				if i < len(lines)-1 && !EndsWithNewline(l) {
					t.Fatalf("%q: line %d %q has no line ending", s, i, l)
				}
			}
			starts := LineStarts(s)
			if s != "" && len(starts) != len(lines)+1 {
				t.Fatalf("%q: %d starts for %d lines", s, len(starts), len(lines))
			}
		}
		if m := Match([]byte(before), []byte(after)); !bytes.Equal(Of([]byte(before)), []byte("\n")) &&
			!strings.Contains(after, "\r") && CountLines(m) != CountLines([]byte(after)) {
			t.Fatalf("Match changed the line count of %q: %q", after, m)
		}
	})
}
