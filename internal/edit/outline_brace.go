package edit

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// The outliner of the languages whose blocks are braces (Go, JavaScript
// and TypeScript, Rust, Java, Kotlin, C#). It reads the file once, line
// by line, keeping track of what the lines are inside: comments, strings
// (raw, template, text blocks), and brackets. A bracket a declaration
// opens is a scope: a class's body lists its members, a namespace's or
// module's its declarations, Go's const ( ... ) its entries; any other
// bracket (a function body, an argument list, a literal) lists nothing.
// In a scope that lists, a line starts a statement unless the line before
// it went on (it ended in an operator or a comma) or it goes on from it
// (it starts with ".", ")" or "extends"), or it is indented deeper than
// the scope's first statement; a statement's first line is matched
// against the language's rules, the first that matches naming its kind.

// scope is what a bracket holds.
type scope int

const (
	opaque      scope = iota // a body or an expression: nothing in it is listed
	members                  // a class-like body: its statements are members
	transparent              // a namespace, a module, the file: its statements are declarations
	group                    // Go's const ( ... ): its entries are declarations
)

// rule names the kind of a statement whose first line matches re, and
// what the statement's first brace (for group, parenthesis) opens.
type rule struct {
	re    *regexp.Regexp
	kind  string
	opens scope
	entry string // for a group: its entries' kind ("" lists none)
}

// braceLang is one language's lexical features and rules.
type braceLang struct {
	top, member []rule
	// strip, when set, removes the annotations and modifiers that may
	// start a declaration before the rules are matched, so that a rule
	// cannot take a modifier for a type or a name.
	strip *regexp.Regexp
	// entry classifies an entry of a group whose rule gave entry "type"
	// (Go's type ( ... )); nil otherwise.
	typeEntry []rule

	goRaw       bool // `raw` strings over lines (Go)
	template    bool // `template ${literals}` (JavaScript)
	regexLits   bool // /regular expression/ literals (JavaScript)
	rustStrings bool // r#"raw"# strings, 'lifetimes' beside 'c'haracters
	nestComment bool // /* nested /* comments */ */ (Rust, Kotlin)
	tripleQuote bool // """text blocks""" (Java, Kotlin, C#)
	verbatim    bool // @"verbatim ""strings""" (C#)
	backtickID  bool // `quoted identifiers` on one line (Kotlin)
}

// frame is an open bracket.
type frame struct {
	ch       byte // '{', '(' or '['; 0 for the file
	scope    scope
	entry    string // a group's entries' kind
	template bool   // a ${ in a template literal: its } goes back into the literal
	indent   int    // indentation of the first statement in it, -1 before one
	opener   *rule  // the declaration whose scope it opened, if any
	line     int    // the line it opened on
}

// lexical modes that outlast a line.
const (
	modeCode = iota
	modeComment
	modeGoRaw
	modeTemplate
	modeRustRaw
	modeTriple
	modeVerbatim
)

// braceScanner is the state of one read of a file.
type braceScanner struct {
	lang    *braceLang
	stack   []frame
	mode    int
	depth   int // nested comment depth; hashes of a Rust raw string
	pending *rule
	base    int    // stack height at which the pending statement started
	last    byte   // the last character of code read, for regex literals and continuations
	prev    byte   // the one before it
	fresh   bool   // last opened the bracket on top: the line after starts its first statement
	line    int    // the line being read
	opened  [3]int // the brackets of each kind on the stack, so a stray closer costs nothing
}

func braceDeclarations(lines []string, lang *braceLang) []Declaration {
	s := &braceScanner{lang: lang, stack: []frame{{scope: transparent, indent: -1}}}
	var out []Declaration
	for i, line := range lines {
		s.line = i
		if d, ok := s.statement(line); ok {
			d.Line = i + 1
			out = append(out, d)
		}
		s.lex(line)
	}
	return out
}

