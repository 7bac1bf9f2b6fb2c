package edit_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/azero-dev/azero/internal/edit"
)

// TestApplyReportsLooseMatches checks, for every way a FIND may differ
// from the file and still be applied, the new content and the Result:
// its status, the tier that matched, and each loosening, so that a caller
// can show the person reviewing the change exactly what was overlooked.
func TestApplyReportsLooseMatches(t *testing.T) {
	t.Parallel()
	const py = "class A:\n    def f(self):\n        return 1\n"
	const goTabs = "func f() {\n\tif x {\n\t\ty()\n\t}\n}\n"
	tests := []struct {
		name    string
		content string
		block   edit.Block
		want    string
		result  edit.Result // Block is always 1
	}{
		{
			name:    "exact match is not loose",
			content: py,
			block:   blk("        return 1\n", "        return 2\n"),
			want:    "class A:\n    def f(self):\n        return 2\n",
			result:  edit.Result{Status: edit.Applied, Match: edit.Exact, StartLine: 3, EndLine: 3},
		},
		{
			name:    "every line 4 spaces less indented: shift by +4 spaces",
			content: py,
			block:   blk("def f(self):\n    return 1\n", "def f(self):\n    if self.x:\n        return 2\n    return 1\n"),
			want:    "class A:\n    def f(self):\n        if self.x:\n            return 2\n        return 1\n",
			result: edit.Result{Status: edit.Applied, Match: edit.Whitespace, StartLine: 2, EndLine: 3,
				Loose: []edit.Loosening{{Kind: edit.IndentShift, Shift: 4, Unit: "space", Lines: 2}}},
		},
		{
			name:    "every line 2 spaces more indented: shift by -2 spaces",
			content: py,
			block:   blk("      def f(self):\n          return 1\n", "      def f(self):\n          return 3\n"),
			want:    "class A:\n    def f(self):\n        return 3\n",
			result: edit.Result{Status: edit.Applied, Match: edit.Whitespace, StartLine: 2, EndLine: 3,
				Loose: []edit.Loosening{{Kind: edit.IndentShift, Shift: -2, Unit: "space", Lines: 2}}},
		},
		{
			name:    "blank lines do not count towards the shift",
			content: "def f():\n    a = 1\n\n    return a\n",
			block:   blk("a = 1\n\nreturn a\n", "a = 2\n\nreturn a\n"),
			want:    "def f():\n    a = 2\n\n    return a\n",
			result: edit.Result{Status: edit.Applied, Match: edit.Whitespace, StartLine: 2, EndLine: 4,
				Loose: []edit.Loosening{{Kind: edit.IndentShift, Shift: 4, Unit: "space", Lines: 2}}},
		},
		{
			name:    "tabs file, FIND one tab short on every line",
			content: goTabs,
			block:   blk("if x {\n\ty()\n}\n", "if x {\n\ty()\n\tz()\n}\n"),
			want:    "func f() {\n\tif x {\n\t\ty()\n\t\tz()\n\t}\n}\n",
			result: edit.Result{Status: edit.Applied, Match: edit.Whitespace, StartLine: 2, EndLine: 4,
				Loose: []edit.Loosening{{Kind: edit.IndentShift, Shift: 1, Unit: "tab", Lines: 3}}},
		},
		{
			name:    "tabs file, reply in spaces at the same depth: style converted, no shift",
			content: goTabs,
			block:   blk("    if x {\n        y()\n    }\n", "    if x {\n        y()\n        z()\n    }\n"),
			want:    "func f() {\n\tif x {\n\t\ty()\n\t\tz()\n\t}\n}\n",
			result: edit.Result{Status: edit.Applied, Match: edit.Whitespace, StartLine: 2, EndLine: 4,
				Loose: []edit.Loosening{{Kind: edit.IndentStyle, TabWidth: 4, Lines: 7}}},
		},
		{
			name:    "tabs file, reply in spaces and one level short: converted and shifted",
			content: goTabs,
			block:   blk("if x {\n    y()\n}\n", "if x {\n    y()\n    if z {\n        w()\n    }\n}\n"),
			want:    "func f() {\n\tif x {\n\t\ty()\n\t\tif z {\n\t\t\tw()\n\t\t}\n\t}\n}\n",
			result: edit.Result{Status: edit.Applied, Match: edit.Whitespace, StartLine: 2, EndLine: 4,
				Loose: []edit.Loosening{{Kind: edit.IndentStyle, TabWidth: 4, Lines: 5}, {Kind: edit.IndentShift, Shift: 1, Unit: "tab", Lines: 3}}},
		},
		{
			name:    "tabs file, a reply two spaces a level throughout, one level deeper",
			content: "func f() {\n\tif x {\n\t\ty()\n\t}\n\treturn\n}\n",
			block:   blk("    if x {\n      y()\n    }\n", "    if x {\n      y()\n      w()\n    }\n"),
			want:    "func f() {\n\tif x {\n\t\ty()\n\t\tw()\n\t}\n\treturn\n}\n",
			result: edit.Result{Status: edit.Applied, Match: edit.Whitespace, StartLine: 2, EndLine: 4,
				Loose: []edit.Loosening{{Kind: edit.IndentStyle, TabWidth: 2, Lines: 7}, {Kind: edit.IndentShift, Shift: -1, Unit: "tab", Lines: 3}}},
		},
		{
			name:    "spaces file, reply in tabs",
			content: "def f():\n    if x:\n        y()\n",
			block:   blk("\tif x:\n\t\ty()\n", "\tif x:\n\t\ty()\n\t\tz()\n"),
			want:    "def f():\n    if x:\n        y()\n        z()\n",
			result: edit.Result{Status: edit.Applied, Match: edit.Whitespace, StartLine: 2, EndLine: 3,
				Loose: []edit.Loosening{{Kind: edit.IndentStyle, TabWidth: 4, Lines: 5}}},
		},
		{
			name:    "a two-space FIND for a four-space file: mapped level by level",
			content: "class A:\n    def f(self):\n        if self.x:\n            return 1\n        return 2\n",
			block:   blk("  if self.x:\n    return 1\n  return 2\n", "  if self.x:\n    return 10\n  log()\n  return 2\n"),
			want:    "class A:\n    def f(self):\n        if self.x:\n            return 10\n        log()\n        return 2\n",
			result: edit.Result{Status: edit.Applied, Match: edit.Whitespace, StartLine: 3, EndLine: 5,
				Loose: []edit.Loosening{{Kind: edit.IndentLevels, Lines: 3, Levels: []edit.IndentLevel{{Find: "  ", File: "        "}, {Find: "    ", File: "            "}}}}},
		},
		{
			name:    "a two-space method for a four-space class, from the top",
			content: "class A:\n    def f(self):\n        if self.x:\n            return 1\n        return 2\n",
			block:   blk("def f(self):\n  if self.x:\n    return 1\n  return 2\n", "def f(self):\n  if self.x:\n    return 1\n  if self.y:\n    return 3\n  return 2\n"),
			want:    "class A:\n    def f(self):\n        if self.x:\n            return 1\n        if self.y:\n            return 3\n        return 2\n",
			result: edit.Result{Status: edit.Applied, Match: edit.Whitespace, StartLine: 2, EndLine: 5,
				Loose: []edit.Loosening{{Kind: edit.IndentLevels, Lines: 4, Levels: []edit.IndentLevel{
					{Find: "", File: "    "}, {Find: "  ", File: "        "}, {Find: "    ", File: "            "}}}}},
		},
		{
			name:    "a four-space FIND for a two-space file",
			content: "def f(x):\n  if x:\n    return 1\n  return 2\n",
			block:   blk("def f(x):\n    if x:\n        return 1\n", "def f(x):\n    if x:\n        return 1\n    if not x:\n        return 0\n"),
			want:    "def f(x):\n  if x:\n    return 1\n  if not x:\n    return 0\n  return 2\n",
			result: edit.Result{Status: edit.Applied, Match: edit.Whitespace, StartLine: 1, EndLine: 3,
				Loose: []edit.Loosening{{Kind: edit.IndentLevels, Lines: 3, Levels: []edit.IndentLevel{{Find: "    ", File: "  "}, {Find: "        ", File: "    "}}}}},
		},
		{
			name:    "tabs file, spaces reply that fits only an odd tab width: each level maps to one",
			content: goTabs,
			block:   blk("if x {\n             y()\n", "if x {\n             w()\n"),
			want:    "func f() {\n\tif x {\n\t\tw()\n\t}\n}\n",
			result: edit.Result{Status: edit.Applied, Match: edit.Whitespace, StartLine: 2, EndLine: 3,
				Loose: []edit.Loosening{{Kind: edit.IndentLevels, Lines: 2, Levels: []edit.IndentLevel{{Find: "", File: "\t"}, {Find: "             ", File: "\t\t"}}}}},
		},
		{
			name:    "trailing whitespace in the file",
			content: "a = 1  \nb = 2\n",
			block:   blk("a = 1\nb = 2\n", "a = 1\nb = 3\n"),
			want:    "a = 1  \nb = 3\n",
			result: edit.Result{Status: edit.Applied, Match: edit.Whitespace, StartLine: 1, EndLine: 2,
				Loose: []edit.Loosening{{Kind: edit.TrailingWhitespace, Lines: 1}}},
		},
		{
			name:    "whitespace-only line in the file counts as trailing whitespace",
			content: "a\n    \nb\n",
			block:   blk("a\n\nb\n", "a\n\nB\n"),
			want:    "a\n    \nB\n",
			result: edit.Result{Status: edit.Applied, Match: edit.Whitespace, StartLine: 1, EndLine: 3,
				Loose: []edit.Loosening{{Kind: edit.TrailingWhitespace, Lines: 1}}},
		},
		{
			name:    "whitespace inside a line",
			content: "x  =  compute(a,   b)\n",
			block:   blk("x = compute(a, b)\n", "x = compute(a, b, c)\n"),
			want:    "x = compute(a, b, c)\n",
			result: edit.Result{Status: edit.Applied, Match: edit.Whitespace, StartLine: 1, EndLine: 1,
				Loose: []edit.Loosening{{Kind: edit.InnerWhitespace, Lines: 1}}},
		},
		{
			name:    "blank lines around FIND",
			content: "a\nb\nc\n",
			block:   blk("\nb\n\n", "\nB\n\n"),
			want:    "a\nB\nc\n",
			result: edit.Result{Status: edit.Applied, Match: edit.Whitespace, StartLine: 2, EndLine: 2,
				Loose: []edit.Loosening{{Kind: edit.BlankEdges, Lines: 2}}},
		},
		{
			name:    "several kinds at once",
			content: "def f():\n    x  = 1   \n    return x\n",
			block:   blk("x = 1\nreturn x\n", "x = 2\nreturn x\n"),
			want:    "def f():\n    x = 2\n    return x\n",
			result: edit.Result{Status: edit.Applied, Match: edit.Whitespace, StartLine: 2, EndLine: 3,
				Loose: []edit.Loosening{{Kind: edit.IndentShift, Shift: 4, Unit: "space", Lines: 2}, {Kind: edit.TrailingWhitespace, Lines: 1}, {Kind: edit.InnerWhitespace, Lines: 1}}},
		},
		{
			name:    "numbered FIND 'n | code' matches once the numbers go",
			content: py,
			block:   blk("2 |     def f(self):\n3 |         return 1\n", "2 |     def f(self):\n3 |         return 10\n"),
			want:    "class A:\n    def f(self):\n        return 10\n",
			result: edit.Result{Status: edit.Applied, Match: edit.Exact, StartLine: 2, EndLine: 3,
				Loose: []edit.Loosening{{Kind: edit.LineNumbers, Lines: 2}}},
		},
		{
			name:    "numbered FIND 'n| code' with padded numbers, new REPLACE lines unnumbered",
			content: py,
			block:   blk(" 2|     def f(self):\n 3|         return 1\n", " 2|     def f(self):\n        x = 1\n 3|         return 1\n"),
			want:    "class A:\n    def f(self):\n        x = 1\n        return 1\n",
			result: edit.Result{Status: edit.Applied, Match: edit.Exact, StartLine: 2, EndLine: 3,
				Loose: []edit.Loosening{{Kind: edit.LineNumbers, Lines: 2}}},
		},
		{
			name:    "numbered FIND with arrows, a blank line unnumbered",
			content: "a = 1\n\nb = 2\n",
			block:   blk("1→a = 1\n\n3→b = 2\n", "1→a = 1\n\n3→b = 20\n"),
			want:    "a = 1\n\nb = 20\n",
			result: edit.Result{Status: edit.Applied, Match: edit.Exact, StartLine: 1, EndLine: 3,
				Loose: []edit.Loosening{{Kind: edit.LineNumbers, Lines: 2}}},
		},
		{
			name:    "numbered and dedented FIND in a CRLF file",
			content: "class A:\r\n    def f(self):\r\n        return 1\r\n",
			block:   blk("2 | def f(self):\n3 |     return 1\n", "2 | def f(self):\n3 |     return 2\n"),
			want:    "class A:\r\n    def f(self):\r\n        return 2\r\n",
			result: edit.Result{Status: edit.Applied, Match: edit.Whitespace, StartLine: 2, EndLine: 3,
				Loose: []edit.Loosening{{Kind: edit.LineNumbers, Lines: 2}, {Kind: edit.IndentShift, Shift: 4, Unit: "space", Lines: 2}}},
		},
		{
			name:    "numbered lines whose code starts with a bar",
			content: "|a|\n|b|\n",
			block:   blk("1 | |a|\n2 | |b|\n", "1 | |a|\n2 | |c|\n"),
			want:    "|a|\n|c|\n",
			result: edit.Result{Status: edit.Applied, Match: edit.Exact, StartLine: 1, EndLine: 2,
				Loose: []edit.Loosening{{Kind: edit.LineNumbers, Lines: 2}}},
		},
		{
			name:    "a file whose lines really look numbered is matched as written",
			content: "| n | v |\n1 | a\n2 | b\n",
			block:   blk("1 | a\n2 | b\n", "1 | A\n2 | B\n"),
			want:    "| n | v |\n1 | A\n2 | B\n",
			result:  edit.Result{Status: edit.Applied, Match: edit.Exact, StartLine: 2, EndLine: 3},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, results, err := edit.Apply(tt.content, []edit.Block{tt.block})
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if got != tt.want {
				t.Errorf("Apply =\n%q\nwant\n%q", got, tt.want)
			}
			want := tt.result
			want.Block = 1
			if diff := cmp.Diff([]edit.Result{want}, results); diff != "" {
				t.Errorf("results (-want +got):\n%s", diff)
			}
			if loose := edit.LooseMatches(results); (len(loose) == 1) != (len(want.Loose) > 0) {
				t.Errorf("LooseMatches = %+v", loose)
			}
		})
	}
}

