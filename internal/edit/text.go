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
//
// The lines themselves live in pool, never moved; the text is order, a
// list of indexes into pool. A splice then shifts plain integers, not
// strings, which the garbage collector would have to watch (write
// barriers made shifting []string the largest cost of Apply).
type text struct {
	bom   bool
	pool  []string // every line seen, without its ending: the file's, then inserted ones
	order []int32  // the text's lines, as indexes into pool
	ends  []eol
	exact *lineIndex // hashes of the lines
	norm  *lineIndex // hashes of the normalised lines; nil until needed
	style eol        // ending given to inserted lines
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
	t.pool = make([]string, 0, n)
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
		t.pool = append(t.pool, line)
		t.ends = append(t.ends, end)
		content = rest
	}
	// Inserted lines follow the file's majority, so a CRLF file stays
	// CRLF even when the model wrote LF.
	t.style = eolLF
	if crlf > lf {
		t.style = eolCRLF
	}
	t.order = make([]int32, len(t.pool))
	for i := range t.order {
		t.order[i] = int32(i)
	}
	t.exact = &lineIndex{hash: t.hashAll(t.pool, t.hashOf)}
	return t
}

// len is the number of lines.
func (t *text) len() int { return len(t.order) }

// line returns line i (0-based) without its ending.
func (t *text) line(i int) string { return t.pool[t.order[i]] }

// lines returns lines [start, end) as a new slice.
func (t *text) lines(start, end int) []string {
	out := make([]string, end-start)
	for i := range out {
		out[i] = t.line(start + i)
	}
	return out
}

// String reassembles the file, byte for byte where nothing was replaced.
func (t *text) String() string {
	size := len(bom)
	for _, i := range t.order {
		size += len(t.pool[i]) + 2
	}
	var b strings.Builder
	b.Grow(size)
	if t.bom {
		b.WriteString(bom)
	}
	for i, p := range t.order {
		b.WriteString(t.pool[p])
		b.WriteString(t.ends[i].String())
	}
	return b.String()
}

// normHash hashes the whitespace-normalised form of s. Most lines need
// only their indentation trimmed, and are hashed without a copy.
func (t *text) normHash(s string) uint64 {
	i, j := skipSpace(s, 0), len(s)
	for j > i && isSpace(s[j-1]) {
		j--
	}
	if s = s[i:j]; isNormalized(s) {
		return maphash.String(t.seed, s)
	}
	t.buf = appendNormalized(t.buf[:0], s)
	return maphash.Bytes(t.seed, t.buf)
}

// isNormalized reports whether s, already trimmed, has no whitespace but
// single spaces.
func isNormalized(s string) bool {
	for i := 0; i < len(s); i++ {
		if isSpace(s[i]) && (s[i] != ' ' || (i+1 < len(s) && s[i+1] == ' ')) {
			return false
		}
	}
	return true
}

// needNorm computes the normalised hashes once, on first use.
func (t *text) needNorm() {
	if t.norm != nil {
		return
	}
	hashes := make([]uint64, t.len())
	for i := range hashes {
		hashes[i] = t.normHash(t.line(i))
	}
	t.norm = &lineIndex{hash: hashes}
}

func (t *text) hashAll(lines []string, hash func(string) uint64) []uint64 {
	hashes := make([]uint64, len(lines))
	for i, l := range lines {
		hashes[i] = hash(l)
	}
	return hashes
}

// splice replaces lines [start, end) with lines. New lines end in the
// file's style, except that the end of the file keeps its shape: a file
// that had no final newline still has none.
func (t *text) splice(start, end int, lines []string) {
	ends := make([]eol, len(lines))
	for i := range ends {
		ends[i] = t.style
	}
	atEOF := end == t.len()
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
	idx := make([]int32, len(lines))
	for i, l := range lines {
		idx[i] = int32(len(t.pool))
		t.pool = append(t.pool, l)
	}
	t.order = slices.Replace(t.order, start, end, idx...)
	t.ends = slices.Replace(t.ends, start, end, ends...)
	t.exact.replace(start, end, t.hashAll(lines, t.hashOf))
	if t.norm != nil {
		t.norm.replace(start, end, t.hashAll(lines, t.normHash))
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
	i := skipSpace(s, 0)
	for i < len(s) {
		j := i
		for j < len(s) && !isSpace(s[j]) {
			j++
		}
		dst = append(dst, s[i:j]...)
		if i = skipSpace(s, j); i < len(s) {
			dst = append(dst, ' ')
		}
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
// a reply's CR.
func splitBlockLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}
