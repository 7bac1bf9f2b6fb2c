package review

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/azero-dev/azero/internal/gitx"
)

// Threshold is the share of a file (spec #171: 50%) beyond which a change
// is flagged. It is deliberately not configurable.
const Threshold = 0.5

// ChangeType classifies a changed file.
type ChangeType string

// Change types (spec #171, DiffAnalysis.change_type).
const (
	Modified ChangeType = "MODIFIED"
	Replaced ChangeType = "REPLACED"
	New      ChangeType = "NEW"
	Deleted  ChangeType = "DELETED"
)

// FileAnalysis is what a commit would do to one file. The JSON names are
// the spec's (#171, DiffAnalysis); old_path and binary are azero's extras.
type FileAnalysis struct {
	FilePath       string     `json:"file_path"`
	OldPath        string     `json:"old_path,omitempty"` // the name at HEAD of a renamed file
	LinesAdded     int        `json:"lines_added"`
	LinesDeleted   int        `json:"lines_deleted"`
	OriginalLines  int        `json:"original_lines"` // lines at HEAD; 0 for new and binary files
	ChangeRatio    float64    `json:"change_ratio"`
	ChangeType     ChangeType `json:"change_type"`
	RequiresReview bool       `json:"requires_review"`
	Binary         bool       `json:"binary"`
}

// LinesAfter is the file's line count after the change.
func (f FileAnalysis) LinesAfter() int {
	if f.ChangeType == Deleted {
		return 0
	}
	return f.OriginalLines - f.LinesDeleted + f.LinesAdded
}

// ChangeRatio is spec #171's change_ratio, (added+deleted) /
// (original*2), capped at 1.0. A file with no original lines scores 1.0
// when anything changed (all of it is new) and 0 otherwise.
func ChangeRatio(original, added, deleted int) float64 {
	if original <= 0 {
		if added+deleted > 0 {
			return 1
		}
		return 0
	}
	return min(float64(added+deleted)/float64(2*original), 1)
}

// Classify classifies a file that exists both at HEAD and after the
// change (NEW and DELETED come from whether it exists): REPLACED when more
// than half of the original lines were deleted and something was added,
// else MODIFIED.
func Classify(original, added, deleted int) ChangeType {
	if float64(deleted) > Threshold*float64(original) && added > 0 {
		return Replaced
	}
	return Modified
}

// RequiresReview reports whether a file must be flagged (see the package
// documentation): REPLACED and DELETED always, MODIFIED when its change
// ratio exceeds the threshold or it lost more than half of its lines, NEW
// never.
func RequiresReview(f FileAnalysis) bool {
	switch f.ChangeType {
	case Replaced, Deleted:
		return true
	case Modified:
		return f.ChangeRatio > Threshold || float64(f.LinesDeleted) > Threshold*float64(f.OriginalLines)
	}
	return false
}

// AnalyzeOptions tune Analyze.
type AnalyzeOptions struct {
	// Staged limits the analysis to the index against HEAD (what a plain
	// `git commit` takes); otherwise the working tree and untracked,
	// not-ignored files are compared with HEAD.
	Staged bool
	// Base, when set, is the commit (an object id or revision, never an
	// option) the changes are compared with instead of HEAD: the parent of
	// HEAD for what `git commit --amend` would make, for example.
	Base string
	// Progress, when set, is told how many of the known units of work are
	// done, from one goroutine, at most every 100 ms and once at the end.
	Progress func(done, total int)
}

// ErrNoCommits reports a repository whose first commit has not been made.
var ErrNoCommits = gitx.ErrNoCommits

// Analyze reports, file by file, what a commit in the repository holding
// repoDir would take, sorted by path (relative to the repository's top
// level). No changes give an empty slice.
func Analyze(ctx context.Context, repoDir string, opts AnalyzeOptions) ([]FileAnalysis, error) {
	repo, err := openRepo(ctx, repoDir)
	if err != nil {
		return nil, err
	}
	return analyzeRepo(ctx, repo, opts)
}

// openRepo resolves the repository's top level and requires a commit.
func openRepo(ctx context.Context, repoDir string) (gitx.Repo, error) {
	if repoDir == "" {
		repoDir = "."
	}
	top, err := gitx.TopLevel(ctx, repoDir)
	if err != nil {
		return gitx.Repo{}, err
	}
	repo := gitx.Repo{Dir: top}
	ok, err := repo.HasCommits(ctx)
	if err != nil {
		return repo, err
	}
	if !ok {
		return repo, fmt.Errorf("%s: %w, so there is nothing to compare a commit with: make the first commit yourself (git add, git commit), then let azero review the next ones", top, ErrNoCommits)
	}
	return repo, nil
}