// TestApplyNoChange: a block whose replacement is what the file already
// has is reported as "no change", not "applied", and leaves the file's
// bytes alone (line endings and trailing whitespace included).
func TestApplyNoChange(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		content  string
		blocks   []edit.Block
		want     string // "" means content unchanged
		statuses []edit.Status
	}{
		{"REPLACE equals FIND, exact", "a\nb\nc\n", []edit.Block{blk("b\n", "b\n")}, "", []edit.Status{edit.NoChange}},
		{"REPLACE equals FIND, whitespace match, CRLF and trailing spaces kept", "def f():\r\n    x = 1  \r\n    return x\r\n",
			[]edit.Block{blk("x = 1\nreturn x\n", "x = 1\nreturn x\n")}, "", []edit.Status{edit.NoChange}},
		{"REPLACE differs from FIND only in what re-indentation restores", "def f():\n    x = 1\n",
			[]edit.Block{blk("x  =  1\n", "x = 1\n")}, "", []edit.Status{edit.NoChange}},
		{"REPLACE equals FIND, numbered", "a\nb\n", []edit.Block{blk("1 | a\n2 | b\n", "1 | a\n2 | b\n")}, "", []edit.Status{edit.NoChange}},
		{"one block changes, one does not", "a\nb\nc\n", []edit.Block{blk("a\n", "a\n"), blk("c\n", "C\n")}, "a\nb\nC\n",
			[]edit.Status{edit.NoChange, edit.Applied}},
		{"a block that undoes the one before it is applied", "a\n", []edit.Block{blk("a\n", "A\n"), blk("A\n", "a\n")}, "",
			[]edit.Status{edit.Applied, edit.Applied}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, results, err := edit.Apply(tt.content, tt.blocks)
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			want := tt.want
			if want == "" {
				want = tt.content
			}
			if got != want {
				t.Errorf("Apply =\n%q\nwant\n%q", got, want)
			}
			for i, r := range results {
				if r.Status != tt.statuses[i] {
					t.Errorf("block %d: status %v, want %v", i+1, r.Status, tt.statuses[i])
				}
			}
		})
	}
}

