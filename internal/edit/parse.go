package edit

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/azero-dev/azero/internal/lazyre"
)

// Block is one edit: replace the whole lines Find with the whole lines
// Replace. Find and Replace hold whole lines, each ending in "\n" (the
// reply's line endings do not matter); an empty Replace deletes the lines.
type Block struct {
	// N is the block's 1-based position in the reply. Errors name blocks
	// by N because that is how the model can find them again.
	N int `json:"n"`
	// Description is the text of the "### CHANGE n: ..." heading, if any.
	Description string `json:"description,omitempty"`
	// Path is the file name written before a SEARCH/REPLACE block, if
	// any. Callers that apply a reply to one file can check it.
	Path    string `json:"path,omitempty"`
	Find    string `json:"find"`
	Replace string `json:"replace"`
	// Line is the 1-based line of the reply where the block starts.
	Line int `json:"line"`
}

// ParseError says why a reply could not be read as edit blocks. Block is
// the 1-based number the malformed block would have had (0 when the reply
// holds no blocks at all) and Line the 1-based reply line where the problem
// was seen. Err, when set, is the sentinel for the kind of problem
// (ErrMarkerLength, ErrExtraDivider); errors.Is sees it.
type ParseError struct {
	Block  int    `json:"block"`
	Line   int    `json:"line"`
	Reason string `json:"reason"`
	Err    error  `json:"-"`
}

func (e *ParseError) Error() string {
	if e.Block == 0 {
		return "parse edit blocks: " + e.Reason
	}
	return fmt.Sprintf("parse edit block %d (reply line %d): %s", e.Block, e.Line, e.Reason)
}

func (e *ParseError) Unwrap() error { return e.Err }

// Sentinels a *ParseError may carry.
var (
	// ErrMarkerLength: a SEARCH, divider or REPLACE marker has fewer
	// marker characters than the least accepted (minMarker), in a reply
	// that meant it as one.
	ErrMarkerLength = errors.New("edit block marker too short")
	// ErrExtraDivider: a second ======= right before >>>>>>> REPLACE.
	ErrExtraDivider = errors.New("second divider before the REPLACE marker")
)

// The SEARCH/REPLACE markers have at least minMarker marker characters,
// and any number more: git writes 7, Cline 11, and models miscount. A
// shorter one (shortMarker or more) is reported where the reply meant it
// as a marker, since the block is one the model meant and mistyped; a
// line of one or two is prose.
const (
	minMarker   = 5
	shortMarker = 3
)

// usualDivider is the longest divider models commonly write (git's 7,
// miscounted). A longer line of '=' is a divider only when the block
// has no better one (see pickDivider), and right before the REPLACE
// marker it is content unless it repeats the block's divider: a reST
// heading underline.
const usualDivider = 9

const noBlocksReason = "no edit blocks found; write each change as " +
	"\"### CHANGE n: description\", then \"FIND:\" and a fenced code block, " +
	"then \"REPLACE WITH:\" and a fenced code block"

// headingRE matches "### CHANGE 2: description" and bold "**Change 2 -
// description**". A heading needs a "#" or "**" so that prose such as
// "Change 3 of these calls" is not taken for one.
var headingRE = lazyre.New(`(?i)^[ \t]*(?:#{1,6}[ \t]*(?:\*\*)?|\*\*)[ \t]*change[ \t]*#?[ \t]*(\d{1,9})[ \t]*(?:\*\*)?[ \t]*[:.)\-–—]?(.*)$`)

// Parse reads a model's reply into edit blocks, in reply order. It accepts
// the spec's format
//
//	### CHANGE 1: description
//	FIND:
//	```go
//	exact lines from the file
//	```
//	REPLACE WITH:
//	```go
//	new lines
//	```
//
// (any heading level, any fence language, fences of ``` or ~~~ of any
// length) and the widespread
//
//	<<<<<<< SEARCH
//	exact lines from the file
//	=======
//	new lines
//	>>>>>>> REPLACE
//
// optionally inside a code fence and after a file-name line. A reply may
// mix both formats. Prose between blocks is ignored. A malformed reply is a
// *ParseError; Parse never returns a partial list.
func Parse(reply string) ([]Block, error) {
	p := &parser{lines: splitReply(reply)}
	if err := p.run(); err != nil {
		return nil, err
	}
	if len(p.blocks) == 0 {
		// A reply whose only markers are too short meant them.
		for i, l := range p.lines {
			if (markers{indent: -1}).shortSearch(l) {
				return nil, p.markerError(i)
			}
		}
		return nil, &ParseError{Reason: noBlocksReason}
	}
	return p.blocks, nil
}

