package edit_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/edit"
)

// benchFile returns a Go file of at least lines lines made of small
// functions, and n blocks spread evenly through it, each changing the body
// of one function (whitespace-damaged, tabs written as spaces, if spaces).
func benchFile(lines, n int, spaces bool) (string, []edit.Block) {
	var b strings.Builder
	funcs := (lines + 11) / 12
	b.WriteString("package bench\n\n")
	for i := range funcs {
		fmt.Fprintf(&b, "// fn%d does step %d of the pipeline.\n", i, i)
		fmt.Fprintf(&b, "func fn%d(ctx context.Context, in []int) (int, error) {\n", i)
		b.WriteString("\ttotal := 0\n\tfor i, v := range in {\n")
		fmt.Fprintf(&b, "\t\ttotal += v*%d + i\n", i)
		b.WriteString("\t}\n\tif total < 0 {\n")
		fmt.Fprintf(&b, "\t\treturn 0, fmt.Errorf(\"fn%d: negative total %%d\", total)\n", i)
		b.WriteString("\t}\n\treturn total, nil\n}\n\n")
	}
	blocks := make([]edit.Block, n)
	for k := range n {
		i := k * funcs / n
		find := fmt.Sprintf("\ttotal := 0\n\tfor i, v := range in {\n\t\ttotal += v*%d + i\n\t}\n\tif total < 0 {\n", i)
		repl := fmt.Sprintf("\ttotal := 0\n\tfor i, v := range in {\n\t\ttotal += v*%d + i*2\n\t\tcheck(ctx, total)\n\t}\n\tif total < 0 {\n", i)
		if spaces {
			find = strings.ReplaceAll(find, "\t", "    ")
			repl = strings.ReplaceAll(repl, "\t", "    ")
		}
		blocks[k] = edit.Block{N: k + 1, Find: find, Replace: repl}
	}
	return b.String(), blocks
}

func BenchmarkApply50Blocks20kLines(b *testing.B) {
	content, blocks := benchFile(20000, 50, false)
	b.SetBytes(int64(len(content)))
	for b.Loop() {
		if _, _, err := edit.Apply(content, blocks); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkApply50Blocks20kLinesWhitespace is the slow path: every FIND
// misses exactly, matches with whitespace normalised, and is re-indented
// from spaces to the file's tabs.
func BenchmarkApply50Blocks20kLinesWhitespace(b *testing.B) {
	content, blocks := benchFile(20000, 50, true)
	b.SetBytes(int64(len(content)))
	for b.Loop() {
		if _, _, err := edit.Apply(content, blocks); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkApply50Blocks20kLinesLevels: every FIND is written two spaces
// a level for a file indented four, so each is found with whitespace
// normalised and re-indented through its level map.
func BenchmarkApply50Blocks20kLinesLevels(b *testing.B) {
	content, blocks := levelsBench()
	b.SetBytes(int64(len(content)))
	for b.Loop() {
		if _, res, err := edit.Apply(content, blocks); err != nil || res[0].Loose[0].Kind != edit.IndentLevels {
			b.Fatal(err, res)
		}
	}
}

// levelsBench is benchFile indented with four spaces, its blocks with two.
func levelsBench() (string, []edit.Block) {
	content, blocks := benchFile(20000, 50, false)
	for i := range blocks {
		blocks[i].Find = strings.ReplaceAll(blocks[i].Find, "\t", "  ")
		blocks[i].Replace = strings.ReplaceAll(blocks[i].Replace, "\t", "  ")
	}
	return strings.ReplaceAll(content, "\t", "    "), blocks
}

func BenchmarkParse50Blocks(b *testing.B) {
	_, blocks := benchFile(20000, 50, false)
	reply := render(blocks)
	b.SetBytes(int64(len(reply)))
	for b.Loop() {
		if _, err := edit.Parse(reply); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNotFound20kLines measures the failure path, which searches the
// file for the closest lines to show.
func BenchmarkNotFound20kLines(b *testing.B) {
	content, _ := benchFile(20000, 1, false)
	block := edit.Block{Find: "\ttotal := 1\n\tfor j, v := range out {\n\t\ttotal += v*99999 + j\n", Replace: "x\n"}
	for b.Loop() {
		if _, _, err := edit.Apply(content, []edit.Block{block}); err == nil {
			b.Fatal("want an error")
		}
	}
}

// TestBenchFileApplies keeps the benchmark honest: its blocks must apply,
// the damaged ones by whitespace, with identical results.
func TestBenchFileApplies(t *testing.T) {
	t.Parallel()
	content, exact := benchFile(20000, 50, false)
	if n := strings.Count(content, "\n"); n < 20000 {
		t.Fatalf("bench file has %d lines", n)
	}
	_, damaged := benchFile(20000, 50, true)
	want, res, err := edit.Apply(content, exact)
	if err != nil || res[49].Match != edit.Exact {
		t.Fatalf("exact blocks: %v %+v", err, res)
	}
	got, res, err := edit.Apply(content, damaged)
	if err != nil || res[49].Match != edit.Whitespace {
		t.Fatalf("damaged blocks: %v %+v", err, res)
	}
	if got != want {
		t.Error("whitespace-matched blocks give a different file than exact ones")
	}
	if strings.Count(want, "check(ctx, total)") != 50 {
		t.Error("not every block applied")
	}
	spaces, levels := levelsBench()
	got, res, err = edit.Apply(spaces, levels)
	if err != nil || res[49].Loose[0].Kind != edit.IndentLevels {
		t.Fatalf("two-space blocks: %v %+v", err, res)
	}
	if got != strings.ReplaceAll(want, "\t", "    ") {
		t.Error("blocks mapped level by level give a different file than exact ones")
	}
}

// BenchmarkOutline20kLines outlines the 20,000-line Go file of the
// benchmarks above, and the same functions written in Python.
func BenchmarkOutline20kLines(b *testing.B) {
	content, _ := benchFile(20000, 1, false)
	var py strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&py, "class C%d:\n    \"\"\"Step %d.\"\"\"\n\n    limit = %d\n\n    def run(self, items):\n        total = 0\n        for i, v in enumerate(items):\n            total += v * %d + i\n        return total\n\n", i, i, i, i)
	}
	for _, f := range []struct{ name, content string }{{"bench.go", content}, {"bench.py", py.String()}} {
		b.Run(f.name, func(b *testing.B) {
			b.SetBytes(int64(len(f.content)))
			for b.Loop() {
				if len(edit.Declarations(f.name, f.content)) < 1000 {
					b.Fatal("too few declarations")
				}
			}
		})
	}
}
