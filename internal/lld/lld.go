// Package lld reads a design document (LLD) and checks it mechanically.
//
// The document's "Files Changed" table says which files the implementation
// may touch and how (Add, Modify, Delete). Before any model sees the
// document, Check verifies the table against the repository (spec #324,
// section 2.1.1): Modify and Delete targets exist, Add targets have an
// existing parent directory, and no path starts with an invented src/, lib/
// or app/ directory the repository does not have. A document failing these
// checks is blocked before review or implementation.
//
// The table is the first one under a heading naming "Files Changed". A
// document without that heading is read from its one table whose header
// row has a File (or Path) column and a Change column (a design written
// as the table alone); otherwise Parse says that the heading is missing,
// which table it looked at, and how to write it (NoHeadingError).
package lld

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/azero-dev/azero/internal/edit"
	"github.com/azero-dev/azero/internal/lazyre"
)

// FileChange is one row of the Files Changed table.
type FileChange struct {
	Path        string          `json:"path"` // slash-separated, relative to the repository root
	Change      edit.ChangeType `json:"-"`
	ChangeName  string          `json:"change"`
	Description string          `json:"description,omitempty"`
	Inferred    bool            `json:"inferred,omitempty"` // no Change Type column: Add or Modify was inferred
	Line        int             `json:"line"`               // line of the row in the document
}

// IsTest reports whether the file is a test file: the scaffold step writes
// these, the implementation step the others.
func (f FileChange) IsTest() bool { return IsTestPath(f.Path) }

// IsTestPath reports whether p (slash-separated) names a test file:
//
//   - Go: *_test.go;
//   - Python: test_*.py, *_test.py, conftest.py;
//   - JavaScript and TypeScript: *.test.* and *.spec.* with a js, ts, mjs,
//     cjs, jsx or tsx extension (and their .mts, .cts kin), node's
//     *-test.*, *_test.* and test-*.*, those files under a test/ or tests/
//     directory, and every file under a __tests__/ directory (jest's
//     convention, fixtures included);
//   - Rust: files under a tests/ directory (integration tests and their
//     shared modules, tests/common/mod.rs) and src/**/tests.rs unit test
//     modules;
//   - other languages whose runners write JUnit XML (--report): Java,
//     Kotlin, Scala and Groovy files under src/test/ (Maven's and Gradle's
//     layout) or named *Test, *Tests, *IT, *Spec or Test*; C# *Test.cs and
//     *Tests.cs; Ruby *_spec.rb, *_test.rb and test_*.rb; PHP *Test.php;
//     Elixir *_test.exs; C and C++ test_* and *_test.
func IsTestPath(p string) bool {
	base := path.Base(p)
	ext := path.Ext(base)
	dirs := strings.Split(path.Dir(p), "/")
	switch {
	case strings.HasSuffix(base, "_test.go"):
		return true
	case ext == ".py":
		return strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py") || base == "conftest.py"
	case slices.Contains(dirs, "__tests__"):
		return true
	case jsExt[ext]:
		stem := strings.TrimSuffix(base, ext)
		return strings.HasSuffix(stem, ".test") || strings.HasSuffix(stem, ".spec") ||
			// node's test runner: *-test.js, *_test.js, test-*.js and
			// anything under test/ (mocha's directory too, and tests/)
			strings.HasSuffix(stem, "-test") || strings.HasSuffix(stem, "_test") || strings.HasPrefix(stem, "test-") ||
			slices.Contains(dirs, "test") || slices.Contains(dirs, "tests")
	case ext == ".rs":
		return slices.Contains(dirs, "tests") || base == "tests.rs"
	}
	return isOtherTest(p, base, ext)
}

// isOtherTest recognises the test files of languages azero runs through
// their own command and its JUnit report.
func isOtherTest(p, base, ext string) bool {
	stem := strings.TrimSuffix(base, ext)
	switch ext {
	case ".java", ".kt", ".scala", ".groovy":
		if strings.HasPrefix(p, "src/test/") || strings.Contains(p, "/src/test/") {
			return true
		}
		for _, suffix := range []string{"Test", "Tests", "IT", "Spec"} {
			if len(stem) > len(suffix) && strings.HasSuffix(stem, suffix) {
				return true
			}
		}
		return len(stem) > 4 && strings.HasPrefix(stem, "Test") && stem[4] >= 'A' && stem[4] <= 'Z'
	case ".cs":
		return strings.HasSuffix(stem, "Test") || strings.HasSuffix(stem, "Tests")
	case ".rb":
		return strings.HasSuffix(stem, "_spec") || strings.HasSuffix(stem, "_test") || strings.HasPrefix(stem, "test_")
	case ".php":
		return len(stem) > 4 && strings.HasSuffix(stem, "Test")
	case ".exs":
		return strings.HasSuffix(stem, "_test")
	case ".c", ".cc", ".cpp", ".cxx":
		return strings.HasPrefix(stem, "test_") || strings.HasSuffix(stem, "_test")
	}
	return false
}

