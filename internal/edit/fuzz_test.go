package edit_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/edit"
)

// FuzzParse checks that Parse never panics, that its errors are
// well-formed *ParseErrors, and that the blocks it returns survive being
// written out in the spec's format and parsed again.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"",
		"### CHANGE 1: x\nFIND:\n```go\na\n```\nREPLACE WITH:\n```go\nb\n```\n",
		"FIND:\n````\n```\nx\n```\n````\nREPLACE WITH:\n~~~\n~~~\n",
		"file.py\n```python\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n```\n",
		"<<<<<<< SEARCH\na\n=======\n",
		"**CHANGE 2**\nFIND:\n```\n",
		"REPLACE WITH:\n```\nx\n```\n",
		"### CHANGE 1\r\nFIND:\r\n```\r\na\r\n```\r\nREPLACE:\r\n```\r\n```\r\n",
		"   ```\nFIND:\n   ```\n   x\n   ```\nREPLACE WITH:\n```\ny",
		"Done.\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n",
		"v2.0\n```\n<<<<<<<<< SEARCH\na\n=====\nb\n>>>>> REPLACE\n```\n",
		"<<<<<<< SEARCH\na\n=======\nb\n=======\n\n>>>>>>> REPLACE\n",
		"<<<<<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n",
		"<<<<<<< SEARCH\na\n=============\nb\n>>>>>>>>>>>>>> REPLACE\n",
		"<<<<<<< SEARCH\nTitle\n=======\nTitle\n==============\n>>>>>>> REPLACE\n",
		"`src/x.go`:\n<<<<<<< SEARCH\n12 | a\n=======\n12 | b\n>>>>>>> REPLACE\n",
		"1. Change:\n   ```go\n   <<<<<<< SEARCH\n   \ta\n   =======\n  b\n   >>>>>>> REPLACE\n   ```\n",
		"------- SEARCH\n:start_line:3\n-------\na\n=======\nb\n+++++++ REPLACE>\n",
		"  <<<<<<<<<<<< SEARCH\n",
		"<<<<<<<<<<< SEARCH\nTitle\n=======\n===========\nx\n===========\n>>>>>>>>>>> REPLACE\n",
		"<<<< SEARCH\na\n====\nb\n>>>> REPLACE\n",
		"<<<<<<< SEARCH\na\n===\nb\n>>> REPLACE\n",
		"--- SEARCH\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		blocks, err := edit.Parse(reply)
		lines := strings.Count(reply, "\n") + 1
		if err != nil {
			checkParseError(t, err, lines)
			checkMarkerError(t, err, strings.Split(reply, "\n"))
			return
		}
		if len(blocks) == 0 {
			t.Fatal("no blocks and no error")
		}
		prevLine := 0
		for i, b := range blocks {
			if p := b.Path; p != "" && (strings.HasSuffix(p, ".") || strings.ContainsAny(p, " \t`*") || !strings.ContainsAny(p, "./")) {
				t.Fatalf("block %d: %q taken for a file name", b.N, p)
			}
			if b.N != i+1 || b.Line <= prevLine || b.Line > lines {
				t.Fatalf("block %d: N=%d Line=%d (previous %d, %d lines)", i, b.N, b.Line, prevLine, lines)
			}
			prevLine = b.Line
			if strings.TrimSpace(b.Find) == "" || !strings.HasSuffix(b.Find, "\n") {
				t.Fatalf("block %d: FIND %q is blank or not whole lines", b.N, b.Find)
			}
			if b.Replace != "" && !strings.HasSuffix(b.Replace, "\n") {
				t.Fatalf("block %d: REPLACE %q is not whole lines", b.N, b.Replace)
			}
		}
		again, err := edit.Parse(render(blocks))
		if err != nil {
			t.Fatalf("rendered blocks do not parse: %v\n%s", err, render(blocks))
		}
		if len(again) != len(blocks) {
			t.Fatalf("%d blocks became %d", len(blocks), len(again))
		}
		for i := range blocks {
			if again[i].Find != blocks[i].Find || again[i].Replace != blocks[i].Replace {
				t.Fatalf("block %d changed in a round trip: %+v became %+v", i+1, blocks[i], again[i])
			}
		}
	})
}

