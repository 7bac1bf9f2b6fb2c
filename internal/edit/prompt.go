package edit

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
)

// PromptInput is what a prompt for one file is built from.
type PromptInput struct {
	Path     string // the file's path relative to the project root
	LLD      string // the design the change implements
	Existing string // the file's current content; empty for Add
	Tests    string // the tests the file must pass; may be empty
	// Feedback is the error text of an earlier attempt (a *ParseError,
	// *NotFoundError, ... as its Error() says it), asking the model to
	// correct it. Empty on a first attempt.
	Feedback string
}

// BlocksPrompt asks for edit blocks in the spec's "### CHANGE n / FIND: /
// REPLACE WITH:" format, for a Modify of a large file.
func BlocksPrompt(p PromptInput) string {
	lang := language(p.Path)
	var b strings.Builder
	fmt.Fprintf(&b, "You are changing the existing file `%s` to implement the design below.\n", p.Path)
	writeContext(&b, p, lang)
	inner := "```"
	if maxRun(p.Existing, '`') >= 3 {
		inner = strings.Repeat("`", maxRun(p.Existing, '`')+1)
	}
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
	lang := language(p.Path)
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
	f := strings.Repeat("`", max(3, maxRun(text, '`')+1))
	fmt.Fprintf(b, "%s%s\n%s\n%s\n", f, lang, strings.TrimSuffix(text, "\n"), f)
}

// maxRun is the length of the longest run of c in s.
func maxRun(s string, c byte) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}

// language is the fence info string for a file name.
func language(name string) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".go":
		return "go"
	case ".py", ".pyi":
		return "python"
	case ".js", ".mjs", ".cjs":
		return "javascript"
	case ".ts", ".tsx":
		return "typescript"
	case ".rs":
		return "rust"
	case ".java":
		return "java"
	case ".c", ".h":
		return "c"
	case ".cc", ".cpp", ".hpp":
		return "cpp"
	case ".rb":
		return "ruby"
	case ".sh", ".bash":
		return "bash"
	case ".md":
		return "markdown"
	case ".json":
		return "json"
	case ".yaml", ".yml":
		return "yaml"
	case ".toml":
		return "toml"
	case ".sql":
		return "sql"
	case ".html":
		return "html"
	}
	return ""
}

// Errors of ExtractFullFile; each is returned wrapped with detail.
var (
	ErrNoCodeBlock       = errors.New("the reply has no fenced code block; send the complete file in one ``` block")
	ErrManyCodeBlocks    = errors.New("the reply has more than one fenced code block; send the complete file in exactly one")
	ErrUnterminatedFence = errors.New("the reply's code block is never closed (was the reply cut off?); send the complete file again")
)

// ExtractFullFile returns the content of the one fenced code block in a
// full-file reply, with "\n" line endings and a final newline. A reply
// with no block, several, or one never closed (a truncated reply) is an
// error: a partial file must never be written.
func ExtractFullFile(reply string) (string, error) {
	lines := splitReply(reply)
	var found [][]string
	for i := 0; i < len(lines); i++ {
		f, ok := openFence(lines[i])
		if !ok {
			continue
		}
		body, closeAt, ok := readFence(lines, i, f)
		if !ok {
			return "", fmt.Errorf("extract file: fence opened at reply line %d: %w", i+1, ErrUnterminatedFence)
		}
		found = append(found, body)
		i = closeAt
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("extract file: %w", ErrNoCodeBlock)
	case 1:
		return joinLines(found[0]), nil
	}
	return "", fmt.Errorf("extract file: %d code blocks: %w", len(found), ErrManyCodeBlocks)
}

// ExtractFile is ExtractFullFile for a reply that should hold the file at
// path, reading a reply as models write them: when it holds several code
// blocks, the file is the one block named for path (its fence's info
// string or the line above it names the file), or else the one block in
// the file's language among blocks named for no other file ("```python"
// for calc.py next to a "```bash" block showing how to run the tests).
// Any other reply with several blocks is ErrManyCodeBlocks: two blocks in
// the file's language may be two halves of it.
func ExtractFile(reply, path string) (string, error) {
	content, err := ExtractFullFile(reply)
	if !errors.Is(err, ErrManyCodeBlocks) {
		return content, err
	}
	lines := splitReply(reply)
	lang := language(path)
	var named, inLang [][]string
	for i := 0; i < len(lines); i++ {
		f, ok := openFence(lines[i])
		if !ok {
			continue
		}
		body, closeAt, _ := readFence(lines, i, f)
		info := strings.Fields(strings.TrimLeft(strings.TrimSpace(lines[i]), string(f.char)))
		var name string
		for _, w := range info {
			if p := pathLike(infoPath(w)); p != "" {
				name = p
			}
		}
		if j := prevNonBlankLine(lines, i-1); name == "" && j >= 0 {
			name = pathLike(lines[j])
		}
		switch {
		case name != "" && PathMatches(path, name):
			named = append(named, body)
		case name == "" && lang != "" && len(info) > 0 && sameLanguage(infoPath(info[0]), lang):
			inLang = append(inLang, body)
		}
		i = closeAt
	}
	switch {
	case len(named) == 1:
		return joinLines(named[0]), nil
	case len(named) == 0 && len(inLang) == 1:
		return joinLines(inLang[0]), nil
	}
	return "", err
}

// infoPath reads a file name out of a word of a fence's info string:
// "title=calc.py", "python:calc.py", "calc.py".
func infoPath(w string) string {
	w = strings.Trim(w, "\"'{}")
	if _, v, ok := strings.Cut(w, "="); ok {
		w = strings.Trim(v, "\"'")
	}
	if _, v, ok := strings.Cut(w, ":"); ok && v != "" {
		w = v
	}
	return w
}

// sameLanguage reports whether a fence's info word names lang, the name
// language gives, or one of its usual short names.
func sameLanguage(info, lang string) bool {
	info = strings.ToLower(info)
	if info == lang {
		return true
	}
	aliases := map[string][]string{
		"python": {"py", "python3"}, "javascript": {"js", "jsx", "mjs"}, "typescript": {"ts", "tsx"},
		"rust": {"rs"}, "go": {"golang"}, "bash": {"sh", "shell", "zsh"}, "markdown": {"md"},
		"yaml": {"yml"}, "cpp": {"c++", "cxx"}, "ruby": {"rb"},
	}
	return slices.Contains(aliases[lang], info)
}

func prevNonBlankLine(lines []string, j int) int {
	for j >= 0 && strings.TrimSpace(lines[j]) == "" {
		j--
	}
	return j
}

// KeepFileShape gives generated, a whole file from ExtractFullFile (LF
// endings, final newline), the shape of the file it replaces: CRLF endings
// if existing mostly had them, a byte-order mark if existing had one, and
// no final newline if existing had none. Use it for a full-file Modify so
// that rewriting a file changes only what the model changed, as Apply
// does for blocks. An empty existing (an Add) leaves generated as it is.
func KeepFileShape(existing, generated string) string {
	if existing == "" {
		return generated
	}
	t := newText(existing)
	out := strings.ReplaceAll(generated, "\r\n", "\n")
	if len(t.ends) > 0 && t.ends[len(t.ends)-1] == eolNone {
		out = strings.TrimSuffix(out, "\n")
	}
	if t.style == eolCRLF {
		out = strings.ReplaceAll(out, "\n", "\r\n")
	}
	if t.bom && !strings.HasPrefix(out, bom) {
		out = bom + out
	}
	return out
}
