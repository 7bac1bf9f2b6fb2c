package edit

import (
	"fmt"
	"strings"
)

// Result describes how one block was applied. StartLine and EndLine are
// the 1-based first and last lines its FIND matched, in the text the block
// was applied to (the file as changed by the blocks before it).
//
// Match says which comparison found the place. Loose lists every way the
// FIND as written differed from those lines (whitespace, indentation,
// line-number prefixes); it is empty for a FIND that is in the file as
// written. Callers show loose matches to the person reviewing the change
// (see LooseMatches and Result.String).
type Result struct {
	Block     int         `json:"block"`
	Status    Status      `json:"status,omitempty"`
	Match     MatchKind   `json:"match"`
	StartLine int         `json:"start_line"`
	EndLine   int         `json:"end_line"`
	Loose     []Loosening `json:"loose,omitempty"`
}

// Apply applies blocks to content in order, each to the text as changed by
// the blocks before it, and returns the new content and one Result per
// block.
//
// It is all or nothing: if any block fails, Apply returns content
// unchanged, the Results of the blocks that matched before the failing
// one, and an error naming the failing block: *ElisionError (checked for
// every block before anything else), *NotFoundError, *AmbiguousError,
// *IndentError, or ErrEmptyFind wrapped. Apply never writes; callers
// write through internal/safewrite.
func Apply(content string, blocks []Block) (string, []Result, error) {
	if err := CheckElision(blocks); err != nil {
		return content, nil, err
	}
	t := newText(content)
	results := make([]Result, 0, len(blocks))
	for i, b := range blocks {
		r, err := t.apply(blockNumber(b, i), b)
		if err != nil {
			return content, results, err
		}
		results = append(results, r)
	}
	return t.String(), results, nil
}

// blockNumber is the number errors use for blocks[i]: its N from the
// reply, or its position when it was built by hand.
func blockNumber(b Block, i int) int {
	if b.N > 0 {
		return b.N
	}
	return i + 1
}

// apply finds one block's FIND and replaces it: as written, exactly or
// else with whitespace normalised, and only if that finds nothing and
// every FIND line carries a line-number prefix, with the prefixes
// removed.
func (t *text) apply(n int, b Block) (Result, error) {
	find := t.blockLines(b.Find)
	repl := t.blockLines(b.Replace)
	if isBlank(find) {
		return Result{}, fmt.Errorf("edit block %d: %w", n, ErrEmptyFind)
	}
	r, found, err := t.locate(n, find, repl)
	if found || err != nil {
		return r, err
	}
	if sf, sr, stripped, ok := stripNumbers(find, repl); ok {
		r, found, err := t.locate(n, sf, sr)
		if found {
			r.Loose = append([]Loosening{{Kind: LineNumbers, Lines: stripped}}, r.Loose...)
		}
		if found || err != nil {
			return r, err
		}
		find = sf // closer to the file, so a better guess at what was meant
	}
	return Result{}, &NotFoundError{Block: n, Find: b.Find, Closest: t.closest(find)}
}

// locate finds find exactly, or else with whitespace normalised, and
// replaces it with repl. found is false, with no error, when neither
// finds anything.
func (t *text) locate(n int, find, repl []string) (r Result, found bool, err error) {
	switch starts := t.exactMatches(find); len(starts) {
	case 1:
		changed := t.replace(starts[0], find, repl, repl)
		return result(n, Exact, starts[0], len(find), changed, nil), true, nil
	case 0:
	default:
		return Result{}, false, t.ambiguous(n, Exact, starts, len(find))
	}
	core, lead, trail := trimBlankEdges(find)
	repl = trimBlankUpTo(repl, lead, trail)
	switch starts := t.normMatches(core); len(starts) {
	case 1:
		s := starts[0]
		file := t.lines(s, s+len(core))
		out, indent, uneven := t.reindent(core, file, repl)
		if len(uneven) > 0 {
			for i := range uneven {
				uneven[i] += lead + 1 // 1-based lines of FIND as written
			}
			return Result{}, false, &IndentError{Block: n, Lines: t.numbered(s, s+len(core)), Uneven: uneven}
		}
		changed := t.replace(s, core, repl, out)
		loose := append(indent, whitespaceLoosenings(core, file, lead+trail)...)
		return result(n, Whitespace, s, len(core), changed, loose), true, nil
	case 0:
		return Result{}, false, nil
	default:
		return Result{}, false, t.ambiguous(n, Whitespace, starts, len(core))
	}
}