// TestApplyRefusesUnevenIndentation: a FIND found only with whitespace
// ignored whose lines are not all shifted alike is refused, and the error
// shows the file's lines to copy, as they are.
func TestApplyRefusesUnevenIndentation(t *testing.T) {
	t.Parallel()
	const py = "class A:\n    def f(self):\n        if self.x:\n            return 1\n        return 2\n"
	const goTabs = "func f() {\n\tif x {\n\t\ty()\n\t\tz()\n\t}\n}\n"
	tests := []struct {
		name    string
		content string
		block   edit.Block
		lines   []edit.NumberedLine // the file lines the error shows
		uneven  []int
	}{
		{
			name:    "one FIND line slipped by two spaces",
			content: py,
			block: blk("def f(self):\n    if self.x:\n      return 1\n    return 2\n",
				"def f(self):\n    if self.x:\n        return 1\n        log()\n    return 2\n"),
			lines:  []edit.NumberedLine{{2, "    def f(self):"}, {3, "        if self.x:"}, {4, "            return 1"}, {5, "        return 2"}},
			uneven: []int{3},
		},
		{
			// Two spaces a level for the file's four: each FIND level maps
			// to one file level, but REPLACE goes a level deeper than any
			// of them, where nothing says how deep the file would have it.
			name:    "a two-space reply for a four-space file whose REPLACE has a level FIND lacks",
			content: py,
			block:   blk("  if self.x:\n    return 1\n  return 2\n", "  if self.x:\n    if self.y:\n      return 10\n  return 2\n"),
			lines:   []edit.NumberedLine{{3, "        if self.x:"}, {4, "            return 1"}, {5, "        return 2"}},
			uneven:  []int{2},
		},
		{
			// 4 and 8 spaces where the file has 8 and 12 (a level map),
			// and a line at 6 where the file has 12 too: one file level for
			// two FIND levels is a slip, not a width.
			name:    "two FIND levels for one file level",
			content: py,
			block:   blk("def f(self):\n    if self.x:\n        return 1\n      return 2\n", "def f(self):\n    return 3\n"),
			lines:   []edit.NumberedLine{{2, "    def f(self):"}, {3, "        if self.x:"}, {4, "            return 1"}, {5, "        return 2"}},
			uneven:  []int{4},
		},
		{
			name:    "a deeper FIND level on a shallower file level",
			content: py,
			block:   blk("if self.x:\n    return 1\n  return 2\n", "if self.x:\n    return 1\n"),
			lines:   []edit.NumberedLine{{3, "        if self.x:"}, {4, "            return 1"}, {5, "        return 2"}},
			uneven:  []int{3},
		},
		{
			name:    "uneven lines are counted in FIND as written, blank edges included",
			content: py,
			block:   blk("\n\n    if self.x:\n        return 1\n  return 2\n", "\n\n    if self.x:\n        return 11\n  return 2\n"),
			lines:   []edit.NumberedLine{{3, "        if self.x:"}, {4, "            return 1"}, {5, "        return 2"}},
			uneven:  []int{5},
		},
		{
			name:    "tabs file, spaces reply with one line off",
			content: goTabs,
			block:   blk("    if x {\n        y()\n      z()\n    }\n", "    if x {\n        y()\n        w()\n    }\n"),
			lines:   []edit.NumberedLine{{2, "\tif x {"}, {3, "\t\ty()"}, {4, "\t\tz()"}, {5, "\t}"}},
			uneven:  []int{3},
		},
		{
			// Read alone, FIND fits a reply of 2 spaces a tab shifted one
			// level; its new lines step by 4. The slipped line must not
			// decide how they are indented.
			name:    "tabs file, spaces reply whose one slipped line makes up a tab width",
			content: "func f() {\n\tif x {\n\t\ty()\n\t}\n\treturn\n}\n",
			block:   blk("    if x {\n      y()\n    }\n", "    if x {\n        y()\n        w()\n    }\n"),
			lines:   []edit.NumberedLine{{2, "\tif x {"}, {3, "\t\ty()"}, {4, "\t}"}},
			uneven:  []int{2},
		},
		{
			name:    "tabs file, spaces reply that fits only an odd tab width, REPLACE deeper",
			content: goTabs,
			block:   blk("if x {\n             y()\n", "if x {\n             if w() {\n               v()\n             }\n"),
			lines:   []edit.NumberedLine{{2, "\tif x {"}, {3, "\t\ty()"}},
			uneven:  []int{2},
		},
		{
			name:    "numbered FIND whose stripped lines slip",
			content: py,
			block:   blk("3 |         if self.x:\n4 |           return 1\n", "3 |         if self.x:\n4 |             return 5\n"),
			lines:   []edit.NumberedLine{{3, "        if self.x:"}, {4, "            return 1"}},
			uneven:  []int{2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, results, err := edit.Apply(tt.content, []edit.Block{tt.block})
			if got != tt.content || len(results) != 0 {
				t.Errorf("a refused block changed the content or reported results: %q %+v", got, results)
			}
			var ie *edit.IndentError
			if !errors.As(err, &ie) {
				t.Fatalf("error %T %v, want *IndentError", err, err)
			}
			if diff := cmp.Diff(&edit.IndentError{Block: 1, Lines: tt.lines, Uneven: tt.uneven}, ie); diff != "" {
				t.Errorf("IndentError (-want +got):\n%s", diff)
			}
			var excerpt strings.Builder
			for _, l := range tt.lines {
				excerpt.WriteString(l.Text + "\n")
			}
			msg := err.Error()
			for _, s := range []string{"edit block 1", "not one uniform shift", "```\n" + excerpt.String() + "```\n", "none of them was applied"} {
				if !strings.Contains(msg, s) {
					t.Errorf("error does not contain %q:\n%s", s, msg)
				}
			}
		})
	}
}

