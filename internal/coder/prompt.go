package coder

import (
	"fmt"
	"strings"

	"github.com/azero-dev/azero/internal/edit"
)

// PromptInput is what a prompt for one file is built from.
type PromptInput struct {
	Path     string // the file's path relative to the project root
	LLD      string // the design the change implements
	Existing string // the file's current content; empty for Add
	Tests    string // the tests the file must pass; may be empty
	// Feedback is the error text of an earlier attempt (an *edit.ParseError,
	// *edit.NotFoundError, ... as its Error() says it), asking the model to
	// correct it. Empty on a first attempt.
	Feedback string
}

// BlocksPrompt asks for edit blocks in the spec's "### CHANGE n / FIND: /
// REPLACE WITH:" format, for a Modify of a large file.
func BlocksPrompt(p PromptInput) string {
	lang := edit.Language(p.Path)
	var b strings.Builder
	fmt.Fprintf(&b, "You are changing the existing file `%s` to implement the design below.\n", p.Path)
	writeContext(&b, p, lang)
	inner := edit.Fence(p.Existing)
	fmt.Fprintf(&b, `
## Output format

The file is large: do NOT output the whole file. Output only the changes, each in exactly this format:

### CHANGE 1: brief description
FIND:
%[1]s%[2]s
exact lines copied from the current file
%[1]s

REPLACE WITH:
%[1]s%[2]s
the lines that replace them
%[1]s

### CHANGE 2: brief description
...

Rules:
- FIND must be whole lines copied exactly from the current file: same indentation, same comments, no line numbers.
- Include enough context in FIND to match exactly one place in the file: about 2 unchanged lines above and 2 below the lines you change.
- Output ALL changes needed, in order from the top of the file to the bottom. Changes must not overlap.
- To insert code, FIND the lines next to the insertion point and repeat them in REPLACE WITH around the new lines.
- To delete code, leave the REPLACE WITH block empty.
- Never write placeholders such as "# ... rest of code ..." or "// ... existing code ...". REPLACE WITH replaces FIND completely, so every line it keeps must be written out.
- Do NOT output the entire file.
`, inner, lang)
	if inner != "```" {
		fmt.Fprintf(&b, "- The file contains ``` lines, so fence FIND and REPLACE WITH with %s as shown.\n", inner)
	}
	return b.String()
}

// FullFilePrompt asks for the complete file in one fenced code block, for
// an Add or the Modify of a small file.
func FullFilePrompt(p PromptInput) string {
	lang := edit.Language(p.Path)
	var b strings.Builder
	if p.Existing == "" {
		fmt.Fprintf(&b, "You are writing the new file `%s` to implement the design below.\n", p.Path)
	} else {
		fmt.Fprintf(&b, "You are rewriting the file `%s` to implement the design below.\n", p.Path)
	}
	writeContext(&b, p, lang)
	fmt.Fprintf(&b, `
## Output format

Output the complete content of `+"`%s`"+`, from its first line to its last, in exactly one fenced code block:

%s%s
the complete file
%s

Rules:
- Write out every line of the file. Never elide or summarise code: no "# ... rest of code ...", no "// ... existing code ...", no "(unchanged)".
- Output exactly one code block; any explanation goes outside it.
- If the file itself contains `+"```"+` lines, fence it with more backticks than any line inside it.
`, p.Path, "```", lang, "```")
	return b.String()
}

// writeContext writes the design, tests, current content and feedback
// sections shared by both prompts.
func writeContext(b *strings.Builder, p PromptInput, lang string) {
	fmt.Fprintf(b, "\n## Design\n\n%s\n", strings.TrimRight(p.LLD, "\n"))
	if p.Tests != "" {
		b.WriteString("\n## Tests the file must pass\n\n")
		writeFenced(b, p.Tests, "")
	}
	if p.Existing != "" {
		fmt.Fprintf(b, "\n## Current content of `%s`\n\n", p.Path)
		writeFenced(b, p.Existing, lang)
	}
	if p.Feedback != "" {
		fmt.Fprintf(b, "\n## Your previous reply could not be used\n\n%s\n\nCorrect this and send your complete answer again.\n",
			strings.TrimRight(p.Feedback, "\n"))
	}
}

// writeFenced writes text in a fence longer than any backtick run in it,
// so the text cannot close its own fence.
func writeFenced(b *strings.Builder, text, lang string) {
	f := edit.Fence(text)
	fmt.Fprintf(b, "%s%s\n%s\n%s\n", f, lang, strings.TrimSuffix(text, "\n"), f)
}
