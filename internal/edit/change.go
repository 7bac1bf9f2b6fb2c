package edit

import (
	"bytes"
	"fmt"
	"strings"
)

// The thresholds of spec #324: a file over either is large.
const (
	LargeLines = 500
	LargeBytes = 15000
)

// IsLarge reports whether content is over LargeLines lines or over
// LargeBytes bytes (either suffices: files are large by many short lines
// or by few long ones). Lines are counted as an editor shows them: a last
// line without a newline still counts.
func IsLarge(content []byte) bool {
	return len(content) > LargeBytes || countLines(content) > LargeLines
}

func countLines(content []byte) int {
	n := bytes.Count(content, []byte{'\n'})
	if len(content) > 0 && content[len(content)-1] != '\n' {
		n++
	}
	return n
}

// ChangeType is the change an LLD's "Files Changed" table asks for.
type ChangeType int

const (
	Add ChangeType = iota + 1
	Modify
	Delete
)

func (c ChangeType) String() string {
	switch c {
	case Add:
		return "Add"
	case Modify:
		return "Modify"
	case Delete:
		return "Delete"
	}
	return fmt.Sprintf("ChangeType(%d)", int(c))
}

// ParseChangeType reads the LLD table's "Add", "Modify" or "Delete",
// ignoring case and surrounding space.
func ParseChangeType(s string) (ChangeType, error) {
	for _, c := range []ChangeType{Add, Modify, Delete} {
		if strings.EqualFold(strings.TrimSpace(s), c.String()) {
			return c, nil
		}
	}
	return 0, fmt.Errorf("unknown change type %q: the LLD's Files Changed table must say Add, Modify or Delete", s)
}