// TestApplyNumberedFindEdges: line-number prefixes are removed only from
// a FIND numbered throughout, and only when it matched nothing as
// written; a stripped FIND is ambiguous or missing like any other.
func TestApplyNumberedFindEdges(t *testing.T) {
	t.Parallel()
	const content = "x = 1\ny = 2\nx = 1\ny = 3\n"
	tests := []struct {
		name  string
		find  string
		check func(t *testing.T, err error)
	}{
		{"numbers must rise", "2 | y = 2\n1 | x = 1\n", wantNotFound(nil)},
		{"every non-blank line needs a number", "1 | x = 1\ny = 2\n", wantNotFound(nil)},
		{"a logical or is not a number bar", "1 || x = 1\n", wantNotFound(nil)},
		{"a stripped FIND can be ambiguous", "1 | x = 1\n", func(t *testing.T, err error) {
			var ae *edit.AmbiguousError
			if !errors.As(err, &ae) || !cmp.Equal(ae.Lines, []int{1, 3}) {
				t.Errorf("error %v, want ambiguity at lines 1 and 3", err)
			}
		}},
		{"closest lines come from the stripped FIND, never numbered", "7 | y = 4\n8 | x = 1\n", wantNotFound([]edit.NumberedLine{{1, "x = 1"}, {2, "y = 2"}, {3, "x = 1"}, {4, "y = 3"}})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, _, err := edit.Apply(content, []edit.Block{blk(tt.find, "z\n")})
			if err == nil || got != content {
				t.Fatalf("Apply = %q, %v; want an error and no change", got, err)
			}
			tt.check(t, err)
			if strings.Contains(err.Error(), "1 | x = 1") && !strings.Contains(tt.find, "1 | x = 1") {
				t.Errorf("error shows the file in numbered form:\n%s", err)
			}
		})
	}
}

