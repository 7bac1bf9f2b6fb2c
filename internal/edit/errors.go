package edit

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The texts of these errors are written to be sent back to the model as
// they are: each names the block, says what is wrong and what to do. Their
// fields carry JSON tags so a command's --json output can include them.

// ErrEmptyFind is returned (wrapped, naming the block) for a block whose
// FIND holds no text, which would match everywhere.
var ErrEmptyFind = errors.New("FIND is empty; copy the exact lines to change from the file")

const resend = "Send all edit blocks again; none of them was applied."

// NotFoundError is returned when a block's FIND matches nowhere, exactly
// or with whitespace ignored. Closest holds the lines of the file it most
// likely meant, with their line numbers, so a model can correct itself.
type NotFoundError struct {
	Block   int            `json:"block"`
	Find    string         `json:"find"`
	Closest []NumberedLine `json:"closest"`
}

func (e *NotFoundError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "edit block %d: FIND does not match the file (no exact match, and none with whitespace ignored).\n", e.Block)
	b.WriteString("FIND was:\n")
	writeIndented(&b, e.Find, 30)
	if len(e.Closest) > 0 {
		b.WriteString("The closest lines in the file are")
		if e.Block > 1 {
			b.WriteString(" (numbered after the blocks before this one were applied)")
		}
		b.WriteString(":\n")
		width := len(strconv.Itoa(e.Closest[len(e.Closest)-1].Line))
		for _, l := range e.Closest {
			fmt.Fprintf(&b, "%*d | %s\n", width, l.Line, l.Text)
		}
	}
	b.WriteString("Copy FIND exactly from the file, including comments and blank lines, and do not include line numbers. ")
	b.WriteString(resend)
	return b.String()
}

// AmbiguousError is returned when a block's FIND matches more than one
// place. Lines holds the 1-based first line of every match; Match says
// which tier found them (Whitespace means no exact match existed).
type AmbiguousError struct {
	Block int       `json:"block"`
	Match MatchKind `json:"match"`
	Lines []int     `json:"lines"`
}

func (e *AmbiguousError) Error() string {
	how := "matches"
	if e.Match == Whitespace {
		how = "matches no place exactly but, with whitespace ignored,"
	}
	return fmt.Sprintf("edit block %d: FIND %s %d places in the file (starting at lines %s), so the place to change is unclear. "+
		"Add neighbouring lines to FIND until it matches exactly one place. %s",
		e.Block, how, len(e.Lines), lineList(e.Lines, 12), resend)
}

// ElisionError is returned when a block's REPLACE WITH puts a placeholder
// such as "// ... existing code ..." where FIND had real code: applying it
// would delete that code.
type ElisionError struct {
	Block int    `json:"block"`
	Line  string `json:"line"` // the placeholder line, as written in REPLACE WITH
}

func (e *ElisionError) Error() string {
	return fmt.Sprintf("edit block %d: REPLACE WITH contains the placeholder %q instead of real code, "+
		"and applying it would delete the code it stands for. Write out every line the replacement keeps, "+
		"or make FIND smaller so it covers only the lines that change. %s",
		e.Block, strings.TrimSpace(e.Line), resend)
}

// lineList formats up to limit numbers as "3, 17 and 40".
func lineList(lines []int, limit int) string {
	parts := make([]string, 0, min(len(lines), limit)+1)
	for i, l := range lines {
		if i == limit {
			parts = append(parts, fmt.Sprintf("%d more", len(lines)-limit))
			break
		}
		parts = append(parts, strconv.Itoa(l))
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// writeIndented writes text indented by four spaces, at most limit lines.
func writeIndented(b *strings.Builder, text string, limit int) {
	lines := splitBlockLines(text)
	for i, l := range lines {
		if i == limit {
			fmt.Fprintf(b, "    [%d more lines]\n", len(lines)-limit)
			return
		}
		b.WriteString("    " + l + "\n")
	}
}