// parser walks the reply's lines once. Fences outside blocks are treated as
// prose, so a SEARCH/REPLACE block wrapped in ```python ... ``` is found.
type parser struct {
	lines   []string
	i       int // index of the next line to read
	blocks  []Block
	heading *pendingHeading
}

// pendingHeading is a CHANGE heading still waiting for its FIND.
type pendingHeading struct {
	line int
	num  int // the n of "CHANGE n"
	desc string
}

func (p *parser) run() error {
	outside := markers{indent: -1}
	for p.i < len(p.lines) {
		line := p.lines[p.i]
		var err error
		switch {
		case outside.search(line):
			err = p.searchBlock()
		case isFindLabel(line):
			err = p.findBlock()
		case isReplaceLabel(line):
			return p.errorf(p.i, "REPLACE WITH: has no FIND: before it; every change needs FIND: then REPLACE WITH:")
		case outside.replace(line):
			return p.errorf(p.i, ">>>>>>> REPLACE has no <<<<<<< SEARCH before it")
		case outside.shortSearch(line) && p.shortBlockAhead(p.i):
			return p.markerError(p.i)
		case headingRE().MatchString(line):
			err = p.startHeading(line)
		default:
			p.i++
		}
		if err != nil {
			return err
		}
	}
	return p.dropHeading()
}

// next is the number the next block will have.
func (p *parser) next() int { return len(p.blocks) + 1 }

// errorf builds a *ParseError for the next block at 0-based line idx.
func (p *parser) errorf(idx int, format string, args ...any) error {
	return &ParseError{Block: p.next(), Line: idx + 1, Reason: fmt.Sprintf(format, args...)}
}

func (p *parser) startHeading(line string) error {
	if err := p.dropHeading(); err != nil {
		return err
	}
	m := headingRE().FindStringSubmatch(line)
	num, _ := strconv.Atoi(m[1])
	desc := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(m[2]), "**"))
	p.heading = &pendingHeading{line: p.i, num: num, desc: desc}
	p.i++
	return nil
}

// dropHeading discards a CHANGE heading that no FIND followed. A heading
// for a change already given ("### Change 1: added the import" in a recap
// after the blocks) is prose; any other is a change the reply announced
// but never wrote, the shape of a reply cut off after its last heading.
func (p *parser) dropHeading() error {
	h := p.heading
	p.heading = nil
	if h == nil || h.num <= len(p.blocks) {
		return nil
	}
	return p.errorf(h.line, "CHANGE %d has no FIND: section after its heading (was the reply cut off?)", h.num)
}

// takeHeading returns the description of the pending heading and the
// 0-based line the block starts at.
func (p *parser) takeHeading(labelAt int) (desc string, start int) {
	if p.heading == nil {
		return "", labelAt
	}
	h := p.heading
	p.heading = nil
	return h.desc, h.line
}

// findBlock reads FIND: ```...``` [prose] REPLACE WITH: ```...```.
func (p *parser) findBlock() error {
	labelAt := p.i
	p.i++
	find, err := p.fencedAfter(labelAt, "FIND:")
	if err != nil {
		return err
	}
	if err := p.seekReplaceLabel(labelAt, find); err != nil {
		return err
	}
	replaceAt := p.i
	p.i++
	replace, err := p.fencedAfter(replaceAt, "REPLACE WITH:")
	if err != nil {
		return err
	}
	if isBlank(find) {
		return p.errorf(labelAt, "FIND: is empty; copy the exact lines to change from the file")
	}
	desc, start := p.takeHeading(labelAt)
	p.blocks = append(p.blocks, Block{
		N: p.next(), Description: desc, Line: start + 1,
		Find: joinLines(find), Replace: joinLines(replace),
	})
	return nil
}

// seekReplaceLabel moves to the REPLACE WITH: that belongs to the FIND at
// labelAt, skipping prose, and fails if another block starts first.
func (p *parser) seekReplaceLabel(labelAt int, find []string) error {
	for ; p.i < len(p.lines); p.i++ {
		line := p.lines[p.i]
		if isReplaceLabel(line) {
			return nil
		}
		if isFindLabel(line) || (markers{indent: -1}).search(line) || headingRE().MatchString(line) {
			break
		}
	}
	for _, l := range find {
		if isReplaceLabel(l) {
			return p.errorf(labelAt, "the code fence after FIND: is not closed before REPLACE WITH:")
		}
	}
	return p.errorf(labelAt, "FIND: has no REPLACE WITH: section after it")
}

