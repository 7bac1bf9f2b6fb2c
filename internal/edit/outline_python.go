package edit

import (
	"strings"

	"github.com/azero-dev/azero/internal/lazyre"
)

// The Python outliner reads the module's logical lines (physical lines
// joined inside brackets and after a backslash, strings and comments
// tracked) and their indentation. The module and each class body list
// their statements; the bodies of if, try, with, for, while and match
// at those levels list theirs as the level they sit in does (a
// conditional import or definition is still one); a function body lists
// nothing.

// pyScope is an indented block being read.
type pyScope struct {
	header int    // the indentation of the line that opened it
	body   int    // the indentation of its statements; -1 before the first
	kind   string // "module", "class", "cond" (lists as its parent does) or "body"
}

var (
	pyDecorator = lazyre.New(`^@`)
	pyProperty  = lazyre.New(`^@(?:[\w.]*\.)?(?:property|cached_property|getter|setter|deleter)\b`)
	pyDef       = lazyre.New(`^(?:async\s+)?def\b`)
	pyClass     = lazyre.New(`^class\b`)
	pyImport    = lazyre.New(`^(?:import|from)\s`)
	pyTypeAlias = lazyre.New(`^type\s+\w+(?:\[[^\]]*\])?\s*=`)
	pyCond      = lazyre.New(`^(?:if|elif|else|try|except|finally|with|async\s+with|for|async\s+for|while|match|case)\b`)
	// A binding: names (dotted, in a tuple, starred) then an annotation,
	// "=" or an augmented assignment; or a bare annotation.
	pyAssign = lazyre.New(`^\(?\*?[A-Za-z_][\w.]*(?:\s*,\s*\*?[A-Za-z_][\w.]*)*\s*,?\s*\)?\s*` +
		`(?:=[^=]|=$|(?:\+|-|\*|/|//|%|\*\*|\||&|\^|<<|>>|@)=|:[^=]*(?:=[^=]|=$|$))`)
	pyKeyword = lazyre.New(`^(?:if|elif|else|try|except|finally|with|for|while|return|del|pass|raise|assert|global|nonlocal|lambda|yield|await|break|continue|not|and|or|in|is|async)\b`)
)

func pythonDeclarations(lines []string) []Declaration {
	var (
		out      []Declaration
		stack    = []pyScope{{header: -1, body: 0, kind: "module"}}
		lex      pyLexer
		opening  string // the scope the logical line being read opens, if it ends in ":"
		header   int
		property bool // the decorators above the next def include @property
	)
	for i, line := range lines {
		start := lex.atStatement()
		lex.line(line)
		if !start {
			if lex.atStatement() && opening != "" && lex.last == ':' {
				stack = append(stack, pyScope{header: header, body: -1, kind: opening})
			}
			continue
		}
		t := strings.TrimSpace(line)
		if t == "" || t[0] == '#' {
			continue
		}
		ind := pyIndent(line)
		for {
			top := &stack[len(stack)-1]
			if top.body < 0 {
				if ind > top.header {
					top.body = ind
				} else {
					stack = stack[:len(stack)-1]
					continue
				}
			}
			if ind < top.body && len(stack) > 1 {
				stack = stack[:len(stack)-1]
				continue
			}
			break
		}
		opening = ""
		top := stack[len(stack)-1]
		if ind != top.body || top.kind == "body" {
			continue // deeper than its block's statements, or in a function
		}
		owner := "module"
		for k := len(stack) - 1; k >= 0; k-- {
			if stack[k].kind != "cond" {
				owner = stack[k].kind
				break
			}
		}
		if owner == "body" {
			continue
		}
		kind := ""
		switch {
		case pyDecorator().MatchString(t):
			kind = "decorator"
			property = property || pyProperty().MatchString(t)
		case pyDef().MatchString(t):
			kind, opening = "func", "body"
			switch {
			case property:
				kind = "property"
			case owner == "class":
				kind = "method"
			}
		case pyClass().MatchString(t):
			kind, opening = "class", "class"
		case pyImport().MatchString(t):
			kind = "import"
		case pyTypeAlias().MatchString(t):
			kind = "type"
		case !pyKeyword().MatchString(t) && pyAssign().MatchString(t):
			kind = "assign"
			switch {
			case owner == "class":
				kind = "attribute"
			case strings.HasPrefix(t, "__all__"):
				kind = "export"
			}
		case pyCond().MatchString(t):
			opening = "cond"
		}
		if kind != "decorator" {
			property = false
		}
		if kind != "" {
			out = append(out, Declaration{Line: i + 1, Kind: kind, Text: line})
		}
		header = ind
		if lex.atStatement() && opening != "" && lex.last == ':' {
			stack = append(stack, pyScope{header: ind, body: -1, kind: opening})
		}
	}
	return out
}

// pyIndent is the column a line's statement starts at, a tab moving to
// the next multiple of 8 as Python counts it.
func pyIndent(line string) int {
	col := 0
	for _, c := range []byte(line) {
		switch c {
		case ' ':
			col++
		case '\t':
			col = col/8*8 + 8
		case '\f':
		default:
			return col
		}
	}
	return col
}

// pyLexer follows strings, comments and brackets across physical lines.
type pyLexer struct {
	depth     int    // open brackets
	quote     string // the closing quote of a string open across lines ("" outside one)
	backslash bool   // the last line ended in a backslash outside a string
	last      byte   // the last character of code on the logical line so far
}

// atStatement reports whether the next physical line starts a logical
// line.
func (x *pyLexer) atStatement() bool { return x.depth == 0 && x.quote == "" && !x.backslash }

func (x *pyLexer) line(line string) {
	if x.atStatement() {
		x.last = 0
	}
	x.backslash = false
	i := 0
	for i < len(line) {
		if x.quote != "" {
			i = x.inString(line, i)
			continue
		}
		c := line[i]
		switch {
		case c == '#':
			return
		case c == '"' || c == '\'':
			q := string(c)
			if strings.HasPrefix(line[i:], strings.Repeat(q, 3)) {
				q = strings.Repeat(q, 3)
			}
			x.quote = q
			i += len(q)
			x.last = c
		case c == '\\' && i == len(line)-1:
			x.backslash = true
			return
		case c == '(' || c == '[' || c == '{':
			x.depth++
			x.last = c
			i++
		case c == ')' || c == ']' || c == '}':
			if x.depth > 0 {
				x.depth--
			}
			x.last = c
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
		default:
			x.last = c
			i++
		}
	}
	// A one-quote string ends with its line (unless continued by a
	// backslash); only triple quotes span lines.
	if len(x.quote) == 1 && !strings.HasSuffix(line, "\\") {
		x.quote = ""
	}
}

// inString reads string content from i, returning the index after its
// closing quote or the end of the line.
func (x *pyLexer) inString(line string, i int) int {
	for i < len(line) {
		switch {
		case line[i] == '\\':
			i += 2
		case strings.HasPrefix(line[i:], x.quote):
			i += len(x.quote)
			x.quote = ""
			return i
		default:
			i++
		}
	}
	return len(line)
}
