package coder

import (
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/edit"
)

// TestSpecScenarios covers the choice of strategy and the prompts of
// section 10 of spec #324, one subtest per ID; internal/edit's
// TestSpecScenarios covers the rest.
func TestSpecScenarios(t *testing.T) {
	t.Parallel()
	large := largeFile()                                             // 1,200 lines
	small := strings.Join(strings.SplitAfter(large, "\n")[:100], "") // 100 lines
	tests := []struct {
		id   string
		test func(t *testing.T)
	}{
		{"T005_add_file_bypasses_diff", func(t *testing.T) {
			for _, content := range []string{"", small, large, strings.Repeat(large, 10)} {
				if got := SelectStrategy(edit.Add, []byte(content)); got != FullFile {
					t.Errorf("SelectStrategy(Add, %d bytes) = %v, want full-file", len(content), got)
				}
			}
		}},
		{"T035_small_file_uses_standard_prompt", func(t *testing.T) {
			if got := SelectStrategy(edit.Modify, []byte(small)); got != FullFile {
				t.Fatalf("SelectStrategy(Modify, small) = %v, want full-file", got)
			}
			p := FullFilePrompt(PromptInput{Path: "m.py", LLD: "Rename f1.", Existing: small})
			if !strings.Contains(p, "complete content") || !strings.Contains(p, "def f50():\n    return 50\n") || strings.Contains(p, "FIND:") {
				t.Errorf("full-file prompt for a small Modify is wrong:\n%s", p)
			}
		}},
		{"T035b_large_file_uses_diff_strategy", func(t *testing.T) {
			if got := SelectStrategy(edit.Modify, []byte(large)); got != Blocks {
				t.Errorf("SelectStrategy(Modify, 1,200 lines) = %v, want blocks", got)
			}
		}},
		{"T120_build_diff_prompt", func(t *testing.T) {
			p := BlocksPrompt(PromptInput{Path: "pkg/m.py", LLD: "Add caching.", Existing: large, Tests: "def test_x(): pass\n"})
			for _, s := range []string{
				"### CHANGE 1:", "FIND:\n```python\n", "REPLACE WITH:\n```python\n",
				"2 unchanged lines above and 2 below", "exactly one place",
				"ALL changes", "top of the file to the bottom", "Do NOT output the entire file",
				"# ... rest of code ...", "Add caching.", "def test_x(): pass", "def f600():\n    return 600\n",
			} {
				if !strings.Contains(p, s) {
					t.Errorf("blocks prompt lacks %q", s)
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			t.Parallel()
			tt.test(t)
		})
	}
}
