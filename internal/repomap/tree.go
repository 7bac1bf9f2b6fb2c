package repomap

import (
	"fmt"
	"sort"
	"strings"
)

// dir is a directory of the tree: its files and subdirectories.
type dir struct {
	files []string
	dirs  map[string]*dir
	count int // files below it, at any depth
}

func newTrie(files []string) *dir {
	root := &dir{dirs: map[string]*dir{}}
	for _, f := range files {
		d := root
		d.count++
		parts := strings.Split(f, "/")
		for _, p := range parts[:len(parts)-1] {
			sub := d.dirs[p]
			if sub == nil {
				sub = &dir{dirs: map[string]*dir{}}
				d.dirs[p] = sub
			}
			sub.count++
			d = sub
		}
		d.files = append(d.files, parts[len(parts)-1])
	}
	return root
}

// Folded and cut entries are written so that a reader (or a program) can
// tell them from a file's name.
const (
	foldedMark = " … " // "internal/ … 412 files"
	moreMark   = "… "  // "… 12 more entries"
	indentUnit = "  "  // one level of the tree
)

// render writes the tree with the directories deeper than depth folded
// into a count of their files, and at most maxDirEntries entries a
// directory.
func render(files []string, depth int) string {
	var b strings.Builder
	renderDir(&b, newTrie(files), 0, depth)
	return b.String()
}

func renderDir(b *strings.Builder, d *dir, level, depth int) {
	indent := strings.Repeat(indentUnit, level)
	type entry struct {
		name string
		sub  *dir
	}
	var entries []entry
	for _, f := range d.files {
		entries = append(entries, entry{name: f})
	}
	for name, sub := range d.dirs {
		entries = append(entries, entry{name: name, sub: sub})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	for i, e := range entries {
		if i == maxDirEntries && len(entries) > maxDirEntries+1 {
			fmt.Fprintf(b, "%s%s%d more entries\n", indent, moreMark, len(entries)-i)
			return
		}
		switch {
		case e.sub == nil:
			fmt.Fprintf(b, "%s%s\n", indent, e.name)
		case level >= depth:
			fmt.Fprintf(b, "%s%s/%s%d %s\n", indent, e.name, foldedMark, e.sub.count, plural(e.sub.count, "file"))
		default:
			fmt.Fprintf(b, "%s%s/\n", indent, e.name)
			renderDir(b, e.sub, level+1, depth)
		}
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// maxDepth is the depth of the deepest file's directory.
func maxDepth(files []string) int {
	deepest := 0
	for _, f := range files {
		deepest = max(deepest, strings.Count(f, "/"))
	}
	return deepest
}

// tree renders the files as deep as budget allows; folded says some
// directories are shown as counts.
func tree(files []string, budget int, count func(string) int) (string, bool) {
	full := maxDepth(files)
	for depth := full; depth >= 0; depth-- {
		t := render(files, depth)
		if count(t) <= budget || depth == 0 {
			return t, depth < full
		}
	}
	return "", false
}

// Paths reads a tree written by Text back into the paths of the files it
// lists (folded directories and cut lists are left out): a model's reply
// can be checked against it, and the scripted model drafts from it.
func Paths(tree string) []string {
	var out, stack []string
	for _, line := range strings.Split(tree, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if trimmed == "" || strings.HasPrefix(trimmed, moreMark) {
			continue
		}
		level := (len(line) - len(trimmed)) / len(indentUnit)
		if level > len(stack) {
			continue // not a tree line
		}
		stack = stack[:level]
		switch {
		case strings.Contains(trimmed, foldedMark):
		case strings.HasSuffix(trimmed, "/"):
			stack = append(stack, strings.TrimSuffix(trimmed, "/"))
		default:
			out = append(out, strings.Join(append(append([]string(nil), stack...), trimmed), "/"))
		}
	}
	return out
}