// analyzeRepo analyses an opened repository.
func analyzeRepo(ctx context.Context, repo gitx.Repo, opts AnalyzeOptions) ([]FileAnalysis, error) {
	if strings.HasPrefix(opts.Base, "-") {
		return nil, fmt.Errorf("compare with %q: a base must name a commit, not an option", opts.Base)
	}
	a := &analysis{repo: repo, staged: opts.Staged, base: opts.Base, lines: map[string]int{}, stats: map[string]gitx.NumStat{}}
	stop := a.report(opts.Progress)
	err := a.run(ctx)
	stop()
	if err == nil {
		var files []FileAnalysis
		if files, err = a.files(); err == nil {
			return files, nil
		}
	}
	return nil, fmt.Errorf("analyse changes in %s: %w", repo.Dir, err)
}

// analysis holds what the concurrent stages found. changes and stats are
// written only by the diff stage, lines only by the cat-file stage,
// untracked only by the untracked stage; all are read after they end.
type analysis struct {
	repo   gitx.Repo
	staged bool
	base   string // compared with instead of HEAD, when set

	changes   []gitx.Change
	stats     map[string]gitx.NumStat // by statKey
	lines     map[string]int          // original line count by blob id
	untracked []FileAnalysis

	done, total atomic.Int64
}

func statKey(oldPath, path string) string { return oldPath + "\x00" + path }

// report calls progress until the returned stop function is called.
func (a *analysis) report(progress func(done, total int)) (stop func()) {
	if progress == nil {
		return func() {}
	}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				progress(int(a.done.Load()), int(a.total.Load()))
				return
			case <-tick.C:
				progress(int(a.done.Load()), int(a.total.Load()))
			}
		}
	})
	return func() { close(quit); wg.Wait() }
}

// diffArgs are the arguments of the one diff that lists every change.
func diffArgs(staged bool, extra ...string) []string {
	return diffArgsAgainst(staged, "", extra...)
}

// diffArgsAgainst is diffArgs comparing with base ("" for HEAD).
func diffArgsAgainst(staged bool, base string, extra ...string) []string {
	if base == "" {
		base = "HEAD"
	}
	args := []string{"diff", "-M", "--no-ext-diff", "--no-textconv", "--no-color"}
	args = append(args, extra...)
	if staged {
		args = append(args, "--cached")
	}
	return append(args, base, "--")
}

// run streams the diff, feeding old blob ids to cat-file as the raw
// records arrive (git prints them all before it computes the numstat
// section), while untracked files are listed and read.
func (a *analysis) run(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	ids := make(chan string, 1024)
	g.Go(func() error {
		defer close(ids)
		requested := map[string]bool{}
		onChange := func(c gitx.Change) error {
			if c.Status == 'U' {
				return fmt.Errorf("%s has unresolved merge conflicts: resolve them and git add it, then run the gate again", displayPath(c.Path))
			}
			a.changes = append(a.changes, c)
			a.total.Add(1)
			if !countable(c) {
				a.done.Add(1)
				return nil
			}
			if requested[c.OldID] {
				a.done.Add(1)
				return nil
			}
			requested[c.OldID] = true
			select {
			case ids <- c.OldID:
				return nil
			case <-gctx.Done():
				return gctx.Err()
			}
		}
		onStat := func(s gitx.NumStat) error {
			a.stats[statKey(s.OldPath, s.Path)] = s
			return nil
		}
		return a.repo.Stream(gctx, nil, func(out io.Reader) error {
			return gitx.ParseDiffZ(out, onChange, onStat)
		}, diffArgsAgainst(a.staged, a.base, "--raw", "--numstat", "-z", "--no-abbrev")...)
	})
	g.Go(func() error {
		buf := make([]byte, 64<<10)
		return a.repo.CatFile(gctx, ids, func(obj gitx.Object, r io.Reader) error {
			if obj.Missing {
				return fmt.Errorf("object %s from HEAD is missing from the repository: run git fsck", obj.ID)
			}
			n, _, err := countLines(r, false, buf)
			if err != nil {
				return fmt.Errorf("read blob %s: %w", obj.ID, err)
			}
			a.lines[obj.ID] = n
			a.done.Add(1)
			return nil
		})
	})
	if !a.staged {
		g.Go(func() error { return a.readUntracked(gctx) })
	}
	return g.Wait()
}

// countable reports whether the change has an old blob whose lines count.
func countable(c gitx.Change) bool {
	return c.Status != 'A' && c.OldMode != 0 && c.OldMode&0o170000 != gitx.ModeGitlink && !gitx.ZeroID(c.OldID)
}

// readUntracked lists untracked, not-ignored files with one git process
// and reads each from disk.
func (a *analysis) readUntracked(ctx context.Context) error {
	out, err := a.repo.Run(ctx, "ls-files", "--others", "--exclude-standard", "-z")
	if err != nil {
		return err
	}
	paths, err := gitx.SplitZ(out)
	if err != nil {
		return fmt.Errorf("list untracked files: %w", err)
	}
	a.total.Add(int64(len(paths)))
	buf := make([]byte, 64<<10)
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return err
		}
		fa, err := readUntracked(a.repo.Dir, p, buf)
		if err != nil {
			return err
		}
		a.untracked = append(a.untracked, fa)
		a.done.Add(1)
	}
	return nil
}

