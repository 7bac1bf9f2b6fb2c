package edit

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/azero-dev/azero/internal/lazyre"
)

// Declaration is one line of a file's outline: a top-level declaration,
// or a member of a top-level type (a method, a field, a property).
type Declaration struct {
	// Line is the 1-based line the declaration starts on.
	Line int `json:"line"`
	// Kind says what is declared: "package", "import", "func", "method",
	// "constructor", "class", "struct", "enum", "trait", "impl",
	// "interface", "type", "const", "var", "static", "assign",
	// "attribute", "field", "property", "export", "macro", "macro_call",
	// "module", "namespace", "object", "record", "union", "decorator",
	// "heading" (Markdown), or "line" for a file in a language without an
	// outliner of its own.
	Kind string `json:"kind"`
	// Text is the line as the file has it (indentation kept, trailing
	// whitespace removed), cut at maxOutlineText bytes.
	Text string `json:"text"`
}

// maxOutlineText bounds the text kept of one declaration's line: a
// minified file's one line is not an outline.
const maxOutlineText = 240

// Declarations lists every top-level declaration of a file, and the
// members of its top-level types, in file order, for the languages azero
// runs tests in: Go, Python, JavaScript and TypeScript, Rust, Java,
// Kotlin and C# (chosen by path's extension). Each is found by reading
// the file's lines with its strings, comments and brackets tracked, so a
// declaration inside a string, a comment or a function body is not one.
// Other files get the lines that look like declarations in most languages.
// Declarations never fails: text that is not valid code yields what can
// be read of it.
func Declarations(path, content string) []Declaration {
	lines := strings.Split(strings.TrimPrefix(content, bom), "\n")
	if strings.HasSuffix(content, "\n") {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	var decls []Declaration
	if lang := outlineLanguage(path); lang == "python" {
		decls = pythonDeclarations(lines)
	} else if bl := braceLanguage(lang); bl != nil {
		decls = braceDeclarations(lines, bl)
	} else {
		decls = genericDeclarations(lines, lang)
	}
	for i := range decls {
		decls[i].Text = clip(strings.TrimRight(decls[i].Text, " \t\r\v\f"), maxOutlineText)
	}
	return decls
}

// Outline is the outline a model is shown of a large file instead of its
// text: every declaration Declarations finds, one per line, after its
// line number ("  12 | func Parse(reply string) ([]Block, error) {"),
// the numbered form FIND is matched without when copied from it.
func Outline(path, content string) string {
	decls := Declarations(path, content)
	if len(decls) == 0 {
		return ""
	}
	width := len(strconv.Itoa(decls[len(decls)-1].Line))
	var b strings.Builder
	for _, d := range decls {
		fmt.Fprintf(&b, "%*d | %s\n", width, d.Line, d.Text)
	}
	return b.String()
}

// clip cuts s to at most n bytes on a character boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + " …"
}

// outlineLanguage names the outliner for path.
func outlineLanguage(p string) string {
	switch strings.ToLower(path.Ext(p)) {
	case ".go":
		return "go"
	case ".py", ".pyi", ".pyw":
		return "python"
	case ".js", ".mjs", ".cjs", ".jsx":
		return "javascript"
	case ".ts", ".tsx", ".mts", ".cts":
		return "typescript"
	case ".rs":
		return "rust"
	case ".java":
		return "java"
	case ".kt", ".kts":
		return "kotlin"
	case ".cs":
		return "csharp"
	case ".md", ".markdown":
		return "markdown"
	}
	return ""
}

// genericLine matches lines that declare something in many languages
// (Ruby, PHP, C, shell, ...), for files without an outliner of their own.
var genericLine = lazyre.New(`^[ \t]*(?:(?:export|public|private|protected|static|abstract|final|async|pub)[ \t]+)*` +
	`(?:func|type|var|const|let|def|class|module|function|interface|enum|struct|trait|impl|fn|mod|namespace|package|import|use|require|include|typedef|template|#[ \t]*define|#[ \t]*include)\b`)

// markdownHeading matches an ATX heading.
var markdownHeading = lazyre.New(`^ {0,3}#{1,6}(?:[ \t]|$)`)

// genericDeclarations lists the lines that look like declarations: the
// headings of a Markdown file, the declaring lines of anything else.
func genericDeclarations(lines []string, lang string) []Declaration {
	re, kind := genericLine(), "line"
	if lang == "markdown" {
		re, kind = markdownHeading(), "heading"
	}
	var out []Declaration
	fence := ""
	for i, l := range lines {
		if lang == "markdown" {
			// A heading in a fenced code block is code.
			if t := strings.TrimSpace(l); fence == "" && (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")) {
				fence = t[:3]
				continue
			} else if fence != "" {
				if strings.HasPrefix(t, fence) {
					fence = ""
				}
				continue
			}
		}
		if re.MatchString(l) {
			out = append(out, Declaration{Line: i + 1, Kind: kind, Text: l})
		}
	}
	return out
}
