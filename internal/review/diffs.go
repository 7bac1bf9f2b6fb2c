package review

import (
	"context"
	"fmt"
	"io"

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
}

// maxPathspecBytes bounds the paths passed on git's command line; beyond
// it the whole diff is read and filtered, still in one process.
const maxPathspecBytes = 96 << 10

// Diffs returns the unified diffs (git's own, `git diff -p -M` against
// HEAD) of files, keyed by FilePath, from one git process however many
// files there are. Only the first MaxLines lines of each are kept. Files
// without a patch in git's output (untracked ones) are absent; a deleted
// file's patch is its full removal.
func Diffs(ctx context.Context, repoDir string, files []FileAnalysis, opts DiffOptions) (map[string]FileDiff, error) {
	repo, err := openRepo(ctx, repoDir)
	if err != nil {
		return nil, err
	}
	return diffs(ctx, repo, files, opts)
}

func diffs(ctx context.Context, repo gitx.Repo, files []FileAnalysis, opts DiffOptions) (map[string]FileDiff, error) {
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
	args := append([]string{"-c", "core.quotePath=true", "--literal-pathspecs"}, diffArgs(opts.Staged, append([]string{"-p"}, gitx.PatchArgs...)...)...)
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
	return out, nil
}
