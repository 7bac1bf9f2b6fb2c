package edit

import (
	"fmt"
	"slices"
	"strings"
)

// IndentLevel is one pair of a level map (see IndentLevels): the indentation
// of some FIND lines, as the model wrote it, and the indentation of the
// file lines they matched (see Loosening.Levels).
type IndentLevel struct {
	Find string `json:"find"`
	File string `json:"file"`
}

// levelMap is the tolerant fallback for a FIND written at another
// indentation width than the file's (2 spaces a level against 4, tabs
// against spaces) after no uniform shift explains it: it maps each
// indentation of FIND's non-blank lines to the indentation of the file
// line it matched, pair by pair (find[i] with file[i]), and succeeds only
// when that map is one-to-one and keeps order: every FIND level maps to
// exactly one file level, a deeper FIND level to a deeper file level. The
// levels of each side must nest (each shallower indentation a prefix of
// each deeper one), which is what "deeper" means for tabs and spaces
// alike. A level that maps to two file levels, or two levels that map to
// one, is an uneven slip: ok is false. The levels come back shallowest
// first.
func levelMap(find, file []string) (levels []IndentLevel, ok bool) {
	for i, f := range find {
		if i >= len(file) {
			return nil, false
		}
		if strings.TrimSpace(f) == "" {
			continue
		}
		fi, gi := indentOf(f), indentOf(file[i])
		j := slices.IndexFunc(levels, func(l IndentLevel) bool { return l.Find == fi })
		switch {
		case j < 0:
			levels = append(levels, IndentLevel{Find: fi, File: gi})
		case levels[j].File != gi:
			return nil, false
		}
	}
	slices.SortFunc(levels, func(a, b IndentLevel) int { return len(a.Find) - len(b.Find) })
	for k := 1; k < len(levels); k++ {
		a, b := levels[k-1], levels[k]
		if !deeper(b.Find, a.Find) || !deeper(b.File, a.File) {
			return nil, false
		}
	}
	return levels, len(levels) > 0
}

// deeper reports whether indentation b is a proper extension of a.
func deeper(b, a string) bool { return len(b) > len(a) && strings.HasPrefix(b, a) }

// remap re-indents lines through levels: a non-blank line indented
// exactly like some FIND level gets that level's file indentation, the
// rest of the line as written; blank lines stay as they are. ok is false
// when a non-blank line is indented at a level the map does not have:
// how deep it belongs in the file would be a guess.
func remap(lines []string, levels []IndentLevel) (out []string, ok bool) {
	out = make([]string, len(lines))
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			out[i] = l
			continue
		}
		ind := indentOf(l)
		j := slices.IndexFunc(levels, func(v IndentLevel) bool { return v.Find == ind })
		if j < 0 {
			return nil, false
		}
		out[i] = levels[j].File + l[len(ind):]
	}
	return out, true
}

// remapLevels is reindent's fallback: the replacement re-indented through
// FIND's level map, with its loosening, or ok false.
func remapLevels(find, file, repl []string) (out []string, loose []Loosening, ok bool) {
	levels, ok := levelMap(find, file)
	if !ok {
		return nil, nil, false
	}
	if out, ok = remap(repl, levels); !ok {
		return nil, nil, false
	}
	var moved []IndentLevel
	for _, l := range levels {
		if l.Find != l.File {
			moved = append(moved, l)
		}
	}
	return out, []Loosening{{Kind: IndentLevels, Levels: moved, Lines: nonBlank(find)}}, true
}

// describeIndent names an indentation for a person: "no indentation",
// "4 spaces", "2 tabs", "1 tab and 2 spaces".
func describeIndent(s string) string {
	tabs, spaces := strings.Count(s, "\t"), strings.Count(s, " ")
	switch {
	case s == "":
		return "no indentation"
	case tabs+spaces != len(s):
		return fmt.Sprintf("%d %s", len(s), plural(len(s), "character"))
	case tabs == 0:
		return fmt.Sprintf("%d %s", spaces, plural(spaces, "space"))
	case spaces == 0:
		return fmt.Sprintf("%d %s", tabs, plural(tabs, "tab"))
	}
	return fmt.Sprintf("%d %s and %d %s", tabs, plural(tabs, "tab"), spaces, plural(spaces, "space"))
}