func checkParseError(t *testing.T, err error, lines int) {
	t.Helper()
	var pe *edit.ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error %T %v, want *edit.ParseError", err, err)
	}
	if pe.Reason == "" || pe.Block < 0 || pe.Line < 0 || pe.Line > lines {
		t.Fatalf("malformed ParseError %+v for a %d-line reply", pe, lines)
	}
	if (pe.Block == 0) != (pe.Line == 0) {
		t.Fatalf("ParseError %+v: only the no-blocks error may lack a block and a line", pe)
	}
	if pe.Block > 0 && !strings.Contains(err.Error(), fmt.Sprintf("edit block %d ", pe.Block)) {
		t.Fatalf("error %q does not name block %d", err, pe.Block)
	}
}

// checkMarkerError checks that an error about a marker points at one: a
// too-short marker at ErrMarkerLength, a divider at ErrExtraDivider.
func checkMarkerError(t *testing.T, err error, lines []string) {
	t.Helper()
	var pe *edit.ParseError
	if !errors.As(err, &pe) || pe.Line < 1 || pe.Line > len(lines) {
		return
	}
	line := strings.TrimLeft(strings.TrimSuffix(lines[pe.Line-1], "\r"), " \t")
	switch {
	case errors.Is(err, edit.ErrMarkerLength):
		if c := line[0]; !strings.ContainsRune("<-=>+", rune(c)) || len(line)-len(strings.TrimLeft(line, string(c))) >= 5 {
			t.Fatalf("marker-length error at line %d %q, which is no short marker", pe.Line, line)
		}
		if !strings.Contains(err.Error(), strings.TrimSpace(line)) {
			t.Fatalf("error %q does not name the marker %q", err, line)
		}
	case errors.Is(err, edit.ErrExtraDivider):
		if n := len(line) - len(strings.TrimLeft(line, "=")); n < 5 {
			t.Fatalf("extra-divider error at line %d %q, which is no divider", pe.Line, line)
		}
	}
}

// render writes blocks in the spec's format, each fence longer than any
// backtick run in its content so that the content cannot close it.
func render(blocks []edit.Block) string {
	var b strings.Builder
	for _, bl := range blocks {
		fmt.Fprintf(&b, "### CHANGE %d: %s\nFIND:\n", bl.N, "x")
		writeBlockFence(&b, bl.Find)
		b.WriteString("\nREPLACE WITH:\n")
		writeBlockFence(&b, bl.Replace)
		b.WriteString("\n")
	}
	return b.String()
}

