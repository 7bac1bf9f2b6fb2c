package edit

import (
	"slices"
	"strings"
)

// reindent shifts the replacement's indentation after a whitespace match
// so it lines up with the file: find and file are the FIND lines and the
// file lines they matched, pair by pair. It returns the re-indented
// replacement and how the indentation differed, or, when the difference
// is not one uniform shift for every non-blank line, the 0-based indexes
// of the FIND lines that break it (uneven), and no replacement: a block
// whose FIND lines slip in different ways says nothing reliable about how
// its new lines should be indented.
//
// When reply and file indent alike (both tabs or both spaces), the shift
// is one prefix added to or removed from every line (the model dropped or
// added the same leading whitespace on each line, the usual case); it is
// applied to each replacement line, which keeps the bytes the model
// wrote. When one uses tabs and the other spaces, every line must convert
// with one tab width and then differ by one number of columns; each
// replacement line is rewritten in the file's style.
//
// When neither explains FIND, because it was written at another width
// than the file (2 spaces a level against 4), the replacement is
// re-indented through FIND's level map (see levelMap), if there is one
// and REPLACE uses only its levels; otherwise uneven names the lines that
// break the shift.
func (t *text) reindent(find, file, repl []string) (out []string, loose []Loosening, uneven []int) {
	if t.styleDiffers(find, file, repl) {
		out, loose, uneven = t.convertStyle(find, file, repl)
		if len(uneven) > 0 {
			if o, l, ok := remapLevels(find, file, repl); ok {
				return o, l, nil
			}
		}
		return out, loose, uneven
	}
	add, remove, ok := prefixShift(find, file)
	if !ok {
		if o, l, ok := remapLevels(find, file, repl); ok {
			return o, l, nil
		}
		return nil, nil, unevenPrefixes(find, file)
	}
	if p := add + remove; p != "" {
		shift := len(p)
		if remove != "" {
			shift = -shift
		}
		loose = []Loosening{{Kind: IndentShift, Shift: shift, Unit: indentUnitName(p), Lines: nonBlank(find)}}
	}
	return shiftByPrefix(repl, add, remove), loose, nil
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
		a, r, ok := linePrefixShift(f, file[i])
		if !ok || (seen && (a != add || r != remove)) {
			return "", "", false
		}
		add, remove, seen = a, r, true
	}
	return add, remove, true
}

// linePrefixShift is the prefix added to or removed from f's indentation
// to give g's, if one exists.
func linePrefixShift(f, g string) (add, remove string, ok bool) {
	fi, gi := indentOf(f), indentOf(g)
	switch {
	case strings.HasSuffix(gi, fi):
		return gi[:len(gi)-len(fi)], "", true
	case strings.HasSuffix(fi, gi):
		return "", fi[:len(fi)-len(gi)], true
	}
	return "", "", false
}

// unevenPrefixes returns the FIND lines whose prefix shift differs from
// the one most lines share (or that have none).
func unevenPrefixes(find, file []string) []int {
	type shift struct {
		add, remove string
		ok          bool
	}
	return outliers(find, func(i int) shift {
		a, r, ok := linePrefixShift(find[i], file[i])
		return shift{a, r, ok}
	}, func(s shift) bool { return s.ok })
}

// outliers returns the indexes of the non-blank lines whose key differs
// from the most common valid key (the first such on a tie); when no key
// is valid, every non-blank line.
func outliers[K comparable](lines []string, key func(int) K, valid func(K) bool) []int {
	if uniformKeys(lines, key, valid) {
		return nil // the usual case, without allocating
	}
	counts := make(map[K]int)
	var order []K
	keys := make([]K, len(lines))
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		k := key(i)
		keys[i] = k
		if !valid(k) {
			continue
		}
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
	}
	var best K
	bestN := 0
	for _, k := range order {
		if counts[k] > bestN {
			best, bestN = k, counts[k]
		}
	}
	var out []int
	for i, l := range lines {
		if strings.TrimSpace(l) != "" && (bestN == 0 || keys[i] != best) {
			out = append(out, i)
		}
	}
	return out
}

// uniformKeys reports whether every non-blank line has the same valid
// key.
func uniformKeys[K comparable](lines []string, key func(int) K, valid func(K) bool) bool {
	var first K
	seen := false
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		k := key(i)
		if !valid(k) || (seen && k != first) {
			return false
		}
		first, seen = k, true
	}
	return true
}

