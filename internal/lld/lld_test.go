package lld_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/edit"
	"github.com/azero-dev/azero/internal/lld"
	"github.com/azero-dev/azero/internal/testenv"
)

// The five specification documents are real LLDs in three table styles.
func TestParseSpecDocuments(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file      string
		issue     string
		files     int
		first     string
		change    string
		inferred  bool
		testFiles int
	}{
		{"000_6e2e7f7365390b1d.txt", "171", 6, "src/codegen_lab/workflows/nodes/diff_review_gate.py", "Add", false, 2},
		{"001_1ea1e88aba183f37.txt", "173", 10, "src/codegen/agents/tdd/nodes/safe_file_write.py", "Add", false, 3},
		// nodes/test_gates.py is named like a test module: pytest would collect it.
		{"002_af8765d1f7e35e56.txt", "87", 15, "agentos/workflows/implementation/__init__.py", "", true, 1},
		{"003_4793202e1eaad449.txt", "62", 13, "assemblyzero/graphs/governance.py", "Add", false, 0},
		{"004_6b2bd81f41c202dd.txt", "324", 2, "assemblyzero/workflows/testing/nodes/implement_code.py", "Modify", false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			raw, err := os.ReadFile(filepath.Join("testdata", "spec", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			doc, err := lld.Parse(string(raw))
			if err != nil {
				t.Fatal(err)
			}
			if doc.Issue != tt.issue || len(doc.Files) != tt.files {
				t.Fatalf("issue %q files %d, want %q %d: %+v", doc.Issue, len(doc.Files), tt.issue, tt.files, doc.Files)
			}
			f := doc.Files[0]
			if f.Path != tt.first || f.ChangeName != tt.change || f.Inferred != tt.inferred {
				t.Errorf("first row = %+v", f)
			}
			n := 0
			for _, f := range doc.Files {
				if f.IsTest() {
					n++
				}
			}
			if n != tt.testFiles {
				t.Errorf("%d test files, want %d", n, tt.testFiles)
			}
		})
	}
}

const doc = `# 42 - Feature: slugify

## 2. Proposed Changes

### 2.1 Files Changed

| File | Change Type | Description |
|------|-------------|-------------|
| ` + "`slug/slug.go`" + ` | Modify | implement Slugify |
| ` + "`slug/slug_test.go`" + ` | **Add** | tests |
| ` + "`docs/a\\|b.md`" + ` | Add | escaped pipe in a name |

### 2.2 Dependencies
`

// The issue a design is for is found where people write it: a "# 42 -"
// title, an "Issue #42" line, or the title's "(#42)".
func TestParseIssue(t *testing.T) {
	t.Parallel()
	const table = "\n\n## Files Changed\n\n| File | Change Type | Description |\n|---|---|---|\n| `a.go` | Add | x |\n"
	for title, want := range map[string]string{
		"# 42 - Feature: slugify":         "42",
		"# LLD: slugify (#42)":            "42",
		"# Slugify [Issue 42]":            "42",
		"# Slugify\n\nIssue: #43":         "43",
		"# Support C# 12 records":         "",
		"# Slugify 2026\n\nNo issue yet.": "",
	} {
		d, err := lld.Parse(title + table)
		if err != nil || d.Issue != want {
			t.Errorf("Parse(%q): issue %q, %v; want %q", title, d.Issue, err, want)
		}
	}
}

func TestParseTable(t *testing.T) {
	t.Parallel()
	d, err := lld.Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	if d.Issue != "42" || d.Title != "42 - Feature: slugify" {
		t.Errorf("issue %q title %q", d.Issue, d.Title)
	}
	var got []string
	for _, f := range d.Files {
		got = append(got, f.Path+":"+f.ChangeName)
	}
	if want := "slug/slug.go:Modify slug/slug_test.go:Add docs/a|b.md:Add"; strings.Join(got, " ") != want {
		t.Errorf("files = %s, want %s", strings.Join(got, " "), want)
	}
	if d.Files[0].IsTest() || !d.Files[1].IsTest() {
		t.Error("test detection")
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, text, want string }{
		{"no table section", "# Title\n\nSome text\n", "no \"Files Changed\" heading and no table: write a heading \"## Files Changed\""},
		{"section without table", "# T\n## Files Changed\n\nnone yet\n## Next\n| a | b |\n", "no \"Files Changed\" table"},
		{"bad change type", "# T\n## Files Changed\n| File | Change Type |\n|--|--|\n| `a.go` | Rewrite |\n", "change type \"Rewrite\""},
		{"empty path", "# T\n## Files Changed\n| File | Change Type |\n|--|--|\n|  | Add |\n", "no file path"},
		{"no file column", "# T\n## Files Changed\n| Name | Change |\n|--|--|\n| a | Add |\n", "no File column"},
	}
	for _, tt := range tests {
		if _, err := lld.Parse(tt.text); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
	}
	if _, err := lld.Parse("# x"); !errors.Is(err, lld.ErrNoFilesTable) {
		t.Errorf("want ErrNoFilesTable, got %v", err)
	}
}