func writeBlockFence(b *strings.Builder, body string) {
	longest, run := 0, 0
	for _, c := range body {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", max(3, longest+1))
	b.WriteString(f + "\n" + body + f + "\n")
}

// FuzzApplyRoundTrip builds a block from the file itself (its FIND is a
// run of the file's lines, made unique by growing it) and checks that
// Apply produces exactly the bytes of an independent splice, keeps line
// endings and the missing final newline, and that FIND == REPLACE is the
// identity.
func FuzzApplyRoundTrip(f *testing.F) {
	f.Add("a\nb\nc\n", false, false, uint16(1), uint16(0), "B\nB2")
	f.Add("a\nb\nc", true, false, uint16(2), uint16(0), "")
	f.Add("x\nx\ny\nx\n", false, true, uint16(0), uint16(1), "z")
	f.Add("\tfunc() {\n\t\treturn ü\n\t}\n", true, true, uint16(1), uint16(1), "\t\treturn 日本\n\t\t// x\n")
	f.Add("\n\n\n", false, false, uint16(0), uint16(2), "q\n")
	f.Fuzz(func(t *testing.T, content string, crlf, withBOM bool, start, count uint16, replace string) {
		content = clean(content)
		replace = clean(replace)
		if crlf {
			content = strings.ReplaceAll(content, "\n", "\r\n")
		}
		if withBOM {
			content = "\uFEFF" + content
		}
		lines := fileLines(content)
		if len(lines) == 0 {
			return
		}
		s := int(start) % len(lines)
		n := 1 + int(count)%min(len(lines)-s, 20)
		for n < len(lines)-s && occurrences(lines, lines[s:s+n]) > 1 {
			n++
		}
		if occurrences(lines, lines[s:s+n]) > 1 {
			return
		}
		find := make([]string, n)
		for i, l := range lines[s : s+n] {
			find[i] = l.body
		}
		block := edit.Block{Find: strings.Join(find, "\n") + "\n", Replace: replace}

		got, results, err := edit.Apply(content, []edit.Block{block})
		if blankLines(find) {
			if !errors.Is(err, edit.ErrEmptyFind) || got != content {
				t.Fatalf("blank FIND: got %v", err)
			}
			return
		}
		var ee *edit.ElisionError
		if errors.As(err, &ee) {
			if got != content || edit.CheckElision([]edit.Block{block}) == nil {
				t.Fatalf("elision error inconsistent: %v", err)
			}
			return
		}
		if err != nil {
			t.Fatalf("Apply: %v", err)
		}
		if want := splice(content, lines, s, n, replace); got != want {
			t.Fatalf("Apply =\n%q\nwant\n%q\n(lines %d-%d)", got, want, s+1, s+n)
		}
		if r := results[0]; r.Match != edit.Exact || r.StartLine != s+1 || r.EndLine != s+n {
			t.Fatalf("result %+v, want exact at %d-%d", r, s+1, s+n)
		}

		if (results[0].Status == edit.NoChange) != (got == content) {
			t.Fatalf("status %v, but the file changed: %v", results[0].Status, got != content)
		}
		if results[0].IsLoose() {
			t.Fatalf("an exact FIND reported loose: %+v", results[0])
		}

		same, res, err := edit.Apply(content, []edit.Block{{Find: block.Find, Replace: block.Find}})
		if err != nil || same != content || res[0].Status != edit.NoChange {
			t.Fatalf("FIND == REPLACE changed the file or was not reported as no change (%v, %+v):\n%q", err, res, same)
		}

		// The same block copied from a numbered view of the file ("12 | ")
		// applies the same way, reported as a loose match. Content with a
		// bar or an arrow could itself match the numbered lines.
		if strings.ContainsAny(content, "|→") {
			return
		}
		numbered := edit.Block{Find: numberLines(find, s+1), Replace: numberLines(splitLines(replace), 1)}
		got2, res2, err := edit.Apply(content, []edit.Block{numbered})
		if err != nil || got2 != got {
			t.Fatalf("numbered block: %v\n%q\nwant\n%q", err, got2, got)
		}
		if r := res2[0]; r.Match != edit.Exact || len(r.Loose) != 1 || r.Loose[0].Kind != edit.LineNumbers || r.StartLine != s+1 {
			t.Fatalf("numbered block result %+v", r)
		}
	})
}

// numberLines writes lines as a numbered view does, from first on.
func numberLines(lines []string, first int) string {
	var b strings.Builder
	for i, l := range lines {
		fmt.Fprintf(&b, "%d | %s\n", first+i, l)
	}
	return b.String()
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// clean removes the bytes whose meaning the round trip sets explicitly:
// carriage returns (line endings come from crlf) and byte-order marks.
func clean(s string) string {
	for strings.ContainsAny(s, "\r\uFEFF") {
		// Removing one can join bytes into another, so repeat.
		s = strings.ReplaceAll(strings.ReplaceAll(s, "\r", ""), "\uFEFF", "")
	}
	return s
}

// fileLine is one line of a file with the byte offsets of its start and of
// the start of the next line.
type fileLine struct {
	body       string
	start, end int
}

func fileLines(content string) []fileLine {
	var lines []fileLine
	pos := 0
	if strings.HasPrefix(content, "\uFEFF") {
		pos = len("\uFEFF")
	}
	for pos < len(content) {
		end := strings.IndexByte(content[pos:], '\n')
		next := len(content)
		if end >= 0 {
			next = pos + end + 1
		}
		body := strings.TrimSuffix(strings.TrimSuffix(content[pos:next], "\n"), "\r")
		lines = append(lines, fileLine{body: body, start: pos, end: next})
		pos = next
	}
	return lines
}

// occurrences counts the places where run occurs in lines, naively.
func occurrences(lines, run []fileLine) int {
	count := 0
	for i := 0; i+len(run) <= len(lines); i++ {
		match := true
		for j := range run {
			if lines[i+j].body != run[j].body {
				match = false
				break
			}
		}
		if match {
			count++
		}
	}
	return count
}

// splice is the expected result, computed on bytes: the lines before and
// after the run untouched, the replacement lines with the file's line
// ending ("\n" if it has none), and no final newline if the file had none
// and the run was last.
func splice(content string, lines []fileLine, s, n int, replace string) string {
	nl := "\n"
	if strings.Contains(content, "\r\n") {
		nl = "\r\n"
	}
	before, after := content[:lines[s].start], content[lines[s+n-1].end:]
	lastNoNewline := s+n == len(lines) && !strings.HasSuffix(content, "\n")
	var repl []string
	if replace != "" {
		repl = strings.Split(strings.TrimSuffix(replace, "\n"), "\n")
	}
	if len(repl) == 0 {
		if lastNoNewline {
			before = strings.TrimSuffix(before, nl)
		}
		return before + after
	}
	middle := strings.Join(repl, nl)
	if !lastNoNewline {
		middle += nl
	}
	return before + middle + after
}

func blankLines(lines []string) bool {
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			return false
		}
	}
	return true
}

