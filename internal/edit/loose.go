package edit

import (
	"fmt"
	"strings"
)

// Status says what applying a block did to the file.
type Status int

const (
	// Applied: the block changed the file.
	Applied Status = iota + 1
	// NoChange: the block's FIND was found, but its replacement is the
	// text already there (REPLACE WITH repeats FIND), so the file is as
	// it was. A model that sends such a block usually forgot its change.
	NoChange
)

func (s Status) String() string {
	switch s {
	case Applied:
		return "applied"
	case NoChange:
		return "no_change"
	}
	return "unknown"
}

// MarshalText makes a Status appear as "applied" or "no_change" in JSON.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// LooseKind is one way a FIND can differ from the file lines it matched.
type LooseKind int

const (
	// IndentShift: every non-blank FIND line is indented by the same
	// amount more or less than its file line (Loosening.Shift, in
	// Loosening.Unit). The replacement was shifted by that amount.
	IndentShift LooseKind = iota + 1
	// IndentStyle: the block indents with spaces where the file uses
	// tabs, or the other way round, one tab for Loosening.TabWidth spaces
	// on every line. The replacement was rewritten in the file's style;
	// Lines counts the FIND and REPLACE WITH lines indented in the other
	// style.
	IndentStyle
	// TrailingWhitespace: whitespace at the end of lines differs,
	// including whitespace-only lines.
	TrailingWhitespace
	// InnerWhitespace: runs of whitespace inside lines differ (two spaces
	// for one, a tab for a space), or whitespace other than spaces and
	// tabs before a line's first word.
	InnerWhitespace
	// BlankEdges: FIND starts or ends with blank lines that are not in
	// the file there; they were left out of the match, and as many blank
	// lines at the same end of REPLACE WITH with them.
	BlankEdges
	// LineNumbers: every FIND line carried a line-number prefix such as
	// "12 | " (copied from a numbered view of the file), and FIND matched
	// only once the prefixes were removed (from REPLACE WITH too).
	LineNumbers
	// IndentLevels: FIND is indented at another width than the file (2
	// spaces a level where the file has 4, tabs where it has spaces) in a
	// way no uniform shift explains, but each of its indentation levels
	// matched exactly one level of the file, deeper for deeper
	// (Loosening.Levels lists those that differ). REPLACE WITH used only
	// those levels and was re-indented through the same map.
	IndentLevels
)

var looseNames = map[LooseKind]string{
	IndentShift:        "indent_shift",
	IndentStyle:        "indent_style",
	TrailingWhitespace: "trailing_whitespace",
	InnerWhitespace:    "inner_whitespace",
	BlankEdges:         "blank_edges",
	LineNumbers:        "line_numbers",
	IndentLevels:       "indent_levels",
}

func (k LooseKind) String() string {
	if s, ok := looseNames[k]; ok {
		return s
	}
	return "unknown"
}

