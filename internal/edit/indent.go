package edit

import "strings"

// reindent shifts the replacement's indentation after a whitespace match
// so it lines up with the file: find and file are the FIND lines and the
// file lines they matched, pair by pair.
//
// When reply and file indent alike (both tabs or both spaces) and one
// indentation prefix explains every pair (the model dropped or added the
// same leading whitespace on each line, the usual case), that prefix is
// added to or removed from each replacement line, which keeps the bytes
// the model wrote. Otherwise (spaces in the reply and tabs in the file, or
// another width) each line is rebuilt in the file's style from its
// nesting level.
func (t *text) reindent(find, file, repl []string) []string {
	if !t.styleDiffers(find, file, repl) {
		if add, remove, ok := prefixShift(find, file); ok {
			return shiftByPrefix(repl, add, remove)
		}
	}
	return t.shiftByLevel(find, file, repl)
}

// styleDiffers reports whether the reply indents with tabs where the file
// uses spaces or the other way round. Then even a FIND whose lines are
// not indented at all (so that no prefix is missing) gets its
// replacement rebuilt in the file's style.
func (t *text) styleDiffers(find, file, repl []string) bool {
	model, ok := detectUnit(append(append([]string(nil), find...), repl...))
	return ok && model.tabs != t.unitOf(file).tabs
}

// prefixShift finds the one prefix that, added to (add) or removed from
// (remove) the indentation of every non-blank FIND line, gives the file's.
func prefixShift(find, file []string) (add, remove string, ok bool) {
	seen := false
	for i, f := range find {
		if strings.TrimSpace(f) == "" {
			continue
		}
		fi, gi := indentOf(f), indentOf(file[i])
		var a, r string
		switch {
		case strings.HasSuffix(gi, fi):
			a = gi[:len(gi)-len(fi)]
		case strings.HasSuffix(fi, gi):
			r = fi[:len(fi)-len(gi)]
		default:
			return "", "", false
		}
		if seen && (a != add || r != remove) {
			return "", "", false
		}
		add, remove, seen = a, r, true
	}
	return add, remove, true
}

func shiftByPrefix(repl []string, add, remove string) []string {
	if add == "" && remove == "" {
		return repl
	}
	out := make([]string, len(repl))
	for i, l := range repl {
		switch {
		case strings.TrimSpace(l) == "":
			out[i] = l
		case add != "":
			out[i] = add + l
		case strings.HasPrefix(l, remove):
			out[i] = l[len(remove):]
		default:
			out[i] = l[min(len(remove), leadingSpace(l)):]
		}
	}
	return out
}

// unit is an indentation style: one tab per level, or width spaces.
type unit struct {
	tabs  bool
	width int
}

// level splits an indentation into whole levels and leftover alignment
// columns.
func (u unit) level(indent string) (level, rem int) {
	if u.tabs {
		level = runOf(indent, '\t')
		return level, len(indent) - level
	}
	w := max(u.width, 1) // never divide by zero, whatever the input
	cols := u.columns(indent)
	return cols / w, cols % w
}

// columns is the width of an indentation, a tab counting as one unit.
func (u unit) columns(indent string) int {
	cols := 0
	for _, c := range []byte(indent) {
		if c == '\t' {
			cols += u.width
		} else {
			cols++
		}
	}
	return cols
}

func (u unit) indent(level, rem int) string {
	if u.tabs {
		return strings.Repeat("\t", level) + strings.Repeat(" ", rem)
	}
	return strings.Repeat(" ", level*u.width+rem)
}

// shiftByLevel re-indents repl in the file's style. A replacement line
// indented exactly like some FIND line gets the indentation of the file
// line that FIND line matched, which keeps alignment spaces the level
// arithmetic cannot know about. Any other line is written level by level:
// the first non-blank FIND line fixes how many levels the reply is off by,
// and the line goes at its own level plus that offset in the file's unit.
func (t *text) shiftByLevel(find, file, repl []string) []string {
	fileUnit := t.unitOf(file)
	modelUnit := modelUnitOf(find, file, repl, fileUnit)
	first := firstNonBlank(find)
	fileLevel, _ := fileUnit.level(indentOf(file[first]))
	findLevel, _ := modelUnit.level(indentOf(find[first]))
	offset := fileLevel - findLevel
	seen := indentPairs(find, file)
	out := make([]string, len(repl))
	for i, l := range repl {
		ind := indentOf(l)
		switch fileInd, ok := seen[ind]; {
		case strings.TrimSpace(l) == "":
			out[i] = l
		case ok:
			out[i] = fileInd + l[len(ind):]
		default:
			level, rem := modelUnit.level(ind)
			out[i] = fileUnit.indent(max(0, level+offset), rem) + l[len(ind):]
		}
	}
	return out
}

