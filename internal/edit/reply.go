package edit

import (
	"errors"
	"fmt"
	pathpkg "path"
	"path/filepath"
	"slices"
	"strings"
)

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
	lang := Language(path)
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
// Language gives, or one of its usual short names.
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

// PathMatches reports whether the file at path (as the caller names it)
// is the file a block names: models name files relative to a root they
// guess, so the block's path need only be a whole-element tail of path.
func PathMatches(path, blockPath string) bool {
	bp := strings.TrimPrefix(pathpkg.Clean(filepath.ToSlash(strings.TrimSpace(blockPath))), "./")
	fp := pathpkg.Clean(filepath.ToSlash(path))
	return fp == bp || strings.HasSuffix(fp, "/"+strings.TrimPrefix(bp, "/")) || strings.HasSuffix(bp, "/"+fp)
}

// Language is the info string of a Markdown code fence holding the file
// name: "python" for calc.py, "" when the extension is not known.
func Language(name string) string {
	switch strings.ToLower(pathpkg.Ext(name)) {
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

// Fence is the backtick fence that quotes text in Markdown: three
// backticks, or one more than the longest run of backticks in text, so
// that no line of text can close it.
func Fence(text string) string {
	return strings.Repeat("`", max(3, maxRun(text, '`')+1))
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