var jsExt = map[string]bool{".js": true, ".ts": true, ".mjs": true, ".cjs": true, ".jsx": true, ".tsx": true, ".mts": true, ".cts": true}

// Doc is a parsed design document.
type Doc struct {
	Title string       `json:"title"`
	Issue string       `json:"issue,omitempty"` // the issue number the document names, if any
	Files []FileChange `json:"files"`
	Text  string       `json:"-"`
}

// ErrNoFilesTable is returned when the document has no Files Changed table.
// Parse's errors for a document without one wrap it, saying what is
// missing.
var ErrNoFilesTable = errors.New(`the design document has no "Files Changed" table: add a section "Files Changed" with a table | File | Change Type | Description | listing every file to add, modify or delete`)

// howToWrite is how a Files Changed section is written.
const howToWrite = "write a heading \"## Files Changed\" above a table whose header row is | File | Change Type | Description |, " +
	"one row per file to add, modify or delete (| `calc.py` | Modify | add multiply |)"

// NoHeadingError reports a document without a "Files Changed" heading and
// without a table that is one by its columns.
type NoHeadingError struct {
	// Line and Header are the first table the document has (0 and "" when
	// it has none), which lacks a File (or Path) column or a Change
	// column, or a header row.
	Line   int
	Header string
	// Tables lists the lines of the tables that each could be the Files
	// Changed table, when there are several.
	Tables []int
}

func (e *NoHeadingError) Error() string {
	switch {
	case len(e.Tables) > 1:
		lines := make([]string, len(e.Tables))
		for i, l := range e.Tables {
			lines[i] = fmt.Sprint(l)
		}
		return fmt.Sprintf(`the design document has no "Files Changed" heading, and the tables at lines %s all have File and Change columns, so which lists the change is unclear: put the heading "## Files Changed" above the one that does`,
			strings.Join(lines, ", "))
	case e.Line > 0:
		return fmt.Sprintf(`the design document has no "Files Changed" heading, and its table at line %d (%s) is not a Files Changed table: it needs a header row with a File (or Path) column and a Change (or Change Type) column; %s`,
			e.Line, e.Header, howToWrite)
	}
	return `the design document has no "Files Changed" heading and no table: ` + howToWrite
}

// Is makes NoHeadingError match ErrNoFilesTable.
func (e *NoHeadingError) Is(target error) bool { return target == ErrNoFilesTable }

var (
	headingRe = lazyre.New(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	issueRe   = lazyre.New(`(?i)(?:issue[:*\s]*#|^#\s*)(\d+)\b`)
	tickRe    = lazyre.New("`([^`]+)`")
	// titleIssueRe finds an issue named anywhere in the title.
	titleIssueRe = lazyre.New(`(?i)(?:\bissue\s*#?\s*|#)(\d+)\b`)
)

// Parse reads the document's title, issue number and Files Changed table.
func Parse(text string) (Doc, error) {
	doc := Doc{Text: text}
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	tableAt := -1
	for i, l := range lines {
		m := headingRe().FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if doc.Title == "" {
			doc.Title = m[1]
		}
		if tableAt < 0 && strings.Contains(strings.ToLower(m[1]), "files changed") {
			tableAt = i + 1
		}
	}
	for _, l := range lines[:min(len(lines), 40)] {
		if m := issueRe().FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			doc.Issue = m[1]
			break
		}
	}
	if m := titleIssueRe().FindStringSubmatch(doc.Title); doc.Issue == "" && m != nil {
		doc.Issue = m[1] // "LLD: Add X (#87)"
	}
	if tableAt < 0 {
		// No heading: a table that is a Files Changed table by its
		// columns is one (a design written as the table alone).
		at, err := headlessTable(lines)
		if err != nil {
			return doc, err
		}
		tableAt = at
	}
	files, err := parseTable(lines, tableAt)
	if err != nil {
		return doc, err
	}
	doc.Files = files
	return doc, nil
}