// A design written as its Files Changed table without the heading is
// read when one table has File (or Path) and Change columns; otherwise
// the error says the heading is missing, which table it looked at, and
// how to write it.
func TestParseTableWithoutHeading(t *testing.T) {
	t.Parallel()
	const rows = "|---|---|---|\n| `calc_test.py` | Add | tests |\n| `calc.py` | Modify | multiply |\n"
	tests := []struct {
		name  string
		text  string
		files string // the rows read; "" when Parse must fail
		want  []string
	}{
		{"the table alone", "| File | Change Type | Description |\n" + rows, "calc_test.py:Add calc.py:Modify", nil},
		{"under another heading", "# Multiply\n\n## What changes\n\n| Path | Change | Why |\n" + rows + "\n## Tests\n", "calc_test.py:Add calc.py:Modify", nil},
		{"an example table in a code block is not the document's",
			"# T\n\n```markdown\n| File | Change | Description |\n|---|---|---|\n| `x.py` | Add | |\n```\n\n| **File** | **Change Type** | Notes |\n" + rows,
			"calc_test.py:Add calc.py:Modify", nil},
		{"two tables that could be it", "# T\n\n| File | Change | D |\n" + rows + "\ntext\n\n| Path | Change | D |\n" + rows, "",
			[]string{`no "Files Changed" heading`, "tables at lines 3, 10", `"## Files Changed"`}},
		{"a table without a Change column", "# T\n\n| Path | Notes |\n|---|---|\n| `calc.py` | x |\n", "",
			[]string{`no "Files Changed" heading`, "table at line 3 (| Path | Notes |)", "a Change (or Change Type) column", `write a heading "## Files Changed" above a table whose header row is | File | Change Type | Description |`}},
		{"rows without a header", "| `calc_test.py` | Add | tests |\n| `calc.py` | Modify | multiply |\n", "",
			[]string{`no "Files Changed" heading`, "table at line 1", "needs a header row"}},
		{"no table", "# T\n\nprose only\n", "", []string{`no "Files Changed" heading and no table`, `"## Files Changed"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, err := lld.Parse(tt.text)
			if tt.files != "" {
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, f := range d.Files {
					got = append(got, f.Path+":"+f.ChangeName)
				}
				if strings.Join(got, " ") != tt.files {
					t.Errorf("files = %v, want %s", got, tt.files)
				}
				return
			}
			var nh *lld.NoHeadingError
			if !errors.As(err, &nh) || !errors.Is(err, lld.ErrNoFilesTable) {
				t.Fatalf("err = %v, want a NoHeadingError matching ErrNoFilesTable", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func table(rows ...string) string {
	return "# 7 - T\n## Files Changed\n| File | Change Type | Description |\n|---|---|---|\n" + strings.Join(rows, "\n") + "\n"
}

func TestCheck(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	testenv.WriteFiles(t, root, map[string]string{"pkg/a.go": "package pkg\n", "lib/x.py": "", "README.md": ""})
	tests := []struct {
		name  string
		rows  []string
		rules []string
	}{
		{"valid", []string{"| `pkg/a.go` | Modify | |", "| `pkg/a_test.go` | Add | |", "| `lib/y.py` | Add | real lib/ |", "| `README.md` | Delete | |"}, nil},
		{"modify missing", []string{"| `pkg/nope.go` | Modify | |"}, []string{"must-exist"}},
		{"delete missing", []string{"| `gone.txt` | Delete | |"}, []string{"must-exist"}},
		{"add in a new directory", []string{"| `newpkg/b.go` | Add | |", "| `tests/area.rs` | Add | |", "| `pkg/new/deeper/test_x.py` | Add | |"}, nil},
		{"add below a file", []string{"| `README.md/b.go` | Add | |", "| `pkg/a.go/x/c.go` | Add | |"}, []string{"parent-is-directory", "parent-is-directory"}},
		{"add existing", []string{"| `pkg/a.go` | Add | |"}, []string{"must-not-exist"}},
		{"invented src", []string{"| `src/pkg/a.go` | Modify | |"}, []string{"no-placeholder-prefix", "must-exist"}},
		{"invented app", []string{"| `app/main.py` | Add | |"}, []string{"no-placeholder-prefix"}},
		{"traversal", []string{"| `../etc/passwd` | Modify | |"}, []string{"inside-repository"}},
		{"absolute", []string{"| `/etc/passwd` | Modify | |"}, []string{"relative-path"}},
		{"git dir", []string{"| `.git/config` | Modify | |"}, []string{"inside-repository"}},
		{"directory", []string{"| `pkg` | Modify | |"}, []string{"is-file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, err := lld.Parse(table(tt.rows...))
			if err != nil {
				t.Fatal(err)
			}
			files, err := lld.Check(d, root)
			var ce *lld.CheckError
			if tt.rules == nil {
				if err != nil {
					t.Fatal(err)
				}
				if len(files) != len(tt.rows) {
					t.Errorf("%d files checked", len(files))
				}
				return
			}
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want CheckError", err)
			}
			var rules []string
			for _, p := range ce.Problems {
				rules = append(rules, p.Rule)
			}
			if strings.Join(rules, ",") != strings.Join(tt.rules, ",") {
				t.Errorf("rules = %v, want %v (%v)", rules, tt.rules, err)
			}
		})
	}
}

func TestCheckInfersChangeWithoutColumn(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	testenv.WriteFiles(t, root, map[string]string{"a.py": ""})
	d, err := lld.Parse("# T\n## Files Changed\n| File Path | Description |\n|--|--|\n| `a.py` | x |\n| `b.py` | y |\n")
	if err != nil {
		t.Fatal(err)
	}
	files, err := lld.Check(d, root)
	if err != nil {
		t.Fatal(err)
	}
	if files[0].Change != edit.Modify || files[1].Change != edit.Add {
		t.Errorf("inferred = %v %v", files[0].ChangeName, files[1].ChangeName)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(doc)
	f.Add(table("| `a` | Add | |"))
	f.Add("## Files Changed\n|")
	f.Add("## Files Changed\n| `x|y` | \\| |\n|-|\n")
	f.Add("| File | Change |\n|-|-|\n| `a` | Add |\n")
	f.Add("```\n| File | Change |\n|-|-|\n```\n| Path | Change |\n|-|-|\n| b | Delete |\n")
	f.Fuzz(func(t *testing.T, text string) {
		d, err := lld.Parse(text)
		if err != nil {
			return
		}
		for _, fc := range d.Files {
			if fc.Path == "" {
				t.Fatalf("empty path accepted from %q", text)
			}
			if !fc.Inferred && fc.Change == 0 {
				t.Fatalf("row without change type accepted: %+v", fc)
			}
		}
	})
}

func TestIsTestPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path string
		want bool
	}{
		{"slug/slug_test.go", true},
		{"slug/slug.go", false},
		{"test_calc.py", true},
		{"tests/calc_test.py", true},
		{"tests/conftest.py", true},
		{"tests/helpers.py", false},
		{"calc.py", false},
		{"src/calc.test.js", true},
		{"src/calc.test.ts", true},
		{"calc.test.mjs", true},
		{"calc.test.cjs", true},
		{"ui/Button.test.jsx", true},
		{"ui/Button.test.tsx", true},
		{"src/calc.spec.ts", true},
		{"src/calc.spec.js", true},
		{"src/calc.js", false},
		{"src/test.js", false},
		{"src/latest.js", false},
		{"src/contest.ts", false},
		{"src/__tests__/calc.js", true},
		{"test/calc.js", true},
		{"test/calc.mjs", true},
		{"tests/api.ts", true},
		{"lib/calc-test.js", true},
		{"lib/calc_test.cjs", true},
		{"lib/test-calc.js", true},
		{"lib/attest.js", false},
		{"lib/testing.js", false},
		{"test/fixtures/data.json", false},
		{"src/__tests__/fixtures/data.json", true},
		{"src/__mocks__/calc.js", false},
		{"tests/integration.rs", true},
		{"crates/calc/tests/it.rs", true},
		{"tests/common/mod.rs", true},
		{"src/tests.rs", true},
		{"src/lib.rs", false},
		{"src/testsuite.rs", false},
		{"tests/README.md", false},
		{"docs/test_plan.md", false},
	}
	for _, tt := range tests {
		if got := lld.IsTestPath(tt.path); got != tt.want {
			t.Errorf("IsTestPath(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}
