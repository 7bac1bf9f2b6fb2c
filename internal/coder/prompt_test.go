package coder_test

import (
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/coder"
)

func TestBlocksPrompt(t *testing.T) {
	t.Parallel()
	t.Run("feedback asks for a correction", func(t *testing.T) {
		t.Parallel()
		p := coder.BlocksPrompt(coder.PromptInput{Path: "a.go", LLD: "x", Existing: "package a\n", Feedback: "edit block 2: FIND does not match"})
		for _, s := range []string{"## Your previous reply could not be used", "edit block 2: FIND does not match", "send your complete answer again", "```go\npackage a\n```"} {
			if !strings.Contains(p, s) {
				t.Errorf("prompt lacks %q:\n%s", s, p)
			}
		}
	})
	t.Run("content with fences gets longer fences", func(t *testing.T) {
		t.Parallel()
		existing := "# Title\n\n```sh\nmake\n```\n"
		p := coder.BlocksPrompt(coder.PromptInput{Path: "README.md", LLD: "x", Existing: existing})
		if !strings.Contains(p, "````markdown\n"+existing+"````\n") {
			t.Errorf("existing content not fenced with ````:\n%s", p)
		}
		if !strings.Contains(p, "FIND:\n````markdown\n") || !strings.Contains(p, "fence FIND and REPLACE WITH with ````") {
			t.Errorf("format does not ask for ```` fences:\n%s", p)
		}
	})
	t.Run("no feedback or tests sections when empty", func(t *testing.T) {
		t.Parallel()
		p := coder.BlocksPrompt(coder.PromptInput{Path: "x", LLD: "y", Existing: "z\n"})
		if strings.Contains(p, "previous reply") || strings.Contains(p, "## Tests") {
			t.Errorf("empty sections written:\n%s", p)
		}
	})
}

func TestFullFilePrompt(t *testing.T) {
	t.Parallel()
	add := coder.FullFilePrompt(coder.PromptInput{Path: "new.py", LLD: "Create it.", Tests: "def test(): pass\n"})
	for _, s := range []string{"new file `new.py`", "exactly one fenced code block", "```python\nthe complete file\n```", "Never elide", "def test(): pass"} {
		if !strings.Contains(add, s) {
			t.Errorf("Add prompt lacks %q:\n%s", s, add)
		}
	}
	if strings.Contains(add, "## Current content") {
		t.Error("Add prompt shows a current content")
	}
	mod := coder.FullFilePrompt(coder.PromptInput{Path: "m.py", LLD: "Change it.", Existing: "x = 1\n", Feedback: "the reply has no fenced code block"})
	for _, s := range []string{"rewriting the file `m.py`", "## Current content of `m.py`", "```python\nx = 1\n```", "the reply has no fenced code block"} {
		if !strings.Contains(mod, s) {
			t.Errorf("Modify prompt lacks %q:\n%s", s, mod)
		}
	}
}
