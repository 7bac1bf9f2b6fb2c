package review

import (
	"bytes"
	"hash/maphash"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/azero-dev/azero/internal/shell"
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
		for _, out := range []string{displayPath(s), shell.Quote(s)} {
			if r, ok := visible(out, false); !ok {
				t.Fatalf("path %q shown as %q keeps %U", s, out, r)
			}
		}
	})
}

// FuzzCountLinesEOL: however the content is cut into reads, countLines
// counts lines as git does and sums line endings as if CRLF were LF.
func FuzzCountLinesEOL(f *testing.F) {
	f.Add([]byte("a\r\nb\n\r\r\nc\r"), uint8(1))
	f.Add([]byte("\r"), uint8(0))
	f.Add([]byte("no newline"), uint8(7))
	f.Add([]byte("x\r\n\r\n\n\r"), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		seed := maphash.MakeSeed()
		var h maphash.Hash
		h.SetSeed(seed)
		var got eolSum
		lines, binary, err := countLines(bytes.NewReader(data), false, make([]byte, int(chunk%16)+1), &h, &got)
		if err != nil || binary {
			t.Fatalf("countLines: %v, binary %v", err, binary)
		}
		wantLines := bytes.Count(data, []byte{'\n'})
		if len(data) > 0 && data[len(data)-1] != '\n' {
			wantLines++
		}
		want := eolSum{
			newlines: bytes.Count(data, []byte{'\n'}),
			crlf:     bytes.Count(data, []byte("\r\n")),
			norm:     maphash.Bytes(seed, bytes.ReplaceAll(data, []byte("\r\n"), []byte{'\n'})),
		}
		if lines != wantLines || got != want {
			t.Fatalf("countLines(%q) = %d, %+v; want %d, %+v", data, lines, got, wantLines, want)
		}
		// The same text with LF endings has the same sum but for crlf
		// (when it can be written: "\r\r\n" ends in CRLF either way).
		lf := bytes.ReplaceAll(data, []byte("\r\n"), []byte{'\n'})
		if bytes.Contains(lf, []byte("\r\n")) {
			return
		}
		var other eolSum
		countLines(bytes.NewReader(lf), false, make([]byte, 3), &h, &other)
		if other.norm != got.norm || other.newlines != got.newlines {
			t.Fatalf("%q and %q differ beyond their endings: %+v, %+v", data, lf, got, other)
		}
	})
}
