package review

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// visible reports the first character of s that could act on a terminal
// (a control or format character, a line separator, invalid UTF-8).
func visible(s string, allowTab bool) (rune, bool) {
	if !utf8.ValidString(s) {
		return utf8.RuneError, false
	}
	for _, r := range s {
		if r == '\t' && allowTab {
			continue
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Co, unicode.Cs) {
			return r, false
		}
	}
	return 0, true
}

// FuzzTerminalText: whatever a repository holds, what the report writes
// for a diff line or a path cannot drive the terminal.
func FuzzTerminalText(f *testing.F) {
	f.Add("plain line")
	f.Add("\x1b[2J\x1b[1A\rhidden\u202eevil\u2028\xff\x00\t")
	f.Add("new\nline")
	f.Fuzz(func(t *testing.T, s string) {
		if r, ok := visible(sanitize(s), true); !ok {
			t.Fatalf("sanitize(%q) = %q keeps %U", s, sanitize(s), r)
		}
		if !strings.ContainsAny(s, "\n") && sanitize(s) == s {
			if _, ok := visible(s, true); !ok {
				t.Fatalf("sanitize left %q unchanged", s)
			}
		}
		for _, out := range []string{displayPath(s), shellQuote(s)} {
			if r, ok := visible(out, false); !ok {
				t.Fatalf("path %q shown as %q keeps %U", s, out, r)
			}
		}
	})
}
