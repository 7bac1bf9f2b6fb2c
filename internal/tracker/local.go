package tracker

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/azero-dev/azero/internal/filelock"
	"github.com/azero-dev/azero/internal/lazyre"
	"github.com/azero-dev/azero/internal/slug"

	"github.com/azero-dev/azero/internal/safewrite"
)

// Local files issues as numbered markdown files (0001-slug.md) in a
// directory of the repository.
type Local struct {
	Root   string // repository root
	Dir    string // directory relative to Root, e.g. docs/issues
	Writer *safewrite.Writer
	RunID  string
	// KnownLabels are labels the repository uses beyond those its issues
	// name (the configuration's issue.labels).
	KnownLabels []string
}

// Name implements Tracker.
func (l *Local) Name() string { return "local " + l.Dir }

// Check implements Tracker: the directory must be inside the repository
// and writable.
func (l *Local) Check(ctx context.Context) error {
	info, err := os.Stat(l.Root)
	if err != nil || !info.IsDir() {
		return fmt.Errorf("local tracker: repository %s not found", l.Root)
	}
	if l.Dir == "" || path.IsAbs(filepath.ToSlash(l.Dir)) || strings.HasPrefix(path.Clean(filepath.ToSlash(l.Dir)), "..") {
		return fmt.Errorf("local tracker: issues directory %q must be a path inside the repository", l.Dir)
	}
	return nil
}

var issueFile = lazyre.New(`^(\d+)-.*\.md$`)

func (l *Local) abs() string { return filepath.Join(l.Root, filepath.FromSlash(l.Dir)) }

// files returns the issue files by number.
func (l *Local) files() (map[int]string, error) {
	entries, err := os.ReadDir(l.abs())
	if os.IsNotExist(err) {
		return map[int]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("local tracker: %w", err)
	}
	out := map[int]string{}
	for _, e := range entries {
		if m := issueFile().FindStringSubmatch(e.Name()); m != nil && !e.IsDir() {
			n, _ := strconv.Atoi(m[1])
			out[n] = e.Name()
		}
	}
	return out, nil
}

// Find implements Tracker.
func (l *Local) Find(ctx context.Context, marker string) (Issue, bool, error) {
	files, err := l.files()
	if err != nil {
		return Issue{}, false, err
	}
	for _, n := range numbers(files) {
		data, err := os.ReadFile(filepath.Join(l.abs(), files[n]))
		if err != nil {
			return Issue{}, false, fmt.Errorf("local tracker: %w", err)
		}
		if strings.Contains(string(data), marker) {
			return Issue{Number: n, URL: path.Join(filepath.ToSlash(l.Dir), files[n]), Title: ParseTitle(string(data)),
				Labels: ParseLabels(string(data))}, true, nil
		}
	}
	return Issue{}, false, nil
}

func numbers(files map[int]string) []int {
	nums := make([]int, 0, len(files))
	for n := range files {
		nums = append(nums, n)
	}
	sort.Ints(nums)
	return nums
}

// Labels implements Tracker: the labels configured (KnownLabels) and those
// the issues in the directory name, each once (the first spelling seen),
// sorted.
func (l *Local) Labels(ctx context.Context) ([]string, error) {
	files, err := l.files()
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	add := func(names []string) {
		for _, name := range names {
			name = strings.TrimSpace(name)
			if k := strings.ToLower(name); name != "" && !seen[k] {
				seen[k] = true
				out = append(out, name)
			}
		}
	}
	add(l.KnownLabels)
	for _, n := range numbers(files) {
		data, err := os.ReadFile(filepath.Join(l.abs(), files[n]))
		if err != nil {
			return nil, fmt.Errorf("local tracker: %w", err)
		}
		add(ParseLabels(string(data)))
	}
	sort.Slice(out, func(i, j int) bool { return strings.ToLower(out[i]) < strings.ToLower(out[j]) })
	return out, nil
}

// EnsureLabels implements Tracker; local issues keep labels in their text.
func (l *Local) EnsureLabels(ctx context.Context, labels []string) ([]string, error) { return nil, nil }

// Create implements Tracker. Numbers are allocated under a lock on the
// repository directory, so parallel runs never take the same number. The
// file is the issue: its first line is the title, then the labels line,
// then the body (without a title or labels line of its own, so neither is
// written twice).
func (l *Local) Create(ctx context.Context, is Issue) (Issue, error) {
	unlock, err := lockDir(l.Root)
	if err != nil {
		return Issue{}, err
	}
	defer unlock()
	files, err := l.files()
	if err != nil {
		return Issue{}, err
	}
	n := 1
	for k := range files {
		n = max(n, k+1)
	}
	name := fmt.Sprintf("%04d-%s.md", n, slugify(is.Title))
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", is.Title)
	if len(is.Labels) > 0 {
		fmt.Fprintf(&b, "**Labels:** %s\n\n", strings.Join(is.Labels, ", "))
	}
	b.WriteString(strings.TrimRight(Body(is.Body), "\n"))
	b.WriteString("\n")
	rel := path.Join(filepath.ToSlash(l.Dir), name)
	_, err = l.Writer.Write(ctx, safewrite.Request{Root: l.Root, Path: rel, Content: []byte(b.String()),
		Base: &safewrite.Snapshot{Exists: false}, Actor: "tracker:local", RunID: l.RunID})
	if err != nil {
		return Issue{}, fmt.Errorf("local tracker: file issue: %w", err)
	}
	is.Number, is.URL = n, rel
	return is, nil
}

// lockDir takes an exclusive lock on a directory.
func lockDir(dir string) (func(), error) {
	release, err := filelock.Hold(dir)
	if err != nil {
		return nil, fmt.Errorf("local tracker: %w", err)
	}
	return release, nil
}

func slugify(title string) string {
	if s := slug.Make(title, 60); s != "" {
		return s
	}
	return "issue"
}
