package coder

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/edit"
	"github.com/azero-dev/azero/internal/llm"
)

// A stub of a file that exists may only add: a reply that guts an
// existing body is sent back with the lines it loses, and the corrected
// reply is taken; import lists may grow.
func TestStubKeepsTheExistingCode(t *testing.T) {
	t.Parallel()
	existing := "package calc\n\nimport \"fmt\"\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n\nfunc Show(a int) string { return fmt.Sprint(a) }\n"
	gutted := "```go\npackage calc\n\nimport \"fmt\"\n\n// Add adds.\nfunc Add(a, b int) int {\n\tpanic(\"not implemented\")\n}\n\nfunc Show(a int) string { return fmt.Sprint(a) }\n\nfunc Mul(a, b int) int { return 0 }\n```\n"
	kept := "I kept Add and Show.\n\n```go\npackage calc\n\nimport (\n\t\"errors\"\n\t\"fmt\"\n)\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n\nfunc Show(a int) string { return fmt.Sprint(a) }\n\nfunc Mul(a, b int) (int, error) { return 0, errors.New(\"not implemented\") }\n```\n"
	m := &scripted{replies: []llm.Response{reply(gutted), reply(kept)}}
	var rejected []string
	res, err := Generate(t.Context(), m, GenerateInput{Change: edit.Modify, Prompt: PromptInput{Path: "calc.go", Existing: existing}, MaxTokens: 100,
		KeepExisting: true, OnRejected: func(r string) { rejected = append(rejected, r) }})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Content, "return a + b") || !strings.Contains(res.Content, "func Mul") || res.Prose != "I kept Add and Show." {
		t.Errorf("content %q prose %q", res.Content, res.Prose)
	}
	if len(res.Rejected) != 1 || !slices.Equal(rejected, res.Rejected) || !strings.Contains(rejected[0], "line 7: \treturn a + b") ||
		!strings.Contains(rejected[0], "deletes or changes 1 existing line(s) of calc.go") {
		t.Errorf("rejected %q (told %q)", res.Rejected, rejected)
	}
	// The model was told why, with the line it dropped.
	if len(m.requests) != 2 || !strings.Contains(m.requests[1].Messages[2].Text, "line 7: \treturn a + b") {
		t.Errorf("the correction did not name the lost line: %+v", m.requests)
	}
	// Without KeepExisting the same gutting reply is taken (an
	// implementation may rewrite a body).
	m = &scripted{replies: []llm.Response{reply(gutted)}}
	if res, err := Generate(t.Context(), m, GenerateInput{Change: edit.Modify, Prompt: PromptInput{Path: "calc.go", Existing: existing}, MaxTokens: 100}); err != nil || !strings.Contains(res.Content, "panic") {
		t.Errorf("%v: %q", err, res.Content)
	}
}

func TestKeepsExisting(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, path, before, after string
		lost                      int
	}{
		{"additions only", "a.py", "def a():\n    return 1\n", "import os\n\n\ndef a():\n    return 1\n\n\ndef b():\n    raise NotImplementedError\n", 0},
		{"a body replaced", "a.py", "def a():\n    x = 1\n    return x\n", "def a():\n    raise NotImplementedError\n", 2},
		{"a declaration dropped", "lib.rs", "pub fn a() -> i32 {\n    1\n}\n\npub fn b() -> i32 {\n    2\n}\n", "pub fn a() -> i32 {\n    1\n}\n", 2},
		{"an export list grows", "calc.js", "function add(a, b) {\n  return a + b\n}\nexport { add }\n", "function add(a, b) {\n  return a + b\n}\nfunction mul() {}\nexport { add, mul }\n", 0},
		{"a CommonJS body replaced", "calc.js", "exports.add = (a, b) => a + b\n", "exports.add = () => 0\nexports.mul = () => 0\n", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := KeepsExisting(tt.path, tt.before, tt.after)
			var ke *KeepError
			switch {
			case tt.lost == 0 && err != nil:
				t.Errorf("refused: %v", err)
			case tt.lost > 0 && (!errors.As(err, &ke) || ke.Count != tt.lost):
				t.Errorf("error %v, want %d lines lost", err, tt.lost)
			}
		})
	}
}

// With MayKeep the model may say the file needs no change, in words or
// with the file as it is; what it says is kept as its prose.
func TestGenerateMayKeepTheFile(t *testing.T) {
	t.Parallel()
	existing := "def a():\n    return 1\n"
	large := largeFile()
	tests := []struct {
		name, existing, reply string
		unchanged             bool
		prose                 string
	}{
		{"the word alone", existing, "**NO CHANGE**\n\nThe feedback is about the tests only.", true, "The feedback is about the tests only."},
		{"the same file", existing, "Nothing to do here.\n```python\ndef a():\n    return 1\n```\n", true, "Nothing to do here."},
		{"blocks that change nothing", large, "### CHANGE 1: none\nFIND:\n```python\ndef f3():\n```\nREPLACE WITH:\n```python\ndef f3():\n```\n", true, "### CHANGE 1: none"},
		{"a real change", existing, "Returns 2 now, as asked.\n```python\ndef a():\n    return 2\n```\n", false, "Returns 2 now, as asked."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := &scripted{replies: []llm.Response{reply(tt.reply)}}
			res, err := Generate(t.Context(), m, GenerateInput{Change: edit.Modify, Prompt: PromptInput{Path: "a.py", Existing: tt.existing}, MaxTokens: 100, MayKeep: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.Unchanged != tt.unchanged || res.Prose != tt.prose || (tt.unchanged && res.Content != tt.existing) {
				t.Errorf("unchanged %v prose %q content %q", res.Unchanged, res.Prose, res.Content)
			}
		})
	}
	// Without MayKeep the word is no answer: it is sent back.
	m := &scripted{replies: []llm.Response{reply("NO CHANGE"), reply("```python\ndef a():\n    return 2\n```\n")}}
	if res, err := Generate(t.Context(), m, GenerateInput{Change: edit.Modify, Prompt: PromptInput{Path: "a.py", Existing: existing}, MaxTokens: 100}); err != nil || res.Corrections != 1 {
		t.Errorf("%v: %+v", err, res)
	}
}
