package edit_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/edit"
)

// realFiles returns large source files of real projects found on this
// machine: the Go distribution's and Python's standard libraries.
func realFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	if out, err := exec.CommandContext(t.Context(), "go", "env", "GOROOT").Output(); err == nil {
		root := strings.TrimSpace(string(out))
		for _, f := range []string{"net/http/server.go", "go/parser/parser.go", "fmt/print.go", "strings/strings.go", "encoding/json/decode.go", "runtime/proc.go"} {
			files = append(files, filepath.Join(root, "src", f))
		}
	}
	if out, err := exec.CommandContext(t.Context(), "python3", "-c", "import argparse, json.decoder, email.message; print(argparse.__file__, json.decoder.__file__, email.message.__file__)").Output(); err == nil {
		files = append(files, strings.Fields(string(out))...)
	}
	var found []string
	for _, f := range files {
		if _, err := os.Stat(f); err == nil {
			found = append(found, f)
		}
	}
	if len(found) == 0 {
		t.Skip("no Go or Python standard library sources on this machine")
	}
	return found
}

// change is one edit of a file: lines [from, to) of before become lines.
type change struct {
	before   []string
	from, to int
	lines    []string
}

// mutate makes n random, non-overlapping edits to lines, top to bottom,
// and returns each with the text it applies to, and the final text.
func mutate(rng *rand.Rand, lines []string, n int, comment string) ([]change, []string) {
	cur := append([]string(nil), lines...)
	var changes []change
	pos := 0
	for i := range n {
		step := len(cur) / (n + 1)
		pos = min(len(cur)-1, pos+1+rng.IntN(max(1, step)))
		from, to := pos, pos
		var repl []string
		indent := cur[pos][:len(cur[pos])-len(strings.TrimLeft(cur[pos], " \t"))]
		switch rng.IntN(3) {
		case 0: // modify one to three lines
			to = min(len(cur), from+1+rng.IntN(3))
			for _, l := range cur[from:to] {
				repl = append(repl, l+" "+comment+fmt.Sprintf(" edited %d", i))
			}
		case 1: // insert lines
			for j := range 1 + rng.IntN(3) {
				repl = append(repl, fmt.Sprintf("%s%s inserted %d.%d", indent, comment, i, j))
			}
		case 2: // delete one to three lines
			to = min(len(cur), from+1+rng.IntN(3))
		}
		changes = append(changes, change{before: cur, from: from, to: to, lines: repl})
		next := append(append(append([]string(nil), cur[:from]...), repl...), cur[to:]...)
		cur = next
		pos = from + len(repl)
	}
	return changes, cur
}

// damage is what a model does to the indentation of what it copies.
type damage func(find, replace []string) ([]string, []string)

func keep(find, replace []string) ([]string, []string) { return find, replace }