// FuzzApply feeds Apply arbitrary files and blocks, so that the
// whitespace tier, re-indentation and the closest-lines search meet
// inputs no model would write. Apply must not panic, must leave the
// content untouched on error with a typed error naming the block, and
// must keep a file's line-ending style.
func FuzzApply(f *testing.F) {
	f.Add("func f() {\n\tif x {\n\t\ty()\n\t}\n}\n", "    if x {\n        y()\n", "    if x {\n        z()\n")
	f.Add("a\r\n  b\r\nc", "\n\nb\n\n", "")
	f.Add("class A:\n    def f(self):\n        return 1\n", "def f(self):\n  return 1", "def f(self):\n\treturn 2\n  # ...\n")
	f.Add("x\n\tx\n  x\n", " x", "y")
	f.Add("\uFEFF\t \t\n\v\f\n", "\uFEFF\f", "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\tz")
	f.Add("class A:\n    def f(self):\n        if x:\n            return 1\n", "def f(self):\n    if x:\n      return 1\n", "def f(self):\n    return 2\n")
	f.Add("func f() {\n\tif x {\n\t\ty()\n\t}\n}\n", "  if x {\n      y()\n  }\n", "  if x {\n      z()\n  }\n")
	f.Add("a\nb\nc\n", "1 | a\n2 | b\n", "1 | a\n2 | B\nnew\n")
	f.Add("a\n  b  \n", " 1→a\n 2→b\n", " 1→a\n 2→b\n")
	f.Add("x = 1\r\ny = 2\r\n", "x = 1\ny = 2\n", "x = 1\ny = 2\n")
	f.Add("def f():\n\treturn 1\n", "def f():\n        return 1\n", "def f():\n        return 2\n")
	f.Fuzz(func(t *testing.T, content, find, replace string) {
		block := edit.Block{N: 7, Find: find, Replace: replace}
		got, results, err := edit.Apply(content, []edit.Block{block})
		if err != nil {
			if got != content || len(results) != 0 {
				t.Fatalf("failed Apply changed the content or reported results: %v", err)
			}
			var (
				nf *edit.NotFoundError
				ae *edit.AmbiguousError
				ee *edit.ElisionError
				ie *edit.IndentError
			)
			if !errors.As(err, &nf) && !errors.As(err, &ae) && !errors.As(err, &ee) && !errors.As(err, &ie) && !errors.Is(err, edit.ErrEmptyFind) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			if ie != nil {
				findLines := strings.Count(strings.TrimSuffix(find, "\n"), "\n") + 1
				if len(ie.Lines) == 0 || len(ie.Uneven) == 0 || ie.Uneven[0] < 1 || ie.Uneven[len(ie.Uneven)-1] > findLines {
					t.Fatalf("IndentError without the lines to copy or with lines that slipped outside FIND: %+v", ie)
				}
			}
			if !strings.Contains(err.Error(), "edit block 7") {
				t.Fatalf("error does not name block 7: %v", err)
			}
			return
		}
		if len(results) != 1 || (results[0].Match != edit.Exact && results[0].Match != edit.Whitespace) ||
			results[0].StartLine < 1 || results[0].EndLine < results[0].StartLine {
			t.Fatalf("bad results %+v", results)
		}
		r := results[0]
		switch r.Status {
		case edit.Applied:
			if got == content {
				t.Fatalf("status applied but the content is unchanged: %+v", r)
			}
		case edit.NoChange:
			if got != content {
				t.Fatalf("status no change but the content changed:\n%q\n->\n%q", content, got)
			}
		default:
			t.Fatalf("bad status %v", r.Status)
		}
		// A whitespace match always overlooked something, and says what.
		if r.Match == edit.Whitespace && !r.IsLoose() {
			t.Fatalf("whitespace match reported as not loose: %+v", r)
		}
		for _, l := range r.Loose {
			if l.Kind < edit.IndentShift || l.Kind > edit.IndentLevels || (l.Lines <= 0 && l.Kind != edit.IndentShift) || strings.Contains(l.String(), "unknown") {
				t.Fatalf("bad loosening %+v", l)
			}
			if (l.Kind == edit.IndentLevels) != (len(l.Levels) > 0) {
				t.Fatalf("levels %+v on a loosening of kind %v", l.Levels, l.Kind)
			}
			if l.Kind == edit.IndentShift && (l.Shift == 0 || l.Unit == "") {
				t.Fatalf("indentation shift of nothing: %+v", l)
			}
		}
		if pureCRLF(content) && strings.Count(got, "\n") != strings.Count(got, "\r\n") {
			t.Fatalf("CRLF file got LF lines:\n%q\n->\n%q", content, got)
		}
	})
}

