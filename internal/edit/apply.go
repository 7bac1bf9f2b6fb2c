package edit

import (
	"fmt"
	"strings"
)

// Result describes how one block was applied. StartLine and EndLine are
// the 1-based first and last lines its FIND matched, in the text the block
// was applied to (the file as changed by the blocks before it).
type Result struct {
	Block     int       `json:"block"`
	Match     MatchKind `json:"match"`
	StartLine int       `json:"start_line"`
	EndLine   int       `json:"end_line"`
}

// Apply applies blocks to content in order, each to the text as changed by
// the blocks before it, and returns the new content and one Result per
// block.
//
// It is all or nothing: if any block fails, Apply returns content
// unchanged, the Results of the blocks that matched before the failing
// one, and an error naming the failing block: *ElisionError (checked for
// every block before anything else), *NotFoundError, *AmbiguousError, or
// ErrEmptyFind wrapped. Apply never writes; callers write through
// internal/safewrite.
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

// apply finds one block's FIND, exactly or else with whitespace
// normalised, and replaces it.
func (t *text) apply(n int, b Block) (Result, error) {
	find := t.blockLines(b.Find)
	repl := t.blockLines(b.Replace)
	if isBlank(find) {
		return Result{}, fmt.Errorf("edit block %d: %w", n, ErrEmptyFind)
	}
	switch starts := t.exactMatches(find); len(starts) {
	case 1:
		t.replace(starts[0], find, repl, repl)
		return result(n, Exact, starts[0], len(find)), nil
	case 0:
	default:
		return Result{}, &AmbiguousError{Block: n, Match: Exact, Lines: oneBased(starts)}
	}
	core, lead, trail := trimBlankEdges(find)
	repl = trimBlankUpTo(repl, lead, trail)
	switch starts := t.normMatches(core); len(starts) {
	case 1:
		s := starts[0]
		t.replace(s, core, repl, t.reindent(core, t.lines(s, s+len(core)), repl))
		return result(n, Whitespace, s, len(core)), nil
	case 0:
		return Result{}, &NotFoundError{Block: n, Find: b.Find, Closest: t.closest(find)}
	default:
		return Result{}, &AmbiguousError{Block: n, Match: Whitespace, Lines: oneBased(starts)}
	}
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
func (t *text) replace(start int, find, repl, out []string) {
	pre := 0
	for pre < len(find) && pre < len(repl) && find[pre] == repl[pre] {
		pre++
	}
	suf := 0
	for suf < len(find)-pre && suf < len(repl)-pre && find[len(find)-1-suf] == repl[len(repl)-1-suf] {
		suf++
	}
	t.splice(start+pre, start+len(find)-suf, out[pre:len(out)-suf])
}

func result(n int, kind MatchKind, start, size int) Result {
	return Result{Block: n, Match: kind, StartLine: start + 1, EndLine: start + size}
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
