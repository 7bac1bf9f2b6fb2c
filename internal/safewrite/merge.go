package safewrite

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/azero-dev/azero/internal/eol"
	"github.com/azero-dev/azero/internal/extend"
)

// Strategy says how new content combines with an existing file.
type Strategy string

// The strategies. The zero value means Replace for an existing file and
// creation for a new one.
const (
	// Replace swaps the whole file for Content.
	Replace Strategy = "replace"
	// Append adds Content at the end (after a newline, if the file
	// lacks a final one).
	Append Strategy = "append"
	// Insert puts Content at Line (1-based): the new content starts at
	// that line and the old line Line moves down.
	Insert Strategy = "insert"
	// Extend merges new members into existing types or classes (Go and
	// Python, internal/extend); members with the name of an existing one
	// are an error.
	Extend Strategy = "extend"
	// Edit writes Content derived by applying FIND/REPLACE blocks to
	// exactly the content read (internal/edit). It requires Base.
	Edit Strategy = "edit"
)

// ParseStrategy validates a strategy name as a user types it.
func ParseStrategy(s string) (Strategy, error) {
	switch st := Strategy(strings.ToLower(strings.TrimSpace(s))); st {
	case Replace, Append, Insert, Extend, Edit:
		return st, nil
	case "":
		return "", nil
	}
	return "", fmt.Errorf("unknown strategy %q: use append, insert, extend or replace", s)
}

// merge computes the file's new content. existing is nil for a file that
// does not exist.
func merge(ctx context.Context, rel string, existing []byte, exists bool, content []byte, s Strategy, line int) ([]byte, error) {
	switch s {
	case Replace, Edit:
		return content, nil
	case Append:
		return mergeAppend(existing, content), nil
	case Insert:
		return mergeInsert(existing, content, line)
	case Extend:
		if !exists {
			return nil, &extend.Error{Path: rel, Reason: "the file does not exist, so there is nothing to extend; create it with replace"}
		}
		return extend.Merge(ctx, rel, existing, content)
	}
	return nil, fmt.Errorf("unknown strategy %q", s)
}

func mergeAppend(existing, piece []byte) []byte {
	piece = eol.Match(existing, piece)
	out := make([]byte, 0, len(existing)+len(piece)+2)
	out = append(out, existing...)
	if len(existing) > 0 && !eol.EndsWithNewline(existing) && len(piece) > 0 {
		out = append(out, eol.Of(existing)...)
	}
	return append(out, piece...)
}

// InsertRangeError reports an insert line outside 1..lines+1.
type InsertRangeError struct {
	Line, Lines int
}

func (e *InsertRangeError) Error() string {
	return fmt.Sprintf("cannot insert at line %d: the line must be between 1 and %d (the file has %d lines; %d appends)",
		e.Line, e.Lines+1, e.Lines, e.Lines+1)
}

func mergeInsert(existing, piece []byte, line int) ([]byte, error) {
	lines := eol.SplitKeep(existing)
	if line < 1 || line > len(lines)+1 {
		return nil, &InsertRangeError{Line: line, Lines: len(lines)}
	}
	if line == len(lines)+1 {
		return mergeAppend(existing, piece), nil
	}
	piece = eol.Match(existing, piece)
	var out bytes.Buffer
	out.Grow(len(existing) + len(piece) + 2)
	for _, l := range lines[:line-1] {
		out.Write(l)
	}
	out.Write(piece)
	if len(piece) > 0 && !eol.EndsWithNewline(piece) {
		out.Write(eol.Of(existing))
	}
	for _, l := range lines[line-1:] {
		out.Write(l)
	}
	return out.Bytes(), nil
}
