package edit

import (
	"hash/maphash"
	"testing"
)

// normHash takes a shortcut for lines that need no copying; it must give
// the same hash as hashing the normalised copy.
func TestNormHashShortcut(t *testing.T) {
	t.Parallel()
	x := newText("")
	for _, s := range []string{"", " ", "a", "  a b", "a  b", "a\tb", "\ta b ", "a b\r", "\v", " a\fb c  ", "日本 語"} {
		want := maphash.Bytes(x.seed, appendNormalized(nil, s))
		if got := x.normHash(s); got != want {
			t.Errorf("normHash(%q) differs from the hash of %q", s, appendNormalized(nil, s))
		}
	}
}
