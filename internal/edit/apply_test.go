package edit_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/azero-dev/azero/internal/edit"
)

// blk builds a block from find and replace written as lines.
func blk(find, replace string) edit.Block {
	return edit.Block{Find: find, Replace: replace}
}

func TestApply(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		content string
		blocks  []edit.Block
		want    string
		matches []edit.MatchKind
		lines   [][2]int // StartLine, EndLine per block
	}{
		{
			name:    "exact single line",
			content: "a\nb\nc\n",
			blocks:  []edit.Block{blk("b\n", "B\n")},
			want:    "a\nB\nc\n",
			matches: []edit.MatchKind{edit.Exact},
			lines:   [][2]int{{2, 2}},
		},
		{
			name:    "whole lines only, never inside a line",
			content: "foobar\nfoo\n",
			blocks:  []edit.Block{blk("foo\n", "baz\n")},
			want:    "foobar\nbaz\n",
			lines:   [][2]int{{2, 2}},
		},
		{
			name:    "find without trailing newline is still whole lines",
			content: "x = 1\ny = 2\n",
			blocks:  []edit.Block{blk("y = 2", "y = 3")},
			want:    "x = 1\ny = 3\n",
		},
		{
			name:    "deletion",
			content: "a\nb\nc\n",
			blocks:  []edit.Block{blk("b\n", "")},
			want:    "a\nc\n",
		},
		{
			name:    "insertion by repeating context",
			content: "a\nc\n",
			blocks:  []edit.Block{blk("a\nc\n", "a\nb\nc\n")},
			want:    "a\nb\nc\n",
		},
		{
			name:    "FIND equal to REPLACE is identity",
			content: "a\nb\n",
			blocks:  []edit.Block{blk("a\nb\n", "a\nb\n")},
			want:    "a\nb\n",
		},
		{
			name:    "CRLF file stays CRLF with LF blocks",
			content: "one\r\ntwo\r\nthree\r\n",
			blocks:  []edit.Block{blk("two\n", "2\n2.5\n")},
			want:    "one\r\n2\r\n2.5\r\nthree\r\n",
			matches: []edit.MatchKind{edit.Exact},
		},
		{
			name:    "CRLF file with CRLF blocks",
			content: "one\r\ntwo\r\n",
			blocks:  []edit.Block{blk("one\r\ntwo\r\n", "uno\r\ndos\r\n")},
			want:    "uno\r\ndos\r\n",
		},
		{
			name:    "mixed endings keep every untouched ending",
			content: "a\r\nb\nc\r\nd\r\n",
			blocks:  []edit.Block{blk("b\nc\n", "b\nC\n")},
			want:    "a\r\nb\nC\r\nd\r\n",
		},
		{
			name:    "missing final newline stays missing on replace",
			content: "a\nb",
			blocks:  []edit.Block{blk("b\n", "c\nd\n")},
			want:    "a\nc\nd",
		},
		{
			name:    "missing final newline stays missing on append",
			content: "a\nb",
			blocks:  []edit.Block{blk("b\n", "b\nc\n")},
			want:    "a\nb\nc",
		},
		{
			name:    "missing final newline stays missing on delete at end",
			content: "a\nb\nc",
			blocks:  []edit.Block{blk("b\nc\n", "")},
			want:    "a",
		},
		{
			name:    "CRLF without final newline",
			content: "a\r\nb",
			blocks:  []edit.Block{blk("b", "b\nc")},
			want:    "a\r\nb\r\nc",
		},
		{
			name:    "final newline kept",
			content: "a\nb\n",
			blocks:  []edit.Block{blk("b", "c")},
			want:    "a\nc\n",
		},
		{
			name:    "deleting the whole file",
			content: "a\nb",
			blocks:  []edit.Block{blk("a\nb\n", "")},
			want:    "",
		},
		{
			name:    "byte-order mark, unicode and trailing spaces on untouched lines kept",
			content: "\uFEFFnäme = \"ü\"  \nπ = 3.14\t\n日本 = 1\n",
			blocks:  []edit.Block{blk("π = 3.14\n", "π = 3.14159\n")},
			want:    "\uFEFFnäme = \"ü\"  \nπ = 3.14159\n日本 = 1\n",
			matches: []edit.MatchKind{edit.Whitespace}, // the file's line has a trailing tab
		},
		{
			name:    "FIND copied with the byte-order mark",
			content: "\uFEFFfirst\nsecond\n",
			blocks:  []edit.Block{blk("\uFEFFfirst\n", "1st\n")},
			want:    "\uFEFF1st\nsecond\n",
			matches: []edit.MatchKind{edit.Exact},
		},
		{
			name:    "a zero-width no-break space inside a file is content",
			content: "a\n\uFEFFb\n",
			blocks:  []edit.Block{blk("\uFEFFb\n", "\uFEFFc\n")},
			want:    "a\n\uFEFFc\n",
			matches: []edit.MatchKind{edit.Exact},
		},
		{
			name:    "blocks apply in order: block 2 matches text block 1 created",
			content: "func a() {\n\treturn 1\n}\n",
			blocks: []edit.Block{
				blk("\treturn 1\n", "\tx := compute()\n\treturn x\n"),
				blk("\tx := compute()\n", "\tx := compute() + 1\n"),
			},
			want:    "func a() {\n\tx := compute() + 1\n\treturn x\n}\n",
			matches: []edit.MatchKind{edit.Exact, edit.Exact},
			lines:   [][2]int{{2, 2}, {2, 2}},
		},
		{
			name:    "line numbers refer to the text after earlier blocks",
			content: "a\nb\nc\nd\n",
			blocks:  []edit.Block{blk("a\n", "a1\na2\na3\n"), blk("d\n", "D\n")},
			want:    "a1\na2\na3\nb\nc\nD\n",
			lines:   [][2]int{{1, 1}, {6, 6}},
		},
		{
			name:    "exact match preferred over whitespace match",
			content: "  x = 1\nx = 1\n",
			blocks:  []edit.Block{blk("x = 1\n", "x = 2\n")},
			want:    "  x = 1\nx = 2\n",
			matches: []edit.MatchKind{edit.Exact},
			lines:   [][2]int{{2, 2}},
		},
		{
			name:    "dedented FIND: replacement re-indented by the same shift",
			content: "class A:\n    def f(self):\n        return 1\n",
			blocks:  []edit.Block{blk("def f(self):\n    return 1\n", "def f(self):\n    if self.x:\n        return 2\n    return 1\n")},
			want:    "class A:\n    def f(self):\n        if self.x:\n            return 2\n        return 1\n",
			matches: []edit.MatchKind{edit.Whitespace},
			lines:   [][2]int{{2, 3}},
		},
		{
			name:    "over-indented FIND: indentation removed",
			content: "def f():\n    return 1\n",
			blocks:  []edit.Block{blk("        def f():\n            return 1\n", "        def f():\n            return 2\n")},
			want:    "def f():\n    return 2\n",
			matches: []edit.MatchKind{edit.Whitespace},
		},
		{
			name:    "tabs in the file, spaces in the reply: replacement comes out in tabs",
			content: "func f() {\n\tif x {\n\t\ty()\n\t}\n}\n",
			blocks:  []edit.Block{blk("    if x {\n        y()\n    }\n", "    if x {\n        y()\n        z()\n    } else {\n        w()\n    }\n")},
			want:    "func f() {\n\tif x {\n\t\ty()\n\t\tz()\n\t} else {\n\t\tw()\n\t}\n}\n",
			matches: []edit.MatchKind{edit.Whitespace},
		},
		{
			name:    "tabs in the file, unindented reply",
			content: "func f() {\n\tif x {\n\t\ty()\n\t}\n}\n",
			blocks:  []edit.Block{blk("y()\n", "y()\nz()\n")},
			want:    "func f() {\n\tif x {\n\t\ty()\n\t\tz()\n\t}\n}\n",
			matches: []edit.MatchKind{edit.Whitespace},
		},
		{
			name:    "tabs in the file, unindented FIND lines but space-indented REPLACE",
			content: "func g() {\n\treturn\n}\n\nfunc f() {\n}\n",
			blocks:  []edit.Block{blk("func f()  {\n}\n", "func f() {\n    if x {\n        return\n    }\n}\n")},
			want:    "func g() {\n\treturn\n}\n\nfunc f() {\n\tif x {\n\t\treturn\n\t}\n}\n",
			matches: []edit.MatchKind{edit.Whitespace},
		},
		{
			name:    "exact match: replacement kept as written",
			content: "func f() {\n}\n",
			blocks:  []edit.Block{blk("func f() {\n}\n", "func f() {\n    return\n}\n")},
			want:    "func f() {\n    return\n}\n",
			matches: []edit.MatchKind{edit.Exact},
		},
		{
			name:    "alignment after the indentation survives a tab conversion",
			content: "func f() {\n\tx := g(a,\n\t      b)\n}\n",
			blocks:  []edit.Block{blk("    x := g(a,\n          b)\n", "    x := g(a,\n          b, c)\n")},
			want:    "func f() {\n\tx := g(a,\n\t      b, c)\n}\n",
			matches: []edit.MatchKind{edit.Whitespace},
		},
		{
			name:    "spaces in the file, tabs in the reply",
			content: "def f():\n    if x:\n        y()\n",
			blocks:  []edit.Block{blk("\tif x:\n\t\ty()\n", "\tif x:\n\t\ty()\n\t\tz()\n")},
			want:    "def f():\n    if x:\n        y()\n        z()\n",
			matches: []edit.MatchKind{edit.Whitespace},
		},
		{
			name:    "inner whitespace and trailing whitespace normalised; context lines keep the file's bytes",
			content: "type T struct {\n\tName   string // the name\n\tAge    int  \n}\n",
			blocks:  []edit.Block{blk("\tName string // the name\n\tAge int\n}\n", "\tName string // the name\n\tAge int\n\tCity string\n}\n")},
			want:    "type T struct {\n\tName   string // the name\n\tAge    int  \n\tCity string\n}\n",
			matches: []edit.MatchKind{edit.Whitespace},
		},
		{
			name:    "blank lines around FIND do not prevent a match",
			content: "a\nb\nc\n",
			blocks:  []edit.Block{blk("\n\nb\n\n", "\n\nB\n\n")},
			want:    "a\nB\nc\n",
			matches: []edit.MatchKind{edit.Whitespace},
			lines:   [][2]int{{2, 2}},
		},
		{
			name:    "blank lines inside FIND must exist",
			content: "a\n\nb\nc\n",
			blocks:  []edit.Block{blk("a\n\nb\n", "a\nb\n")},
			want:    "a\nb\nc\n",
		},
		{
			name:    "whitespace match with CRLF file",
			content: "def f():\r\n    if x:\r\n        y()\r\n",
			blocks:  []edit.Block{blk("if x:\n    y()\n", "if x:\n    y()\n    z()\n")},
			want:    "def f():\r\n    if x:\r\n        y()\r\n        z()\r\n",
			matches: []edit.MatchKind{edit.Whitespace},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, results, err := edit.Apply(tt.content, tt.blocks)
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if got != tt.want {
				t.Errorf("Apply =\n%q\nwant\n%q", got, tt.want)
			}
			if len(results) != len(tt.blocks) {
				t.Fatalf("%d results for %d blocks", len(results), len(tt.blocks))
			}
			for i, r := range results {
				if r.Block != i+1 {
					t.Errorf("result %d names block %d", i, r.Block)
				}
				if tt.matches != nil && r.Match != tt.matches[i] {
					t.Errorf("block %d matched %v, want %v", i+1, r.Match, tt.matches[i])
				}
				if tt.lines != nil && (r.StartLine != tt.lines[i][0] || r.EndLine != tt.lines[i][1]) {
					t.Errorf("block %d at lines %d-%d, want %d-%d", i+1, r.StartLine, r.EndLine, tt.lines[i][0], tt.lines[i][1])
				}
			}
		})
	}
}

