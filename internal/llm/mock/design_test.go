package mock

import (
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/llm"
)

// designRequest is a request shaped as the design workflow's: the issue
// and the repository's map, each between tags.
func designRequest(tree string) string {
	return "<issue>\n# Add a multiply function\n\nIssue #7 (https://example.test/7), labels: enhancement\n\nThe calculator can only add.\nIt should multiply too.\n\n## Acceptance\n\n- works\n</issue>\n\n" +
		"<repository>\n## Files\n\nThe 4 files git tracks, as a tree (a directory's entries indented under it):\n\n" + tree +
		"\n## Tests\n\nazero runs the tests with its go runner.\n</repository>\n\nWrite the design.\n"
}

func TestBuiltinDesign(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, tree string
		rows       []string
	}{
		{"go", "go.mod\ncalc/\n  calc.go\n  calc_test.go\ncmd/\n  main/\n    main.go\n", []string{"| `calc/calc.go` | Modify |", "| `calc/calc_test.go` | Modify |"}},
		{"python with tests/", "calc.py\ntests/\n  test_other.py\n", []string{"| `calc.py` | Modify |", "| `tests/test_calc.py` | Add |"}},
		{"python at the root", "README.md\ncalc.py\n", []string{"| `calc.py` | Modify |", "| `test_calc.py` | Add |"}},
		{"javascript", "package.json\nsrc/\n  sum.js\n", []string{"| `src/sum.js` | Modify |", "| `src/sum.test.js` | Add |"}},
		{"a folded tree", "internal/ … 400 files\nmain.go\n", []string{"| `main.go` | Modify |", "| `main_test.go` | Add |"}},
		{"nothing to change", "README.md\n", []string{"| `change.py` | Add |", "| `test_change.py` | Add |"}},
	}
	m, err := New(Options{Role: llm.RoleDrafter})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp, err := m.Generate(t.Context(), llm.Request{Messages: []llm.Message{{Role: llm.SpeakerUser, Text: designRequest(tt.tree)}},
				MaxTokens: 100, Purpose: PurposeDesign})
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range append(tt.rows, "# 7 - Feature: Add a multiply function\n", "* **Issue:** #7", "The calculator can only add.\nIt should multiply too.",
				"### 2.1 Files Changed", "## 3. Requirements", "## 4. Test Scenarios") {
				if !strings.Contains(resp.Text, want) {
					t.Errorf("the design lacks %q:\n%s", want, resp.Text)
				}
			}
		})
	}
	reviewer, _ := New(Options{Role: llm.RoleReviewer})
	r, err := reviewer.Generate(t.Context(), llm.Request{Messages: []llm.Message{{Role: llm.SpeakerUser, Text: "x"}}, MaxTokens: 10, Purpose: PurposeDesignReview})
	if err != nil || !strings.HasPrefix(r.Text, "**Verdict:** APPROVED") || !strings.Contains(r.Text, "design") {
		t.Errorf("design review = %q, %v", r.Text, err)
	}
}

// FuzzDesignDraft: whatever the request, the built-in design has a title
// and a Files Changed table of two rows.
func FuzzDesignDraft(f *testing.F) {
	f.Add(designRequest("go.mod\na.go\n"))
	f.Add("<brief>\nmake it fast\n</brief>\n")
	f.Add("<repository>\n## Files\n\nx\n\n  a/\n    ../b.go\n</repository>")
	f.Fuzz(func(t *testing.T, msg string) {
		d := designDraft(msg)
		if !strings.HasPrefix(d, "# ") || strings.Count(d, "| Modify |")+strings.Count(d, "| Add |") < 2 {
			t.Fatalf("designDraft(%q) =\n%s", msg, d)
		}
	})
}
