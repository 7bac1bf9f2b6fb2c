package review

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
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
	FilePath      string `json:"file_path"`
	OldPath       string `json:"old_path,omitempty"` // the name at HEAD of a renamed file
	LinesAdded    int    `json:"lines_added"`
	LinesDeleted  int    `json:"lines_deleted"`
	OriginalLines int    `json:"original_lines"` // lines at HEAD; 0 for new and binary files
	// AfterLines is LinesAfter, set by Analyze for the JSON document
	// (named as `azero write` and `azero apply` name it).
	AfterLines     int        `json:"lines_after"`
	ChangeRatio    float64    `json:"change_ratio"`
	ChangeType     ChangeType `json:"change_type"`
	RequiresReview bool       `json:"requires_review"`
	Binary         bool       `json:"binary"`
	// Kind says what changed when it is not lines of a text file, so the
	// report can say why a file was flagged: only its line endings (set
	// on flagged files, whose reason matters), a symbolic link, a
	// submodule. "" for ordinary text and binary files.
	Kind Kind `json:"kind,omitempty"`
	// Before and After are what the path held when Kind is set: a link's
	// targets, a submodule's commits (After is "" when the commit checked
	// out in the working tree is not known), the line endings ("CRLF",
	// "LF" or "mixed"). Empty on the side where the path is absent.
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
	// Test marks a test file (AnalyzeOptions.Tests): the tests are the
	// referee's evidence, so a modified one that loses any line is
	// flagged, with the lines it loses in its banner.
	Test bool `json:"test,omitempty"`
}

// Kind is what a changed path is, when not lines of a text file.
type Kind string