// convertStyle re-indents a reply written with tabs for a file indented
// with spaces, or the reverse. One tab counts as w columns: the file's
// indentation width when the file uses spaces, the reply's width per
// level (worked out from the block, see modelUnitOf) when it uses tabs.
// Every non-blank FIND line must then be off by the same number of
// columns c. A replacement line indented exactly like some FIND line gets
// the indentation of the file line that FIND line matched, which keeps
// alignment spaces; any other line gets its columns plus c, written in
// the file's style.
func (t *text) convertStyle(find, file, repl []string) (out []string, loose []Loosening, uneven []int) {
	fileUnit := t.unitOf(file)
	w := fileUnit.width
	if fileUnit.tabs {
		// The reply's spaces per level, worked out from the block; an
		// odd width (13 spaces for one tab) is a slip, not a style.
		if w = modelUnitOf(find, file, repl, fileUnit).width; !slices.Contains(tabWidths, w) {
			w = tabWidths[0]
		}
		// FIND's lines at different levels give a width (6 spaces where
		// the file has two tabs and 4 where it has one: 2 a tab), and the
		// new lines may step by another (8 spaces after 4: 4 a tab). Then
		// one of FIND's lines slipped and made up the width that fits: FIND
		// must fit the new lines' width, or the block is refused.
		if p, r := pairWidth(find, file, fileUnit), replaceStep(repl); p > 0 && r > 0 && r != p && slices.Contains(tabWidths, r) {
			if o := outliersAt(find, file, r); len(o) > 0 {
				return nil, nil, o
			}
			w = r
		}
	}
	w, uneven = uniformWidth(find, file, max(w, 1))
	if len(uneven) > 0 {
		return nil, nil, uneven
	}
	cols := unit{width: w}.columns
	c := 0
	if first := firstNonBlank(find); first < len(find) {
		c = cols(indentOf(file[first])) - cols(indentOf(find[first]))
	}
	seen := indentPairs(find, file)
	out = make([]string, len(repl))
	for i, l := range repl {
		ind := indentOf(l)
		switch fileInd, ok := seen[ind]; {
		case strings.TrimSpace(l) == "":
			out[i] = l
		case ok:
			out[i] = fileInd + l[len(ind):]
		default:
			n := max(0, cols(ind)+c)
			if fileUnit.tabs {
				out[i] = strings.Repeat("\t", n/w) + strings.Repeat(" ", n%w) + l[len(ind):]
			} else {
				out[i] = strings.Repeat(" ", n) + l[len(ind):]
			}
		}
	}
	// A line is converted when its indentation uses the character the
	// file does not; the others were at most shifted. REPLACE lines count
	// too: a FIND with no indentation can still bring new lines indented
	// in the other style.
	other := " "
	if !fileUnit.tabs {
		other = "\t"
	}
	converted := 0
	for _, l := range slices.Concat(find, repl) {
		if strings.TrimSpace(l) != "" && strings.Contains(indentOf(l), other) {
			converted++
		}
	}
	if converted > 0 {
		loose = append(loose, Loosening{Kind: IndentStyle, TabWidth: w, Lines: converted})
	}
	switch {
	case c == 0:
	case fileUnit.tabs && c%w == 0:
		loose = append(loose, Loosening{Kind: IndentShift, Shift: c / w, Unit: "tab", Lines: nonBlank(find)})
	default:
		loose = append(loose, Loosening{Kind: IndentShift, Shift: c, Unit: "space", Lines: nonBlank(find)})
	}
	return out, loose, nil
}

// tabWidths are the spaces per tab a reply may use, the likeliest first.
var tabWidths = []int{4, 2, 8, 3}

// uniformWidth returns the tab width (columns per tab) under which every
// non-blank FIND line is off from its file line by the same number of
// columns: w if it does, else the first that does among the common widths
// 4, 2, 8 and 3. (A reply that fits only some odd width, 13 spaces for
// one tab, has slipped.) When none does, uneven lists the FIND lines that
// break the shift under the width that leaves the fewest, so that the
// error blames the lines that slipped rather than those a poorly guessed
// width makes look wrong.
func uniformWidth(find, file []string, w int) (width int, uneven []int) {
	var best []int
	for i, cw := range append([]int{w}, tabWidths...) {
		cols := unit{width: cw}.columns
		o := outliers(find, func(i int) int { return cols(indentOf(file[i])) - cols(indentOf(find[i])) }, func(int) bool { return true })
		if len(o) == 0 {
			return cw, nil
		}
		if i == 0 || len(o) < len(best) || (i == 1 && len(o) == len(best)) {
			best = o
		}
	}
	return w, best
}

// outliersAt returns the FIND lines that break the most common shift in
// columns from the file's lines when a tab counts w columns.
func outliersAt(find, file []string, w int) []int {
	cols := unit{width: w}.columns
	return outliers(find, func(i int) int { return cols(indentOf(file[i])) - cols(indentOf(find[i])) }, func(int) bool { return true })
}

// pairWidth is the reply's spaces per level read from consecutive FIND
// lines at different levels in the file (see modelUnitOf), 0 when FIND's
// lines give none.
func pairWidth(find, file []string, fileUnit unit) int {
	spaces := unit{width: 4}
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
	return mostVoted(votes)
}

// replaceStep is the one step, in spaces, by which the space-indented
// REPLACE lines go deeper, when every such step is the same; 0 when they
// never go deeper or step by different amounts (an aligned continuation
// line next to a nested block says nothing sure).
func replaceStep(repl []string) int {
	step, prev := 0, -1
	for _, l := range repl {
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "\t") {
			continue
		}
		w := runOf(l, ' ')
		if d := w - prev; prev >= 0 && d > 0 {
			if step != 0 && d != step {
				return 0
			}
			step = d
		}
		prev = w
	}
	return step
}

// indentUnitName names what a whitespace prefix is made of.
func indentUnitName(p string) string {
	switch {
	case strings.Trim(p, " ") == "":
		return "space"
	case strings.Trim(p, "\t") == "":
		return "tab"
	}
	return "character"
}

// nonBlank counts the lines that are not blank.
func nonBlank(lines []string) int {
	n := 0
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			n++
		}
	}
	return n
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
	if u := pairWidth(find, file, fileUnit); u > 0 {
		return unit{width: u}
	}
	first := firstNonBlank(find)
	w := spaces.columns(indentOf(find[first]))
	if l, _ := fileUnit.level(indentOf(file[first])); w > 0 && l > 0 && w%l == 0 && w/l <= maxStep {
		return unit{width: w / l}
	}
	var votes [maxStep + 1]int
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
