package edit

import (
	"hash/maphash"
	"strings"
)

// MatchKind says how a block's FIND was found.
type MatchKind int

const (
	// Exact: the FIND lines equal the file's lines (line endings aside).
	Exact MatchKind = iota + 1
	// Whitespace: the FIND lines equal the file's lines once each line
	// is normalised: leading and trailing whitespace removed and every
	// inner run of whitespace counted as one space (ASCII whitespace
	// only: space, tab, CR, VT, FF; so tabs and spaces are alike), with
	// blank lines at the start and end of FIND ignored. Used only when no
	// exact match exists. The replacement is then re-indented by the one
	// uniform shift between FIND and the file, or else through the map of
	// FIND's indentation levels onto the file's (IndentLevels), or the
	// block is refused (*IndentError) when neither holds; Result.Loose
	// says what differed.
	Whitespace
)

func (k MatchKind) String() string {
	switch k {
	case Exact:
		return "exact"
	case Whitespace:
		return "whitespace"
	}
	return "unknown"
}

// MarshalText makes a MatchKind appear as "exact" or "whitespace" in JSON.
func (k MatchKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// exactMatches returns the 0-based start of every run of lines equal to
// find. Lines are compared by hash first (see lineIndex.runs), scanning
// for FIND's longest line as the one least likely to be common, and
// strings are compared only where all hashes agree.
func (t *text) exactMatches(find []string) []int {
	anchor := longest(find, func(s string) int { return len(s) })
	return t.exact.runs(t.hashAll(find, t.hashOf), anchor, func(s int) bool {
		for j, f := range find {
			if t.line(s+j) != f {
				return false
			}
		}
		return true
	})
}

// normMatches is exactMatches with whitespace normalised.
func (t *text) normMatches(find []string) []int {
	t.needNorm()
	return t.norm.runs(t.hashAll(find, t.normHash), longest(find, normLen), func(s int) bool {
		for j, f := range find {
			if !normEqual(t.line(s+j), f) {
				return false
			}
		}
		return true
	})
}

// hashOf is the exact hash of a line, the same for file and FIND lines.
func (t *text) hashOf(s string) uint64 { return maphash.String(t.seed, s) }

// longest returns the index of the line with the greatest size.
func longest(lines []string, size func(string) int) int {
	best, bestSize := 0, -1
	for i, l := range lines {
		if n := size(l); n > bestSize {
			best, bestSize = i, n
		}
	}
	return best
}

// normLen is the length of a line without its whitespace, a cheap measure
// of how distinctive it is.
func normLen(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if !isSpace(s[i]) {
			n++
		}
	}
	return n
}

// trimBlankEdges returns lines without blank lines at either end and how
// many it dropped from each.
func trimBlankEdges(lines []string) (core []string, lead, trail int) {
	for lead < len(lines) && strings.TrimSpace(lines[lead]) == "" {
		lead++
	}
	end := len(lines)
	for end > lead && strings.TrimSpace(lines[end-1]) == "" {
		end--
	}
	return lines[lead:end], lead, len(lines) - end
}
