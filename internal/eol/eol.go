// Package eol says what a line of a file is: lines end with "\n", "\r\n"
// or a lone "\r" (classic Mac OS files, which editors and Python also read
// as lines).
//
// Everything in internal/safewrite and internal/extend that counts,
// splits or extends lines goes through these functions, so safewrite's
// approval threshold and diffs and extend's merges agree on what a line
// is.
//
// Invariants: splitting keeps every byte (the lines joined are the text),
// each line but the last ends with exactly one line ending and holds none
// inside, a "\r\n" is never split, and CountLines, SplitKeep and
// SplitKeepString agree. The functions are pure and never panic.
package eol

import (
	"bytes"
	"strings"
)

// LineEnd returns the index just past the line that starts at i: past its
// line ending, or len(s) for a last line without one.
func LineEnd[T ~string | ~[]byte](s T, i int) int {
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '\n':
			return j + 1
		case '\r':
			if j+1 < len(s) && s[j+1] == '\n' {
				return j + 2
			}
			return j + 1
		}
	}
	return len(s)
}

// HasLoneCR reports whether s has a "\r" that is not part of "\r\n": only
// then do lines differ from what splitting at "\n" gives.
func HasLoneCR[T ~string | ~[]byte](s T) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '\r' && (i+1 == len(s) || s[i+1] != '\n') {
			return true
		}
	}
	return false
}

// EndsWithNewline reports whether the last line of s has a line ending.
func EndsWithNewline[T ~string | ~[]byte](s T) bool {
	return len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == '\r')
}

// CountLines counts lines the way an editor shows them: a final line
// without a line ending counts, an empty file has none.
func CountLines(b []byte) int {
	if bytes.IndexByte(b, '\r') < 0 {
		n := bytes.Count(b, []byte{'\n'})
		if len(b) > 0 && b[len(b)-1] != '\n' {
			n++
		}
		return n
	}
	n := 0
	for i := 0; i < len(b); i = LineEnd(b, i) {
		n++
	}
	return n
}

// SplitKeep splits b into lines, each keeping its line ending.
func SplitKeep(b []byte) [][]byte {
	var lines [][]byte
	for i := 0; i < len(b); {
		j := LineEnd(b, i)
		lines = append(lines, b[i:j:j])
		i = j
	}
	return lines
}

// SplitKeepString is SplitKeep for strings.
func SplitKeepString(s string) []string {
	var lines []string
	for i := 0; i < len(s); {
		j := LineEnd(s, i)
		lines = append(lines, s[i:j])
		i = j
	}
	return lines
}

// LineStarts returns the offset of each line of s and, last, len(s).
func LineStarts(s string) []int {
	starts := make([]int, 0, strings.Count(s, "\n")+2)
	starts = append(starts, 0)
	if len(s) == 0 {
		return starts
	}
	for i := LineEnd(s, 0); i < len(s); i = LineEnd(s, i) {
		starts = append(starts, i)
	}
	return append(starts, len(s))
}

// Of is the file's line ending: that of its first line, "\n" when
// it has none.
func Of(b []byte) []byte {
	i := bytes.IndexAny(b, "\r\n")
	switch {
	case i < 0 || b[i] == '\n':
		return []byte("\n")
	case i+1 < len(b) && b[i+1] == '\n':
		return []byte("\r\n")
	}
	return []byte("\r")
}

// Match gives piece the line endings of the file it goes into, so a
// CRLF file stays CRLF and a CR file stays CR. A piece that already uses
// carriage returns is taken as it is.
func Match(file, piece []byte) []byte {
	nl := Of(file)
	if bytes.Equal(nl, []byte("\n")) || bytes.IndexByte(piece, '\r') >= 0 {
		return piece
	}
	return bytes.ReplaceAll(piece, []byte("\n"), nl)
}
