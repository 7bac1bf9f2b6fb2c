package edit

import "testing"

func TestProse(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, reply, want string }{
		{"a whole file with words around it",
			"The test for zero was wrong; I fixed it.\n\n```python\ndef test_zero():\n    assert f(0) == 0\n```\n\n\nNothing else changes.\n",
			"The test for zero was wrong; I fixed it.\n\nNothing else changes."},
		{"edit blocks of both formats",
			"### CHANGE 1: keep the rows\nFIND:\n```go\n\t{1, 2, 3},\n```\nREPLACE WITH:\n```go\n\t{1, 2, 3},\n\t{0, 0, 0},\n```\n" +
				"calc_test.go\n<<<<<<< SEARCH\nfunc TestA(t *testing.T) {}\n=======\n>>>>>>> REPLACE\nThat restores the row.\n",
			"### CHANGE 1: keep the rows\ncalc_test.go\nThat restores the row."},
		{"only code", "```go\npackage x\n```\n", ""},
		{"NO CHANGE", "NO CHANGE\n\nThe feedback is about the tests only.", "NO CHANGE\n\nThe feedback is about the tests only."},
		{"an unclosed fence", "Here:\n```go\npackage x\n", "Here:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Prose(tt.reply); got != tt.want {
				t.Errorf("Prose = %q, want %q", got, tt.want)
			}
		})
	}
}

func FuzzProse(f *testing.F) {
	f.Add("a\n```\nb\n```\nc")
	f.Add("<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n")
	f.Fuzz(func(t *testing.T, reply string) {
		if p := Prose(reply); len(p) > maxProse+len(" …") {
			t.Fatalf("%d bytes of prose", len(p))
		}
	})
}
