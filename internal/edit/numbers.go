package edit

import (
	"strconv"
	"strings"

	"github.com/azero-dev/azero/internal/lazyre"
)

// lineNumberRE matches the line-number prefix of a numbered view of a
// file, as models copy it into FIND: "12 | code", "12| code", "  12 |code",
// "12→code". One space after the bar is the view's separator; more is the
// line's own indentation.
var lineNumberRE = lazyre.New(`^[ \t]*([0-9]{1,7})[ \t]*(?:\||→)( ?)`)

// numberPrefix returns the length of line's line-number prefix and its
// number. "1 || x" is code (a logical or), not a numbered line.
func numberPrefix(line string) (size, n int, ok bool) {
	m := lineNumberRE().FindStringSubmatchIndex(line)
	if m == nil {
		return 0, 0, false
	}
	if bar := m[4]; line[bar-1] == '|' && bar < len(line) && line[bar] == '|' {
		return 0, 0, false
	}
	n, err := strconv.Atoi(line[m[2]:m[3]])
	if err != nil {
		return 0, 0, false
	}
	return m[1], n, true
}

// stripNumbers removes line-number prefixes from a FIND in which every
// non-blank line carries one, with numbers rising from line to line, and
// from the REPLACE lines that carry one (a model that numbered FIND
// usually numbers the lines it repeats, but not the lines it adds). ok is
// false when FIND is not numbered that way; stripped counts the FIND
// lines that lost a prefix.
func stripNumbers(find, repl []string) (sf, sr []string, stripped int, ok bool) {
	prev := -1
	sf = make([]string, len(find))
	for i, l := range find {
		size, n, has := numberPrefix(l)
		switch {
		case has && n > prev:
			sf[i], prev = l[size:], n
			stripped++
		case !has && strings.TrimSpace(l) == "":
			sf[i] = l
		default:
			return nil, nil, 0, false
		}
	}
	if stripped == 0 || isBlank(sf) {
		return nil, nil, 0, false
	}
	sr = make([]string, len(repl))
	for i, l := range repl {
		if size, _, has := numberPrefix(l); has {
			l = l[size:]
		}
		sr[i] = l
	}
	return sf, sr, stripped, true
}
