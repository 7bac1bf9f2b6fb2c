package review

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/azero-dev/azero/internal/gitx"
)

// DefaultMaxDiffLines caps the diff shown per flagged file (spec #171).
const DefaultMaxDiffLines = 500

// FileDiff is the start of one file's unified diff.
type FileDiff struct {
	Lines []string // the first lines of the file's patch, at most the cap
	Total int      // lines in the whole patch
}

// DiffOptions tune Diffs.
type DiffOptions struct {
	Staged   bool // the index against HEAD, as in AnalyzeOptions
	MaxLines int  // lines kept per file; default DefaultMaxDiffLines
	// Base, when set, is the commit compared with instead of HEAD, and To
	// the tree compared with it, as in AnalyzeOptions: give both the same.
	Base string
	To   string
}

// maxPathspecBytes bounds the paths passed on git's command line; beyond
// it the whole diff is read and filtered, still in one process.
const maxPathspecBytes = 96 << 10

// Diffs returns the unified diffs (git's own, `git diff -p -M` against
// HEAD) of files, keyed by FilePath, from one git process however many
// files there are. Only the first MaxLines lines of each are kept.
// Untracked text files, which git's patch leaves out, are rendered from
// disk as the patch that would add them; a deleted
// file's patch is its full removal.
func Diffs(ctx context.Context, repoDir string, files []FileAnalysis, opts DiffOptions) (map[string]FileDiff, error) {
	repo, err := openRepo(ctx, repoDir)
	if err != nil {
		return nil, err
	}
	return diffs(ctx, repo, files, opts)
}

func diffs(ctx context.Context, repo checkout, files []FileAnalysis, opts DiffOptions) (map[string]FileDiff, error) {
	base := opts.Base
	switch {
	case strings.HasPrefix(base, "-") || strings.HasPrefix(opts.To, "-"):
		return nil, fmt.Errorf("compare %q with %q: a base must name a commit or tree, not an option", opts.Base, opts.To)
	case opts.To != "" && base == "":
		return nil, fmt.Errorf("compare with a tree: name the base too")
	case base == "":
		var err error
		if base, err = repo.base(opts.Staged); err != nil {
			return nil, err
		}
	}
	max := opts.MaxLines
	if max <= 0 {
		max = DefaultMaxDiffLines
	}
	out := map[string]FileDiff{}
	if len(files) == 0 {
		return out, nil
	}
	byHeader := make(map[string]string, len(files))
	var paths []string
	size := 0
	seen := map[string]bool{}
	for _, f := range files {
		old := f.FilePath
		if f.OldPath != "" {
			old = f.OldPath
		}
		byHeader[gitx.DiffHeader(old, f.FilePath)] = f.FilePath
		for _, p := range []string{old, f.FilePath} {
			if !seen[p] {
				seen[p] = true
				paths = append(paths, p)
				size += len(p) + 1
			}
		}
	}
	// Literal pathspecs: a name like "*.go" or ":(glob)x" means itself.
	args := append([]string{"-c", "core.quotePath=true", "--literal-pathspecs"}, diffArgs(base, opts.To, opts.Staged, append([]string{"-p"}, gitx.PatchArgs...)...)...)
	if size <= maxPathspecBytes {
		args = append(args, paths...)
	}
	collect := func(header, line string) error {
		path, ok := byHeader[header]
		if !ok {
			return nil
		}
		d := out[path]
		if len(d.Lines) < max {
			d.Lines = append(d.Lines, line)
		}
		d.Total++
		out[path] = d
		return nil
	}
	err := repo.Stream(ctx, nil, func(r io.Reader) error { return gitx.ScanPatch(r, collect) }, args...)
	if err != nil {
		return nil, fmt.Errorf("diff flagged files in %s: %w", repo.Dir, err)
	}
	// git's patch leaves out untracked files; show them as git would
	// once they are added.
	for _, f := range files {
		if _, ok := out[f.FilePath]; ok || f.ChangeType != New || f.Binary || opts.Staged || opts.To != "" {
			continue
		}
		d, err := newFileDiff(repo.Dir, f, max)
		if err != nil {
			return nil, err
		}
		out[f.FilePath] = d
	}
	return out, nil
}

// newFileDiff renders an untracked file as the patch that would add it.
func newFileDiff(top string, f FileAnalysis, max int) (FileDiff, error) {
	full := filepath.Join(top, filepath.FromSlash(f.FilePath))
	fi, err := os.Lstat(full)
	if err != nil || !fi.Mode().IsRegular() {
		return FileDiff{}, nil // a link or a directory: the summary names it
	}
	data, err := os.ReadFile(full)
	if err != nil {
		return FileDiff{}, fmt.Errorf("read untracked file %s: %w", displayPath(f.FilePath), err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(data) == 0 {
		lines = nil
	}
	head := []string{gitx.DiffHeader(f.FilePath, f.FilePath), "new file (untracked)", "--- /dev/null", "+++ b/" + gitx.QuotePath(f.FilePath)}
	if len(lines) > 0 {
		head = append(head, fmt.Sprintf("@@ -0,0 +1,%d @@", len(lines)))
	}
	d := FileDiff{Total: len(head) + len(lines)}
	for _, l := range append(head, prefixed(lines)...) {
		if len(d.Lines) == max {
			break
		}
		d.Lines = append(d.Lines, l)
	}
	return d, nil
}

func prefixed(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = "+" + l
	}
	return out
}