// headlessTable finds, in a document without a "Files Changed" heading,
// the table whose header row has a File (or Path) column and a Change
// column, and returns its first line's index. Tables inside fenced code
// blocks are examples, not the document's.
func headlessTable(lines []string) (int, error) {
	var (
		found []int
		first = -1
		fence string
	)
	for i := 0; i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		if fence != "" {
			if strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
				fence = ""
			}
			continue
		}
		if n := len(t) - len(strings.TrimLeft(t, "`")); n >= 3 {
			fence = t[:n]
			continue
		}
		if n := len(t) - len(strings.TrimLeft(t, "~")); n >= 3 {
			fence = t[:n]
			continue
		}
		if !strings.HasPrefix(t, "|") || i > 0 && strings.HasPrefix(strings.TrimSpace(lines[i-1]), "|") {
			continue
		}
		if first < 0 {
			first = i
		}
		header := splitRow(t)
		file, change := false, false
		for _, h := range header {
			h = strings.ToLower(strings.Trim(h, "*_ `"))
			switch {
			case !file && (strings.Contains(h, "file") || strings.Contains(h, "path")):
				file = true
			case !change && strings.Contains(h, "change"):
				change = true
			}
		}
		delimited := i+1 < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i+1]), "|") && isDelimiterRow(splitRow(lines[i+1]))
		if file && change && delimited {
			found = append(found, i)
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1:
		tables := make([]int, len(found))
		for i, at := range found {
			tables[i] = at + 1
		}
		return 0, &NoHeadingError{Tables: tables}
	case first >= 0:
		return 0, &NoHeadingError{Line: first + 1, Header: strings.TrimSpace(lines[first])}
	}
	return 0, &NoHeadingError{}
}

// parseTable reads the first table from line start on, stopping at the
// next heading.
func parseTable(lines []string, start int) ([]FileChange, error) {
	i := start
	for ; i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		if headingRe().MatchString(t) && !strings.HasPrefix(t, "####") {
			return nil, ErrNoFilesTable
		}
		if strings.HasPrefix(t, "|") {
			break
		}
	}
	if i+1 >= len(lines) {
		return nil, ErrNoFilesTable
	}
	header := splitRow(lines[i])
	fileCol, changeCol, descCol := -1, -1, -1
	for c, h := range header {
		h = strings.ToLower(h)
		switch {
		case fileCol < 0 && (strings.Contains(h, "file") || strings.Contains(h, "path")):
			fileCol = c
		case changeCol < 0 && (strings.Contains(h, "change") || strings.Contains(h, "type") || strings.Contains(h, "action")):
			changeCol = c
		case descCol < 0 && strings.Contains(h, "desc"):
			descCol = c
		}
	}
	if fileCol < 0 {
		return nil, fmt.Errorf("line %d: the Files Changed table has no File column (header %q)", i+1, strings.TrimSpace(lines[i]))
	}
	var out []FileChange
	for j := i + 1; j < len(lines); j++ {
		t := strings.TrimSpace(lines[j])
		if !strings.HasPrefix(t, "|") {
			break
		}
		cells := splitRow(t)
		if isDelimiterRow(cells) {
			continue
		}
		cell := func(c int) string {
			if c < 0 || c >= len(cells) {
				return ""
			}
			return cells[c]
		}
		p := cleanPath(cell(fileCol))
		if p == "" {
			return nil, fmt.Errorf("line %d: a Files Changed row has no file path", j+1)
		}
		fc := FileChange{Path: p, Description: cell(descCol), Line: j + 1}
		if changeCol >= 0 {
			name := strings.Trim(cell(changeCol), "*_ `")
			ct, err := edit.ParseChangeType(name)
			if err != nil {
				return nil, fmt.Errorf("line %d: %s: change type %q: use Add, Modify or Delete", j+1, p, name)
			}
			fc.Change, fc.ChangeName = ct, canonical(ct)
		} else {
			fc.Inferred = true
		}
		out = append(out, fc)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("line %d: the Files Changed table has no rows", i+1)
	}
	return out, nil
}

func canonical(ct edit.ChangeType) string {
	switch ct {
	case edit.Add:
		return "Add"
	case edit.Modify:
		return "Modify"
	case edit.Delete:
		return "Delete"
	}
	return ""
}