// statement reports the declaration line starts, if it starts one.
func (s *braceScanner) statement(line string) (Declaration, bool) {
	if s.mode != modeCode {
		return Declaration{}, false
	}
	top := &s.stack[len(s.stack)-1]
	if top.scope == opaque {
		return Declaration{}, false
	}
	t := strings.TrimSpace(line)
	// A comment closed on the line ("/** @deprecated */ name(): T;")
	// comes before the statement.
	for strings.HasPrefix(t, "/*") {
		end := commentEnd(t, s.lang.nestComment)
		if end < 0 {
			return Declaration{}, false
		}
		t = strings.TrimSpace(t[end:])
	}
	if t == "" || strings.HasPrefix(t, "//") {
		return Declaration{}, false
	}
	// A comma ends a member of a class or object body (Java's enum
	// constants, an object's properties), and goes on in a statement.
	comma := s.last == ',' && top.scope == members
	if !s.fresh && !comma && continues(s.last, s.prev) || leadsOn(t) {
		return Declaration{}, false
	}
	ind := leadingSpace(line)
	if top.indent < 0 {
		top.indent = ind
	}
	if ind > top.indent {
		return Declaration{}, false
	}
	// A new statement: what the one before was about to open is moot.
	s.pending, s.base = nil, len(s.stack)
	var rules []rule
	kind := ""
	switch top.scope {
	case members:
		rules = s.lang.member
	case group:
		kind = top.entry
		if kind == "" || !identStart(t) {
			return Declaration{}, false
		}
		if kind != "type" || s.lang.typeEntry == nil {
			return Declaration{Kind: kind, Text: line}, true
		}
		rules = s.lang.typeEntry
	default:
		rules = s.lang.top
	}
	if s.lang.strip != nil {
		t = s.lang.strip.ReplaceAllLiteralString(t, "")
	}
	for i := range rules {
		if rules[i].re.MatchString(t) {
			s.pending = &rules[i]
			return Declaration{Kind: rules[i].kind, Text: line}, true
		}
	}
	return Declaration{}, false
}

// commentEnd returns the index after the block comment t starts with,
// or -1 if it does not end on the line.
func commentEnd(t string, nested bool) int {
	depth := 0
	for i := 0; i+1 < len(t); i++ {
		switch {
		case t[i] == '/' && t[i+1] == '*' && (depth == 0 || nested):
			depth++
			i++
		case t[i] == '*' && t[i+1] == '/':
			if depth--; depth == 0 {
				return i + 2
			}
			i++
		}
	}
	return -1
}

// continues reports whether a line ending in last (and prev before it)
// goes on to the next: an operator, a comma, an opening bracket. A line
// ending in ">" closes a type's arguments (List<T>) unless it is an arrow.
func continues(last, prev byte) bool {
	switch last {
	case ',', '(', '[', '=', '*', '/', '%', '&', '|', '^', '<', '?', ':', '.', '\\':
		return true
	case '+', '-':
		return prev != last // i++ ends a statement
	case '>':
		return prev == '=' || prev == '-'
	}
	return false
}

// leadsOn reports whether a line's text t continues the statement above
// it: it starts with an operator, a closing bracket, an opening brace on
// its own (a body in Allman style) or a word that carries on a header.
func leadsOn(t string) bool {
	switch t[0] {
	case '.', '?', ':', ')', ']', '}', '{', '=', '&', '|', '+', '-', ',', '>':
		return true
	}
	for _, w := range []string{"where", "extends", "implements", "throws"} {
		if strings.HasPrefix(t, w) && (len(t) == len(w) || t[len(w)] == ' ' || t[len(w)] == '\t') {
			return true
		}
	}
	return false
}