func wantNotFound(closest []edit.NumberedLine) func(t *testing.T, err error) {
	return func(t *testing.T, err error) {
		t.Helper()
		var nf *edit.NotFoundError
		if !errors.As(err, &nf) {
			t.Fatalf("error %T %v, want *NotFoundError", err, err)
		}
		if closest != nil && !cmp.Equal(nf.Closest, closest) {
			t.Errorf("closest %+v, want %+v", nf.Closest, closest)
		}
	}
}

// TestAmbiguousErrorShowsEachPlace: an ambiguous FIND's error shows the
// file around the first matches, unnumbered, so a model can pick the
// neighbouring lines that tell them apart.
func TestAmbiguousErrorShowsEachPlace(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 5 {
		b.WriteString("def f" + string(rune('a'+i)) + "():\n    return None\n\n")
	}
	_, _, err := edit.Apply(b.String(), []edit.Block{blk("    return None\n", "    return 0\n")})
	var ae *edit.AmbiguousError
	if !errors.As(err, &ae) {
		t.Fatalf("error %v, want *AmbiguousError", err)
	}
	if !cmp.Equal(ae.Lines, []int{2, 5, 8, 11, 14}) || len(ae.Context) != 3 {
		t.Fatalf("lines %v, %d contexts; want 5 lines and 3 contexts", ae.Lines, len(ae.Context))
	}
	want := []edit.NumberedLine{{3, ""}, {4, "def fb():"}, {5, "    return None"}, {6, ""}, {7, "def fc():"}}
	if !cmp.Equal(ae.Context[1], want) {
		t.Errorf("context of the second match = %+v, want %+v", ae.Context[1], want)
	}
	for _, s := range []string{"5 places", "the first 3 matches", "Lines 3-7:\n```\n\ndef fb():\n    return None\n\ndef fc():\n```\n", "Add neighbouring lines"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error does not contain %q:\n%s", s, err)
		}
	}
}

