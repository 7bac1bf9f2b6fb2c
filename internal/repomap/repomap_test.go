package repomap_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/repomap"
	"github.com/azero-dev/azero/internal/testenv"
)

// azeroRepo is this repository: a real one of about a thousand files.
func azeroRepo(t testing.TB) (root string, files []string) {
	t.Helper()
	testenv.RequireTool(t, "git")
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatalf("the tests run inside azero's repository: %v", err)
	}
	root = strings.TrimSpace(string(out))
	ls, err := exec.Command("git", "-C", root, "ls-files").Output()
	if err != nil {
		t.Fatal(err)
	}
	return root, strings.Fields(string(ls))
}

// TestMapOfThisRepository maps azero itself within a budget far smaller
// than its tree: the map fits, folds the tree, outlines the files the
// task names and those whose names share its words, and lists only
// tracked files.
func TestMapOfThisRepository(t *testing.T) {
	t.Parallel()
	root, files := azeroRepo(t)
	est := llm.NewEstimator()
	for _, budget := range []int{6000, 1500, 400, 120} {
		m, err := repomap.Build(t.Context(), root, repomap.Options{
			Query:       "The mechanical check in internal/lld/lld.go refuses an Add in a new directory; the tracker should say so.",
			Budget:      budget,
			CountTokens: est.CountTokens,
		})
		if err != nil {
			t.Fatal(err)
		}
		text := m.Text()
		if n := est.CountTokens(text); n > budget {
			t.Errorf("budget %d: the map is %d tokens", budget, n)
		}
		if m.Files != len(files) || !m.Folded {
			t.Errorf("budget %d: files %d (want %d), folded %v", budget, m.Files, len(files), m.Folded)
		}
		for _, p := range repomap.Paths(m.Tree) {
			if !slices.Contains(files, p) {
				t.Errorf("budget %d: the tree lists %s, which git does not track", budget, p)
			}
		}
		if m.Runner != "go" || (budget >= 1500 && !strings.Contains(m.Conventions, "github.com/azero-dev/azero")) {
			t.Errorf("budget %d: runner %q, conventions %q", budget, m.Runner, m.Conventions)
		}
		if budget < 6000 {
			continue
		}
		var outlined []string
		for _, o := range m.Outlines {
			outlined = append(outlined, o.Path)
		}
		if len(outlined) == 0 || outlined[0] != "internal/lld/lld.go" || !strings.Contains(m.Outlines[0].Text, "func Check(") {
			t.Errorf("outlines = %v; want internal/lld/lld.go first, with its declarations", outlined)
		}
		if !slices.ContainsFunc(outlined, func(p string) bool { return strings.HasPrefix(p, "internal/tracker/") }) {
			t.Errorf("outlines = %v; want a file of internal/tracker (its name is a word of the task)", outlined)
		}
		if slices.ContainsFunc(outlined, func(p string) bool { return strings.Contains(p, "internal_test") }) {
			t.Errorf("outlines = %v: the words of a path the task names matched other files", outlined)
		}
		if len(m.TestDirs) == 0 || len(m.TestDirs) > 20 || !slices.ContainsFunc(m.TestDirs, func(d repomap.TestDir) bool { return d.Dir == "internal/cli" }) {
			t.Errorf("test dirs = %+v; want at most 20, the one with the most tests among them", m.TestDirs)
		}
		for _, want := range []string{"## Files", "## Tests", "## Outlines", "### internal/lld/lld.go (named in the task)", "/ … "} {
			if !strings.Contains(text, want) {
				t.Errorf("the map lacks %q", want)
			}
		}
	}
}

