package edit_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/edit"
)

// pyLines returns a Python-looking file of n lines, each about width bytes.
func pyLines(n, width int) string {
	var b strings.Builder
	for i := range n {
		line := fmt.Sprintf("value_%d = %d", i, i)
		if pad := width - 1 - len(line); pad > 2 {
			line += "  # " + strings.Repeat("x", pad-4)
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// TestSpecScenarios covers section 10 of spec #324, one subtest per ID,
// but for the choice of strategy and the prompts (T005's first half, T035,
// T035b, T120), which internal/coder's TestSpecScenarios covers.
// T110 (stop_reason detection) and T115 (the retry loop) belong to the
// generation loop; here they check the parser's half of the contract: a
// cut-off reply is refused, never applied.
func TestSpecScenarios(t *testing.T) {
	t.Parallel()
	small := pyLines(50, 30)
	threeBlocks := "### CHANGE 1: first\nFIND:\n```python\nvalue_1 = 1\n```\nREPLACE WITH:\n```python\nvalue_1 = 100\n```\n\n" +
		"### CHANGE 2: second\nFIND:\n```python\nvalue_20 = 20\n```\nREPLACE WITH:\n```python\n```\n\n" +
		"### CHANGE 3: third\nFIND:\n```python\nvalue_40 = 40\n```\nREPLACE WITH:\n```python\nvalue_40 = 40\nvalue_40b = 41\n```\n"
	tests := []struct {
		id   string
		test func(t *testing.T)
	}{
		{"T005_add_file_bypasses_diff", func(t *testing.T) {
			// The other half, an Add generated whole whatever the file's
			// size, is internal/coder's.
			if c, err := edit.ParseChangeType(" add "); err != nil || c != edit.Add {
				t.Errorf("ParseChangeType(add) = %v, %v", c, err)
			}
		}},
		{"T010_is_large_file_by_lines", func(t *testing.T) {
			if !edit.IsLarge([]byte(pyLines(501, 10))) {
				t.Error("501 lines not large")
			}
			if edit.IsLarge([]byte(pyLines(500, 10))) {
				t.Error("500 lines large")
			}
			if !edit.IsLarge([]byte(strings.TrimSuffix(pyLines(501, 10), "\n"))) {
				t.Error("501 lines without a final newline not large")
			}
		}},
		{"T020_is_large_file_by_bytes", func(t *testing.T) {
			if !edit.IsLarge([]byte(strings.Repeat("x", 15001))) {
				t.Error("15,001 bytes on one line not large")
			}
			if edit.IsLarge([]byte(strings.Repeat("x", 15000))) {
				t.Error("15,000 bytes large")
			}
		}},
		{"T030_is_large_file_small", func(t *testing.T) {
			content := pyLines(100, 30)
			if len(content) != 3000 {
				t.Fatalf("fixture is %d bytes, want 3000", len(content))
			}
			if edit.IsLarge([]byte(content)) {
				t.Error("100 lines, 3 KB is large")
			}
		}},
		{"T040_parse_diff_valid", func(t *testing.T) {
			blocks, err := edit.Parse("### CHANGE 1: bump\nFIND:\n```python\nvalue_1 = 1\n```\n\nREPLACE WITH:\n```python\nvalue_1 = 2\n```\n")
			if err != nil {
				t.Fatal(err)
			}
			want := edit.Block{N: 1, Description: "bump", Find: "value_1 = 1\n", Replace: "value_1 = 2\n", Line: 1}
			if len(blocks) != 1 || blocks[0] != want {
				t.Errorf("Parse = %+v, want [%+v]", blocks, want)
			}
		}},
		{"T050_parse_diff_multiple", func(t *testing.T) {
			blocks, err := edit.Parse(threeBlocks)
			if err != nil {
				t.Fatal(err)
			}
			if len(blocks) != 3 {
				t.Fatalf("%d blocks, want 3", len(blocks))
			}
			for i, want := range []string{"first", "second", "third"} {
				if blocks[i].N != i+1 || blocks[i].Description != want {
					t.Errorf("block %d = %d %q, want %d %q", i, blocks[i].N, blocks[i].Description, i+1, want)
				}
			}
		}},
		{"T060_parse_diff_malformed", func(t *testing.T) {
			_, err := edit.Parse("### CHANGE 1: x\nFIND:\n```python\nvalue_1 = 1\n```\n")
			var pe *edit.ParseError
			if !errors.As(err, &pe) || pe.Block != 1 || !strings.Contains(err.Error(), "no REPLACE WITH") {
				t.Errorf("Parse = %v, want a ParseError for block 1 missing REPLACE WITH", err)
			}
		}},
		{"T070_apply_single_change", func(t *testing.T) {
			line7 := strings.SplitAfter(small, "\n")[7]
			got, res, err := edit.Apply(small, []edit.Block{{Find: line7, Replace: "value_7 = 77\n"}})
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Replace(small, line7, "value_7 = 77\n", 1)
			if got != want || res[0].StartLine != 8 {
				t.Errorf("Apply changed the wrong place: line %d", res[0].StartLine)
			}
		}},
		{"T080_apply_multiple_changes", func(t *testing.T) {
			blocks, err := edit.Parse(threeBlocks)
			if err != nil {
				t.Fatal(err)
			}
			content := pyLines(60, 0)
			got, res, err := edit.Apply(content, blocks)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Replace(content, "value_1 = 1\n", "value_1 = 100\n", 1)
			want = strings.Replace(want, "value_20 = 20\n", "", 1)
			want = strings.Replace(want, "value_40 = 40\n", "value_40 = 40\nvalue_40b = 41\n", 1)
			if got != want {
				t.Errorf("Apply =\n%s\nwant\n%s", got, want)
			}
			if res[0].StartLine != 2 || res[1].StartLine != 21 || res[2].StartLine != 40 {
				t.Errorf("results %+v: line numbers must follow the earlier deletion", res)
			}
		}},
		{"T090_apply_ambiguous_find", func(t *testing.T) {
			content := "x = 1\nprint(x)\ny = 2\nprint(x)\n"
			got, _, err := edit.Apply(content, []edit.Block{
				{Find: "x = 1\n", Replace: "x = 3\n"},
				{Find: "print(x)\n", Replace: "print(x, y)\n"},
			})
			var ae *edit.AmbiguousError
			if !errors.As(err, &ae) || ae.Block != 2 || len(ae.Lines) != 2 || ae.Lines[0] != 2 || ae.Lines[1] != 4 {
				t.Fatalf("Apply = %v, want ambiguity of block 2 at lines 2 and 4", err)
			}
			if got != content {
				t.Error("block 1 was applied although block 2 failed")
			}
		}},
		{"T100_apply_no_match", func(t *testing.T) {
			_, _, err := edit.Apply(small, []edit.Block{{Find: "value_7 = 8\n", Replace: "x\n"}})
			var nf *edit.NotFoundError
			if !errors.As(err, &nf) || nf.Block != 1 || !strings.Contains(err.Error(), "value_7 = 8") {
				t.Fatalf("Apply = %v, want NotFoundError quoting the FIND", err)
			}
			if len(nf.Closest) == 0 || !strings.Contains(err.Error(), "value_7 = 7") {
				t.Errorf("closest lines %+v do not show the line meant", nf.Closest)
			}
		}},
		{"T110_cut_off_reply_detected", func(t *testing.T) {
			_, err := edit.Parse("### CHANGE 1: x\nFIND:\n```python\nvalue_1 = 1\n```\nREPLACE WITH:\n```python\nvalue_1 = ")
			if err == nil || !strings.Contains(err.Error(), "cut off") {
				t.Errorf("Parse(cut-off reply) = %v, want an error saying it was cut off", err)
			}
		}},
		{"T115_cut_off_full_file_never_extracted", func(t *testing.T) {
			_, err := edit.ExtractFullFile("Here is the file:\n```python\nimport os\n\ndef main():\n")
			if !errors.Is(err, edit.ErrUnterminatedFence) {
				t.Errorf("ExtractFullFile(cut-off reply) = %v, want ErrUnterminatedFence", err)
			}
		}},
		{"T130_whitespace_normalization", func(t *testing.T) {
			content := "class A:\n    def f(self):\n        return 1\n"
			// FIND copied without the class's indentation: one uniform
			// shift, so the replacement gets the same shift back.
			got, res, err := edit.Apply(content, []edit.Block{{Find: "def f(self):\n    return 1\n", Replace: "def f(self):\n    return 2\n"}})
			if err != nil {
				t.Fatal(err)
			}
			if want := "class A:\n    def f(self):\n        return 2\n"; got != want || res[0].Match != edit.Whitespace {
				t.Errorf("Apply = %q (%v), want %q (whitespace)", got, res[0].Match, want)
			}
			if want := []edit.Loosening{{Kind: edit.IndentShift, Shift: 4, Unit: "space", Lines: 2}}; !reflect.DeepEqual(res[0].Loose, want) {
				t.Errorf("loose = %+v, want %+v", res[0].Loose, want)
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