// readUntracked measures one untracked file the way git would store it:
// a symbolic link is its target (one line without a line feed), a nested
// repository ("dir/") a reference without lines.
func readUntracked(top, p string, buf []byte) (FileAnalysis, error) {
	fa := FileAnalysis{FilePath: p, ChangeType: New}
	if strings.HasSuffix(p, "/") {
		fa.ChangeRatio = ChangeRatio(0, 0, 0)
		return fa, nil
	}
	full := filepath.Join(top, filepath.FromSlash(p))
	fi, err := os.Lstat(full)
	if err != nil {
		return fa, fmt.Errorf("read untracked file %s: %w", displayPath(p), err)
	}
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		target, err := os.Readlink(full)
		if err != nil {
			return fa, fmt.Errorf("read untracked link %s: %w", displayPath(p), err)
		}
		fa.LinesAdded, _, _ = countLines(strings.NewReader(target), false, buf)
	case fi.Mode().IsRegular():
		f, err := os.Open(full)
		if err != nil {
			return fa, fmt.Errorf("read untracked file %s: %w", displayPath(p), err)
		}
		n, binary, err := countLines(f, true, buf)
		f.Close()
		if err != nil {
			return fa, fmt.Errorf("read untracked file %s: %w", displayPath(p), err)
		}
		if binary {
			fa.Binary = true
		} else {
			fa.LinesAdded = n
		}
	}
	// Anything else (a socket, a FIFO) is never opened: git does not store it.
	fa.ChangeRatio = ChangeRatio(0, fa.LinesAdded, 0)
	return fa, nil
}

// firstFewBytes is how much git inspects to call content binary.
const firstFewBytes = 8000

// countLines counts lines as git's numstat does (a last line without a
// line feed counts). With sniff, content with a NUL in its first 8000
// bytes is reported binary.
func countLines(r io.Reader, sniff bool, buf []byte) (lines int, binary bool, err error) {
	var seen int64
	var last byte
	for {
		n, err := r.Read(buf)
		if n > 0 {
			chunk := buf[:n]
			if sniff && seen < firstFewBytes {
				head := chunk[:min(int64(n), firstFewBytes-seen)]
				if bytes.IndexByte(head, 0) >= 0 {
					return 0, true, nil
				}
			}
			lines += bytes.Count(chunk, []byte{'\n'})
			last = chunk[n-1]
			seen += int64(n)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, false, err
		}
	}
	if seen > 0 && last != '\n' {
		lines++
	}
	return lines, false, nil
}

// files joins what the stages found into the analysis, sorted by path.
func (a *analysis) files() ([]FileAnalysis, error) {
	out := make([]FileAnalysis, 0, len(a.changes)+len(a.untracked))
	inDiff := make(map[string]bool, len(a.changes))
	for _, c := range a.changes {
		oldPath := ""
		if c.Status == 'R' || c.Status == 'C' {
			oldPath = c.OldPath
		}
		st, ok := a.stats[statKey(oldPath, c.Path)]
		if !ok {
			return nil, fmt.Errorf("git listed %s without its line counts", displayPath(c.Path))
		}
		fa := FileAnalysis{FilePath: c.Path, OldPath: oldPath, LinesAdded: st.Added, LinesDeleted: st.Deleted, Binary: st.Binary}
		original := st.Deleted // for content git does not store as a blob (a submodule)
		if countable(c) {
			n, ok := a.lines[c.OldID]
			if !ok {
				return nil, fmt.Errorf("no line count for %s (blob %s)", displayPath(c.Path), c.OldID)
			}
			original = n
		}
		if !st.Binary {
			fa.OriginalLines = original
		}
		switch {
		case c.Status == 'A':
			fa.ChangeType = New
			fa.ChangeRatio = ChangeRatio(0, fa.LinesAdded, 0)
		case c.Status == 'D':
			fa.ChangeType = Deleted
			fa.ChangeRatio = 1
		case st.Binary:
			fa.ChangeType = Replaced
			fa.ChangeRatio = 1
		default:
			fa.ChangeType = Classify(fa.OriginalLines, fa.LinesAdded, fa.LinesDeleted)
			fa.ChangeRatio = ChangeRatio(fa.OriginalLines, fa.LinesAdded, fa.LinesDeleted)
		}
		fa.RequiresReview = RequiresReview(fa)
		inDiff[c.Path] = true
		out = append(out, fa)
	}
	for _, fa := range a.untracked {
		// A path removed from the index but still on disk is both deleted
		// (for the commit) and untracked; the deletion is what commits.
		if !inDiff[fa.FilePath] {
			out = append(out, fa)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].FilePath < out[j].FilePath })
	return out, nil
}

// Flagged returns the paths of the files that require review, in order.
func Flagged(files []FileAnalysis) []string {
	out := []string{}
	for _, f := range files {
		if f.RequiresReview {
			out = append(out, f.FilePath)
		}
	}
	return out
}
