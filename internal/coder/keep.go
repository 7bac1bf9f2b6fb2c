package coder

import (
	"fmt"
	"strings"
	"unicode"

	udiff "github.com/aymanbagabas/go-udiff"
)

// maxLostShown bounds the lost lines a KeepError lists.
const maxLostShown = 10

// KeepError is a reply that deletes or changes existing lines where only
// additions were asked for (a stub of a file that exists).
type KeepError struct {
	Path  string
	Lost  []string // the existing lines it loses, "line N: text", the first maxLostShown
	Count int      // how many it loses in all
}

func (e *KeepError) Error() string {
	more := ""
	if e.Count > len(e.Lost) {
		more = fmt.Sprintf("\n  … and %d more", e.Count-len(e.Lost))
	}
	return fmt.Sprintf("your reply deletes or changes %d existing line(s) of %s, which would gut the code that is there; "+
		"keep every existing declaration and body exactly as it is and only add what is missing. The lines it loses:\n  %s%s",
		e.Count, e.Path, strings.Join(e.Lost, "\n  "), more)
}

// KeepsExisting checks that after keeps every line of existing that
// matters: only blank lines, lines without a letter or digit (a closing
// brace) and the lines that list imports and exports (which grow when a
// declaration is added: `import "fmt"` becomes an import block, `export
// { add }` becomes `export { add, mul }`) may go. Anything else lost is a
// *KeepError naming the lines.
func KeepsExisting(path, existing, after string) error {
	existing, after = strings.ReplaceAll(existing, "\r\n", "\n"), strings.ReplaceAll(after, "\r\n", "\n")
	e := &KeepError{Path: path}
	for _, d := range udiff.Lines(existing, after) {
		if d.Start == d.End {
			continue
		}
		first := strings.Count(existing[:d.Start], "\n") + 1
		for i, l := range strings.Split(strings.TrimSuffix(existing[d.Start:d.End], "\n"), "\n") {
			if mayGo(l) {
				continue
			}
			e.Count++
			if len(e.Lost) < maxLostShown {
				e.Lost = append(e.Lost, fmt.Sprintf("line %d: %s", first+i, strings.TrimRight(l, " \t")))
			}
		}
	}
	if e.Count == 0 {
		return nil
	}
	return e
}

// listPrefixes start the lines that list imports and exports.
var listPrefixes = []string{"import ", "import(", "from ", "use ", "pub use ", "mod ", "pub mod ", "export {", "export *",
	"module.exports = {", "__all__", "#include", "package "}

func mayGo(line string) bool {
	t := strings.TrimSpace(line)
	if !strings.ContainsFunc(t, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
		return true
	}
	for _, p := range listPrefixes {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	if strings.Contains(t, "require(") && !strings.Contains(t, "=>") && !strings.Contains(t, "function") {
		return true // const { add } = require('./calc')
	}
	// A line inside an import block: a quoted path alone.
	return strings.HasPrefix(t, `"`) && strings.HasSuffix(strings.TrimSuffix(t, ","), `"`) && !strings.Contains(t, " ")
}