func TestApplyFailuresLeaveContentUntouched(t *testing.T) {
	t.Parallel()
	content := "def a():\n    return 1\n\n\ndef b():\n    return 1\n\n\ndef c():\n    return 3\n"
	tests := []struct {
		name   string
		blocks []edit.Block
		check  func(t *testing.T, err error)
	}{
		{
			name:   "ambiguous exact match lists every start line",
			blocks: []edit.Block{blk("def c():\n", "def C():\n"), {N: 2, Find: "    return 1\n", Replace: "    return 2\n"}},
			check: func(t *testing.T, err error) {
				var ae *edit.AmbiguousError
				if !errors.As(err, &ae) {
					t.Fatalf("error %T %v, want *AmbiguousError", err, err)
				}
				if ae.Block != 2 || ae.Match != edit.Exact || !cmp.Equal(ae.Lines, []int{2, 6}) {
					t.Errorf("AmbiguousError = %+v, want block 2, exact, lines [2 6]", ae)
				}
				for _, s := range []string{"edit block 2", "2 places", "lines 2 and 6", "Add neighbouring lines"} {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not say %q", err, s)
					}
				}
			},
		},
		{
			name:   "zero exact and two whitespace matches is ambiguous",
			blocks: []edit.Block{blk("return 1\n", "return 2\n")},
			check: func(t *testing.T, err error) {
				var ae *edit.AmbiguousError
				if !errors.As(err, &ae) || ae.Match != edit.Whitespace || !cmp.Equal(ae.Lines, []int{2, 6}) {
					t.Fatalf("error %v, want whitespace ambiguity at lines 2 and 6", err)
				}
				if !strings.Contains(err.Error(), "matches no place exactly") {
					t.Errorf("error %q does not explain the whitespace tier", err)
				}
			},
		},
		{
			name:   "not found names the block and shows the closest lines",
			blocks: []edit.Block{blk("def a():\n", "def A():\n"), {N: 2, Find: "def c():\n    return 4\n", Replace: "def c():\n    return 5\n"}},
			check: func(t *testing.T, err error) {
				var nf *edit.NotFoundError
				if !errors.As(err, &nf) {
					t.Fatalf("error %T %v, want *NotFoundError", err, err)
				}
				want := []edit.NumberedLine{{7, ""}, {8, ""}, {9, "def c():"}, {10, "    return 3"}}
				if nf.Block != 2 || !cmp.Equal(nf.Closest, want) {
					t.Errorf("NotFoundError block %d closest %+v, want block 2 closest %+v", nf.Block, nf.Closest, want)
				}
				for _, s := range []string{"edit block 2: FIND does not match", "    return 4", "lines 7-10 (counted after the blocks before",
					"exactly as the file has them:\n```\n\n\ndef c():\n    return 3\n```\n", "none of them was applied"} {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error does not contain %q:\n%s", s, err)
					}
				}
				// Models copy what an error shows: a numbered view of the
				// file would come back as FIND and match nothing.
				if strings.Contains(err.Error(), "9 | def c():") || strings.Contains(err.Error(), "10 |") {
					t.Errorf("error shows file lines in numbered form:\n%s", err)
				}
			},
		},
		{
			name:   "not found with nothing equal falls back to the most similar line",
			blocks: []edit.Block{blk("def cc():\n", "x\n")},
			check: func(t *testing.T, err error) {
				var nf *edit.NotFoundError
				if !errors.As(err, &nf) {
					t.Fatalf("error %v, want *NotFoundError", err)
				}
				found := false
				for _, l := range nf.Closest {
					found = found || (l.Line == 9 && l.Text == "def c():")
				}
				if !found || len(nf.Closest) > 5 {
					t.Errorf("closest %+v, want a short window around line 9", nf.Closest)
				}
			},
		},
		{
			name:   "empty FIND",
			blocks: []edit.Block{blk(" \n\t\n", "x\n")},
			check: func(t *testing.T, err error) {
				if !errors.Is(err, edit.ErrEmptyFind) || !strings.Contains(err.Error(), "edit block 1") {
					t.Errorf("error %v, want ErrEmptyFind naming block 1", err)
				}
			},
		},
		{
			name:   "elision refused before anything is applied",
			blocks: []edit.Block{blk("def a():\n", "def A():\n"), blk("def b():\n    return 1\n", "def b():\n    # ... rest of code ...\n")},
			check: func(t *testing.T, err error) {
				var ee *edit.ElisionError
				if !errors.As(err, &ee) || ee.Block != 2 || ee.Line != "    # ... rest of code ..." {
					t.Fatalf("error %v, want *ElisionError for block 2", err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, _, err := edit.Apply(content, tt.blocks)
			if err == nil {
				t.Fatal("Apply succeeded, want an error")
			}
			if got != content {
				t.Errorf("Apply changed the content on failure:\n%s", got)
			}
			tt.check(t, err)
		})
	}
}