// TestMapOfASmallProject: a small project's tree is whole; its
// conventions file is shown; a secret-looking file is named in the tree
// but never read; the file the task names comes first.
func TestMapOfASmallProject(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"calc.py":          "def add(a, b):\n    return a + b\n\n\nclass Calculator:\n    def total(self):\n        return 0\n",
		"test_calc.py":     "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
		"budget/limits.py": "LIMIT = 5\n\n\ndef over(cost):\n    return cost > LIMIT\n",
		".env":             "def leaked():\n    TOKEN = 'sk-live-secret'\n",
		"AGENTS.md":        "# Agents\n\nRun pytest before committing. Keep functions small.\n",
		"notes.txt":        "nothing to outline here\n",
		"img.bin":          "\x00\x01\x02",
	}
	root := testenv.NewRepo(t, files)
	testenv.WriteFiles(t, root, map[string]string{"untracked.py": "def hidden(): pass\n"})
	m, err := repomap.Build(t.Context(), root, repomap.Options{Query: "Add multiply to calc.py, and a budget limit for it"})
	if err != nil {
		t.Fatal(err)
	}
	got := repomap.Paths(m.Tree)
	want := []string{".env", "AGENTS.md", "budget/limits.py", "calc.py", "img.bin", "notes.txt", "test_calc.py"}
	if !slices.Equal(got, want) || m.Folded {
		t.Errorf("tree paths = %v (folded %v), want %v", got, m.Folded, want)
	}
	var outlined []string
	for _, o := range m.Outlines {
		outlined = append(outlined, o.Path)
		if strings.Contains(o.Text, "sk-live-secret") || o.Path == ".env" {
			t.Errorf("a secret-looking file was outlined: %+v", o)
		}
	}
	if len(outlined) < 2 || outlined[0] != "calc.py" || !slices.Contains(outlined, "budget/limits.py") {
		t.Errorf("outlines = %v; want calc.py first, budget/limits.py too", outlined)
	}
	if m.Outlines[0].Why != "named in the task" || !strings.Contains(m.Outlines[0].Text, "class Calculator:") {
		t.Errorf("calc.py's outline = %+v", m.Outlines[0])
	}
	if m.Guide == nil || m.Guide.Path != "AGENTS.md" || !strings.Contains(m.Guide.Text, "Run pytest") {
		t.Errorf("guide = %+v", m.Guide)
	}
	if m.Runner != "pytest" || m.Tests != 1 || len(m.TestDirs) != 1 || m.TestDirs[0].Dir != "." {
		t.Errorf("runner %q, tests %d in %+v", m.Runner, m.Tests, m.TestDirs)
	}
	text := m.Text()
	if strings.Contains(text, "untracked.py") || strings.Contains(text, "sk-live-secret") {
		t.Errorf("the map shows an untracked file or a secret:\n%s", text)
	}
	// A skipped directory's files are in the tree, never outlined, even
	// when the task names them.
	skipped, err := repomap.Build(t.Context(), root, repomap.Options{Query: "Add multiply to calc.py, and a budget limit for it", Skip: []string{"budget/"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range skipped.Outlines {
		if strings.HasPrefix(o.Path, "budget/") {
			t.Errorf("a skipped directory's file was outlined: %s", o.Path)
		}
	}
	if !slices.Contains(repomap.Paths(skipped.Tree), "budget/limits.py") || len(skipped.Outlines) == 0 || skipped.Outlines[0].Path != "calc.py" {
		t.Errorf("with budget/ skipped: tree %v, outlines %+v", repomap.Paths(skipped.Tree), skipped.Outlines)
	}
	// Same repository, same task: same map.
	again, err := repomap.Build(t.Context(), root, repomap.Options{Query: "Add multiply to calc.py, and a budget limit for it"})
	if err != nil || again.Text() != text {
		t.Errorf("a second map differs (%v)", err)
	}
}

// TestLongConventionsAreCut: a conventions file longer than its share is
// cut at a line, said to be cut, and the map still fits.
func TestLongConventionsAreCut(t *testing.T) {
	t.Parallel()
	root := testenv.NewRepo(t, map[string]string{
		"CLAUDE.md": "# Rules\n\n" + strings.Repeat("Every function has a doc comment saying why it exists.\n", 2000),
		"go.mod":    "module example.com/x\n\ngo 1.22\n",
		"x.go":      "package x\n\nfunc X() {}\n",
	})
	est := llm.NewEstimator()
	m, err := repomap.Build(t.Context(), root, repomap.Options{Budget: 3000, CountTokens: est.CountTokens})
	if err != nil {
		t.Fatal(err)
	}
	if m.Guide == nil || !m.Guide.Cut || !strings.HasPrefix(m.Guide.Text, "# Rules") || m.Runner != "go" {
		t.Errorf("guide = %+v, runner %q", m.Guide, m.Runner)
	}
	if n := est.CountTokens(m.Text()); n > 3000 {
		t.Errorf("the map is %d tokens, over 3000", n)
	}
}

func TestBuildOutsideARepository(t *testing.T) {
	t.Parallel()
	if _, err := repomap.Build(t.Context(), t.TempDir(), repomap.Options{}); err == nil {
		t.Error("a directory outside git was mapped")
	}
}

// FuzzPaths: the tree read back gives the files it was drawn from (when
// nothing is folded or cut).
func FuzzPaths(f *testing.F) {
	f.Add("a.go\nb/c.go\nb/d/e.go")
	f.Add("x")
	f.Add("dir/file with spaces.txt\ndir/z")
	f.Fuzz(func(t *testing.T, list string) {
		var files []string
		for _, p := range strings.Split(list, "\n") {
			parts := strings.Split(p, "/")
			if p == "" || slices.Contains(parts, "") || strings.ContainsAny(p, "\r\x00") || strings.Contains(p, "…") ||
				slices.ContainsFunc(parts, func(s string) bool { return strings.TrimLeft(s, " ") != s }) {
				return
			}
			files = append(files, p)
		}
		slices.Sort(files)
		files = slices.Compact(files)
		// A name both a file and a directory is not a tree.
		for _, a := range files {
			for _, b := range files {
				if strings.HasPrefix(b, a+"/") {
					return
				}
			}
		}
		if len(files) > 30 {
			return
		}
		got := repomap.Paths(repomap.Render(files, 100))
		slices.Sort(got)
		if !slices.Equal(got, files) {
			t.Fatalf("Paths(Render(%q)) = %q", files, got)
		}
	})
}

func BenchmarkBuildThisRepository(b *testing.B) {
	root, _ := azeroRepo(b)
	est := llm.NewEstimator()
	for b.Loop() {
		if _, err := repomap.Build(b.Context(), root, repomap.Options{Query: "lld check of the Files Changed table", CountTokens: est.CountTokens}); err != nil {
			b.Fatal(err)
		}
	}
}
