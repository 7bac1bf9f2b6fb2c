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

// Strategy is how a model is asked to produce a file.
type Strategy int

const (
	// FullFile asks for the complete file (FullFilePrompt, ExtractFullFile).
	FullFile Strategy = iota + 1
	// Blocks asks for edit blocks (BlocksPrompt, Parse, Apply).
	Blocks
)

func (s Strategy) String() string {
	switch s {
	case FullFile:
		return "full-file"
	case Blocks:
		return "blocks"
	}
	return fmt.Sprintf("Strategy(%d)", int(s))
}

// MarshalText makes a Strategy appear as "full-file" or "blocks" in JSON.
func (s Strategy) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// SelectStrategy picks how to generate a file, exactly as spec #324 says:
// Add is always FullFile whatever its size (there is nothing to edit);
// Modify uses Blocks when the existing file IsLarge and FullFile
// otherwise. Delete generates nothing; it gets FullFile, the spec's
// default, and callers do not call a model for it.
func SelectStrategy(change ChangeType, existing []byte) Strategy {
	if change == Modify && IsLarge(existing) {
		return Blocks
	}
	return FullFile
}
