package edit

import "strings"

// reindent shifts the replacement's indentation after a whitespace match
// so it lines up with the file: find and file are the FIND lines and the
// file lines they matched, pair by pair.
//
// When one indentation prefix explains every pair (the model dropped or
// added the same leading whitespace on each line, the usual case), that
// prefix is added to or removed from each replacement line, which keeps
// the bytes the model wrote. Otherwise the styles differ (spaces in the
// reply, tabs in the file, or another width) and each line is rebuilt in
// the file's style from its nesting level.
func (t *text) reindent(find, file, repl []string) []string {
	if add, remove, ok := prefixShift(find, file); ok {
		return shiftByPrefix(repl, add, remove)
	}
	return t.shiftByLevel(find, file, repl)
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
	cols := 0
	for _, c := range []byte(indent) {
		if c == '\t' {
			cols += u.width
		} else {
			cols++
		}
	}
	return cols / u.width, cols % u.width
}

func (u unit) indent(level, rem int) string {
	if u.tabs {
		return strings.Repeat("\t", level) + strings.Repeat(" ", rem)
	}
	return strings.Repeat(" ", level*u.width+rem)
}

// shiftByLevel re-indents repl level by level: the first non-blank FIND
// line fixes how many levels the reply is off by, and every replacement
// line is written at its own level plus that offset in the file's unit.
func (t *text) shiftByLevel(find, file, repl []string) []string {
	fileUnit := t.unitOf(file)
	first := firstNonBlank(find)
	fileLevel, _ := fileUnit.level(indentOf(file[first]))
	modelUnit := modelUnitOf(find, repl, indentOf(find[first]), fileLevel, fileUnit)
	findLevel, _ := modelUnit.level(indentOf(find[first]))
	offset := fileLevel - findLevel
	out := make([]string, len(repl))
	for i, l := range repl {
		if strings.TrimSpace(l) == "" {
			out[i] = l
			continue
		}
		level, rem := modelUnit.level(indentOf(l))
		out[i] = fileUnit.indent(max(0, level+offset), rem) + l[len(indentOf(l)):]
	}
	return out
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
		t.unit, t.unitOK = detectUnit(t.body)
		t.unitDone = true
	}
	return t.unit, t.unitOK
}

// modelUnitOf returns the reply's indentation style. With spaces, the step
// between consecutive lines gives the width; failing that, the first FIND
// line's width divided by the file's level there; failing that, the file's.
func modelUnitOf(find, repl []string, firstIndent string, fileLevel int, fileUnit unit) unit {
	lines := append(append([]string(nil), find...), repl...)
	if u, ok := detectUnit(lines); ok && (u.tabs || stepFound(lines)) {
		return u
	}
	if w := len(firstIndent); w > 0 && fileLevel > 0 && w%fileLevel == 0 && !strings.Contains(firstIndent, "\t") {
		return unit{width: w / fileLevel}
	}
	if fileUnit.tabs {
		return unit{width: 4}
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
	if w := commonStep(lines); w > 0 {
		return unit{width: w}, true
	}
	return unit{width: 4}, true
}

func stepFound(lines []string) bool { return commonStep(lines) > 0 }

// commonStep is the most frequent positive difference in indentation
// width between consecutive non-blank space-indented lines; 0 if none.
func commonStep(lines []string) int {
	var counts [17]int
	prev := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "\t") {
			continue
		}
		w := runOf(l, ' ')
		if d := w - prev; prev >= 0 && d > 0 && d < len(counts) {
			counts[d]++
		}
		prev = w
	}
	best := 0
	for d := 1; d < len(counts); d++ {
		if counts[d] > counts[best] {
			best = d
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
