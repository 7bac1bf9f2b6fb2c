package edit_test

import (
	"errors"
	"testing"

	"github.com/azero-dev/azero/internal/edit"
)

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

func TestPathMatches(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file, block string
		want        bool
	}{
		{"a.py", "a.py", true},
		{"pkg/a.py", "a.py", true},
		{"pkg/a.py", "./pkg/a.py", true},
		{"pkg/a.py", "repo/pkg/a.py", true},
		{"/home/u/repo/pkg/a.py", "pkg/a.py", true},
		{"pkg/a.py", " `pkg/a.py` ", false}, // Parse strips the backticks, PathMatches does not
		{"pkg/a.py", "b.py", false},
		{"pkg/ba.py", "a.py", false},
		{"pkg/a.py", "other/a.py", false},
	}
	for _, tt := range tests {
		t.Run(tt.file+"~"+tt.block, func(t *testing.T) {
			t.Parallel()
			if got := edit.PathMatches(tt.file, tt.block); got != tt.want {
				t.Errorf("PathMatches(%q, %q) = %v, want %v", tt.file, tt.block, got, tt.want)
			}
		})
	}
}

// TestFence: the fence is three backticks at least, and longer than any
// run of backticks in the text, so no line of the text can close it.
func TestFence(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text, want string
	}{
		{"no backticks", "x = 1\n", "```"},
		{"inline code", "use `x` and ``y``\n", "```"},
		{"a fence inside", "```sh\nmake\n```\n", "````"},
		{"a longer fence inside", "`````\n", "``````"},
	}
	for _, tt := range tests {
		if got := edit.Fence(tt.text); got != tt.want {
			t.Errorf("%s: Fence = %q, want %q", tt.name, got, tt.want)
		}
	}
}