// ambiguousShown is how many matches an *AmbiguousError shows the lines
// of, and ambiguousLines how many lines it shows for each.
const (
	ambiguousShown = 3
	ambiguousLines = 16
)

// ambiguous builds the error for a FIND of size lines found at starts,
// with the file around the first few matches.
func (t *text) ambiguous(n int, kind MatchKind, starts []int, size int) error {
	e := &AmbiguousError{Block: n, Match: kind, Lines: oneBased(starts)}
	for _, s := range starts[:min(len(starts), ambiguousShown)] {
		from := max(0, s-closestContext)
		to := min(t.len(), s+size+closestContext, from+ambiguousLines)
		e.Context = append(e.Context, t.numbered(from, to))
	}
	return e
}

// numbered returns lines [from, to) with their 1-based numbers.
func (t *text) numbered(from, to int) []NumberedLine {
	lines := make([]NumberedLine, 0, to-from)
	for i := from; i < to; i++ {
		lines = append(lines, NumberedLine{Line: i + 1, Text: t.line(i)})
	}
	return lines
}

// blockLines splits a block's text into lines. In a file that starts with
// a byte-order mark, a model may copy the mark into its first line; it is
// not part of any line Apply matches, so it is dropped.
func (t *text) blockLines(s string) []string {
	if t.bom {
		s = strings.TrimPrefix(s, bom)
	}
	return splitBlockLines(s)
}

// replace puts out in place of the len(find) lines at start. Lines at the
// start and end that the model repeated unchanged from FIND to REPLACE
// (compared as the model wrote them, in repl) are context: the file's own
// bytes for them are kept, so a whitespace match does not rewrite them.
// It reports whether the text changed: a replacement equal to the lines
// it replaces leaves them alone, line endings included.
func (t *text) replace(start int, find, repl, out []string) bool {
	pre := 0
	for pre < len(find) && pre < len(repl) && find[pre] == repl[pre] {
		pre++
	}
	suf := 0
	for suf < len(find)-pre && suf < len(repl)-pre && find[len(find)-1-suf] == repl[len(repl)-1-suf] {
		suf++
	}
	from, to, lines := start+pre, start+len(find)-suf, out[pre:len(out)-suf]
	if t.equal(from, to, lines) {
		return false
	}
	t.splice(from, to, lines)
	return true
}

// equal reports whether lines [from, to) are lines.
func (t *text) equal(from, to int, lines []string) bool {
	if to-from != len(lines) {
		return false
	}
	for i, l := range lines {
		if t.line(from+i) != l {
			return false
		}
	}
	return true
}

func result(n int, kind MatchKind, start, size int, changed bool, loose []Loosening) Result {
	status := Applied
	if !changed {
		status = NoChange
	}
	return Result{Block: n, Status: status, Match: kind, StartLine: start + 1, EndLine: start + size, Loose: loose}
}

func oneBased(starts []int) []int {
	lines := make([]int, len(starts))
	for i, s := range starts {
		lines[i] = s + 1
	}
	return lines
}

// trimBlankUpTo drops up to lead blank lines from the start of lines and
// up to trail from the end: the blank lines a model put around FIND are
// usually repeated around REPLACE and must go with them.
func trimBlankUpTo(lines []string, lead, trail int) []string {
	for lead > 0 && len(lines) > 0 && isBlank(lines[:1]) {
		lines, lead = lines[1:], lead-1
	}
	for trail > 0 && len(lines) > 0 && isBlank(lines[len(lines)-1:]) {
		lines, trail = lines[:len(lines)-1], trail-1
	}
	return lines
}
