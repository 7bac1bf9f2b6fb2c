package edit

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLevelMap(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		find, file string
		want       []IndentLevel // nil: no map
	}{
		{"two spaces for four", "a\n  b\n    c\n  d\n", "a\n    b\n        c\n    d\n",
			[]IndentLevel{{"", ""}, {"  ", "    "}, {"    ", "        "}}},
		{"four spaces for two, shifted", "a\n    b\n", "  a\n    b\n", []IndentLevel{{"", "  "}, {"    ", "    "}}},
		{"spaces for tabs", "x\n   y\n      z\n", "\tx\n\t\ty\n\t\t\tz\n", []IndentLevel{{"", "\t"}, {"   ", "\t\t"}, {"      ", "\t\t\t"}}},
		{"tabs for spaces", "\tx\n\t\ty\n", "  x\n     y\n", []IndentLevel{{"\t", "  "}, {"\t\t", "     "}}},
		{"blank lines do not count", "a\n\n  b\n   \n", "a\n\n    b\n\t\n", []IndentLevel{{"", ""}, {"  ", "    "}}},
		{"one level", "  a\n  b\n", "\ta\n\tb\n", []IndentLevel{{"  ", "\t"}}},
		{"a level on two file levels", "a\n  b\n  c\n", "a\n    b\n      c\n", nil},
		{"two levels on one file level", "a\n  b\n   c\n", "a\n    b\n    c\n", nil},
		{"deeper in FIND, shallower in the file", "a\n  b\n", "    a\n  b\n", nil},
		{"levels that do not nest in FIND", "\tx\n    y\n", "x\n  y\n", nil},
		{"levels that do not nest in the file", "x\n  y\n", "\tx\n    y\n", nil},
		{"all blank", "\n  \n", "\n\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := levelMap(splitBlockLines(tt.find), splitBlockLines(tt.file))
			if ok != (tt.want != nil) {
				t.Fatalf("levelMap = %q, %v; want %q", got, ok, tt.want)
			}
			if diff := cmp.Diff(tt.want, got); ok && diff != "" {
				t.Errorf("levelMap (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRemap(t *testing.T) {
	t.Parallel()
	levels := []IndentLevel{{"", "\t"}, {"  ", "\t\t"}}
	tests := []struct {
		name, lines, want string
		ok                bool
	}{
		{"every line at a mapped level", "if x {\n  y()\n\n  z()  \n}\n", "\tif x {\n\t\ty()\n\n\t\tz()  \n\t}\n", true},
		{"blank lines kept as written", "a\n   \n", "\ta\n   \n", true},
		{"a level the map lacks", "if x {\n    y()\n}\n", "", false},
		{"a level between mapped ones", "a\n b\n", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := remap(splitBlockLines(tt.lines), levels)
			if ok != tt.ok || (ok && strings.Join(got, "\n")+"\n" != tt.want) {
				t.Errorf("remap = %q, %v; want %q, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// FuzzLevelMap: a map found is a one-to-one, order-keeping map of nested
// levels taken from the lines themselves, and remapping FIND through it
// gives every non-blank FIND line the indentation of its file line.
func FuzzLevelMap(f *testing.F) {
	f.Add("a\n  b\n    c\n", "a\n    b\n        c\n")
	f.Add("x\n   y\n", "\tx\n\t\ty\n")
	f.Add("a\n  b\n  c\n", "a\n    b\n      c\n")
	f.Add("\t \tq\n \t\n", "  q\n")
	f.Fuzz(func(t *testing.T, find, file string) {
		fl, gl := splitBlockLines(find), splitBlockLines(file)
		levels, ok := levelMap(fl, gl)
		if !ok {
			if levels != nil {
				t.Fatalf("no map, but levels %q", levels)
			}
			return
		}
		for i, l := range levels {
			if l.Find != indentOf(l.Find) || l.File != indentOf(l.File) {
				t.Fatalf("level %q is not whitespace", l)
			}
			if i > 0 && (!deeper(l.Find, levels[i-1].Find) || !deeper(l.File, levels[i-1].File)) {
				t.Fatalf("levels %q are not nested one to one", levels)
			}
		}
		out, ok := remap(fl, levels)
		if !ok {
			t.Fatalf("FIND does not remap through its own map %q", levels)
		}
		for i, l := range fl {
			if strings.TrimSpace(l) == "" {
				if out[i] != l {
					t.Fatalf("blank line %q became %q", l, out[i])
				}
				continue
			}
			if indentOf(out[i]) != indentOf(gl[i]) || strings.TrimLeft(out[i], " \t") != strings.TrimLeft(l, " \t") {
				t.Fatalf("line %d %q remapped to %q, file has %q", i+1, l, out[i], gl[i])
			}
		}
	})
}