// fencedAfter reads the fenced code block that must follow the label at
// labelAt, skipping blank lines.
func (p *parser) fencedAfter(labelAt int, label string) ([]string, error) {
	for p.i < len(p.lines) && strings.TrimSpace(p.lines[p.i]) == "" {
		p.i++
	}
	if p.i == len(p.lines) {
		return nil, p.errorf(labelAt, "%s is not followed by a fenced code block (was the reply cut off?)", label)
	}
	f, ok := openFence(p.lines[p.i])
	if !ok {
		return nil, p.errorf(p.i, "%s must be followed by a fenced code block starting with ```", label)
	}
	body, closeAt, ok := readFence(p.lines, p.i, f)
	if !ok {
		return nil, p.errorf(p.i, "unterminated %s fence after %s (was the reply cut off?)",
			strings.Repeat(string(f.char), f.size), label)
	}
	p.i = closeAt + 1
	return body, nil
}

// searchBlock reads <<<<<<< SEARCH ... ======= ... >>>>>>> REPLACE. A
// SEARCH marker indented (the block sits in a list item) sets the block's
// indentation: its divider and REPLACE marker may be indented as much or
// less, and that much indentation is taken off every line of the block,
// as CommonMark does for an indented fence. A block whose SEARCH marker
// starts its line takes only markers that start their lines, so an
// indented ======= in a docstring is content.
func (p *parser) searchBlock() error {
	markerAt := p.i
	m := markers{indent: leadingSpace(p.lines[markerAt])}
	size := runOf(strings.TrimSpace(p.lines[markerAt]), strings.TrimSpace(p.lines[markerAt])[0])
	path := p.pathBefore(markerAt)
	end := markerAt + 1
	for end < len(p.lines) && !m.search(p.lines[end]) && !m.replace(p.lines[end]) {
		end++
	}
	div := m.pickDivider(p.lines[markerAt+1:end], size)
	if div < 0 {
		return p.noDivider(markerAt, m, end)
	}
	div += markerAt + 1
	var find, replace []string
	for _, line := range p.lines[markerAt+1 : div] {
		find = append(find, m.content(line))
	}
	divSize := runOf(strings.TrimSpace(p.lines[div]), '=')
	for p.i = div + 1; ; p.i++ {
		if p.i == len(p.lines) || m.search(p.lines[p.i]) {
			return p.noReplaceMarker(markerAt, m, div+1)
		}
		line := p.lines[p.i]
		if m.replace(line) {
			break
		}
		if m.extraDivider(line, divSize) && p.replaceMarkerNext(m, p.i+1) {
			e := p.errorf(p.i, "a second ======= comes right before >>>>>>> REPLACE; a block has one ======= line, between the lines to find and their replacement")
			e.(*ParseError).Err = ErrExtraDivider
			return e
		}
		replace = append(replace, m.content(line))
	}
	p.i++
	find = dropStartLine(find)
	if isBlank(find) {
		return p.errorf(markerAt, "SEARCH section is empty; copy the exact lines to change from the file")
	}
	desc, start := p.takeHeading(markerAt)
	p.blocks = append(p.blocks, Block{
		N: p.next(), Description: desc, Path: path, Line: start + 1,
		Find: joinLines(find), Replace: joinLines(replace),
	})
	return nil
}

// pickDivider returns the index in lines (the block after its SEARCH
// marker, up to its REPLACE marker) of the block's divider, or -1. A
// line of '=' may be content (a reST heading underline), so when several
// could divide, the first as long as the SEARCH marker (size) wins, as
// the model wrote its markers alike; then the first of a usual length;
// then the first.
func (m markers) pickDivider(lines []string, size int) int {
	usual, first := -1, -1
	for i, l := range lines {
		if !m.divider(l) {
			continue
		}
		n := runOf(strings.TrimSpace(l), '=')
		if n == size {
			return i
		}
		if usual < 0 && n <= usualDivider {
			usual = i
		}
		if first < 0 {
			first = i
		}
	}
	if usual >= 0 {
		return usual
	}
	return first
}

// startLineRE matches the ":start_line:12" (or ":end_line:14") line some
// agents' edit format puts at the top of a SEARCH section, before a
// "-------" line.
var startLineRE = lazyre.New(`^:(?:start|end)_line:[ \t]*[0-9]+[ \t]*$`)

// dropStartLine removes a ":start_line:N" header (and its ":end_line:N"
// and "-------" separator) from the top of a SEARCH section: it names
// where the lines are, it is not one of them. Only the whole header, with
// its separator, is removed.
func dropStartLine(find []string) []string {
	i := 0
	for i < len(find) && i < 2 && startLineRE().MatchString(strings.TrimSpace(find[i])) {
		i++
	}
	if i == 0 || i == len(find) || !markerLine(strings.TrimSpace(find[i]), '-', "", minMarker, -1) {
		return find
	}
	return find[i+1:]
}

