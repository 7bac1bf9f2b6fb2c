package implement

import (
	"fmt"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/testenv"
)

func TestCoderSeesTheFilesItChanges(t *testing.T) {
	t.Parallel()
	var big strings.Builder
	big.WriteString("package calc\n\n")
	for i := range 700 {
		fmt.Fprintf(&big, "// filler %d\n", i)
	}
	big.WriteString("func Mul(a, b int) int {\n\treturn a * b\n}\n")
	dir := t.TempDir()
	testenv.WriteFiles(t, dir, map[string]string{
		"calc.go":      "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
		"big.go":       big.String(),
		"calc_test.go": "package calc\n",
	})
	s := &State{Worktree: dir, Runner: "go", Files: []FileSpec{
		{Path: "calc.go", Change: "Modify"}, {Path: "big.go", Change: "Modify"}, {Path: "new.go", Change: "Add"},
		{Path: "calc_test.go", Change: "Modify", Test: true},
	}}
	cur := currentFiles(s, "calc_test.go")
	text := scaffoldText(s, "calc_test.go", cur)
	for _, want := range []string{
		"### calc.go", "func Add(a, b int) int { return a + b }", // a small file whole
		"### big.go (705 lines", "func Mul(a, b int) int {", // a large one as its outline and size
		"exist in the current files of the change shown below",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("scaffold prompt lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "filler 300") {
		t.Error("the large file was sent whole")
	}
	if strings.Contains(text, "### new.go") || strings.Contains(text, "### calc_test.go\n") {
		t.Error("the prompt shows an Add target or the file being written")
	}
	// A code file's prompt shows the other Modify targets, but not the test
	// files again: the tests section has them whole.
	code := implementText(s, "calc.go", currentFiles(s, "calc.go"))
	if !strings.Contains(code, "### big.go (705 lines") || strings.Contains(code, "### calc_test.go") {
		t.Errorf("the implementation prompt's current files:\n%s", code)
	}
	// Without Modify targets nothing is "shown", and the prompt says so.
	s.Files = []FileSpec{{Path: "new.go", Change: "Add"}, {Path: "new_test.go", Change: "Add", Test: true}}
	text = scaffoldText(s, "new_test.go", currentFiles(s, "new_test.go"))
	if strings.Contains(text, "files shown") || strings.Contains(text, "shown below") || !strings.Contains(text, "that the design names") {
		t.Errorf("a prompt without files refers to files shown:\n%s", text)
	}
	for _, p := range []string{stubText(s, "new.go", "undefined: X", cur, false), implementText(s, "new.go", cur)} {
		if !strings.Contains(p, "### calc.go") {
			t.Errorf("a stub or implementation prompt does not show the Modify targets:\n%s", p)
		}
	}
}

// Every prompt of the coder tells it how the project's runner finds tests
// and how tests reach this project's code.
func TestPromptsCarryTheProjectsConventions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		runner string
		files  map[string]string
		want   []string
	}{
		{"cargo", map[string]string{"Cargo.toml": "[package]\nname = \"my-calc\"\nversion = \"0.1.0\"\n"},
			[]string{"## The test runner (cargo)", "#[cfg(test)]", "use my_calc::"}},
		{"vitest", map[string]string{"package.json": `{"type": "module", "scripts": {"test": "vitest run"}}`},
			[]string{"## The test runner (vitest)", "from 'vitest'", `"type": "module"`}},
		{"jest", map[string]string{"package.json": `{"scripts": {"test": "jest"}}`},
			[]string{"## The test runner (jest)", "__tests__", ".js files are CommonJS"}},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		testenv.WriteFiles(t, dir, tt.files)
		s := &State{Worktree: dir, Runner: tt.runner, Files: []FileSpec{{Path: "tests/a.rs", Change: "Add", Test: true}, {Path: "src/lib.rs", Change: "Add"}}}
		for name, text := range map[string]string{
			"scaffold":  scaffoldText(s, "tests/a.rs", nil),
			"stub":      stubText(s, "src/lib.rs", "error[E0425]: cannot find function", nil, true),
			"implement": implementText(s, "src/lib.rs", nil),
		} {
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("%s: the %s prompt lacks %q:\n%s", tt.runner, name, w, text)
				}
			}
		}
	}
}