// dedent removes the indentation common to every non-blank line, as
// models do with code quoted from inside a class or function.
func dedent(find, replace []string) ([]string, []string) {
	prefix := ""
	first := true
	for _, l := range append(append([]string(nil), find...), replace...) {
		if strings.TrimSpace(l) == "" {
			continue
		}
		ind := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		if first {
			prefix, first = ind, false
			continue
		}
		for !strings.HasPrefix(ind, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	cut := func(lines []string) []string {
		out := make([]string, len(lines))
		for i, l := range lines {
			out[i] = strings.TrimPrefix(l, prefix)
		}
		return out
	}
	return cut(find), cut(replace)
}

// tabsToSpaces writes leading tabs as four spaces each.
func tabsToSpaces(find, replace []string) ([]string, []string) {
	conv := func(lines []string) []string {
		out := make([]string, len(lines))
		for i, l := range lines {
			rest := strings.TrimLeft(l, "\t")
			out[i] = strings.Repeat("    ", len(l)-len(rest)) + rest
		}
		return out
	}
	return conv(find), conv(replace)
}

// blockFor builds the block for c: the changed lines with at least two
// lines of context each side, grown until FIND (after damage) matches
// exactly one place the way Apply looks: for undamaged blocks exactly,
// for damaged ones with no exact match and one whitespace-normalised one.
func blockFor(c change, hurt damage) (edit.Block, bool) {
	for ctx := 2; ctx < len(c.before); ctx++ {
		lo, hi := max(0, c.from-ctx), min(len(c.before), c.to+ctx)
		find := c.before[lo:hi]
		replace := append(append(append([]string(nil), c.before[lo:c.from]...), c.lines...), c.before[c.to:hi]...)
		dFind, dReplace := hurt(find, replace)
		exact := countRuns(c.before, dFind, func(a, b string) bool { return a == b })
		norm := countRuns(c.before, trimEdges(dFind), func(a, b string) bool {
			return strings.Join(strings.Fields(a), " ") == strings.Join(strings.Fields(b), " ")
		})
		damaged := !slicesEqual(dFind, find)
		if blankLines(dFind) || (damaged && exact > 0) || (!damaged && exact != 1) || (damaged && norm != 1) {
			continue
		}
		return edit.Block{Find: strings.Join(dFind, "\n") + "\n", Replace: joinOrEmpty(dReplace)}, true
	}
	return edit.Block{}, false
}

func joinOrEmpty(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

func trimEdges(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func countRuns(lines, run []string, eq func(a, b string) bool) int {
	count := 0
	for i := 0; i+len(run) <= len(lines); i++ {
		j := 0
		for j < len(run) && eq(lines[i+j], run[j]) {
			j++
		}
		if j == len(run) {
			count++
		}
	}
	return count
}

func slicesEqual(a, b []string) bool {
	return strings.Join(a, "\n") == strings.Join(b, "\n") && len(a) == len(b)
}

// TestApplyRealFiles edits large files of real projects (25 random edits
// each), writes the edits as a model would, in both formats, with exact
// and with damaged indentation, on LF and CRLF copies, and checks that
// Apply reproduces the expected file byte for byte.
func TestApplyRealFiles(t *testing.T) {
	t.Parallel()
	for _, path := range realFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			src := string(data)
			comment := "#"
			hurts := map[string]damage{"exact": keep, "dedented": dedent}
			if strings.HasSuffix(path, ".go") {
				comment = "//"
				hurts["tabs as spaces"] = tabsToSpaces
			}
			lines := strings.Split(strings.TrimSuffix(src, "\n"), "\n")
			rng := rand.New(rand.NewPCG(uint64(len(src)), 324))
			changes, after := mutate(rng, lines, 25, comment)
			want := strings.Join(after, "\n") + "\n"
			for name, hurt := range hurts {
				var blocks []edit.Block
				for _, c := range changes {
					b, ok := blockFor(c, hurt)
					if !ok {
						b, _ = blockFor(c, keep)
					}
					blocks = append(blocks, b)
				}
				for format, reply := range map[string]string{"changes": render(numbered(blocks)), "search": renderSearch(blocks)} {
					parsed, err := edit.Parse(reply)
					if err != nil {
						t.Fatalf("%s/%s: Parse: %v", name, format, err)
					}
					checkApply(t, name+"/"+format, src, parsed, want)
					checkApply(t, name+"/"+format+"/crlf", toCRLF(src), parsed, toCRLF(want))
				}
			}
		})
	}
}

func checkApply(t *testing.T, name, src string, blocks []edit.Block, want string) {
	t.Helper()
	got, results, err := edit.Apply(src, blocks)
	if err != nil {
		t.Fatalf("%s: Apply: %v", name, err)
	}
	if got != want {
		gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("%s: line %d is %q, want %q", name, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%s: %d lines, want %d", name, len(gl), len(wl))
	}
	if len(results) != len(blocks) {
		t.Fatalf("%s: %d results", name, len(results))
	}
}

func numbered(blocks []edit.Block) []edit.Block {
	out := append([]edit.Block(nil), blocks...)
	for i := range out {
		out[i].N = i + 1
	}
	return out
}

// renderSearch writes blocks in the SEARCH/REPLACE format, each in a fence
// after a file name.
func renderSearch(blocks []edit.Block) string {
	var b strings.Builder
	for _, bl := range blocks {
		fmt.Fprintf(&b, "file.txt\n````\n<<<<<<< SEARCH\n%s=======\n%s>>>>>>> REPLACE\n````\n\n", bl.Find, bl.Replace)
	}
	return b.String()
}