// replaceMarkerNext reports whether the first non-blank line from j on is
// a REPLACE marker of the block.
func (p *parser) replaceMarkerNext(m markers, j int) bool {
	for j < len(p.lines) && strings.TrimSpace(p.lines[j]) == "" {
		j++
	}
	return j < len(p.lines) && m.replace(p.lines[j])
}

// noDivider is the error for a SEARCH at markerAt whose section ended at
// end without a divider; a divider too short in it is named.
func (p *parser) noDivider(markerAt int, m markers, end int) error {
	for k := markerAt + 1; k < end; k++ {
		if l, ok := m.at(p.lines[k]); ok && markerLine(l, '=', "", shortMarker, minMarker-1) {
			return p.markerError(k)
		}
	}
	return p.errorf(markerAt, "<<<<<<< SEARCH has no ======= line after it")
}

// noReplaceMarker is the error for a SEARCH at markerAt whose replacement,
// from line from, ended without a REPLACE marker; a REPLACE marker too
// short in it is named.
func (p *parser) noReplaceMarker(markerAt int, m markers, from int) error {
	for k := from; k < p.i; k++ {
		if m.shortReplace(p.lines[k]) {
			return p.markerError(k)
		}
	}
	return p.errorf(markerAt, "SEARCH block has no >>>>>>> REPLACE line to end it (was the reply cut off?)")
}

// shortBlockAhead reports whether the short SEARCH marker at idx starts a
// block the model meant: a REPLACE marker, short or not, follows it before
// any other SEARCH marker.
func (p *parser) shortBlockAhead(idx int) bool {
	m := markers{indent: -1}
	for _, l := range p.lines[idx+1:] {
		switch {
		case m.search(l) || m.shortSearch(l):
			return false
		case m.replace(l) || m.shortReplace(l):
			return true
		}
	}
	return false
}

// markerError names the marker at line idx that is too short.
func (p *parser) markerError(idx int) error {
	line := strings.TrimSpace(p.lines[idx])
	c := line[0]
	want := map[byte]string{'<': "<<<<<<< SEARCH", '-': "------- SEARCH", '=': "=======", '>': ">>>>>>> REPLACE", '+': "+++++++ REPLACE"}[c]
	e := p.errorf(idx, "the marker %q has %d %q characters, fewer than the %d a marker needs; write %s",
		line, runOf(line, c), string(c), minMarker, want)
	e.(*ParseError).Err = ErrMarkerLength
	return e
}

// pathBefore returns the file name written just before the SEARCH marker
// at idx (possibly with a fence opener between), or "".
func (p *parser) pathBefore(idx int) string {
	j := p.prevNonBlank(idx - 1)
	if j >= 0 {
		if _, ok := openFence(p.lines[j]); ok {
			j = p.prevNonBlank(j - 1)
		}
	}
	if j < 0 {
		return ""
	}
	return pathLike(p.lines[j])
}

func (p *parser) prevNonBlank(j int) int {
	for j >= 0 && strings.TrimSpace(p.lines[j]) == "" {
		j--
	}
	return j
}

// pathLike returns line as a file name if it looks like one: a single
// word, perhaps in backticks or bold, after "#"s or "File:", that has a
// slash, or a dot followed by an extension with a letter in it. Prose of one word ("Done.",
// "etc.", "...", "v2.0") is not a file name.
func pathLike(line string) string {
	s := strings.TrimSuffix(strings.TrimSpace(line), ":")
	s = strings.TrimSpace(strings.TrimLeft(s, "#")) // "### calc.py"
	s = strings.Trim(s, "*`")
	s = strings.TrimSuffix(s, ":")
	if label, rest, ok := strings.Cut(s, ":"); ok && slices.Contains([]string{"file", "filename", "path"}, strings.ToLower(strings.Trim(label, "*` "))) {
		s = strings.Trim(strings.TrimSpace(rest), "*`") // "File: `calc.py`"
	}
	if s == "" || len(s) > 255 || strings.ContainsAny(s, " \t<>=#`*\"'") || strings.HasSuffix(s, ".") {
		return ""
	}
	if strings.Contains(s, "/") {
		if !strings.ContainsFunc(s, isAlnum) {
			return ""
		}
		return s
	}
	dot := strings.LastIndexByte(s, '.')
	if dot < 0 || !isExtension(s[dot+1:]) {
		return ""
	}
	return s
}