func TestResultString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		r    edit.Result
		want string
	}{
		{"exact", edit.Result{Block: 1, Status: edit.Applied, Match: edit.Exact, StartLine: 3, EndLine: 5}, "block 1, lines 3-5: applied"},
		{"no change", edit.Result{Block: 2, Status: edit.NoChange, Match: edit.Exact, StartLine: 7, EndLine: 7}, "block 2, line 7: no change"},
		{"loose", edit.Result{Block: 3, Status: edit.Applied, Match: edit.Whitespace, StartLine: 475, EndLine: 477, Loose: []edit.Loosening{
			{Kind: edit.LineNumbers, Lines: 3}, {Kind: edit.IndentShift, Shift: -1, Unit: "tab", Lines: 3}, {Kind: edit.IndentStyle, TabWidth: 4, Lines: 1},
			{Kind: edit.TrailingWhitespace, Lines: 2}, {Kind: edit.InnerWhitespace, Lines: 1}, {Kind: edit.BlankEdges, Lines: 1}}},
			"block 3, lines 475-477: applied, loose match: line-number prefixes removed from 3 lines; indentation shifted by -1 tab; " +
				"indentation converted between tabs and spaces (one tab for 4 spaces), 1 line; trailing whitespace ignored on 2 lines; " +
				"whitespace inside 1 line ignored; 1 blank line at the edges of FIND ignored"},
		{"levels", edit.Result{Block: 4, Status: edit.Applied, Match: edit.Whitespace, StartLine: 10, EndLine: 12, Loose: []edit.Loosening{
			{Kind: edit.IndentLevels, Lines: 3, Levels: []edit.IndentLevel{{Find: "", File: "\t"}, {Find: "  ", File: "\t\t"}, {Find: "    ", File: "\t\t  "}, {Find: "\t ", File: "        "}}}}},
			"block 4, lines 10-12: applied, loose match: indentation mapped level by level on 3 lines " +
				"(no indentation as 1 tab, 2 spaces as 2 tabs, 4 spaces as 2 tabs and 2 spaces, 1 tab and 1 space as 8 spaces)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.r.String(); got != tt.want {
				t.Errorf("String() =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}
