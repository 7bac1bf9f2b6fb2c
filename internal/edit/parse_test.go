package edit_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/azero-dev/azero/internal/edit"
)

// fence is ``` for embedding in Go raw strings.
const fence = "```"

func TestParseAccepts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		reply string
		want  []edit.Block
	}{
		{
			name: "spec format",
			reply: "### CHANGE 1: rename\nFIND:\n" + fence + "python\ndef a():\n    pass\n" + fence + "\n\nREPLACE WITH:\n" +
				fence + "python\ndef b():\n    pass\n" + fence + "\n",
			want: []edit.Block{{N: 1, Description: "rename", Line: 1, Find: "def a():\n    pass\n", Replace: "def b():\n    pass\n"}},
		},
		{
			name: "heading level, bold and separators vary",
			reply: "## Change 1 - first\nFIND:\n" + fence + "\na\n" + fence + "\nREPLACE WITH:\n" + fence + "\nb\n" + fence + "\n" +
				"**CHANGE 2: second**\n**FIND:**\n" + fence + "go\nc\n" + fence + "\n**REPLACE WITH:**\n" + fence + "go\nd\n" + fence + "\n" +
				"#### change #3\nFind\n" + fence + "\ne\n" + fence + "\nReplace:\n" + fence + "\nf\n" + fence + "\n",
			want: []edit.Block{
				{N: 1, Description: "first", Line: 1, Find: "a\n", Replace: "b\n"},
				{N: 2, Description: "second", Line: 10, Find: "c\n", Replace: "d\n"},
				{N: 3, Description: "", Line: 19, Find: "e\n", Replace: "f\n"},
			},
		},
		{
			name:  "no heading, prose everywhere",
			reply: "Sure.\nFIND:\n\n" + fence + "\nx = 1\n" + fence + "\nThen this replaces it:\n\nREPLACE WITH:\n\n" + fence + "\nx = 2\n" + fence + "\nDone.\n",
			want:  []edit.Block{{N: 1, Line: 2, Find: "x = 1\n", Replace: "x = 2\n"}},
		},
		{
			name:  "tilde fences and an empty replace deletes",
			reply: "FIND:\n~~~\nold()\n~~~\nREPLACE WITH:\n~~~\n~~~\n",
			want:  []edit.Block{{N: 1, Line: 1, Find: "old()\n", Replace: ""}},
		},
		{
			name: "a longer outer fence is not closed by an inner one",
			reply: "FIND:\n````markdown\nSee:\n```go\nx := 1\n```\n````\nREPLACE WITH:\n" +
				"`````\nSee:\n````\n```go\nx := 2\n```\n````\n`````\n",
			want: []edit.Block{{N: 1, Line: 1,
				Find:    "See:\n```go\nx := 1\n```\n",
				Replace: "See:\n````\n```go\nx := 2\n```\n````\n"}},
		},
		{
			name:  "a replace that is one blank line is kept",
			reply: "FIND:\n```\nx\n```\nREPLACE WITH:\n```\n\n```\n",
			want:  []edit.Block{{N: 1, Line: 1, Find: "x\n", Replace: "\n"}},
		},
		{
			name:  "fence indented in a list loses that indentation",
			reply: "1. FIND:\n\n   ```go\n   \tx := 1\n   ```\n   REPLACE WITH:\n   ```go\n   \tx := 2\n   ```\n",
			want:  nil, // "1. FIND:" is prose, so no block: checked in TestParseRejects
		},
		{
			name:  "CRLF reply",
			reply: "### CHANGE 1: x\r\nFIND:\r\n```\r\na\r\n```\r\nREPLACE WITH:\r\n```\r\nb\r\n```\r\n",
			want:  []edit.Block{{N: 1, Description: "x", Line: 1, Find: "a\n", Replace: "b\n"}},
		},
		{
			name:  "search/replace bare",
			reply: "<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n",
			want:  []edit.Block{{N: 1, Line: 1, Find: "a\n", Replace: "b\n"}},
		},
		{
			name: "search/replace in fences after file names, several",
			reply: "Edits:\n\nsrc/app.py\n```python\n<<<<<<< SEARCH\n    a = 1\n=======\n    a = 2\n>>>>>>> REPLACE\n```\n\n" +
				"`src/app.py`\n```\n<<<<<<< SEARCH\nb\n=======\n>>>>>>> REPLACE\n\n<<<<<<< SEARCH\nc\n=======\nd\n>>>>>>> REPLACE\n```\n",
			want: []edit.Block{
				{N: 1, Path: "src/app.py", Line: 5, Find: "    a = 1\n", Replace: "    a = 2\n"},
				{N: 2, Path: "src/app.py", Line: 14, Find: "b\n", Replace: ""},
				{N: 3, Line: 19, Find: "c\n", Replace: "d\n"},
			},
		},
		{
			name:  "search/replace markers of other lengths and a fence inside",
			reply: "<<<<< SEARCH\n```\nx\n```\n=========\n```\ny\n```\n>>>>>>>>> REPLACE  \n",
			want:  []edit.Block{{N: 1, Line: 1, Find: "```\nx\n```\n", Replace: "```\ny\n```\n"}},
		},
		{
			name: "both formats mixed, in reply order, heading on a search block",
			reply: "<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n### CHANGE 2: c to d\nFIND:\n```\nc\n```\nREPLACE WITH:\n```\nd\n```\n" +
				"### CHANGE 3: e to f\n<<<<<<< SEARCH\ne\n=======\nf\n>>>>>>> REPLACE\n",
			want: []edit.Block{
				{N: 1, Line: 1, Find: "a\n", Replace: "b\n"},
				{N: 2, Description: "c to d", Line: 6, Find: "c\n", Replace: "d\n"},
				{N: 3, Description: "e to f", Line: 15, Find: "e\n", Replace: "f\n"},
			},
		},
		{
			name:  "markers inside a FIND fence are content",
			reply: "FIND:\n```\n<<<<<<< SEARCH\n=======\nREPLACE WITH:\n```\nREPLACE WITH:\n```\nok\n```\n",
			want:  []edit.Block{{N: 1, Line: 1, Find: "<<<<<<< SEARCH\n=======\nREPLACE WITH:\n", Replace: "ok\n"}},
		},
		{
			name: "a recap of the changes after the blocks is prose",
			reply: "### CHANGE 1: a\nFIND:\n```\na\n```\nREPLACE WITH:\n```\nb\n```\n### CHANGE 2: c\nFIND:\n```\nc\n```\nREPLACE WITH:\n```\nd\n```\n" +
				"\n## Summary\n### Change 1: renamed a\n### Change 2: renamed c\n",
			want: []edit.Block{
				{N: 1, Description: "a", Line: 1, Find: "a\n", Replace: "b\n"},
				{N: 2, Description: "c", Line: 10, Find: "c\n", Replace: "d\n"},
			},
		},
		{
			name: "blocks indented in a numbered list lose that indentation",
			reply: "1. In `calc.py`:\n\n   ```python\n   <<<<<<< SEARCH\n   def add(a, b):\n       return a + b\n   =======\n   def add(a, b):\n       return b + a\n   >>>>>>> REPLACE\n   ```\n\n" +
				"2. Then:\n\n    <<<<<<< SEARCH\n    x = 1\n    =======\n    x = 2\n    >>>>>>> REPLACE\n",
			want: []edit.Block{
				{N: 1, Line: 4, Find: "def add(a, b):\n    return a + b\n", Replace: "def add(a, b):\n    return b + a\n"},
				{N: 2, Line: 15, Find: "x = 1\n", Replace: "x = 2\n"},
			},
		},
		{
			name:  "an indented block's markers may be less indented",
			reply: "  <<<<<<< SEARCH\n  a\n=======\n  b\n>>>>>>> REPLACE\n",
			want:  []edit.Block{{N: 1, Line: 1, Find: "a\n", Replace: "b\n"}},
		},
		{
			name:  "an indented ======= in a block that starts its line is content",
			reply: "<<<<<<< SEARCH\n    Notes\n    =======\n=======\n    Notes\n    =======\n    More.\n>>>>>>> REPLACE\n",
			want:  []edit.Block{{N: 1, Line: 1, Find: "    Notes\n    =======\n", Replace: "    Notes\n    =======\n    More.\n"}},
		},
		{
			name:  "------- SEARCH and +++++++ REPLACE markers, and SEARCH> / REPLACE>",
			reply: "------- SEARCH\na\n=======\nb\n+++++++ REPLACE\n<<<<<<< SEARCH>\nc\n=======\nd\n>>>>>>> REPLACE>\n",
			want: []edit.Block{
				{N: 1, Line: 1, Find: "a\n", Replace: "b\n"},
				{N: 2, Line: 6, Find: "c\n", Replace: "d\n"},
			},
		},
		{
			name: "a :start_line: header and its separator are not lines to find",
			reply: "<<<<<<< SEARCH\n:start_line:12\n-------\n    x = 1\n=======\n    x = 2\n>>>>>>> REPLACE\n" +
				"<<<<<<< SEARCH\n:start_line: 20\n:end_line: 21\n-------\ny\n=======\nz\n>>>>>>> REPLACE\n",
			want: []edit.Block{
				{N: 1, Line: 1, Find: "    x = 1\n", Replace: "    x = 2\n"},
				{N: 2, Line: 8, Find: "y\n", Replace: "z\n"},
			},
		},
		{
			name:  "a :start_line: line without its separator is content",
			reply: "<<<<<<< SEARCH\n:start_line:12\nx\n=======\ny\n>>>>>>> REPLACE\n",
			want:  []edit.Block{{N: 1, Line: 1, Find: ":start_line:12\nx\n", Replace: "y\n"}},
		},
		{
			name:  "labels with a note in parentheses",
			reply: "### CHANGE 1: x\nFIND (lines 4-5):\n```python\na = 1\n```\nREPLACE WITH (new code):\n```python\na = 2\n```\n",
			want:  []edit.Block{{N: 1, Description: "x", Line: 1, Find: "a = 1\n", Replace: "a = 2\n"}},
		},
		{
			name:  "setext heading underline in prose is not a divider",
			reply: "Summary\n=======\n\nFIND:\n```\na\n```\nREPLACE WITH:\n```\nb\n```\n",
			want:  []edit.Block{{N: 1, Line: 4, Find: "a\n", Replace: "b\n"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := edit.Parse(tt.reply)
			if tt.want == nil {
				if err == nil {
					t.Fatalf("Parse = %+v, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		reply   string
		block   int
		line    int
		reasons []string // substrings of Error()
	}{
		{"empty reply", "", 0, 0, []string{"no edit blocks found"}},
		{"prose only", "I could not find anything to change.\n```go\nx := 1\n```\n", 0, 0, []string{"no edit blocks found", "### CHANGE"}},
		{"FIND without REPLACE WITH", "### CHANGE 1: a\nFIND:\n```\na\n```\n", 1, 2, []string{"block 1", "FIND: has no REPLACE WITH:"}},
		{"FIND without REPLACE WITH before the next change",
			"FIND:\n```\na\n```\nREPLACE WITH:\n```\nb\n```\n### CHANGE 2: c\nFIND:\n```\nc\n```\n### CHANGE 3: d\nFIND:\n```\nd\n```\nREPLACE WITH:\n```\ne\n```\n",
			2, 10, []string{"block 2", "line 10", "FIND: has no REPLACE WITH:"}},
		{"REPLACE WITH without FIND", "### CHANGE 1: a\nREPLACE WITH:\n```\nb\n```\n", 1, 2, []string{"REPLACE WITH: has no FIND:"}},
		{"FIND fence unterminated", "FIND:\n```python\na\nREPLACE WITH:\n", 1, 2, []string{"unterminated ``` fence after FIND:", "cut off"}},
		{"REPLACE fence unterminated", "FIND:\n```\na\n```\nREPLACE WITH:\n```\nb\n", 1, 6, []string{"unterminated ``` fence after REPLACE WITH:"}},
		{"FIND fence not closed before REPLACE WITH",
			"FIND:\n```\na\nREPLACE WITH:\n```python\nb\n```\n", 1, 1, []string{"not closed before REPLACE WITH:"}},
		{"FIND not followed by a fence", "FIND:\nx = 1\nREPLACE WITH:\n```\nb\n```\n", 1, 2, []string{"FIND: must be followed by a fenced code block"}},
		{"FIND at end of reply", "Here:\nFIND:\n", 1, 2, []string{"FIND: is not followed by a fenced code block"}},
		{"REPLACE WITH at end of reply", "FIND:\n```\na\n```\nREPLACE WITH:\n\n", 1, 5, []string{"REPLACE WITH: is not followed"}},
		{"empty FIND", "FIND:\n```\n  \n```\nREPLACE WITH:\n```\nb\n```\n", 1, 1, []string{"FIND: is empty"}},
		{"heading without FIND (cut off)", "FIND:\n```\na\n```\nREPLACE WITH:\n```\nb\n```\n### CHANGE 2: more\n", 2, 9, []string{"block 2", "CHANGE 2 has no FIND:"}},
		{"recap announcing a change never written", "FIND:\n```\na\n```\nREPLACE WITH:\n```\nb\n```\n## Summary\n### Change 1: a\n### Change 2: c\n", 2, 11, []string{"CHANGE 2 has no FIND:"}},
		{"two headings in a row", "### CHANGE 1: a\n### CHANGE 2: b\nFIND:\n```\na\n```\nREPLACE WITH:\n```\nb\n```\n", 1, 1, []string{"CHANGE 1 has no FIND:"}},
		{"SEARCH without divider", "<<<<<<< SEARCH\na\n>>>>>>> REPLACE\n", 1, 1, []string{"<<<<<<< SEARCH has no ======="}},
		{"SEARCH at end", "x\n<<<<<<< SEARCH\na\n", 1, 2, []string{"has no ======="}},
		{"SEARCH without REPLACE marker", "<<<<<<< SEARCH\na\n=======\nb\n", 1, 1, []string{"no >>>>>>> REPLACE"}},
		{"SEARCH without REPLACE marker before the next SEARCH",
			"<<<<<<< SEARCH\na\n=======\nb\n<<<<<<< SEARCH\nc\n=======\nd\n>>>>>>> REPLACE\n", 1, 1, []string{"no >>>>>>> REPLACE"}},
		{"empty SEARCH", "<<<<<<< SEARCH\n=======\nb\n>>>>>>> REPLACE\n", 1, 1, []string{"SEARCH section is empty"}},
		{"REPLACE marker alone", "a\n=======\nb\n>>>>>>> REPLACE\n", 1, 4, []string{">>>>>>> REPLACE has no <<<<<<< SEARCH"}},
		{"list-indented labels are prose", "1. FIND:\n   ```\n   a\n   ```\n", 0, 0, []string{"no edit blocks"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			blocks, err := edit.Parse(tt.reply)
			if err == nil {
				t.Fatalf("Parse = %+v, want an error", blocks)
			}
			if blocks != nil {
				t.Errorf("Parse returned blocks %+v with its error", blocks)
			}
			var pe *edit.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T %v, want *edit.ParseError", err, err)
			}
			if pe.Block != tt.block || pe.Line != tt.line {
				t.Errorf("ParseError at block %d line %d, want block %d line %d (%v)", pe.Block, pe.Line, tt.block, tt.line, err)
			}
			for _, r := range tt.reasons {
				if !strings.Contains(err.Error(), r) {
					t.Errorf("error %q does not mention %q", err, r)
				}
			}
		})
	}
}

// A reply cut off anywhere (a truncated model reply) either fails to parse
// or yields exactly the blocks it completed, never a partial block.
func TestParseTruncatedReplyNeverYieldsPartialBlock(t *testing.T) {
	t.Parallel()
	reply := "Intro.\n\n### CHANGE 1: one\nFIND:\n```go\nfunc a() {\n\treturn 1\n}\n```\n\nREPLACE WITH:\n```go\nfunc a() {\n\treturn 2\n}\n```\n\n" +
		"main.go\n```go\n<<<<<<< SEARCH\nvar b = 1\n=======\nvar b = 2\n>>>>>>> REPLACE\n```\n\n" +
		"### CHANGE 3: three\nFIND:\n````\nc\n````\nREPLACE WITH:\n````\n````\n"
	full, err := edit.Parse(reply)
	if err != nil || len(full) != 3 {
		t.Fatalf("Parse(full) = %d blocks, %v", len(full), err)
	}
	for cut := range len(reply) {
		got, err := edit.Parse(reply[:cut])
		if err != nil {
			continue
		}
		if len(got) > len(full) {
			t.Fatalf("cut at %d: %d blocks from a prefix", cut, len(got))
		}
		if diff := cmp.Diff(full[:len(got)], got); diff != "" {
			t.Fatalf("cut at %d yields a block that differs from the complete one:\n%s", cut, diff)
		}
	}
}

// TestParseFileNameLine: the line above a SEARCH block (or above the fence
// around it) is its file name only if it looks like one; a word of prose
// with a dot in it is not.
func TestParseFileNameLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, line, want string
	}{
		{"plain file", "app.py", "app.py"},
		{"path", "src/app/main.go", "src/app/main.go"},
		{"in backticks with a colon", "`internal/x.go`:", "internal/x.go"},
		{"in bold", "**pkg/y.rs**", "pkg/y.rs"},
		{"dotfile", ".gitignore", ".gitignore"},
		{"two extensions", "data.tar.gz", "data.tar.gz"},
		{"path without an extension", "cmd/azero", "cmd/azero"},
		{"a heading", "### src/calc.py", "src/calc.py"},
		{"a File: label", "**File: `calc.py`**", "calc.py"},
		{"a Filename: label", "Filename: pkg/calc.go", "pkg/calc.go"},
		{"a heading of prose", "## Done.", ""},
		{"a C include", "#include <stdio.h>", ""},
		{"Done.", "Done.", ""},
		{"etc.", "etc.", ""},
		{"ellipsis", "...", ""},
		{"a version", "v2.0", ""},
		{"a number", "3.14", ""},
		{"e.g.", "e.g.", ""},
		{"closing parenthesis", "etc.)", ""},
		{"a word without a dot", "Changes", ""},
		{"slashes only", "./", ""},
		{"a sentence", "Here is the change.", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, reply := range []string{
				tt.line + "\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n",
				tt.line + "\n\n```python\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n```\n",
			} {
				blocks, err := edit.Parse(reply)
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if blocks[0].Path != tt.want {
					t.Errorf("Path = %q, want %q\n%s", blocks[0].Path, tt.want, reply)
				}
			}
		})
	}
}

// TestParseMarkers: SEARCH/REPLACE markers of 5 characters or more, of
// any length, are markers; shorter ones where the reply meant a block,
// and a second divider right before the REPLACE marker, are malformed
// blocks reported with their block and line.
func TestParseMarkers(t *testing.T) {
	t.Parallel()
	const block = "<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n"
	ab := []edit.Block{{N: 1, Line: 1, Find: "a\n", Replace: "b\n"}}
	tests := []struct {
		name     string
		reply    string
		want     []edit.Block // nil: an error is wanted
		sentinel error        // nil: any *ParseError
		block    int
		line     int
		reasons  []string
	}{
		{name: "nine and five characters", reply: "<<<<<<<<< SEARCH\na\n=====\nb\n>>>>> REPLACE\n", want: ab},
		{name: "eleven characters, as Cline writes them", reply: "<<<<<<<<<<< SEARCH\na\n===========\nb\n>>>>>>>>>>> REPLACE\n", want: ab},
		{name: "markers of different lengths", reply: "<<<<<<<<<< SEARCH\na\n============\nb\n>>>>>>>>>>>>>> REPLACE\n", want: ab},
		{name: "forty characters", reply: strings.Repeat("<", 40) + " SEARCH\na\n" + strings.Repeat("=", 40) + "\nb\n" + strings.Repeat(">", 40) + " REPLACE\n", want: ab},
		{name: "long --- SEARCH and +++ REPLACE markers", reply: "----------- SEARCH\na\n=======\nb\n++++++++++ REPLACE\n", want: ab},
		{name: "a long indented block", reply: "   <<<<<<<<<<<< SEARCH\n   a\n   ============\n   b\n   >>>>>>>>>>>> REPLACE\n", want: ab},
		{name: "a long line of = in the replacement is content", reply: "<<<<<<< SEARCH\nOld\n=======\nNew\n============\n\nbody\n>>>>>>> REPLACE\n",
			want: []edit.Block{{N: 1, Line: 1, Find: "Old\n", Replace: "New\n============\n\nbody\n"}}},
		{name: "a heading underline in FIND: the divider is as long as the SEARCH marker",
			reply: "<<<<<<<<<<< SEARCH\nTitle\n=======\n===========\nNew title\n>>>>>>>>>>> REPLACE\n",
			want:  []edit.Block{{N: 1, Line: 1, Find: "Title\n=======\n", Replace: "New title\n"}}},
		{name: "a long heading underline in FIND: a divider of a usual length wins",
			reply: "<<<<<<<<<<< SEARCH\nTitle\n=============\n=======\nTitle\n==============\n>>>>>>>>>>> REPLACE\n",
			want:  []edit.Block{{N: 1, Line: 1, Find: "Title\n=============\n", Replace: "Title\n==============\n"}}},
		{name: "a long line of = in prose is prose", reply: "Summary\n==============\n" + block,
			want: []edit.Block{{N: 1, Line: 3, Find: "a\n", Replace: "b\n"}}},
		{name: "four characters before a block are prose", reply: "<<<< SEARCH\n" + block,
			want: []edit.Block{{N: 1, Line: 2, Find: "a\n", Replace: "b\n"}}},
		{name: "second divider right before REPLACE", reply: "<<<<<<< SEARCH\na\n=======\nb\n=======\n>>>>>>> REPLACE\n",
			sentinel: edit.ErrExtraDivider, block: 1, line: 5, reasons: []string{"second =======", "right before >>>>>>> REPLACE"}},
		{name: "second divider, blank line, REPLACE, in the second block", reply: block + "<<<<<<< SEARCH\nc\n=======\nd\n========\n\n>>>>>>> REPLACE\n",
			sentinel: edit.ErrExtraDivider, block: 2, line: 10},
		{name: "second long divider as long as the first", reply: "<<<<<<<<<<< SEARCH\na\n===========\nb\n===========\n>>>>>>>>>>> REPLACE\n",
			sentinel: edit.ErrExtraDivider, block: 1, line: 5},
		{name: "second divider in an indented block", reply: "  <<<<<<< SEARCH\n  a\n  =======\n  b\n  =======\n  >>>>>>> REPLACE\n",
			sentinel: edit.ErrExtraDivider, block: 1, line: 5},
		{name: "a block of four-character markers", reply: "<<<< SEARCH\na\n====\nb\n>>>> REPLACE\n",
			sentinel: edit.ErrMarkerLength, block: 1, line: 1, reasons: []string{`"<<<< SEARCH"`, `4 "<" characters`, "fewer than the 5", "write <<<<<<< SEARCH"}},
		{name: "three-character --- SEARCH before a real REPLACE marker", reply: "x\n--- SEARCH\na\n=======\nb\n+++++++ REPLACE\n",
			sentinel: edit.ErrMarkerLength, block: 1, line: 2, reasons: []string{"write ------- SEARCH"}},
		{name: "a short SEARCH marker alone in the reply", reply: "Here:\n<<<< SEARCH\na\n",
			sentinel: edit.ErrMarkerLength, block: 1, line: 2},
		{name: "short divider", reply: "<<<<<<< SEARCH\na\n====\nb\n>>>>>>> REPLACE\n",
			sentinel: edit.ErrMarkerLength, block: 1, line: 3, reasons: []string{`"===="`, "write ======="}},
		{name: "short REPLACE marker", reply: block + "<<<<<<< SEARCH\nc\n=======\nd\n>>> REPLACE\n",
			sentinel: edit.ErrMarkerLength, block: 2, line: 10, reasons: []string{`">>> REPLACE"`, "write >>>>>>> REPLACE"}},
		{name: "long REPLACE marker with no block", reply: "x\n>>>>>>>>>>> REPLACE\n",
			block: 1, line: 2, reasons: []string{"has no <<<<<<< SEARCH before it"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := edit.Parse(tt.reply)
			if tt.want != nil {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("Parse mismatch (-want +got):\n%s", diff)
				}
				return
			}
			var pe *edit.ParseError
			if !errors.As(err, &pe) || (tt.sentinel != nil && !errors.Is(err, tt.sentinel)) {
				t.Fatalf("Parse = %+v, %v; want a *ParseError wrapping %v", got, err, tt.sentinel)
			}
			if pe.Block != tt.block || pe.Line != tt.line {
				t.Errorf("error at block %d line %d, want block %d line %d: %v", pe.Block, pe.Line, tt.block, tt.line, err)
			}
			for _, r := range tt.reasons {
				if !strings.Contains(err.Error(), r) {
					t.Errorf("error %q does not mention %q", err, r)
				}
			}
		})
	}
}