// MarshalText makes a LooseKind appear by its name ("indent_shift", ...)
// in JSON.
func (k LooseKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// Loosening describes one way a block's FIND differed from the file: what
// Apply had to overlook to find it. Callers show these to the person
// reviewing the change, since a loose match is where a model's edit is
// most likely to land wrongly.
type Loosening struct {
	Kind LooseKind `json:"kind"`
	// Shift is, for IndentShift, how much more (positive) or less
	// (negative) indented the file's lines are than FIND's, in Unit.
	Shift int `json:"shift,omitempty"`
	// Unit is what Shift counts: "space", "tab" or "character" (a mixed
	// prefix of tabs and spaces).
	Unit string `json:"unit,omitempty"`
	// TabWidth is, for IndentStyle, how many spaces stand for one tab.
	TabWidth int `json:"tab_width,omitempty"`
	// Levels is, for IndentLevels, each FIND indentation that differs
	// from the file's, with the file indentation it stands for,
	// shallowest first.
	Levels []IndentLevel `json:"levels,omitempty"`
	// Lines is how many FIND lines differ this way (for BlankEdges, how
	// many blank lines were left out; for IndentStyle, see there).
	Lines int `json:"lines"`
}

// String describes the loosening for a person: "indentation shifted by
// +4 spaces", "trailing whitespace ignored on 2 lines".
func (l Loosening) String() string {
	switch l.Kind {
	case IndentShift:
		return fmt.Sprintf("indentation shifted by %+d %s", l.Shift, plural(l.Shift, l.Unit))
	case IndentStyle:
		return fmt.Sprintf("indentation converted between tabs and spaces (one tab for %d spaces), %d %s", l.TabWidth, l.Lines, plural(l.Lines, "line"))
	case TrailingWhitespace:
		return fmt.Sprintf("trailing whitespace ignored on %d %s", l.Lines, plural(l.Lines, "line"))
	case InnerWhitespace:
		return fmt.Sprintf("whitespace inside %d %s ignored", l.Lines, plural(l.Lines, "line"))
	case BlankEdges:
		return fmt.Sprintf("%d blank %s at the edges of FIND ignored", l.Lines, plural(l.Lines, "line"))
	case LineNumbers:
		return fmt.Sprintf("line-number prefixes removed from %d %s", l.Lines, plural(l.Lines, "line"))
	case IndentLevels:
		pairs := make([]string, len(l.Levels))
		for i, v := range l.Levels {
			pairs[i] = describeIndent(v.Find) + " as " + describeIndent(v.File)
		}
		return fmt.Sprintf("indentation mapped level by level on %d %s (%s)", l.Lines, plural(l.Lines, "line"), strings.Join(pairs, ", "))
	}
	return "unknown loosening"
}

func plural(n int, word string) string {
	if n == 1 || n == -1 {
		return word
	}
	return word + "s"
}

// IsLoose reports whether the block matched only loosely: its FIND as
// written is not in the file.
func (r Result) IsLoose() bool { return len(r.Loose) > 0 }

// String describes the result for a terminal or a log: "block 3, lines
// 475-477: applied, loose match: indentation shifted by +4 spaces",
// "block 4, line 12: no change".
func (r Result) String() string {
	var b strings.Builder
	where := fmt.Sprintf("lines %d-%d", r.StartLine, r.EndLine)
	if r.StartLine == r.EndLine {
		where = fmt.Sprintf("line %d", r.StartLine)
	}
	fmt.Fprintf(&b, "block %d, %s: %s", r.Block, where, strings.ReplaceAll(r.Status.String(), "_", " "))
	if r.IsLoose() {
		b.WriteString(", loose match: ")
		for i, l := range r.Loose {
			if i > 0 {
				b.WriteString("; ")
			}
			b.WriteString(l.String())
		}
	}
	return b.String()
}

// LooseMatches returns the results of the blocks that matched loosely, in
// block order: what a caller must show the person reviewing the change.
func LooseMatches(results []Result) []Result {
	var loose []Result
	for _, r := range results {
		if r.IsLoose() {
			loose = append(loose, r)
		}
	}
	return loose
}

// whitespaceLoosenings lists the differences other than indentation
// between FIND lines and the file lines they matched (equal once
// normalised).
func whitespaceLoosenings(find, file []string, blankEdges int) []Loosening {
	trailing, inner := 0, 0
	for i, f := range find {
		g := file[i]
		if f == g {
			continue
		}
		if strings.TrimSpace(f) == "" {
			trailing++ // both blank: the whole line is trailing whitespace
			continue
		}
		ft, gt := strings.TrimRight(f, " \t\r\v\f"), strings.TrimRight(g, " \t\r\v\f")
		if len(f)-len(ft) != len(g)-len(gt) || f[len(ft):] != g[len(gt):] {
			trailing++
		}
		fb, gb := strings.TrimLeft(ft, " \t\r\v\f"), strings.TrimLeft(gt, " \t\r\v\f")
		// Whitespace other than spaces and tabs before the first word
		// (a stray CR, a form feed) is not indentation: count it here.
		odd := indentOf(f) == indentOf(g) && ft[:len(ft)-len(fb)] != gt[:len(gt)-len(gb)]
		if fb != gb || odd {
			inner++
		}
	}
	var out []Loosening
	if trailing > 0 {
		out = append(out, Loosening{Kind: TrailingWhitespace, Lines: trailing})
	}
	if inner > 0 {
		out = append(out, Loosening{Kind: InnerWhitespace, Lines: inner})
	}
	if blankEdges > 0 {
		out = append(out, Loosening{Kind: BlankEdges, Lines: blankEdges})
	}
	return out
}
