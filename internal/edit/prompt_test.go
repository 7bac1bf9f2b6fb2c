package edit_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/edit"
)

func TestBlocksPrompt(t *testing.T) {
	t.Parallel()
	t.Run("feedback asks for a correction", func(t *testing.T) {
		t.Parallel()
		p := edit.BlocksPrompt(edit.PromptInput{Path: "a.go", LLD: "x", Existing: "package a\n", Feedback: "edit block 2: FIND does not match"})
		for _, s := range []string{"## Your previous reply could not be used", "edit block 2: FIND does not match", "send your complete answer again", "```go\npackage a\n```"} {
			if !strings.Contains(p, s) {
				t.Errorf("prompt lacks %q:\n%s", s, p)
			}
		}
	})
	t.Run("content with fences gets longer fences", func(t *testing.T) {
		t.Parallel()
		existing := "# Title\n\n```sh\nmake\n```\n"
		p := edit.BlocksPrompt(edit.PromptInput{Path: "README.md", LLD: "x", Existing: existing})
		if !strings.Contains(p, "````markdown\n"+existing+"````\n") {
			t.Errorf("existing content not fenced with ````:\n%s", p)
		}
		if !strings.Contains(p, "FIND:\n````markdown\n") || !strings.Contains(p, "fence FIND and REPLACE WITH with ````") {
			t.Errorf("format does not ask for ```` fences:\n%s", p)
		}
	})
	t.Run("no feedback or tests sections when empty", func(t *testing.T) {
		t.Parallel()
		p := edit.BlocksPrompt(edit.PromptInput{Path: "x", LLD: "y", Existing: "z\n"})
		if strings.Contains(p, "previous reply") || strings.Contains(p, "## Tests") {
			t.Errorf("empty sections written:\n%s", p)
		}
	})
}

func TestFullFilePrompt(t *testing.T) {
	t.Parallel()
	add := edit.FullFilePrompt(edit.PromptInput{Path: "new.py", LLD: "Create it.", Tests: "def test(): pass\n"})
	for _, s := range []string{"new file `new.py`", "exactly one fenced code block", "```python\nthe complete file\n```", "Never elide", "def test(): pass"} {
		if !strings.Contains(add, s) {
			t.Errorf("Add prompt lacks %q:\n%s", s, add)
		}
	}
	if strings.Contains(add, "## Current content") {
		t.Error("Add prompt shows a current content")
	}
	mod := edit.FullFilePrompt(edit.PromptInput{Path: "m.py", LLD: "Change it.", Existing: "x = 1\n", Feedback: "the reply has no fenced code block"})
	for _, s := range []string{"rewriting the file `m.py`", "## Current content of `m.py`", "```python\nx = 1\n```", "the reply has no fenced code block"} {
		if !strings.Contains(mod, s) {
			t.Errorf("Modify prompt lacks %q:\n%s", s, mod)
		}
	}
}

func TestExtractFullFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		reply string
		want  string
		err   error
	}{
		{"one block with prose", "Here it is:\n\n```python\nimport os\n\nprint(os.name)\n```\n\nDone.", "import os\n\nprint(os.name)\n", nil},
		{"CRLF reply", "```go\r\npackage a\r\n```\r\n", "package a\n", nil},
		{"nested fences in a longer fence", "````markdown\n# T\n```sh\nmake\n```\n````\n", "# T\n```sh\nmake\n```\n", nil},
		{"tilde fence", "~~~\nx\n~~~\n", "x\n", nil},
		{"empty file", "```\n```\n", "", nil},
		{"none", "I cannot do that.", "", edit.ErrNoCodeBlock},
		{"two", "```\na\n```\nand\n```\nb\n```\n", "", edit.ErrManyCodeBlocks},
		{"cut off", "```go\npackage a\n\nfunc A() {\n", "", edit.ErrUnterminatedFence},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := edit.ExtractFullFile(tt.reply)
			if !errors.Is(err, tt.err) {
				t.Fatalf("ExtractFullFile error = %v, want %v", err, tt.err)
			}
			if got != tt.want {
				t.Errorf("ExtractFullFile = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestKeepFileShape(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, existing, generated, want string
	}{
		{"add", "", "a\nb\n", "a\nb\n"},
		{"LF stays LF", "x\n", "a\nb\n", "a\nb\n"},
		{"CRLF file", "x\r\ny\r\n", "a\nb\n", "a\r\nb\r\n"},
		{"CRLF in the reply is not doubled", "x\r\n", "a\r\nb\n", "a\r\nb\r\n"},
		{"no final newline", "x\ny", "a\nb\n", "a\nb"},
		{"CRLF without final newline", "x\r\ny", "a\nb\n", "a\r\nb"},
		{"byte-order mark", "\uFEFFx\n", "a\n", "\uFEFFa\n"},
		{"byte-order mark already there", "\uFEFFx\n", "\uFEFFa\n", "\uFEFFa\n"},
	}
	for _, tt := range tests {
		if got := edit.KeepFileShape(tt.existing, tt.generated); got != tt.want {
			t.Errorf("%s: KeepFileShape = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestExtractFile: a reply with several code blocks, as models write them,
// gives the one that is the file, or none when that is a guess.
func TestExtractFile(t *testing.T) {
	t.Parallel()
	const code = "def add(a, b):\n    return a + b\n"
	tests := []struct {
		name, path, reply, want string
	}{
		{"the file and how to run its tests", "calc.py",
			"Here is `calc.py`:\n\n```python\n" + code + "```\n\nRun the tests with:\n\n```bash\npytest -q\n```\n", code},
		{"a short language name", "src/calc.ts",
			"```ts\nexport const x = 1;\n```\n\n```sh\nnpx vitest run\n```\n", "export const x = 1;\n"},
		{"the file named above its block among two files", "calc.py",
			"**test_calc.py**\n```python\nimport calc\n```\n\n**calc.py**\n```python\n" + code + "```\n", code},
		{"the file named in the fence", "pkg/calc.py",
			"```python title=\"calc.py\"\n" + code + "```\n```python\nprint(add(1, 2))\n```\n", code},
		{"two blocks in the file's language are refused", "calc.py",
			"Part 1:\n```python\ndef add(a, b):\n```\nPart 2:\n```python\n    return a + b\n```\n", ""},
		{"a block for another file and one unnamed are refused", "calc.py",
			"test_calc.py\n```python\nimport calc\n```\n```bash\npytest\n```\n", ""},
		{"unknown language and two blocks", "notes.txt", "```\na\n```\n```\nb\n```\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := edit.ExtractFile(tt.reply, tt.path)
			if tt.want == "" {
				if !errors.Is(err, edit.ErrManyCodeBlocks) {
					t.Fatalf("ExtractFile = %q, %v; want ErrManyCodeBlocks", got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ExtractFile = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