// isExtension reports whether s can be a file name extension: up to 16
// letters, digits, '_', '-' or '+', at least one of them a letter.
func isExtension(s string) bool {
	if s == "" || len(s) > 16 {
		return false
	}
	letter := false
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			letter = true
		case c >= '0' && c <= '9', c == '_', c == '-', c == '+':
		default:
			return false
		}
	}
	return letter
}

func isAlnum(c rune) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// label normalises a label line: "**FIND:**", "#### Find:", "FIND" and
// "FIND (lines 10-12):" all become "FIND". colon reports whether the
// label ended in a colon.
func label(line string) (name string, colon bool) {
	s := strings.TrimSpace(line)
	if len(s) > 40 {
		return "", false
	}
	s = strings.TrimLeft(s, "# \t")
	s = strings.Trim(s, "*_ \t")
	colon = strings.HasSuffix(s, ":")
	s = strings.TrimSpace(strings.TrimSuffix(s, ":"))
	if open := strings.IndexByte(s, '('); open > 0 && strings.HasSuffix(s, ")") {
		s = s[:open] // a note on the label: "(lines 10-12)", "(exact)"
	}
	return strings.Join(strings.Fields(strings.ToUpper(s)), " "), colon
}

func isFindLabel(line string) bool {
	name, _ := label(line)
	return name == "FIND"
}

func isReplaceLabel(line string) bool {
	name, colon := label(line)
	return name == "REPLACE WITH" || (name == "REPLACE" && colon)
}

// markers recognises the SEARCH/REPLACE markers of one block. A marker
// may be indented by up to indent bytes of spaces and tabs (any amount
// when indent is negative, outside blocks).
type markers struct{ indent int }

// at returns line without its indentation, and false when it is indented
// more than a marker of the block may be.
func (m markers) at(line string) (string, bool) {
	n := leadingSpace(line)
	if m.indent >= 0 && n > m.indent {
		return "", false
	}
	return line[n:], true
}

// content is a line of the block without the block's indentation.
func (m markers) content(line string) string {
	if m.indent <= 0 {
		return line
	}
	return line[min(leadingSpace(line), m.indent):]
}

// search: "<<<<<<< SEARCH", or "------- SEARCH" as some agents write it.
func (m markers) search(line string) bool {
	l, ok := m.at(line)
	return ok && (markerLine(l, '<', "SEARCH", minMarker, -1) || markerLine(l, '-', "SEARCH", minMarker, -1))
}

// replace: ">>>>>>> REPLACE", or "+++++++ REPLACE".
func (m markers) replace(line string) bool {
	l, ok := m.at(line)
	return ok && (markerLine(l, '>', "REPLACE", minMarker, -1) || markerLine(l, '+', "REPLACE", minMarker, -1))
}

func (m markers) divider(line string) bool {
	l, ok := m.at(line)
	return ok && markerLine(l, '=', "", minMarker, -1)
}

// extraDivider reports whether line, right before the REPLACE marker of
// a block whose divider has size '=', is that divider repeated: as long,
// or of a usual length. A longer line of '=' there is a heading's
// underline.
func (m markers) extraDivider(line string, size int) bool {
	l, ok := m.at(line)
	return ok && (markerLine(l, '=', "", minMarker, usualDivider) || markerLine(l, '=', "", size, size))
}

// shortSearch and shortReplace report a SEARCH or REPLACE marker with
// too few marker characters ("<<<< SEARCH").
func (m markers) shortSearch(line string) bool {
	l, ok := m.at(line)
	return ok && (markerLine(l, '<', "SEARCH", shortMarker, minMarker-1) || markerLine(l, '-', "SEARCH", shortMarker, minMarker-1))
}

func (m markers) shortReplace(line string) bool {
	l, ok := m.at(line)
	return ok && (markerLine(l, '>', "REPLACE", shortMarker, minMarker-1) || markerLine(l, '+', "REPLACE", shortMarker, minMarker-1))
}

// markerLine reports whether line is a run of lo to hi (no limit if
// negative) c characters followed by word (or word and ">", as some
// agents write it), spaces aside.
func markerLine(line string, c byte, word string, lo, hi int) bool {
	n := runOf(line, c)
	if n < lo || (hi >= 0 && n > hi) {
		return false
	}
	rest := strings.TrimRight(line[n:], " \t")
	if word == "" {
		return rest == ""
	}
	rest = strings.TrimLeft(rest, " ")
	return rest == word || rest == word+">"
}

// isBlank reports whether every line is empty or whitespace.
func isBlank(lines []string) bool {
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			return false
		}
	}
	return true
}
