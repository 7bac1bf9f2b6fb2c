package safewrite

import (
	"testing"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/azero-dev/azero/internal/eol"
)

// FuzzLineEdits: the line edits of any two texts turn one into the other,
// and the diff's counts match the edits, with lines as internal/eol reads
// them (its FuzzLines checks the lines themselves).
func FuzzLineEdits(f *testing.F) {
	// The seeds of eol's FuzzLines: every kind of line ending, mixed.
	f.Add("a\nb\n", "a\nc\n")
	f.Add("a\rb\rc\r", "a\rx\rc\r")
	f.Add("a\r\nb\r\n", "a\rb\r")
	f.Add("a\rb\nc\r\nd", "d\r\nc\nb\ra")
	f.Add("\r\r\n\n\r", "\n\r\r\n")
	f.Add("", "x\r")
	f.Add("x\r", "")
	f.Add("same\r", "same\r")
	f.Fuzz(func(t *testing.T, before, after string) {
		edits := lineEdits(before, after)
		got, err := udiff.Apply(before, edits)
		if err != nil || got != after {
			t.Fatalf("edits %v of %q give %q (%v), want %q", edits, before, got, err, after)
		}
		_, st := renderUnified("a", "b", before, edits, 3, 1<<30)
		if before == after && (st.Added != 0 || st.Deleted != 0) {
			t.Fatalf("identical texts differ: %+v", st)
		}
		if d := eol.CountLines([]byte(after)) - eol.CountLines([]byte(before)); st.Added-st.Deleted != d {
			t.Fatalf("%q -> %q: +%d -%d, but the line count changes by %d", before, after, st.Added, st.Deleted, d)
		}
	})
}
