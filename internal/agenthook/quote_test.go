package agenthook

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestQuoteDeleted(t *testing.T) {
	t.Parallel()
	numbered := func(n int) []string {
		var l []string
		for i := range n {
			l = append(l, "line "+string(rune('a'+i%26)))
		}
		return l
	}
	tests := []struct {
		name  string
		lines []string
		total int
		want  string
	}{
		{"nothing deleted", nil, 0, ""},
		{"a few, all shown", []string{"a", "b"}, 2, "\nThe lines it would delete:\n-a\n-b"},
		{"exactly twenty", numbered(20), 20, "\nThe lines it would delete:\n-line a\n"},
		{"more than twenty", numbered(30), 30, "\nThe lines it would delete (the first 20 of 30):\n-line a\n"},
		{"a capped diff holds fewer than deleted", []string{"a"}, 500, "\nThe lines it would delete (the first 1 of 500):\n-a\n… and 499 more"},
		{"control characters are escaped", []string{"a\x1b[2Jb\tc"}, 1, "\n-a\\x1b[2Jb\tc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := quoteDeleted(tt.lines, tt.total)
			if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
				t.Errorf("quoteDeleted = %q, want it to contain %q", got, tt.want)
			}
			if n := strings.Count(got, "\n-"); n > quotedLines {
				t.Errorf("%d lines quoted, at most %d", n, quotedLines)
			}
			if more := strings.Contains(got, "more"); more != (tt.total > min(len(tt.lines), quotedLines)) {
				t.Errorf("'… and N more' shown = %v for %d of %d lines: %q", more, len(tt.lines), tt.total, got)
			}
		})
	}
}

func TestPrintableLineIsCut(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", quotedLineBytes) // two bytes each
	got := printableLine(long)
	if !utf8.ValidString(got) || !strings.HasSuffix(got, "…") || len(got) > quotedLineBytes+len("…") {
		t.Errorf("printableLine cut %d bytes to %q", len(long), got)
	}
	if got := printableLine("short"); got != "short" {
		t.Errorf("printableLine(short) = %q", got)
	}
	if got := printableLine("bad \xff byte"); !utf8.ValidString(got) {
		t.Errorf("invalid UTF-8 kept: %q", got)
	}
}

func TestDiffDeletions(t *testing.T) {
	t.Parallel()
	diff := "--- a/x.sql\n+++ b/x.sql\n@@ -1,4 +1,2 @@\n keep\n--- a comment\n-gone\r\n+new\n\\ No newline at end of file\n@@ -9 +7 @@\n-last\n... diff truncated at 10 KB: 5 more bytes (1 more lines) not shown\n"
	got := diffDeletions(diff)
	want := []string{"-- a comment", "gone", "last"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("diffDeletions = %q, want %q", got, want)
	}
	if got := diffDeletions(""); len(got) != 0 {
		t.Errorf("an empty diff deletes %q", got)
	}
}