func identByte(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

func identStart(t string) bool {
	return t != "" && identByte(t[0]) && !(t[0] >= '0' && t[0] <= '9')
}

// lex reads one line's code, comments and strings, opening and closing
// brackets.
func (s *braceScanner) lex(line string) {
	l := s.lang
	for i := 0; i < len(line); {
		switch s.mode {
		case modeComment:
			i = s.inComment(line, i)
			continue
		case modeGoRaw:
			j := strings.IndexByte(line[i:], '`')
			if j < 0 {
				return
			}
			i += j + 1
			s.mode = modeCode
			s.code('`')
			continue
		case modeTemplate:
			i = s.inTemplate(line, i)
			continue
		case modeRustRaw:
			end := "\"" + strings.Repeat("#", s.depth)
			j := strings.Index(line[i:], end)
			if j < 0 {
				return
			}
			i += j + len(end)
			s.mode = modeCode
			s.code('"')
			continue
		case modeTriple:
			j := i
			for j < len(line) && !strings.HasPrefix(line[j:], `"""`) {
				if line[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(line) {
				return
			}
			i = j + 3
			s.mode = modeCode
			s.code('"')
			continue
		case modeVerbatim:
			j := i
			for j < len(line) && (line[j] != '"' || strings.HasPrefix(line[j:], `""`)) {
				if line[j] == '"' {
					j++
				}
				j++
			}
			if j >= len(line) {
				return
			}
			i = j + 1
			s.mode = modeCode
			s.code('"')
			continue
		}
		c := line[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f':
			i++
		case c == '/' && i+1 < len(line) && line[i+1] == '/':
			return
		case c == '/' && i+1 < len(line) && line[i+1] == '*':
			s.mode, s.depth = modeComment, 1
			i += 2
		case c == '"' && l.tripleQuote && strings.HasPrefix(line[i:], `"""`):
			s.mode = modeTriple
			i += 3
		case c == '"' && l.verbatim && i > 0 && (line[i-1] == '@' || i > 1 && line[i-1] == '$' && line[i-2] == '@'):
			s.mode = modeVerbatim
			i++
		case c == '"' || c == '\'' && !l.rustStrings:
			// A quote that its line does not close is no string (an
			// apostrophe in JSX text): strings here end on their line.
			if j, ok := skipQuoted(line, i, c); ok {
				i = j
			} else {
				i++
			}
			s.code(c)
		case c == '\'':
			i = s.rustQuote(line, i)
		case c == '`' && l.goRaw:
			s.mode = modeGoRaw
			i++
		case c == '`' && l.template:
			s.mode = modeTemplate
			i++
		case c == '`' && l.backtickID:
			i, _ = skipQuoted(line, i, '`')
			s.code('a')
		case l.rustStrings && (c == 'r' || c == 'b') && s.rawStart(line, i) > 0:
			n := s.rawStart(line, i)
			s.depth = strings.Count(line[i:i+n], "#")
			s.mode = modeRustRaw
			i += n
		case c == '/' && l.regexLits && regexAfter(s.last):
			i = skipRegex(line, i)
			s.code('r') // a literal, which ends a statement as a name does
		case c == '{' || c == '(' || c == '[':
			s.open(c)
			i++
		case c == '}' || c == ')' || c == ']':
			s.close(c)
			i++
		case c == ';':
			if len(s.stack) == s.base {
				s.pending = nil
			}
			s.code(c)
			i++
		default:
			s.code(c)
			i++
		}
	}
}

// code records c as the last character of code read.
func (s *braceScanner) code(c byte) { s.prev, s.last, s.fresh = s.last, c, false }

func (s *braceScanner) inComment(line string, i int) int {
	for i < len(line) {
		switch {
		case strings.HasPrefix(line[i:], "*/"):
			s.depth--
			i += 2
			if s.depth == 0 || !s.lang.nestComment {
				s.mode = modeCode
				return i
			}
		case s.lang.nestComment && strings.HasPrefix(line[i:], "/*"):
			s.depth++
			i += 2
		default:
			i++
		}
	}
	return i
}

func (s *braceScanner) inTemplate(line string, i int) int {
	for i < len(line) {
		switch {
		case line[i] == '\\':
			i += 2
		case line[i] == '`':
			s.mode = modeCode
			s.code('`')
			return i + 1
		case strings.HasPrefix(line[i:], "${"):
			s.push(frame{ch: '{', template: true, indent: -1})
			s.mode = modeCode
			return i + 2
		default:
			i++
		}
	}
	return i
}

// rustQuote reads a character literal ('a', '\n', '\u{1F600}') or the
// quote of a lifetime ('a), returning the index after it.
func (s *braceScanner) rustQuote(line string, i int) int {
	if i+1 < len(line) && line[i+1] == '\\' {
		j, _ := skipQuoted(line, i, '\'')
		s.code('\'')
		return j
	}
	if i+1 < len(line) {
		_, n := utf8.DecodeRuneInString(line[i+1:])
		if i+1+n < len(line) && line[i+1+n] == '\'' {
			s.code('\'')
			return i + 2 + n
		}
	}
	s.code('\'')
	return i + 1
}

// rawStart returns the length of a Rust raw string's opening (r", r#",
// br##") at i, or 0.
func (s *braceScanner) rawStart(line string, i int) int {
	if i > 0 && identByte(line[i-1]) {
		return 0
	}
	j := i
	if line[j] == 'b' {
		j++
	}
	if j >= len(line) || line[j] != 'r' {
		return 0
	}
	j++
	for j < len(line) && line[j] == '#' {
		j++
	}
	if j < len(line) && line[j] == '"' {
		return j + 1 - i
	}
	return 0
}

// open pushes a bracket; the first brace of a statement that declares a
// scope (a parenthesis for a group) opens that scope.
func (s *braceScanner) open(c byte) {
	f := frame{ch: c, indent: -1, line: s.line}
	if p := s.pending; p != nil && len(s.stack) == s.base {
		switch {
		case c == '{' && (p.opens == members || p.opens == transparent):
			f.scope, f.opener = p.opens, p
			s.pending = nil
		case c == '(' && p.opens == group:
			f.scope, f.entry = group, p.entry
			s.pending = nil
		case c == '{':
			s.pending = nil
		}
	}
	s.push(f)
	s.code(c)
	s.fresh = true
}

// kinds indexes open by bracket.
func kindOf(c byte) int { return strings.IndexByte("{([", c) }

func (s *braceScanner) push(f frame) {
	s.stack = append(s.stack, f)
	s.opened[kindOf(f.ch)]++
}

// close pops the bracket c closes (and any left open inside it); a
// stray closer is ignored. A template's } goes back into the literal.
func (s *braceScanner) close(c byte) {
	want := "{(["[strings.IndexByte("})]", c)]
	for k := len(s.stack) - 1; k > 0 && s.opened[kindOf(want)] > 0; k-- {
		if s.stack[k].ch != want {
			continue
		}
		f := s.stack[k]
		for _, g := range s.stack[k:] {
			s.opened[kindOf(g.ch)]--
		}
		s.stack = s.stack[:k]
		if f.template {
			s.mode = modeTemplate
		}
		// Braces a declaration's header closes on their line (a type
		// argument's { id: string }) were not its body: it is still to
		// come.
		if f.opener != nil && f.line == s.line && len(s.stack) == s.base {
			s.pending = f.opener
		}
		break
	}
	s.code(c)
}

// skipQuoted returns the index after the string or character literal
// opened by q at i, or the end of the line and false if it is not closed
// there.
func skipQuoted(line string, i int, q byte) (int, bool) {
	for j := i + 1; j < len(line); j++ {
		switch line[j] {
		case '\\':
			j++
		case q:
			return j + 1, true
		}
	}
	return len(line), false
}

// regexAfter reports whether a / after the code character last starts a
// regular expression literal rather than a division.
func regexAfter(last byte) bool {
	switch last {
	case 0, '(', ',', '=', ':', '[', '!', '&', '|', '?', '{', '}', ';', '+', '-', '*', '%', '<', '>', '~', '^':
		return true
	}
	return false
}

// skipRegex returns the index after the regular expression literal at i
// (its flags included), or the end of the line.
func skipRegex(line string, i int) int {
	class := false
	for j := i + 1; j < len(line); j++ {
		switch c := line[j]; {
		case c == '\\':
			j++
		case c == '[':
			class = true
		case c == ']':
			class = false
		case c == '/' && !class:
			j++
			for j < len(line) && identByte(line[j]) {
				j++
			}
			return j
		}
	}
	return len(line)
}