// splitRow splits a markdown table row on unescaped pipes outside code
// spans.
func splitRow(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	row = strings.TrimSuffix(row, "|")
	var cells []string
	var cur strings.Builder
	inCode := false
	for i := 0; i < len(row); i++ {
		c := row[i]
		switch {
		case c == '\\' && i+1 < len(row) && row[i+1] == '|':
			cur.WriteByte('|')
			i++
		case c == '`':
			inCode = !inCode
			cur.WriteByte(c)
		case c == '|' && !inCode:
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

func isDelimiterRow(cells []string) bool {
	for _, c := range cells {
		if strings.Trim(c, ":- ") != "" {
			return false
		}
	}
	return true
}

// cleanPath takes the path out of a table cell: the first code span if
// there is one (verbatim: `__tests__/a.js` and `__init__.py` keep their
// underscores), else the cell without the markdown emphasis around it.
func cleanPath(cell string) string {
	if m := tickRe().FindStringSubmatch(cell); m != nil {
		cell = strings.TrimSpace(m[1])
	} else {
		cell = unemphasize(strings.TrimSpace(cell))
	}
	cell = strings.ReplaceAll(cell, `\`, "/")
	return strings.TrimPrefix(cell, "./")
}

// unemphasize removes the emphasis markers that open and close s
// (**a.go**, _a.go_), but not underscores that are part of a name.
func unemphasize(s string) string {
	for _, mark := range []string{"**", "__", "*", "_"} {
		for len(s) > 2*len(mark) && strings.HasPrefix(s, mark) && strings.HasSuffix(s, mark) {
			s = strings.TrimSpace(s[len(mark) : len(s)-len(mark)])
		}
	}
	return s
}

// Problem is one failed mechanical check.
type Problem struct {
	Path    string `json:"path"`
	Rule    string `json:"rule"`
	Message string `json:"message"`
	Line    int    `json:"line"`
}

// CheckError lists every problem found; the document is blocked.
type CheckError struct{ Problems []Problem }

func (e *CheckError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the design document's Files Changed table failed %d mechanical check(s):", len(e.Problems))
	for _, p := range e.Problems {
		fmt.Fprintf(&b, "\n  line %d: %s: %s (%s)", p.Line, p.Path, p.Message, p.Rule)
	}
	return b.String()
}

// placeholderDirs are prefixes models invent for projects that have no
// such directory.
var placeholderDirs = []string{"src", "lib", "app"}

// Check verifies the table against the repository at root and resolves
// inferred change types. It returns the checked files, or a *CheckError
// listing every problem.
func Check(doc Doc, root string) ([]FileChange, error) {
	var problems []Problem
	files := make([]FileChange, 0, len(doc.Files))
	for _, f := range doc.Files {
		bad := func(rule, msg string) {
			problems = append(problems, Problem{Path: f.Path, Rule: rule, Message: msg, Line: f.Line})
		}
		clean := path.Clean(f.Path)
		switch {
		case path.IsAbs(f.Path) || filepath.IsAbs(f.Path):
			bad("relative-path", "paths must be relative to the repository root")
			continue
		case clean == ".." || strings.HasPrefix(clean, "../") || strings.Contains(f.Path, "/../"):
			bad("inside-repository", "the path leaves the repository")
			continue
		case clean == ".git" || strings.HasPrefix(clean, ".git/"):
			bad("inside-repository", "files inside .git cannot be changed")
			continue
		}
		full := filepath.Join(root, filepath.FromSlash(clean))
		info, err := os.Stat(full)
		exists := err == nil
		if exists && info.IsDir() {
			bad("is-file", "this is a directory; list the files in it")
			continue
		}
		if f.Inferred {
			f.Change = edit.Add
			if exists {
				f.Change = edit.Modify
			}
			f.ChangeName = canonical(f.Change)
		}
		first, _, nested := strings.Cut(clean, "/")
		if nested {
			for _, d := range placeholderDirs {
				if first == d && !dirExists(filepath.Join(root, d)) {
					bad("no-placeholder-prefix", fmt.Sprintf("the repository has no %s/ directory; use the real path", d))
				}
			}
		}
		switch f.Change {
		case edit.Modify, edit.Delete:
			if !exists {
				bad("must-exist", fmt.Sprintf("%s target does not exist in the repository", f.ChangeName))
			}
		case edit.Add:
			if exists {
				bad("must-not-exist", "Add target already exists; use Modify")
			}
			if file := fileOnPath(root, path.Dir(clean)); file != "" {
				bad("parent-is-directory", fmt.Sprintf("Add target's directory %s/ cannot be made: %s is a file", path.Dir(clean), file))
			}
		}
		f.Path = clean
		files = append(files, f)
	}
	if len(problems) > 0 {
		return nil, &CheckError{Problems: problems}
	}
	return files, nil
}

// fileOnPath returns the first component of dir (slash-separated,
// relative to root) that exists and is not a directory, or "".
func fileOnPath(root, dir string) string {
	if dir == "." {
		return ""
	}
	cur := ""
	for _, c := range strings.Split(dir, "/") {
		cur = path.Join(cur, c)
		info, err := os.Stat(filepath.Join(root, filepath.FromSlash(cur)))
		if err != nil {
			return ""
		}
		if !info.IsDir() {
			return cur
		}
	}
	return ""
}

func dirExists(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.IsDir()
}
