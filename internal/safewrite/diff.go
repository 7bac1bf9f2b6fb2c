package safewrite

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
	"github.com/aymanbagabas/go-udiff/myers"

	"github.com/azero-dev/azero/internal/eol"
	"github.com/azero-dev/azero/internal/iostreams"
)

// MaxDiffBytes caps the diff shown and stored in a Proposal (spec #173:
// "limit diff generation to 10KB").
const MaxDiffBytes = 10 * 1024

// myersBudget bounds the memory of one Myers run below the spec's 10 MB
// for a diff: the algorithm keeps one vector of 2(N+M)+1 ints per edit
// step, so a total rewrite of a large file would need gigabytes. Within
// the budget the diff is minimal; beyond it (when a large part of a large
// file changed, where minimality matters little) udiff's bounded LCS is
// used.
const myersBudget = 8 << 20

// diffStats are the changed lines of a diff.
type diffStats struct {
	Added, Deleted int
}

// lineEdits computes line edits turning before into after: Myers edits on
// the part between the common first and last lines.
func lineEdits(before, after string) []udiff.Edit {
	if eol.HasLoneCR(before) || eol.HasLoneCR(after) {
		return tokenLineEdits(before, after)
	}
	return lfLineEdits(before, after)
}

// lfLineEdits is lineEdits for text whose lines all end in "\n" (or
// "\r\n"), the line splitting of the diff algorithms.
func lfLineEdits(before, after string) []udiff.Edit {
	prefix := commonPrefixLines(before, after)
	b, a := before[prefix:], after[prefix:]
	suffix := commonSuffixLines(b, a)
	b, a = b[:len(b)-suffix], a[:len(a)-suffix]
	if b == "" && a == "" {
		return nil
	}
	var edits []udiff.Edit
	if lcs := udiff.Lines(b, a); myersCost(b, a, lcs) <= myersBudget {
		edits = myers.ComputeEdits(b, a)
	} else {
		edits = lcs
	}
	for i := range edits {
		edits[i].Start += prefix
		edits[i].End += prefix
	}
	return edits
}

// tokenLineEdits is lineEdits for text with lines ending in a lone "\r",
// which the diff algorithms would take for one long line: every distinct
// line becomes a short token line, the tokens are diffed, and the edits
// are mapped back to the lines they stand for.
func tokenLineEdits(before, after string) []udiff.Edit {
	ids := map[string]int{}
	var texts []string // by id
	tokenize := func(s string) (string, []int) {
		lines := eol.SplitKeepString(s)
		var b strings.Builder
		starts := make([]int, 0, len(lines)+1) // of each line in s, then len(s)
		at := 0
		for _, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = len(texts)
				ids[l] = id
				texts = append(texts, l)
			}
			b.WriteString(strconv.Itoa(id))
			b.WriteByte('\n')
			starts = append(starts, at)
			at += len(l)
		}
		return b.String(), append(starts, at)
	}
	tb, bStarts := tokenize(before)
	ta, _ := tokenize(after)
	tbStarts := eol.LineStarts(tb)
	edits := lfLineEdits(tb, ta)
	for i, e := range edits {
		// Edits are line-aligned: their ends are token line starts.
		e.Start = bStarts[sort.SearchInts(tbStarts, e.Start)]
		e.End = bStarts[sort.SearchInts(tbStarts, e.End)]
		var text strings.Builder
		for _, tok := range eol.SplitKeepString(e.New) {
			id, _ := strconv.Atoi(strings.TrimSuffix(tok, "\n"))
			text.WriteString(texts[id])
		}
		e.New = text.String()
		edits[i] = e
	}
	return edits
}

// myersCost estimates the bytes Myers needs: (D+1) vectors of 2(N+M)+1
// ints, with D at most the edit count the LCS found.
func myersCost(b, a string, lcs []udiff.Edit) int {
	n := strings.Count(b, "\n") + strings.Count(a, "\n") + 2
	d := 0
	for _, e := range lcs {
		d += strings.Count(b[e.Start:e.End], "\n") + strings.Count(e.New, "\n") + 1
	}
	return (d + 1) * (2*n + 1) * 8
}

// commonPrefixLines returns the length of the longest common prefix of a
// and b that ends at a line boundary.
func commonPrefixLines(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i == len(a) && i == len(b) {
		return i
	}
	return strings.LastIndexByte(a[:i], '\n') + 1
}

// commonSuffixLines returns the length of the longest common suffix made
// of whole lines.
func commonSuffixLines(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	if i == len(a) && i == len(b) {
		return i
	}
	// The suffix must start right after a newline in both.
	for i > 0 {
		sa, sb := len(a)-i, len(b)-i
		if (sa == 0 || a[sa-1] == '\n') && (sb == 0 || b[sb-1] == '\n') {
			return i
		}
		i--
	}
	return 0
}

