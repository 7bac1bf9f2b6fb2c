// Package repomap draws a map of a repository for a model that must plan
// a change to it without reading all of it: the files git tracks as a
// tree, an outline of the declarations of the files the change is likely
// to touch, the test layout and the runner azero would run, and the
// project's own conventions file.
//
// Invariants:
//
//   - The map is bounded: Text never exceeds Options.Budget tokens (as
//     Options.CountTokens counts them), whatever the repository's size,
//     once the budget holds the headings (about 60 tokens). Each part has
//     its share; what gives way when they do not fit together is said in
//     Map.fit.
//   - Only what git tracks is mapped: no ignored or untracked file, nothing
//     inside .git. No secret-looking file (contextload.LooksSecret) is ever
//     read or outlined; its name alone may appear in the tree.
//   - The map is a pure function of the repository's tracked files and the
//     query: the same commit and query give the same text.
//
// Build reads files; it never writes and runs only git ls-files.
package repomap

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/azero-dev/azero/internal/contextload"
	"github.com/azero-dev/azero/internal/edit"
	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/lld"
	"github.com/azero-dev/azero/internal/testrun"
)

// DefaultBudget is the map's size in tokens unless Options say otherwise.
const DefaultBudget = 8000

// Guides are the conventions files a project keeps for agents and
// contributors, in the order looked for at the repository's root.
var Guides = []string{"AGENTS.md", "CLAUDE.md", "CONVENTIONS.md"}

// Bounds on what is read, whatever the budget.
const (
	maxOutlines    = 12        // files outlined
	maxReadBytes   = 512 << 10 // a file larger is not outlined (generated, data)
	maxDirEntries  = 40        // entries listed in one directory; the rest counted
	maxTestDirs    = 20        // directories listed in the test layout
	maxOutlineLine = 60        // declarations shown of one file
)

// Options tune the map.
type Options struct {
	// Query is what the map is for (an issue's title and body): the files
	// it names, and those whose names share its words, are outlined.
	Query string
	// Budget bounds the map's text in tokens (default DefaultBudget).
	Budget int
	// CountTokens counts a text's tokens; nil estimates four bytes a
	// token.
	CountTokens func(string) int
	// Runner is the test runner kind when the caller knows it (the
	// configuration's); "" detects it from the project.
	Runner string
	// Skip are directories (slash-separated, relative to the root) whose
	// files are never outlined: records, not code, such as azero's audit
	// trails, whose names repeat the task's words.
	Skip []string
}

// Map is a repository's map.
type Map struct {
	Files int    `json:"files"` // tracked files in all
	Tree  string `json:"tree"`  // the tracked files as an indented tree, bounded
	// Folded says the tree shows some directories as a count of files.
	Folded   bool      `json:"folded,omitempty"`
	Outlines []Outline `json:"outlines,omitempty"`
	// Runner is the test runner detected ("" when none could be; then
	// RunnerProblem says why), Conventions how it finds and runs tests.
	Runner        string `json:"runner,omitempty"`
	RunnerProblem string `json:"runner_problem,omitempty"`
	Conventions   string `json:"conventions,omitempty"`
	// TestDirs are the directories holding test files, with how many.
	TestDirs []TestDir `json:"test_dirs,omitempty"`
	Tests    int       `json:"tests"` // test files in all
	// Guide is the project's conventions file, when it has one.
	Guide *Guide `json:"guide,omitempty"`
}

// Outline is one file's declarations.
type Outline struct {
	Path string `json:"path"`
	Why  string `json:"why"` // "named in the task", "its name matches: budget, flag"
	Text string `json:"text"`
}

// TestDir is a directory holding test files.
type TestDir struct {
	Dir   string `json:"dir"` // "." for the root
	Files int    `json:"files"`
}

// Guide is the project's conventions file.
type Guide struct {
	Path string `json:"path"`
	Text string `json:"text"`
	Cut  bool   `json:"cut,omitempty"` // the text was cut to fit
}

// Build maps the repository whose work tree is root.
func Build(ctx context.Context, root string, opts Options) (Map, error) {
	if opts.Budget <= 0 {
		opts.Budget = DefaultBudget
	}
	if opts.CountTokens == nil {
		opts.CountTokens = func(s string) int { return (len(s) + 3) / 4 }
	}
	files, err := tracked(ctx, root)
	if err != nil {
		return Map{}, err
	}
	m := Map{Files: len(files)}
	b := &builder{root: root, opts: opts, files: files}

	// The small, fixed parts first: what runs the tests, where they are.
	m.Runner, m.RunnerProblem, m.Conventions = b.runner()
	m.TestDirs, m.Tests = testDirs(files)
	fixed := opts.CountTokens(m.testText())

	// Then the shares of the rest: the conventions file a sixth, the tree
	// two fifths of what is left, the outlines what remains after it.
	rest := max(opts.Budget-fixed, 0)
	m.Guide = b.guide(rest / 6)
	if m.Guide != nil {
		rest -= opts.CountTokens(m.guideText())
	}
	m.Tree, m.Folded = tree(files, max(rest*2/5, 0), opts.CountTokens)
	rest -= opts.CountTokens(m.treeText())
	m.Outlines = b.outlines(max(rest, 0))
	m.fit(files, opts.Budget, opts.CountTokens)
	return m, nil
}