// indentPairs maps each FIND line's indentation to the indentation of the
// file line it matched, leaving out indentations that map two ways.
func indentPairs(find, file []string) map[string]string {
	seen := make(map[string]string)
	clash := make(map[string]bool)
	for i, f := range find {
		if strings.TrimSpace(f) == "" {
			continue
		}
		fi, gi := indentOf(f), indentOf(file[i])
		if prev, ok := seen[fi]; ok && prev != gi {
			clash[fi] = true
		}
		seen[fi] = gi
	}
	for k := range clash {
		delete(seen, k)
	}
	return seen
}

// unitOf returns the indentation style of the matched lines, or of the
// whole file when the matched lines are not indented.
func (t *text) unitOf(lines []string) unit {
	fu, fok := t.fileUnit()
	if u, ok := detectUnit(lines); ok {
		if !u.tabs && fok && !fu.tabs {
			// A few matched lines give a poor width; the file's is better.
			return fu
		}
		return u
	}
	if fok {
		return fu
	}
	return unit{width: 4}
}

// fileUnit detects the whole file's indentation style once per Apply.
func (t *text) fileUnit() (unit, bool) {
	if !t.unitDone {
		t.unit, t.unitOK = detectUnit(t.lines(0, t.len()))
		t.unitDone = true
	}
	return t.unit, t.unitOK
}

// maxStep bounds the indentation widths considered.
const maxStep = 16

// modelUnitOf works out the reply's indentation unit. If the reply indents
// with tabs, it is a tab. With spaces, consecutive FIND lines at different
// levels in the file give it directly (width difference over level
// difference), which is robust to a reply that is also shifted. When all
// FIND lines sit at one level: the first line's width over its level in
// the file, then the most common step between the reply's own lines, then
// the file's width.
func modelUnitOf(find, file, repl []string, fileUnit unit) unit {
	if u, ok := detectUnit(append(append([]string(nil), find...), repl...)); ok && u.tabs {
		return u
	}
	spaces := unit{width: 4} // how a stray tab in a space-indented reply is counted
	var votes [maxStep + 1]int
	prevW, prevL := -1, -1
	for i, f := range find {
		if strings.TrimSpace(f) == "" {
			continue
		}
		w := spaces.columns(indentOf(f))
		l, _ := fileUnit.level(indentOf(file[i]))
		if dw, dl := w-prevW, l-prevL; prevW >= 0 && dl != 0 && dw*dl > 0 && dw%dl == 0 && dw/dl <= maxStep {
			votes[dw/dl]++
		}
		prevW, prevL = w, l
	}
	if u := mostVoted(votes); u > 0 {
		return unit{width: u}
	}
	first := firstNonBlank(find)
	w := spaces.columns(indentOf(find[first]))
	if l, _ := fileUnit.level(indentOf(file[first])); w > 0 && l > 0 && w%l == 0 && w/l <= maxStep {
		return unit{width: w / l}
	}
	votes = [maxStep + 1]int{}
	stepVotes(find, &votes)
	stepVotes(repl, &votes)
	if u := mostVoted(votes); u > 0 {
		return unit{width: u}
	}
	if fileUnit.tabs {
		return spaces
	}
	return fileUnit
}

// detectUnit finds the indentation style of lines: tabs if more indented
// lines start with a tab than with a space, else spaces of the most common
// step between consecutive non-blank lines. ok is false when no line is
// indented.
func detectUnit(lines []string) (unit, bool) {
	tabs, spaces := 0, 0
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "\t"):
			tabs++
		case strings.HasPrefix(l, " ") && strings.TrimSpace(l) != "":
			spaces++
		}
	}
	if tabs == 0 && spaces == 0 {
		return unit{}, false
	}
	if tabs > spaces {
		return unit{tabs: true}, true
	}
	var votes [maxStep + 1]int
	stepVotes(lines, &votes)
	if w := mostVoted(votes); w > 0 {
		return unit{width: w}, true
	}
	return unit{width: 4}, true
}

// stepVotes counts the positive differences in indentation width between
// consecutive non-blank space-indented lines.
func stepVotes(lines []string, votes *[maxStep + 1]int) {
	prev := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "\t") {
			continue
		}
		w := runOf(l, ' ')
		if d := w - prev; prev >= 0 && d > 0 && d <= maxStep {
			votes[d]++
		}
		prev = w
	}
}

// mostVoted returns the index with the most votes (the smallest on a
// tie), or 0 when there are none.
func mostVoted(votes [maxStep + 1]int) int {
	best := 0
	for i := 1; i <= maxStep; i++ {
		if votes[i] > votes[best] {
			best = i
		}
	}
	return best
}

func indentOf(s string) string { return s[:leadingSpace(s)] }

func firstNonBlank(lines []string) int {
	for i, l := range lines {
		if strings.TrimSpace(l) != "" {
			return i
		}
	}
	return 0
}