// Kinds of change the report explains in its own words.
const (
	LineEndings Kind = "line_endings" // the text is the same but for CRLF/LF line endings
	Symlink     Kind = "symlink"      // a symbolic link (its content is its target)
	Submodule   Kind = "submodule"    // a submodule (its content is a commit id)
)

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
// ratio exceeds the threshold or it lost more than half of its lines (or,
// for a test file, any line), NEW never.
func RequiresReview(f FileAnalysis) bool {
	switch f.ChangeType {
	case Replaced, Deleted:
		return true
	case Modified:
		return f.ChangeRatio > Threshold || float64(f.LinesDeleted) > Threshold*float64(f.OriginalLines) ||
			f.Test && f.LinesDeleted > 0
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
	// To, when set, is a tree (or commit) the changes are compared with
	// instead of the working tree or the index: the analysis is then of
	// two stored trees, Base to To (what a revision changed between two
	// snapshots of a work tree). Base must be set with it.
	To string
	// Tests, when set, says which paths are test files (FileAnalysis.Test):
	// a modified test file that loses any line is flagged.
	Tests func(path string) bool
}

// ErrNoCommits reports a repository whose first commit has not been made,
// when what is compared with HEAD is the working tree (with Staged, the
// first commit is compared with the empty tree: every file is NEW).
var ErrNoCommits = gitx.ErrNoCommits

// ErrConflicts is matched by the error of an analysis of a repository
// whose index holds unresolved merge conflicts (a *ConflictError): what a
// commit would take is not known until they are resolved, so the gate
// refuses in every mode.
var ErrConflicts = errors.New("unresolved merge conflicts")

// ConflictError lists the paths with unresolved merge conflicts.
type ConflictError struct {
	Paths []string
}

func (e *ConflictError) Error() string {
	names := make([]string, 0, 3)
	for _, p := range e.Paths[:min(3, len(e.Paths))] {
		names = append(names, displayPath(p))
	}
	list := strings.Join(names, ", ")
	if len(e.Paths) > 3 {
		list += fmt.Sprintf(" and %d more", len(e.Paths)-3)
	}
	verb := "has"
	if len(e.Paths) > 1 {
		verb = "have"
	}
	return fmt.Sprintf("%s %s %s (%s): resolve the conflicts, git add each resolved file, then run the review again (git status lists them; git merge --abort gives up the merge)",
		plural(len(e.Paths), "file", "files"), verb, ErrConflicts, list)
}

// Is matches ErrConflicts.
func (e *ConflictError) Is(target error) bool { return target == ErrConflicts }

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

// checkout is an opened repository: its work tree and what a commit is
// compared with. The embedded Repo runs git at the top level.
type checkout struct {
	gitx.Repo
	head      string // HEAD's commit, resolved once so every stage sees the same; "" before the first commit
	emptyTree string
}

// openRepo resolves the repository's top level and HEAD with one git
// process.
func openRepo(ctx context.Context, repoDir string) (checkout, error) {
	if repoDir == "" {
		repoDir = "."
	}
	c, err := gitx.OpenCheckout(ctx, repoDir)
	if err != nil {
		return checkout{}, err
	}
	return checkout{Repo: gitx.Repo{Dir: c.Top}, head: c.Head, emptyTree: c.EmptyTree()}, nil
}

// base returns what a commit is compared with: HEAD's commit or, for the
// first commit of a repository (staged only), the empty tree. Comparing the
// working tree needs a commit: the error says what to do.
func (c checkout) base(staged bool) (string, error) {
	switch {
	case c.head != "":
		return c.head, nil
	case staged:
		return c.emptyTree, nil
	}
	return "", fmt.Errorf("%s: %w, so there is nothing to compare the working tree with: stage the files (git add) and review the first commit with azero gate --staged (what the pre-commit hook runs), or make the first commit yourself", c.Dir, ErrNoCommits)
}

// analyzeRepo analyses an opened repository.
func analyzeRepo(ctx context.Context, repo checkout, opts AnalyzeOptions) ([]FileAnalysis, error) {
	base := opts.Base
	switch {
	case strings.HasPrefix(base, "-") || strings.HasPrefix(opts.To, "-"):
		return nil, fmt.Errorf("compare %q with %q: a base must name a commit or tree, not an option", opts.Base, opts.To)
	case opts.To != "" && base == "":
		return nil, errors.New("compare with a tree: name the base too")
	case base == "":
		var err error
		if base, err = repo.base(opts.Staged); err != nil {
			return nil, err
		}
	}
	a := &analysis{repo: repo.Repo, base: base, to: opts.To, staged: opts.Staged || opts.To != "", tests: opts.Tests, blobs: map[string]blobInfo{}, stats: map[string]gitx.NumStat{},
		byKey: map[string]int{}, keep: map[string]bool{}, counted: map[string]bool{}, seed: maphash.MakeSeed()}
	stop := a.report(opts.Progress)
	err := a.run(ctx)
	stop()
	if err == nil && len(a.conflicts) > 0 {
		err = &ConflictError{Paths: a.conflicts}
	}
	if err == nil {
		var files []FileAnalysis
		if files, err = a.files(); err == nil {
			for i := range files {
				files[i].AfterLines = files[i].LinesAfter()
			}
			return files, nil
		}
	}
	return nil, fmt.Errorf("analyse changes in %s: %w", repo.Dir, err)
}

// analysis holds what the concurrent stages found. changes, stats, byKey
// and conflicts are written only by the diff stage, blobs only by the
// cat-file stage, untracked and unmerged only by the untracked stage; all
// are read after they end. keep is shared by the
// diff and cat-file stages, under mu.
type analysis struct {
	repo   gitx.Repo
	base   string // the commit (or empty tree) compared with: HEAD, or AnalyzeOptions.Base
	staged bool   // the new side is stored objects: the index, or to
	to     string // the tree compared with base, when it is not the index or the working tree
	tests  func(path string) bool

	changes   []gitx.Change
	stats     map[string]gitx.NumStat // by statKey
	byKey     map[string]int          // index in changes by statKey
	conflicts []string
	blobs     map[string]blobInfo // by object id
	untracked []FileAnalysis
	unmerged  []string

	mu      sync.Mutex
	keep    map[string]bool // ids whose content is kept (link targets)
	counted map[string]bool // ids whose measurement is progress (see run)
	seed    maphash.Seed

	done, total atomic.Int64
}

// blobInfo is what the cat-file stage measured of one object.
type blobInfo struct {
	lines int    // as numstat counts them
	eol   eolSum // its line endings and text without them
	text  string // the content, for the ids in keep
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

// diffArgs are the arguments of the one diff that lists every change
// against base: of the working tree, the index (staged) or the tree to.
func diffArgs(base, to string, staged bool, extra ...string) []string {
	args := []string{"diff", "-M", "--no-ext-diff", "--no-textconv", "--no-color"}
	args = append(args, extra...)
	switch {
	case to != "":
		return append(args, base, to, "--")
	case staged:
		args = append(args, "--cached")
	}
	return append(args, base, "--")
}

// run streams the diff, feeding old blob ids to cat-file as the raw
// records arrive (git prints them all before it computes the numstat
// section), while, comparing the working tree, untracked files and
// unmerged paths are listed (that diff shows a conflicted file as
// modified; the index's diff shows it as unmerged, U) and untracked files
// read.
func (a *analysis) run(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	ids := make(chan string, 1024)
	g.Go(func() error {
		defer close(ids)
		requested := map[string]bool{}
		// request asks cat-file for an object; counted says it is a
		// change's old blob, whose measurement is that change's progress.
		request := func(id string, keep, counted bool) error {
			again := false
			if requested[id] {
				if counted {
					a.done.Add(1) // measured once for all
				}
				a.mu.Lock()
				// Asked before without keeping its content (a file whose
				// blob is also a link's): ask again.
				again = keep && !a.keep[id]
				a.keep[id] = a.keep[id] || keep
				a.mu.Unlock()
				if !again {
					return nil
				}
			}
			requested[id] = true
			if !again {
				a.mu.Lock()
				a.keep[id] = a.keep[id] || keep
				a.counted[id] = counted
				a.mu.Unlock()
			}
			select {
			case ids <- id:
				return nil
			case <-gctx.Done():
				return gctx.Err()
			}
		}
		onChange := func(c gitx.Change) error {
			if c.Status == 'U' {
				a.conflicts = append(a.conflicts, c.Path)
				return nil
			}
			a.changes = append(a.changes, c)
			a.byKey[statKey(renameSource(c), c.Path)] = len(a.changes) - 1
			a.total.Add(1)
			if countable(c) {
				if err := request(c.OldID, c.OldMode == gitx.ModeSymlink, true); err != nil {
					return err
				}
			} else {
				a.done.Add(1)
			}
			// A link's new target: from the index; the working tree's is
			// read from disk.
			if c.NewMode == gitx.ModeSymlink && !a.newOnDisk(c) {
				return request(c.NewID, true, false)
			}
			return nil
		}
		onStat := func(s gitx.NumStat) error {
			key := statKey(s.OldPath, s.Path)
			a.stats[key] = s
			// Converted line endings delete and add the same lines: the
			// new text is measured too (the working tree's from disk).
			if i, ok := a.byKey[key]; ok && eolCandidate(a.changes[i], s) && !a.newOnDisk(a.changes[i]) {
				return request(a.changes[i].NewID, false, false)
			}
			return nil
		}
		return a.repo.Stream(gctx, nil, func(out io.Reader) error {
			return gitx.ParseDiffZ(out, onChange, onStat)
		}, diffArgs(a.base, a.to, a.staged, "--raw", "--numstat", "-z", "--no-abbrev")...)
	})
	g.Go(func() error {
		buf := make([]byte, 64<<10)
		var h maphash.Hash
		h.SetSeed(a.seed)
		return a.repo.CatFile(gctx, ids, func(obj gitx.Object, r io.Reader) error {
			a.mu.Lock()
			keep, counted := a.keep[obj.ID], a.counted[obj.ID]
			a.mu.Unlock()
			if obj.Missing {
				from := "the index"
				if counted {
					from = "the commit compared with"
				}
				return fmt.Errorf("object %s from %s is missing from the repository: run git fsck", obj.ID, from)
			}
			var info blobInfo
			if keep && obj.Size <= maxKept {
				b, err := io.ReadAll(r)
				if err != nil {
					return fmt.Errorf("read blob %s: %w", obj.ID, err)
				}
				info.text = string(b)
				r = bytes.NewReader(b)
			}
			n, _, err := countLines(r, false, buf, &h, &info.eol)
			if err != nil {
				return fmt.Errorf("read blob %s: %w", obj.ID, err)
			}
			info.lines = n
			prev, seen := a.blobs[obj.ID]
			if !seen || prev.text == "" {
				a.blobs[obj.ID] = info
			}
			if counted && !seen {
				a.done.Add(1)
			}
			return nil
		})
	})
	if !a.staged {
		g.Go(func() error { return a.readUntracked(gctx) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if len(a.unmerged) > 0 {
		a.conflicts = a.unmerged
	}
	return nil
}

// newOnDisk reports whether the change's new side is read from the working
// tree rather than asked of cat-file: always when the working tree is
// compared, since the id git prints for a working-tree file may name an
// object it hashed but never stored (it hashes a file to pair it with a
// rename's source: `git mv a b`, then an edit of b), and for a file git
// left unhashed.
func (a *analysis) newOnDisk(c gitx.Change) bool {
	return !a.staged || gitx.ZeroID(c.NewID)
}

// maxKept bounds the content kept of an object (a link target is a path).
const maxKept = 64 << 10

func renameSource(c gitx.Change) string {
	if c.Status == 'R' || c.Status == 'C' {
		return c.OldPath
	}
	return ""
}

// eolCandidate reports whether a change could be a conversion of line
// endings: a regular file on both sides whose numstat deletes as many
// lines as it adds.
func eolCandidate(c gitx.Change, s gitx.NumStat) bool {
	regular := func(m uint32) bool { return m&0o170000 == 0o100000 }
	return !s.Binary && s.Added == s.Deleted && s.Added > 0 && regular(c.OldMode) && regular(c.NewMode) &&
		(c.Status == 'M' || c.Status == 'R' || c.Status == 'C')
}

// countable reports whether the change has an old blob whose lines count.
func countable(c gitx.Change) bool {
	return c.Status != 'A' && c.OldMode != 0 && c.OldMode&0o170000 != gitx.ModeGitlink && !gitx.ZeroID(c.OldID)
}

// readUntracked lists untracked, not-ignored files and the paths with
// merge conflicts with one git process, and reads each untracked file
// from disk.
func (a *analysis) readUntracked(ctx context.Context) error {
	listing, err := a.repo.ListUntrackedAndUnmerged(ctx)
	if err != nil {
		return err
	}
	a.unmerged = listing.Unmerged
	paths := listing.Untracked
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
		fa.LinesAdded, _, _ = countLines(strings.NewReader(target), false, buf, nil, nil)
		fa.Kind, fa.After = Symlink, target
	case fi.Mode().IsRegular():
		f, err := os.Open(full)
		if err != nil {
			return fa, fmt.Errorf("read untracked file %s: %w", displayPath(p), err)
		}
		n, binary, err := countLines(f, true, buf, nil, nil)
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

// eolSum describes a text's line endings: how many lines end in LF and
// how many of those in CRLF, and a hash of the text with every CRLF read
// as LF. Two texts with equal hashes and different endings differ only in
// their line endings.
type eolSum struct {
	newlines, crlf int
	norm           uint64
}

// endings names the line endings: "LF", "CRLF" or "mixed".
func (e eolSum) endings() string {
	switch {
	case e.crlf == 0:
		return "LF"
	case e.crlf == e.newlines:
		return "CRLF"
	}
	return "mixed"
}

// countLines counts lines as git's numstat does (a last line without a
// line feed counts). With sniff, content with a NUL in its first 8000
// bytes is reported binary. With h and eol, it also sums the line endings
// into eol (h is reset and used for the hash).
func countLines(r io.Reader, sniff bool, buf []byte, h *maphash.Hash, eol *eolSum) (lines int, binary bool, err error) {
	var seen int64
	var last byte
	pendingCR := false
	if h != nil {
		h.Reset()
	}
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
			nl := bytes.Count(chunk, []byte{'\n'})
			lines += nl
			if h != nil {
				eol.newlines += nl
				pendingCR = hashEOL(h, chunk, pendingCR, &eol.crlf)
			}
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
	if h != nil {
		if pendingCR {
			h.WriteByte('\r')
		}
		eol.norm = h.Sum64()
	}
	return lines, false, nil
}

// hashEOL hashes p with each CR that comes before an LF left out, and
// counts those. pendingCR says the previous chunk ended with a CR that was
// not hashed yet; the result says the same of p.
func hashEOL(h *maphash.Hash, p []byte, pendingCR bool, crlf *int) bool {
	if len(p) == 0 {
		return pendingCR
	}
	if pendingCR {
		if p[0] == '\n' {
			*crlf++
		} else {
			h.WriteByte('\r')
		}
	}
	for {
		i := bytes.IndexByte(p, '\r')
		if i < 0 {
			h.Write(p)
			return false
		}
		h.Write(p[:i])
		switch {
		case i+1 == len(p):
			return true
		case p[i+1] == '\n':
			*crlf++
		default:
			h.WriteByte('\r')
		}
		p = p[i+1:]
	}
}

// files joins what the stages found into the analysis, sorted by path.
func (a *analysis) files() ([]FileAnalysis, error) {
	out := make([]FileAnalysis, 0, len(a.changes)+len(a.untracked))
	inDiff := make(map[string]bool, len(a.changes))
	var buf []byte
	for _, c := range a.changes {
		oldPath := renameSource(c)
		st, ok := a.stats[statKey(oldPath, c.Path)]
		if !ok {
			return nil, fmt.Errorf("git listed %s without its line counts", displayPath(c.Path))
		}
		fa := FileAnalysis{FilePath: c.Path, OldPath: oldPath, LinesAdded: st.Added, LinesDeleted: st.Deleted, Binary: st.Binary}
		original := st.Deleted // for content git does not store as a blob (a submodule)
		var old blobInfo
		if countable(c) {
			if old, ok = a.blobs[c.OldID]; !ok {
				return nil, fmt.Errorf("no line count for %s (blob %s)", displayPath(c.Path), c.OldID)
			}
			original = old.lines
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
		fa.Test = a.tests != nil && (a.tests(c.Path) || oldPath != "" && a.tests(oldPath))
		fa.RequiresReview = RequiresReview(fa)
		if err := a.explain(&fa, c, st, old, &buf); err != nil {
			return nil, err
		}
		inDiff[c.Path] = true
		out = append(out, fa)
	}
	for _, fa := range a.untracked {
		// A path removed from the index but still on disk is both deleted
		// (for the commit) and untracked; the deletion is what commits.
		if !inDiff[fa.FilePath] {
			fa.Test = a.tests != nil && a.tests(fa.FilePath)
			out = append(out, fa)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].FilePath < out[j].FilePath })
	return out, nil
}

// explain sets Kind, Before and After: what a submodule or a link holds,
// and whether a flagged text file differs only in its line endings. The
// working tree's side is read from disk (git leaves it unhashed).
func (a *analysis) explain(fa *FileAnalysis, c gitx.Change, st gitx.NumStat, old blobInfo, buf *[]byte) error {
	oldKind, newKind := c.OldMode&0o170000, c.NewMode&0o170000
	switch {
	case oldKind == gitx.ModeGitlink || newKind == gitx.ModeGitlink:
		fa.Kind = Submodule
		if oldKind == gitx.ModeGitlink {
			fa.Before = c.OldID
		}
		if newKind == gitx.ModeGitlink && !gitx.ZeroID(c.NewID) {
			fa.After = c.NewID
		}
	case oldKind == gitx.ModeSymlink || newKind == gitx.ModeSymlink:
		fa.Kind = Symlink
		if oldKind == gitx.ModeSymlink {
			fa.Before = old.text
		}
		switch {
		case newKind != gitx.ModeSymlink:
		case a.newOnDisk(c):
			target, err := os.Readlink(filepath.Join(a.repo.Dir, filepath.FromSlash(c.Path)))
			if err != nil {
				return fmt.Errorf("read link %s: %w", displayPath(c.Path), err)
			}
			fa.After = target
		default:
			fa.After = a.blobs[c.NewID].text
		}
	case fa.RequiresReview && eolCandidate(c, st):
		var now eolSum
		if a.newOnDisk(c) {
			if *buf == nil {
				*buf = make([]byte, 64<<10)
			}
			f, err := os.Open(filepath.Join(a.repo.Dir, filepath.FromSlash(c.Path)))
			if err != nil {
				return fmt.Errorf("read %s: %w", displayPath(c.Path), err)
			}
			var h maphash.Hash
			h.SetSeed(a.seed)
			_, _, err = countLines(f, false, *buf, &h, &now)
			f.Close()
			if err != nil {
				return fmt.Errorf("read %s: %w", displayPath(c.Path), err)
			}
		} else {
			b, ok := a.blobs[c.NewID]
			if !ok {
				return fmt.Errorf("no content measured for %s (blob %s)", displayPath(c.Path), c.NewID)
			}
			now = b.eol
		}
		// git saw lines change; equal text without CRs means only their
		// endings did.
		if now.norm == old.eol.norm {
			fa.Kind, fa.Before, fa.After = LineEndings, old.eol.endings(), now.endings()
		}
	}
	return nil
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