// fit makes the map fit budget: the parts were measured alone, what joins
// them is measured last. What gives way, in order: outlines (the last
// first), the conventions file, the tree's depth, the runner's
// conventions, the test layout, and the tree's last lines.
func (m *Map) fit(files []string, budget int, count func(string) int) {
	over := func() bool { return count(m.Text()) > budget }
	for len(m.Outlines) > 0 && over() {
		m.Outlines = m.Outlines[:len(m.Outlines)-1]
	}
	if over() {
		m.Guide = nil
	}
	for depth := maxDepth(files) - 1; over() && depth >= 0; depth-- {
		m.Tree, m.Folded = render(files, depth), true
	}
	if over() {
		m.Conventions = ""
	}
	if over() {
		m.TestDirs = nil
	}
	lines := strings.SplitAfter(m.Tree, "\n")
	for k := len(lines) - 1; over() && k >= 0; k-- {
		m.Tree = strings.Join(lines[:k], "") + fmt.Sprintf("%s%d more entries\n", moreMark, len(lines)-k)
		m.Folded = true
	}
}

// tracked lists the files git tracks in root, slash-separated, sorted.
func tracked(ctx context.Context, root string) ([]string, error) {
	out, err := gitx.Repo{Dir: root}.Run(ctx, "ls-files", "-z", "--full-name")
	if err != nil {
		return nil, fmt.Errorf("list the repository's files: %w", err)
	}
	var files []string
	for _, f := range bytes.Split(out, []byte{0}) {
		if len(f) > 0 {
			files = append(files, string(f))
		}
	}
	sort.Strings(files)
	return slices.Compact(files), nil
}

type builder struct {
	root  string
	opts  Options
	files []string
}

// read returns a tracked file's content when it may be shown: not
// secret-looking, a regular file inside the repository, not too large,
// text.
func (b *builder) read(rel string) ([]byte, bool) {
	if _, secret := contextload.LooksSecret(rel); secret {
		return nil, false
	}
	full := filepath.Join(b.root, filepath.FromSlash(rel))
	info, err := os.Lstat(full)
	if err != nil || !info.Mode().IsRegular() || info.Size() > maxReadBytes {
		return nil, false
	}
	data, err := os.ReadFile(full)
	if err != nil || bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
		return nil, false
	}
	return data, true
}

func (b *builder) runner() (kind, problem, conventions string) {
	kind = b.opts.Runner
	if kind == "" {
		var err error
		if kind, err = testrun.Detect(b.root); err != nil {
			return "", err.Error(), ""
		}
	}
	return kind, "", testrun.ProjectConventions(b.root, kind)
}

// guide reads the first conventions file at the root, cut to budget.
func (b *builder) guide(budget int) *Guide {
	for _, name := range Guides {
		if !slices.Contains(b.files, name) {
			continue
		}
		data, ok := b.read(name)
		if !ok {
			continue
		}
		g := &Guide{Path: name, Text: strings.TrimSpace(string(data))}
		for g.Text != "" && b.opts.CountTokens(g.Text) > budget {
			cut := strings.LastIndexByte(g.Text[:len(g.Text)*3/4], '\n')
			if cut <= 0 {
				g.Text = ""
				break
			}
			g.Text, g.Cut = g.Text[:cut], true
		}
		if g.Text == "" {
			return nil
		}
		return g
	}
	return nil
}

// testDirs counts the test files of each directory.
func testDirs(files []string) ([]TestDir, int) {
	count := map[string]int{}
	total := 0
	for _, f := range files {
		if lld.IsTestPath(f) {
			count[path.Dir(f)]++
			total++
		}
	}
	var out []TestDir
	for d, n := range count {
		out = append(out, TestDir{Dir: d, Files: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Files != out[j].Files {
			return out[i].Files > out[j].Files
		}
		return out[i].Dir < out[j].Dir
	})
	if len(out) > maxTestDirs {
		out = out[:maxTestDirs]
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Dir < out[j].Dir })
	return out, total
}

// candidate is a file that may be outlined.
type candidate struct {
	path  string
	score int
	why   string
}