// unifiedDiff renders before -> after as a unified diff with 3 lines of
// context, capped at MaxDiffBytes with a note saying what was cut.
func unifiedDiff(label string, existed bool, before, after []byte) (string, diffStats) {
	b := string(before)
	edits := lineEdits(b, string(after))
	from := "a/" + label
	if !existed {
		from = "/dev/null"
	}
	return renderUnified(from, "b/"+label, b, edits, udiff.DefaultContextLines, MaxDiffBytes)
}

// renderUnified writes line-aligned edits of before as a unified diff.
// udiff.ToUnified would do, but it counts newlines from the start of the
// text for every edit (quadratic on large files with many changes) and
// builds the whole diff before the cap applies; this pass is linear and
// stops writing at limit bytes, only counting what it leaves out.
func renderUnified(from, to, before string, edits []udiff.Edit, context, limit int) (string, diffStats) {
	var st diffStats
	if len(edits) == 0 {
		return "", st
	}
	starts := eol.LineStarts(before)
	nLines := len(starts) - 1
	lineOf := func(off int) int { // index of the line starting at off
		return sort.SearchInts(starts, off)
	}
	type change struct {
		from, to int      // deleted lines before[from:to]
		ins      []string // inserted lines
	}
	changes := make([]change, 0, len(edits))
	for _, e := range edits {
		c := change{from: lineOf(e.Start), to: lineOf(e.End), ins: eol.SplitKeepString(e.New)}
		st.Deleted += c.to - c.from
		st.Added += len(c.ins)
		changes = append(changes, c)
	}
	line := func(i int) string { return before[starts[i]:starts[i+1]] }

	out := &cappedWriter{limit: limit}
	fmt.Fprintf(out, "--- %s\n+++ %s\n", from, to)
	delta := 0 // lines added minus lines deleted before the current hunk
	for i := 0; i < len(changes); {
		j := i // the hunk takes changes[i..j]
		for j+1 < len(changes) && changes[j+1].from-changes[j].to <= 2*context {
			j++
		}
		hFrom := max(changes[i].from-context, 0)
		hTo := min(changes[j].to+context, nLines)
		fromCount, toCount := hTo-hFrom, hTo-hFrom
		for _, c := range changes[i : j+1] {
			toCount += len(c.ins) - (c.to - c.from)
		}
		fmt.Fprintf(out, "@@ -%s +%s @@\n", hunkRange(hFrom, fromCount), hunkRange(hFrom+delta, toCount))
		at := hFrom
		for _, c := range changes[i : j+1] {
			for ; at < c.from; at++ {
				out.line(' ', line(at))
			}
			for ; at < c.to; at++ {
				out.line('-', line(at))
			}
			for _, l := range c.ins {
				out.line('+', l)
			}
			delta += len(c.ins) - (c.to - c.from)
		}
		for ; at < hTo; at++ {
			out.line(' ', line(at))
		}
		i = j + 1
	}
	return out.String(), st
}

// hunkRange renders one side of a hunk header the way GNU diff does: an
// empty range names the line before it.
func hunkRange(start, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}

// cappedWriter keeps the first limit bytes, cut at a line end, and counts
// the rest.
type cappedWriter struct {
	limit     int
	b         strings.Builder
	full      bool
	restBytes int
	restLines int
}

func (w *cappedWriter) Write(p []byte) (int, error) {
	w.add(string(p))
	return len(p), nil
}

func (w *cappedWriter) add(s string) {
	if !w.full && w.b.Len()+len(s) <= w.limit {
		w.b.WriteString(s)
		return
	}
	w.full = true
	w.restBytes += len(s)
	w.restLines += strings.Count(s, "\n")
}

// line writes one diff line; a line without a line ending gets GNU's
// marker. A line ending in a lone "\r" is kept whole and given a "\n", so
// the diff still has one line per line.
func (w *cappedWriter) line(op byte, text string) {
	switch {
	case strings.HasSuffix(text, "\n"):
		w.add(string(op) + text)
	case strings.HasSuffix(text, "\r"):
		w.add(string(op) + text + "\n")
	default:
		w.add(string(op) + text + "\n\\ No newline at end of file\n")
	}
}

func (w *cappedWriter) String() string {
	if !w.full {
		return w.b.String()
	}
	return w.b.String() + fmt.Sprintf("... diff truncated at %d KB: %d more bytes (%d more lines) not shown\n",
		w.limit/1024, w.restBytes, w.restLines)
}

// ColorDiff colours a unified diff for the terminal: deletions red,
// additions green, hunk headers cyan, file headers bold. With colour off it
// returns diff unchanged.
func ColorDiff(cs iostreams.ColorScheme, diff string) string {
	if !cs.Enabled() || diff == "" {
		return diff
	}
	lines := strings.SplitAfter(diff, "\n")
	var b strings.Builder
	for _, l := range lines {
		body, nl := strings.CutSuffix(l, "\n")
		if strings.HasPrefix(body, "... diff truncated") {
			b.WriteString(cs.Yellow(body))
		} else {
			b.WriteString(cs.DiffLine(body))
		}
		if nl {
			b.WriteByte('\n')
		}
	}
	return b.String()
}
