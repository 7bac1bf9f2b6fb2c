package review_test

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/azero-dev/azero/internal/review"
	"github.com/azero-dev/azero/internal/testenv"
)

// TestGitProcessesDoNotGrowWithFiles counts every git process the gate
// starts, through a git on PATH that logs and then runs the real one.
func TestGitProcessesDoNotGrowWithFiles(t *testing.T) {
	// Not parallel: it changes PATH for the code under test.
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	shim := t.TempDir()
	logFile := filepath.Join(shim, "calls.log")
	script := "#!/bin/sh\nprintf '%s\\n' \"$*\" | head -c 200 | tr '\\n' ' ' >> '" + logFile + "'\necho >> '" + logFile + "'\nexec '" + realGit + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(shim, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}

	run := func(n int) []string {
		files := map[string]string{}
		for i := range n {
			files[fmt.Sprintf("dir%d/file %d.py", i%7, i)] = numbered("old", 30)
			files[fmt.Sprintf("gone/%d.txt", i)] = numbered("g", 5)
		}
		repo := testenv.NewRepo(t, files) // before PATH changes: setup is not counted
		for i := range n {
			write(t, repo, fmt.Sprintf("dir%d/file %d.py", i%7, i), numbered("new", 4)) // REPLACED: flagged, diffed
			remove(t, repo, fmt.Sprintf("gone/%d.txt", i))                              // DELETED: flagged, diffed
			write(t, repo, fmt.Sprintf("untracked/%d.md", i), "u\n")                    // NEW: read from disk
		}
		os.Remove(logFile)
		t.Setenv("PATH", shim+string(os.PathListSeparator)+os.Getenv("PATH"))
		g, _, _ := pipedGate()
		out, err := g.Run(t.Context(), review.GateOptions{Repo: repo})
		if out.Decision != review.AbortedNonInteractive || len(out.Files) != 3*n || len(out.Flagged) != 2*n {
			t.Fatalf("n=%d: %d files, %d flagged, %s, %v", n, len(out.Files), len(out.Flagged), out.Decision, err)
		}
		b, err := os.ReadFile(logFile)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Split(strings.TrimSpace(string(b)), "\n")
	}
	few, many := run(3), run(300)
	if len(few) != len(many) {
		t.Fatalf("3 files took %d git processes, 300 took %d:\n%s\n---\n%s", len(few), len(many), strings.Join(few, "\n"), strings.Join(many, "\n"))
	}
	// rev-parse (top level, HEAD, object format), diff --raw --numstat,
	// cat-file --batch, ls-files -t --others --unmerged, diff -p of the
	// flagged files.
	if len(few) != 5 {
		t.Errorf("%d git processes, want 5:\n%s", len(few), strings.Join(few, "\n"))
	}
	t.Logf("git processes for 3 and for 300 changed files: %d", len(few))
}

// benchRepo is a repository with 10,000 changed files, made once.
var benchRepo struct {
	once sync.Once
	dir  string
	err  error
}

func cleanupBenchRepo() {
	if benchRepo.dir != "" {
		os.RemoveAll(benchRepo.dir)
	}
}

const benchFiles = 10000

// repo10k returns a repository whose 10,000 tracked files (40 lines each,
// in 100 directories) all have two lines changed in the working tree.
func repo10k(b *testing.B) string {
	b.Helper()
	benchRepo.once.Do(func() {
		dir, err := os.MkdirTemp("", "azero-review-bench-")
		if err != nil {
			benchRepo.err = err
			return
		}
		benchRepo.dir = dir
		name := func(i int) string {
			return filepath.Join(dir, fmt.Sprintf("pkg%02d", i%100), fmt.Sprintf("file%05d.go", i))
		}
		for i := range benchFiles {
			if err := os.MkdirAll(filepath.Dir(name(i)), 0o755); err != nil {
				benchRepo.err = err
				return
			}
			if err := os.WriteFile(name(i), []byte(numbered(fmt.Sprintf("// file %d line", i), 40)), 0o644); err != nil {
				benchRepo.err = err
				return
			}
		}
		for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "10k"}} {
			cmd := exec.Command("git", args...)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				benchRepo.err = fmt.Errorf("git %v: %v\n%s", args, err, out)
				return
			}
		}
		for i := range benchFiles {
			content := numbered(fmt.Sprintf("// file %d line", i), 40)
			content = strings.Replace(content, " line 7\n", " line seven\n", 1)
			content = strings.Replace(content, " line 30\n", " line thirty\n", 1)
			if err := os.WriteFile(name(i), []byte(content), 0o644); err != nil {
				benchRepo.err = err
				return
			}
		}
	})
	if benchRepo.err != nil {
		b.Fatal(benchRepo.err)
	}
	return benchRepo.dir
}

func BenchmarkAnalyze10k(b *testing.B) {
	repo := repo10k(b)
	files, err := review.Analyze(b.Context(), repo, review.AnalyzeOptions{})
	if err != nil || len(files) != benchFiles || files[0].LinesAdded != 2 || files[0].OriginalLines != 40 {
		b.Fatalf("%d files, first %+v, %v", len(files), files[0], err)
	}
	for b.Loop() {
		if _, err := review.Analyze(b.Context(), repo, review.AnalyzeOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(benchFiles), "files/op")
}

// BenchmarkGitNumstat10k is the yardstick: git's own numstat of the same
// changes.
func BenchmarkGitNumstat10k(b *testing.B) {
	repo := repo10k(b)
	for b.Loop() {
		cmd := exec.Command("git", "diff", "--numstat", "HEAD")
		cmd.Dir = repo
		cmd.Stdout = io.Discard
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDiffs10k fetches the diff text of all 10,000 files (more than
// fits on a command line: the whole diff is read and split).
func BenchmarkDiffs10k(b *testing.B) {
	repo := repo10k(b)
	files, err := review.Analyze(b.Context(), repo, review.AnalyzeOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		d, err := review.Diffs(b.Context(), repo, files, review.DiffOptions{})
		if err != nil || len(d) != benchFiles {
			b.Fatalf("%d diffs, %v", len(d), err)
		}
	}
}

// BenchmarkGitPatch10k is the yardstick for BenchmarkDiffs10k.
func BenchmarkGitPatch10k(b *testing.B) {
	repo := repo10k(b)
	for b.Loop() {
		cmd := exec.Command("git", "diff", "-p", "HEAD")
		cmd.Dir = repo
		cmd.Stdout = io.Discard
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
}
