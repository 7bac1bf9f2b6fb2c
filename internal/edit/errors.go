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
// or with whitespace ignored (nor, when every FIND line carried a
// line-number prefix, with the prefixes removed). Closest holds the lines
// of the file it most likely meant, with their line numbers, so a model
// can correct itself.
type NotFoundError struct {
	Block   int            `json:"block"`
	Find    string         `json:"find"`
	Closest []NumberedLine `json:"closest"`
}

func (e *NotFoundError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "edit block %d: FIND does not match the file (no exact match, and none with whitespace ignored).\n", e.Block)
	b.WriteString("FIND was:\n")
	writeQuoted(&b, e.Find, 30)
	if len(e.Closest) > 0 {
		fmt.Fprintf(&b, "The lines of the file most like FIND are %s", lineRange(e.Closest))
		if e.Block > 1 {
			b.WriteString(" (counted after the blocks before this one were applied)")
		}
		b.WriteString(", exactly as the file has them:\n")
		writeExcerpt(&b, e.Closest)
	}
	b.WriteString("Copy FIND exactly from the file, including indentation, comments and blank lines, and do not include line numbers. ")
	b.WriteString(resend)
	return b.String()
}

// AmbiguousError is returned when a block's FIND matches more than one
// place. Lines holds the 1-based first line of every match; Match says
// which tier found them (Whitespace means no exact match existed).
// Context holds, for the first few matches, the matched lines with a few
// lines around them, so a model can see which neighbouring lines tell the
// places apart.
type AmbiguousError struct {
	Block   int              `json:"block"`
	Match   MatchKind        `json:"match"`
	Lines   []int            `json:"lines"`
	Context [][]NumberedLine `json:"context,omitempty"`
}

func (e *AmbiguousError) Error() string {
	how := "matches"
	if e.Match == Whitespace {
		how = "matches no place exactly but, with whitespace ignored,"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "edit block %d: FIND %s %d places in the file (starting at lines %s), so the place to change is unclear. "+
		"Add neighbouring lines to FIND until it matches exactly one place.",
		e.Block, how, len(e.Lines), lineList(e.Lines, 12))
	if len(e.Context) > 0 {
		b.WriteString(" The file around ")
		if len(e.Context) < len(e.Lines) {
			fmt.Fprintf(&b, "the first %d matches", len(e.Context))
		} else {
			b.WriteString("each match")
		}
		b.WriteString(", exactly as the file has it:\n")
		for _, c := range e.Context {
			fmt.Fprintf(&b, "%s:\n", capitalise(lineRange(c)))
			writeExcerpt(&b, c)
		}
	} else {
		b.WriteString(" ")
	}
	b.WriteString(resend)
	return b.String()
}

// IndentError is returned when a block's FIND matches one place only with
// whitespace ignored and its indentation is not one uniform shift of the
// file's: some FIND lines are indented differently from the others
// relative to the file, and its levels do not map one to one onto the
// file's, or REPLACE WITH is indented at a level FIND does not have (see
// IndentLevels). Re-indenting REPLACE WITH from such a FIND would be a
// guess, so the block is refused; Lines holds the file lines FIND
// matched, to be copied exactly, and Uneven the 1-based FIND lines (as
// written, blank lines included) whose indentation breaks the shift.
type IndentError struct {
	Block  int            `json:"block"`
	Lines  []NumberedLine `json:"lines"`
	Uneven []int          `json:"uneven"`
}

func (e *IndentError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "edit block %d: FIND matches %s of the file only with whitespace ignored, and its indentation is not one uniform shift of the file's "+
		"(nor another width whose every level stands for one level of the file, with REPLACE WITH only at those levels): "+
		"FIND %s %s %s indented differently from the other lines, so REPLACE WITH cannot be re-indented safely.\n",
		e.Block, lineRange(e.Lines), plural(len(e.Uneven), "line"), lineList(e.Uneven, 12), isAre(len(e.Uneven)))
	b.WriteString("Copy FIND exactly from these lines of the file, with their indentation, and indent REPLACE WITH the same way:\n")
	writeExcerpt(&b, e.Lines)
	b.WriteString(resend)
	return b.String()
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
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

// maxExcerpt bounds the file lines one excerpt shows.
const maxExcerpt = 200

// writeExcerpt writes lines of the file in a code fence, exactly as the
// file has them and without line numbers: models copy what an error
// shows, and a numbered view copied into FIND no longer matches. The
// fence is longer than any backtick run in the lines, so none can close
// it.
func writeExcerpt(b *strings.Builder, lines []NumberedLine) {
	longest := 0
	for _, l := range lines {
		longest = max(longest, maxRun(l.Text, '`'))
	}
	f := strings.Repeat("`", max(3, longest+1))
	b.WriteString(f + "\n")
	for i, l := range lines {
		if i == maxExcerpt {
			b.WriteString(f + "\n")
			fmt.Fprintf(b, "[%d more lines, up to line %d]\n", len(lines)-maxExcerpt, lines[len(lines)-1].Line)
			return
		}
		b.WriteString(l.Text + "\n")
	}
	b.WriteString(f + "\n")
}

// lineRange names the lines of an excerpt: "line 7" or "lines 7-10".
func lineRange(lines []NumberedLine) string {
	if len(lines) == 0 {
		return "no lines"
	}
	first, last := lines[0].Line, lines[len(lines)-1].Line
	if first == last {
		return fmt.Sprintf("line %d", first)
	}
	return fmt.Sprintf("lines %d-%d", first, last)
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// writeQuoted writes a block's text in a code fence, at most limit lines.
func writeQuoted(b *strings.Builder, text string, limit int) {
	lines := splitBlockLines(text)
	numbered := make([]NumberedLine, 0, min(len(lines), limit))
	for i, l := range lines[:min(len(lines), limit)] {
		numbered = append(numbered, NumberedLine{Line: i + 1, Text: l})
	}
	writeExcerpt(b, numbered)
	if len(lines) > limit {
		fmt.Fprintf(b, "[%d more lines]\n", len(lines)-limit)
	}
}