// pureCRLF reports whether s has line endings and all of them are CRLF.
func pureCRLF(s string) bool {
	n := strings.Count(s, "\n")
	return n > 0 && n == strings.Count(s, "\r\n")
}

// FuzzExtractFile checks that ExtractFile never panics, that what it
// returns is whole lines of the reply's code, and that it agrees with
// ExtractFullFile whenever the reply holds at most one code block.
func FuzzExtractFile(f *testing.F) {
	for _, seed := range [][2]string{
		{"Here:\n```python\nx = 1\n```\n```bash\npytest\n```\n", "calc.py"},
		{"**calc.py**\n```python\na\n```\n**b.py**\n```python\nb\n```\n", "calc.py"},
		{"```python title=\"calc.py\"\na\n```\n```\nb\n```\n", "calc.py"},
		{"````\n```\n````\n", "x.go"},
		{"```go\npackage a\n", "a.go"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, reply, path string) {
		got, err := edit.ExtractFile(reply, path)
		one, oneErr := edit.ExtractFullFile(reply)
		if !errors.Is(oneErr, edit.ErrManyCodeBlocks) {
			if got != one || (err == nil) != (oneErr == nil) {
				t.Fatalf("ExtractFile = %q, %v; ExtractFullFile = %q, %v", got, err, one, oneErr)
			}
			return
		}
		if err != nil {
			if got != "" || !errors.Is(err, edit.ErrManyCodeBlocks) {
				t.Fatalf("ExtractFile = %q, %v", got, err)
			}
			return
		}
		if got != "" && !strings.HasSuffix(got, "\n") {
			t.Fatalf("ExtractFile = %q: not whole lines", got)
		}
		norm := strings.ReplaceAll(reply, "\r\n", "\n")
		if !strings.Contains(norm+"\n", got) {
			t.Fatalf("ExtractFile = %q, which is not in the reply", got)
		}
	})
}