// outlines outlines the files the query is likely to touch, best first,
// within budget.
func (b *builder) outlines(budget int) []Outline {
	var out []Outline
	used := 0
	for _, c := range b.candidates() {
		if len(out) == maxOutlines {
			break
		}
		data, ok := b.read(c.path)
		if !ok {
			continue
		}
		text := edit.Outline(c.path, string(data))
		if strings.TrimSpace(text) == "" {
			continue
		}
		if lines := strings.SplitAfter(text, "\n"); len(lines) > maxOutlineLine {
			text = strings.Join(lines[:maxOutlineLine], "") + fmt.Sprintf("… %d more declarations\n", len(lines)-maxOutlineLine)
		}
		o := Outline{Path: c.path, Why: c.why, Text: text}
		n := b.opts.CountTokens(outlineText(o))
		if used+n > budget {
			continue // a smaller one further down may fit
		}
		used += n
		out = append(out, o)
	}
	return out
}

// candidates ranks the tracked files by how the query names them: by
// path, by file name, then by words of their names the query uses.
// Vendored and generated directories are not candidates.
func (b *builder) candidates() []candidate {
	q := strings.ToLower(b.opts.Query)
	words := queryWords(q)
	var out []candidate
	for _, f := range b.files {
		if vendored(f) || b.skipped(f) {
			continue
		}
		lf := strings.ToLower(f)
		base := path.Base(lf)
		switch {
		case strings.Contains(q, lf) && strings.Contains(lf, "/"):
			out = append(out, candidate{f, 1000, "named in the task"})
			continue
		case len(base) > 3 && mentions(q, base):
			out = append(out, candidate{f, 500, "named in the task"})
			continue
		}
		var hits []string
		for _, w := range nameWords(f) {
			if words[w] && !slices.Contains(hits, w) {
				hits = append(hits, w)
			}
		}
		if len(hits) > 0 {
			score := 10 * len(hits)
			if lld.IsTestPath(f) {
				score-- // the code before its tests
			}
			out = append(out, candidate{f, score, "its name matches the task's words: " + strings.Join(hits, ", ")})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].score > out[j].score })
	return out
}

// skipped reports whether f is inside a directory of Options.Skip.
func (b *builder) skipped(f string) bool {
	for _, d := range b.opts.Skip {
		if d = strings.Trim(path.Clean(d), "/"); d != "" && d != "." && strings.HasPrefix(f, d+"/") {
			return true
		}
	}
	return false
}

// mentions reports whether q names the file base as a word of its own
// (calc.py, not calc.pyc).
func mentions(q, base string) bool {
	for i := 0; ; {
		j := strings.Index(q[i:], base)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(base)
		before := start == 0 || !isNameByte(q[start-1])
		after := end == len(q) || !isNameByte(q[end])
		if before && after {
			return true
		}
		i = start + 1
	}
}

func isNameByte(c byte) bool {
	return c == '_' || c == '-' || c == '.' || c == '/' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// vendored reports a path inside a directory of code the project does not
// write.
func vendored(p string) bool {
	for _, part := range strings.Split(p, "/") {
		switch part {
		case "vendor", "node_modules", "third_party", "dist", "build", "target", ".venv", "__pycache__":
			return true
		}
	}
	return false
}

// stopWords are words too common in issues to say which file they mean.
var stopWords = map[string]bool{
	"the": true, "and": true, "for": true, "with": true, "that": true, "this": true, "from": true, "into": true,
	"add": true, "new": true, "use": true, "should": true, "when": true, "not": true, "are": true, "can": true,
	"test": true, "tests": true, "file": true, "files": true, "code": true, "main": true, "index": true, "init": true,
	"readme": true, "issue": true, "change": true, "make": true, "have": true, "has": true, "will": true, "each": true,
}

// queryWords are the words of the query worth matching file names with.
// Paths the query names (internal/lld/lld.go) are matched whole, not by
// their parts: every file is in some internal/.
func queryWords(q string) map[string]bool {
	var prose []string
	for _, f := range strings.Fields(q) {
		if !strings.ContainsAny(strings.Trim(f, ".,;:!?()`'\""), "/.") {
			prose = append(prose, f)
		}
	}
	out := map[string]bool{}
	for _, w := range splitWords(strings.Join(prose, " ")) {
		if len(w) >= 3 && !stopWords[w] {
			out[w] = true
			out[strings.TrimSuffix(w, "s")] = true // "budgets" names budget.go
		}
	}
	return out
}

// nameWords are the words of a path's last two parts: directory and file
// name, split at punctuation and camel case, lower-cased.
func nameWords(p string) []string {
	dir, base := path.Split(p)
	base = strings.TrimSuffix(base, path.Ext(base))
	var out []string
	for _, w := range append(splitWords(camel(base)), splitWords(camel(path.Base(dir)))...) {
		if len(w) >= 3 && !stopWords[w] {
			out = append(out, w)
		}
	}
	return out
}

// camel puts a space before each upper-case letter that starts a word.
func camel(s string) string {
	var b strings.Builder
	prev := rune(0)
	for _, r := range s {
		if unicode.IsUpper(r) && unicode.IsLower(prev) {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
		prev = r
	}
	return b.String()
}

func splitWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}
