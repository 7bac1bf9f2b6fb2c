package edit

import (
	"hash/maphash"
	"slices"
	"strings"
)

const bom = "\uFEFF"

// eol is a line's ending as found in the file.
type eol uint8

const (
	eolNone eol = iota // the last line of a file without a final newline
	eolLF
	eolCRLF
)

func (e eol) String() string {
	switch e {
	case eolLF:
		return "\n"
	case eolCRLF:
		return "\r\n"
	}
	return ""
}

// text is a file split into lines, with a hash of every line so a block's
// FIND is located by comparing integers, not by rescanning strings. The
// normalised hashes are computed the first time a block needs them and
// kept up to date by splice after that.
type text struct {
	bom   bool
	body  []string // each line without its ending
	ends  []eol
	exact []uint64 // hash of body[i]
	norm  []uint64 // hash of normalize(body[i]); nil until needed
	style eol      // ending given to inserted lines
	seed  maphash.Seed
	buf   []byte // scratch for normalising

	unit             unit // the file's indentation style, see fileUnit
	unitOK, unitDone bool
}

func newText(content string) *text {
	t := &text{seed: maphash.MakeSeed()}
	if rest, ok := strings.CutPrefix(content, bom); ok {
		t.bom, content = true, rest
	}
	n := strings.Count(content, "\n") + 1
	t.body = make([]string, 0, n)
	t.ends = make([]eol, 0, n)
	crlf, lf := 0, 0
	for content != "" {
		line, rest, found := strings.Cut(content, "\n")
		end := eolNone
		if found {
			end = eolLF
			if trimmed, ok := strings.CutSuffix(line, "\r"); ok {
				line, end = trimmed, eolCRLF
				crlf++
			} else {
				lf++
			}
		}
		t.body = append(t.body, line)
		t.ends = append(t.ends, end)
		content = rest
	}
	// Inserted lines follow the file's majority, so a CRLF file stays
	// CRLF even when the model wrote LF.
	t.style = eolLF
	if crlf > lf {
		t.style = eolCRLF
	}
	t.exact = make([]uint64, len(t.body))
	for i, l := range t.body {
		t.exact[i] = t.hashOf(l)
	}
	return t
}

// String reassembles the file, byte for byte where nothing was replaced.
func (t *text) String() string {
	size := len(bom)
	for _, l := range t.body {
		size += len(l) + 2
	}
	var b strings.Builder
	b.Grow(size)
	if t.bom {
		b.WriteString(bom)
	}
	for i, l := range t.body {
		b.WriteString(l)
		b.WriteString(t.ends[i].String())
	}
	return b.String()
}

// normHash hashes the whitespace-normalised form of s.
func (t *text) normHash(s string) uint64 {
	t.buf = appendNormalized(t.buf[:0], s)
	return maphash.Bytes(t.seed, t.buf)
}

// needNorm computes the normalised hashes once, on first use.
func (t *text) needNorm() {
	if t.norm != nil {
		return
	}
	t.norm = make([]uint64, len(t.body), cap(t.body))
	for i, l := range t.body {
		t.norm[i] = t.normHash(l)
	}
}

// splice replaces lines [start, end) with lines. New lines end in the
// file's style, except that the end of the file keeps its shape: a file
// that had no final newline still has none.
func (t *text) splice(start, end int, lines []string) {
	ends := make([]eol, len(lines))
	for i := range ends {
		ends[i] = t.style
	}
	atEOF := end == len(t.body)
	switch {
	case atEOF && len(lines) > 0 && end > start:
		ends[len(ends)-1] = t.ends[end-1]
	case atEOF && len(lines) > 0 && start > 0 && t.ends[start-1] == eolNone:
		// Appending after a last line that had no newline: that line
		// gets one and the new last line goes without.
		t.ends[start-1] = t.style
		ends[len(ends)-1] = eolNone
	case atEOF && len(lines) == 0 && end > start && start > 0 && t.ends[end-1] == eolNone:
		t.ends[start-1] = eolNone
	}
	exact := make([]uint64, len(lines))
	for i, l := range lines {
		exact[i] = t.hashOf(l)
	}
	t.body = slices.Replace(t.body, start, end, lines...)
	t.ends = slices.Replace(t.ends, start, end, ends...)
	t.exact = slices.Replace(t.exact, start, end, exact...)
	if t.norm != nil {
		norm := make([]uint64, len(lines))
		for i, l := range lines {
			norm[i] = t.normHash(l)
		}
		t.norm = slices.Replace(t.norm, start, end, norm...)
	}
}

// isSpace is the whitespace that normalisation ignores: ASCII only, so a
// non-breaking space in a string literal still has to match.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
}

// appendNormalized appends s without leading and trailing whitespace and
// with every inner run of whitespace turned into one space.
func appendNormalized(dst []byte, s string) []byte {
	space := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isSpace(c) {
			space = true
			continue
		}
		if space && len(dst) > 0 {
			dst = append(dst, ' ')
		}
		space = false
		dst = append(dst, c)
	}
	return dst
}

// normEqual reports whether a and b are equal after normalisation,
// without allocating.
func normEqual(a, b string) bool {
	i, j := 0, 0
	for {
		i = skipSpace(a, i)
		j = skipSpace(b, j)
		if i == len(a) || j == len(b) {
			return i == len(a) && j == len(b)
		}
		// Both are at the start of a word; words must be equal.
		for i < len(a) && j < len(b) && !isSpace(a[i]) && !isSpace(b[j]) {
			if a[i] != b[j] {
				return false
			}
			i++
			j++
		}
		if (i < len(a) && !isSpace(a[i])) || (j < len(b) && !isSpace(b[j])) {
			return false
		}
	}
}

func skipSpace(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

// splitBlockLines splits a block's Find or Replace into lines, dropping
// a reply's CR and a byte-order mark a model copied from the file.
func splitBlockLines(s string) []string {
	s = strings.TrimPrefix(s, bom)
	if s == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}