func TestApplyReportsEarlierResultsOnFailure(t *testing.T) {
	t.Parallel()
	_, results, err := edit.Apply("a\nb\n", []edit.Block{blk("a\n", "A\n"), blk("zzz\n", "y\n")})
	if err == nil {
		t.Fatal("want an error")
	}
	want := []edit.Result{{Block: 1, Status: edit.Applied, Match: edit.Exact, StartLine: 1, EndLine: 1}}
	if diff := cmp.Diff(want, results); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
}

func TestApplyNoBlocksIsIdentity(t *testing.T) {
	t.Parallel()
	got, results, err := edit.Apply("x\r\ny", nil)
	if err != nil || got != "x\r\ny" || len(results) != 0 {
		t.Errorf("Apply(nil) = %q, %v, %v", got, results, err)
	}
}

func TestNotFoundClosestCapped(t *testing.T) {
	t.Parallel()
	var file, find strings.Builder
	for i := range 100 {
		file.WriteString("line " + strings.Repeat("x", i) + "\n")
		find.WriteString("line " + strings.Repeat("x", i) + "\n")
	}
	find.WriteString("not in the file\n")
	_, _, err := edit.Apply(file.String(), []edit.Block{blk(find.String(), "")})
	var nf *edit.NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("error %v, want *NotFoundError", err)
	}
	if len(nf.Closest) != 40 || nf.Closest[0].Line != 1 {
		t.Errorf("closest has %d lines from %d, want 40 from line 1", len(nf.Closest), nf.Closest[0].Line)
	}
	if !strings.Contains(err.Error(), "more lines]") {
		t.Errorf("a 101-line FIND should be shortened in the message:\n%s", err)
	}
}
