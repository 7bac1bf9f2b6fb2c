package edit_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/edit"
)

func TestIsLarge(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		content string
		want    bool
	}{
		{"empty", "", false},
		{"500 lines", strings.Repeat("x\n", 500), false},
		{"501 lines", strings.Repeat("x\n", 501), true},
		{"500 lines and a blank one", strings.Repeat("x\n", 500) + "\n", true},
		{"501st line without newline", strings.Repeat("x\n", 500) + "x", true},
		{"15000 bytes", strings.Repeat("x", 14999) + "\n", false},
		{"15001 bytes", strings.Repeat("x", 15000) + "\n", true},
		{"15001 bytes of CRLF lines", strings.Repeat(strings.Repeat("y", 28)+"\r\n", 500) + "z", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := edit.IsLarge([]byte(tt.content)); got != tt.want {
				t.Errorf("IsLarge(%d bytes) = %v, want %v", len(tt.content), got, tt.want)
			}
		})
	}
}

func TestParseChangeType(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want edit.ChangeType
		ok   bool
	}{
		{"Add", edit.Add, true},
		{"MODIFY", edit.Modify, true},
		{" delete ", edit.Delete, true},
		{"Rename", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		got, err := edit.ParseChangeType(tt.in)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("ParseChangeType(%q) = %v, %v; want %v, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "Add, Modify or Delete") {
			t.Errorf("error %q does not say what is allowed", err)
		}
	}
}

func TestKindsMarshalAsWords(t *testing.T) {
	t.Parallel()
	got, err := json.Marshal(struct {
		R edit.Result
	}{edit.Result{Block: 1, Status: edit.NoChange, Match: edit.Whitespace, StartLine: 3, EndLine: 4,
		Loose: []edit.Loosening{{Kind: edit.IndentShift, Shift: -1, Unit: "tab", Lines: 2}, {Kind: edit.LineNumbers, Lines: 2}}}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"R":{"block":1,"status":"no_change","match":"whitespace","start_line":3,"end_line":4,` +
		`"loose":[{"kind":"indent_shift","shift":-1,"unit":"tab","lines":2},{"kind":"line_numbers","lines":2}]}}`
	if string(got) != want {
		t.Errorf("json = %s, want %s", got, want)
	}
}
