package safewrite_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/safewrite"
)

// Spec #173 budgets 10 ms per file check; these measure Propose (read,
// hash, merge, diff) and Write (plus temp file, fsync, rename, fsync dir).

func benchProject(b *testing.B, name, content string) string {
	b.Helper()
	dir := b.TempDir()
	writeFile(&testing.T{}, dir+"/"+name, content)
	return dir
}

func BenchmarkPropose(b *testing.B) {
	for _, n := range []int{270, 1000, 10000} {
		var oldB, smallB, tenthB strings.Builder
		for i := 1; i <= n; i++ {
			line := fmt.Sprintf("line with some ordinary source text %d\n", i)
			oldB.WriteString(line)
			if i == n/2 {
				smallB.WriteString("changed\n")
			} else {
				smallB.WriteString(line)
			}
			if i%10 == 1 {
				fmt.Fprintf(&tenthB, "edited %d\n", i)
			} else {
				tenthB.WriteString(line)
			}
		}
		old, small, everyTenth := oldB.String(), smallB.String(), tenthB.String()
		rewrite := numbered("entirely different content", 1, n)
		for _, c := range []struct {
			name    string
			content string
			old     string
		}{{"one line changed", small, old}, {"every tenth line changed", everyTenth, old}, {"total rewrite", rewrite, old},
			// Classic Mac OS line endings take the token diff.
			{"CR endings, every tenth line changed", strings.ReplaceAll(everyTenth, "\n", "\r"), strings.ReplaceAll(old, "\n", "\r")}} {
			b.Run(fmt.Sprintf("%d lines/%s", n, c.name), func(b *testing.B) {
				root := benchProject(b, "f.py", c.old)
				req := safewrite.Request{Root: root, Path: "f.py", Content: []byte(c.content)}
				for b.Loop() {
					if _, err := safewrite.Propose(req); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkWrite(b *testing.B) {
	for _, n := range []int{50, 1000} {
		b.Run(fmt.Sprintf("%d lines", n), func(b *testing.B) {
			contents := []string{numbered("a", 1, n), numbered("b", 1, n)}
			root := benchProject(b, "f.txt", contents[0])
			w := &safewrite.Writer{Force: true}
			i := 0
			for b.Loop() {
				i++
				if _, err := w.Write(b.Context(), safewrite.Request{Root: root, Path: "f.txt", Content: []byte(contents[i%2])}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkRead(b *testing.B) {
	root := benchProject(b, "a/b/c/d/f.txt", numbered("x", 1, 1000))
	for b.Loop() {
		if _, _, err := safewrite.Read(root, "a/b/c/d/f.txt"); err != nil {
			b.Fatal(err)
		}
	}
}
