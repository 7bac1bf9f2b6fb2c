package gitx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Head returns the commit id HEAD names.
func (r Repo) Head(ctx context.Context) (string, error) {
	out, err := r.Run(ctx, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// CurrentBranch returns the short name of the checked-out branch, or ""
// when HEAD is detached.
func (r Repo) CurrentBranch(ctx context.Context) (string, error) {
	out, err := r.Run(ctx, "symbolic-ref", "--quiet", "--short", "HEAD")
	var ge *Error
	if errors.As(err, &ge) && ge.ExitCode == 1 {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// BranchExists reports whether refs/heads/name exists.
func (r Repo) BranchExists(ctx context.Context, name string) (bool, error) {
	tip, err := r.branchTip(ctx, name)
	return tip != "", err
}

// Worktree is one entry of `git worktree list`.
type Worktree struct {
	Path       string
	Head       string // "" for a bare repository
	Branch     string // short name; "" when detached or bare
	Bare       bool
	Detached   bool
	Locked     bool
	LockReason string // why it is locked, when git was told
	Prunable   bool   // its directory is gone: `git worktree prune` would forget it
}

// Worktrees lists the repository's work trees, the main one first.
func (r Repo) Worktrees(ctx context.Context) ([]Worktree, error) {
	out, err := r.Run(ctx, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, err
	}
	return ParseWorktreeList(out)
}

// ParseWorktreeList parses `git worktree list --porcelain -z`: records of
// NUL-terminated "key value" attributes, each record ended by an empty
// field. Attributes it does not know are skipped, as git asks of scripts.
func ParseWorktreeList(out []byte) ([]Worktree, error) {
	fields, err := SplitZ(out)
	if err != nil {
		return nil, err
	}
	var (
		list []Worktree
		cur  *Worktree
		off  int64
	)
	for _, line := range fields {
		off += int64(len(line)) + 1
		key, value, _ := strings.Cut(line, " ")
		switch {
		case line == "":
			if cur == nil {
				return nil, &MalformedError{off, "empty worktree record"}
			}
			cur = nil
		case key == "worktree":
			if cur != nil {
				return nil, &MalformedError{off, "worktree record not ended before the next"}
			}
			if value == "" {
				return nil, &MalformedError{off, "worktree record without a path"}
			}
			list = append(list, Worktree{Path: value})
			cur = &list[len(list)-1]
		case cur == nil:
			return nil, &MalformedError{off, fmt.Sprintf("attribute %q outside a worktree record", key)}
		case key == "HEAD":
			if !isHex(value) {
				return nil, &MalformedError{off, fmt.Sprintf("bad HEAD %q", value)}
			}
			cur.Head = value
		case key == "branch":
			cur.Branch = strings.TrimPrefix(value, "refs/heads/")
		case line == "bare":
			cur.Bare = true
		case line == "detached":
			cur.Detached = true
		case key == "locked":
			cur.Locked, cur.LockReason = true, value
		case key == "prunable":
			cur.Prunable = true
		}
	}
	if cur != nil {
		return nil, &MalformedError{off, "last worktree record is not ended"}
	}
	return list, nil
}

// initializingReason is the lock reason `git worktree add` writes while it
// works (git runs with LC_ALL=C here) and removes when it is done: a work
// tree still locked with it was left by an add that never finished.
const initializingReason = "initializing"

// AddWorktree makes sure a work tree at path has branch checked out at
// base, creating the branch at base when it does not exist. It is safe to
// repeat, also after a process running it was killed at any moment:
//
//   - A work tree already at path is kept only when it is complete: on the
//     branch, at the branch's commit (base for a branch it creates),
//     `git status` clean. Anything else found there (an
//     add that never finished: locked "initializing", on no branch, a
//     half-written checkout, a registration whose directory is gone, the
//     directory of a work tree git forgot) is removed and made again: the
//     work tree at path is a scratch checkout that belongs to the caller.
//     A directory at path that is none of these is never removed.
//     Uncommitted changes in it are lost; commits on the branch are not:
//   - A branch that exists is checked out where it is, never moved.
//   - A stale lock of the branch's ref (refs/heads/<branch>.lock, left when
//     a git updating it was killed) is removed; see RefLockStaleAfter for
//     how a lock is judged stale. A git that a killed caller left running
//     (git does not die with its parent) is given time to finish first.
//
// `git worktree add` runs in its own process group; cancelling ctx sends
// SIGTERM to the whole group, so git removes what it had begun.
func (r Repo) AddWorktree(ctx context.Context, path, branch, base string) error {
	if path == "" || branch == "" || base == "" {
		return errors.New("add worktree: path, branch and base are required")
	}
	baseID, err := r.commitID(ctx, base)
	if err != nil {
		return fmt.Errorf("add worktree: base %s: %w", base, err)
	}
	settle(ctx, func(p process) bool { return p.worksOn(path) })
	if err := r.dropUnfinished(ctx, path); err != nil {
		return err
	}
	l, err := r.layout(ctx)
	if err != nil {
		return err
	}
	if _, err := r.removeStaleRefLock(ctx, l, "refs/heads/"+branch); err != nil {
		return err
	}
	tip, err := r.branchTip(ctx, branch)
	if err != nil {
		return err
	}
	want := baseID // the commit the work tree must be at
	if tip != "" {
		want = tip
	}
	st, err := l.inspect(path)
	if err != nil {
		return err
	}
	if e := st.entry; e != nil && !e.Prunable && e.Branch == branch && e.Head == want {
		clean, err := (Repo{Dir: path, Env: r.Env}).clean(ctx)
		if err == nil && clean {
			if e.Locked && e.LockReason == initializingReason {
				// Killed after the checkout, before git unlocked it.
				for _, dir := range st.admins {
					if err := os.Remove(filepath.Join(dir, "locked")); err != nil && !errors.Is(err, fs.ErrNotExist) {
						return err
					}
				}
			}
			return nil
		}
	}
	if err := l.discard(path, st); err != nil {
		return fmt.Errorf("replace the unfinished work tree at %s: %w", path, err)
	}
	args := []string{"worktree", "add", "--quiet", path, branch}
	if tip == "" {
		args = []string{"worktree", "add", "--quiet", "-b", branch, path, baseID}
	}
	if _, err := r.runGroup(ctx, args...); err != nil {
		return err
	}
	return r.verifyWorktree(ctx, path, branch, want)
}

// verifyWorktree checks what `git worktree add` left.
func (r Repo) verifyWorktree(ctx context.Context, path, branch, want string) error {
	l, err := r.layout(ctx)
	if err != nil {
		return err
	}
	st, err := l.inspect(path)
	if err != nil {
		return err
	}
	switch e := st.entry; {
	case e == nil || e.Prunable:
		return fmt.Errorf("git worktree add reported success but git lists no work tree at %s", path)
	case e.Branch != branch || e.Head != want:
		return fmt.Errorf("git worktree add left %s on branch %q at %s, not on %s at %s", path, e.Branch, ShortID(e.Head), branch, ShortID(want))
	case e.Locked && e.LockReason == initializingReason:
		return fmt.Errorf("git worktree add left %s locked as initializing", path)
	}
	return nil
}

// ShortID is an id (a commit, a blob, a content hash) as people read it:
// its first 12 characters. It is the one way azero shortens an id.
func ShortID(id string) string { return id[:min(len(id), 12)] }

// commitID resolves rev to a commit id.
func (r Repo) commitID(ctx context.Context, rev string) (string, error) {
	out, err := r.Run(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	var ge *Error
	if errors.As(err, &ge) && ge.ExitCode == 1 {
		return "", errors.New("no such commit")
	}
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// branchTip returns the commit refs/heads/name points at, "" when the
// branch does not exist.
func (r Repo) branchTip(ctx context.Context, name string) (string, error) {
	out, err := r.Run(ctx, "rev-parse", "--verify", "--quiet", "refs/heads/"+name)
	var ge *Error
	if errors.As(err, &ge) && ge.ExitCode == 1 {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// clean reports whether `git status` finds nothing to report: the index
// matches HEAD and the files match the index.
func (r Repo) clean(ctx context.Context) (bool, error) {
	out, err := r.Run(ctx, "status", "--porcelain", "-z", "--untracked-files=normal", "--ignore-submodules=none")
	if err != nil {
		return false, err
	}
	return len(out) == 0, nil
}

// layout is where a repository keeps its work trees.
type layout struct {
	common string     // the common git directory, absolute
	trees  []Worktree // git's list, the main work tree first
}

// CommonDir returns the absolute path of the git directory the repository's
// work trees share (.git of the main work tree).
func (r Repo) CommonDir(ctx context.Context) (string, error) {
	out, err := r.Run(ctx, "rev-parse", "--git-common-dir")
	if err != nil {
		return "", err
	}
	common := strings.TrimSuffix(string(out), "\n")
	if !filepath.IsAbs(common) {
		dir := r.Dir
		if dir == "" {
			if dir, err = os.Getwd(); err != nil {
				return "", err
			}
		}
		common = filepath.Join(dir, common)
	}
	return common, nil
}

func (r Repo) layout(ctx context.Context) (layout, error) {
	common, err := r.CommonDir(ctx)
	if err != nil {
		return layout{}, err
	}
	trees, err := r.Worktrees(ctx)
	if err != nil {
		return layout{}, err
	}
	return layout{common: common, trees: trees}, nil
}

// worktreeState is what a repository has at one work tree path.
type worktreeState struct {
	entry    *Worktree // what git lists at the path
	admins   []string  // administrative directories (.git/worktrees/<id>) that belong to the path
	onDisk   bool      // something exists at the path
	leftover bool      // the path's .git file names an administrative directory of this repository
	empty    bool      // the path is an empty directory
}

// inspect finds what the repository has at path: git's registration and,
// because a killed `git worktree add` can leave administrative directories
// git does not list (it writes their gitdir file after creating them),
// every administrative directory whose gitdir names the path or that is
// still locked as initializing under the path's name.
func (l layout) inspect(path string) (worktreeState, error) {
	var st worktreeState
	want := canonical(path)
	for i := range l.trees {
		if canonical(l.trees[i].Path) == want {
			st.entry = &l.trees[i]
		}
	}
	adminRoot := filepath.Join(l.common, "worktrees")
	admins, err := adminsOf(l.common, path)
	if err != nil {
		return st, err
	}
	st.admins = admins
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return st, nil
	case err != nil:
		return st, err
	}
	st.onDisk = true
	if fi.IsDir() {
		names, err := readNames(path)
		if err != nil {
			return st, err
		}
		st.empty = len(names) == 0
		if dotgit, err := os.ReadFile(filepath.Join(path, ".git")); err == nil {
			target, ok := strings.CutPrefix(strings.TrimSpace(string(dotgit)), "gitdir: ")
			st.leftover = ok && canonical(filepath.Dir(target)) == canonical(adminRoot)
		}
	}
	return st, nil
}

func readNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return names, err
}

// adminsOf lists the administrative directories of common (the shared git
// directory) that belong to the work tree at path: those whose gitdir
// names it, and those a killed `git worktree add` left unfinished under
// its name (see inspect).
func adminsOf(common, path string) ([]string, error) {
	want := canonical(path)
	var out []string
	adminRoot := filepath.Join(common, "worktrees")
	ents, err := os.ReadDir(adminRoot)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	base := filepath.Base(path)
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(adminRoot, e.Name())
		gitdir, err := os.ReadFile(filepath.Join(dir, "gitdir"))
		// git writes "PATH\n": a file without its newline is one a
		// killed `git worktree add` was writing.
		complete := err == nil && strings.HasSuffix(string(gitdir), "\n") && strings.TrimSpace(string(gitdir)) != ""
		switch {
		case complete:
			if canonical(filepath.Dir(strings.TrimSpace(string(gitdir)))) == want {
				out = append(out, dir)
			}
		case err == nil, errors.Is(err, fs.ErrNotExist):
			// No gitdir yet, or cut short: a `git worktree add` killed after
			// it made the directory, while it wrote its "initializing" lock
			// (missing, empty or cut short) or its gitdir.
			lock, err := os.ReadFile(filepath.Join(dir, "locked"))
			reason := strings.TrimSpace(string(lock))
			unfinished := errors.Is(err, fs.ErrNotExist) || err == nil && strings.HasPrefix(initializingReason, reason)
			if unfinished && namedAfter(e.Name(), base) {
				out = append(out, dir)
			}
		default:
			return nil, err
		}
	}
	return out, nil
}

// dropUnfinished removes the administrative directories of path that a
// killed `git worktree add` left without the files git needs to read them
// (its commondir or HEAD, missing or cut short): git cannot even list the
// work trees while one is there. Called once nothing works on path.
func (r Repo) dropUnfinished(ctx context.Context, path string) error {
	common, err := r.CommonDir(ctx)
	if err != nil {
		return err
	}
	admins, err := adminsOf(common, path)
	if err != nil {
		return err
	}
	for _, dir := range admins {
		if whole(filepath.Join(dir, "commondir")) && whole(filepath.Join(dir, "HEAD")) {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("remove the unfinished work tree registration %s: %w", dir, err)
		}
	}
	return nil
}

// whole reports whether the file at p holds a line git finished writing.
func whole(p string) bool {
	b, err := os.ReadFile(p)
	return err == nil && len(b) > 1 && b[len(b)-1] == '\n'
}

// namedAfter reports whether git could have named an administrative
// directory after a work tree called base: base, or base and a number
// when the name was taken.
func namedAfter(name, base string) bool {
	rest, ok := strings.CutPrefix(name, base)
	return ok && strings.Trim(rest, "0123456789") == ""
}

// discard removes what inspect found at path: the administrative
// directories and the directory itself, when it is a work tree of this
// repository (registered, or its .git names this repository) or empty.
// It refuses to touch the main work tree or anything else.
func (l layout) discard(path string, st worktreeState) error {
	if len(l.trees) > 0 && canonical(l.trees[0].Path) == canonical(path) {
		return fmt.Errorf("%s is the repository's main work tree", path)
	}
	ours := st.entry != nil || len(st.admins) > 0 || st.leftover || st.empty
	if st.onDisk && !ours {
		return fmt.Errorf("%s exists and is not a work tree of this repository: move it away or choose another path", path)
	}
	// The registration first: a work tree without its directory is
	// prunable, a directory without its registration is not recognised.
	for _, dir := range st.admins {
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	if st.onDisk {
		return os.RemoveAll(path)
	}
	return nil
}

// canonical resolves the symbolic links of p, or of its longest existing
// parent when p does not exist, so that paths written by git (resolved)
// and paths given by callers compare equal.
func canonical(p string) string {
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	parent := filepath.Dir(p)
	if parent == p {
		return p
	}
	return filepath.Join(canonical(parent), filepath.Base(p))
}

// RemoveWorktree removes the work tree at path, discarding its changes,
// and forgets it: git's registration, the directory, and whatever an
// unfinished `git worktree add` left for it. A work tree that is already
// gone is not an error; a directory at path that is not a work tree of
// this repository is refused.
func (r Repo) RemoveWorktree(ctx context.Context, path string) error {
	settle(ctx, func(p process) bool { return p.worksOn(path) })
	if err := r.dropUnfinished(ctx, path); err != nil {
		return err
	}
	l, err := r.layout(ctx)
	if err != nil {
		return err
	}
	st, err := l.inspect(path)
	if err != nil {
		return err
	}
	if err := l.discard(path, st); err != nil {
		return fmt.Errorf("remove work tree %s: %w", path, err)
	}
	return nil
}

// DeleteBranch deletes a local branch; a missing branch is not an error.
// Without force, git refuses to delete a branch that is not merged.
//
// A stale lock of the branch's ref is removed first (see
// RefLockStaleAfter): a process killed while it updated the branch would
// otherwise make the deletion fail until someone removed it by hand.
func (r Repo) DeleteBranch(ctx context.Context, name string, force bool) error {
	l, err := r.layout(ctx)
	if err != nil {
		return err
	}
	if _, err := r.removeStaleRefLock(ctx, l, "refs/heads/"+name); err != nil {
		return err
	}
	exists, err := r.BranchExists(ctx, name)
	if err != nil || !exists {
		return err
	}
	flag := "-d"
	if force {
		flag = "-D"
	}
	_, err = r.Run(ctx, "branch", "--quiet", flag, name)
	return err
}

// IsAncestor reports whether commit a is an ancestor of (or equal to) b.
func (r Repo) IsAncestor(ctx context.Context, a, b string) (bool, error) {
	_, err := r.Run(ctx, "merge-base", "--is-ancestor", a, b)
	var ge *Error
	if errors.As(err, &ge) && ge.ExitCode == 1 {
		return false, nil
	}
	return err == nil, err
}

// DirtyPaths returns every path with uncommitted changes in the work tree:
// staged, unstaged and untracked (not ignored), both sides of renames.
func (r Repo) DirtyPaths(ctx context.Context) ([]string, error) {
	out, err := r.Run(ctx, "status", "--porcelain=v1", "-z", "--untracked-files=all")
	if err != nil {
		return nil, err
	}
	fields, err := SplitZ(out)
	if err != nil {
		return nil, err
	}
	var paths []string
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if len(f) < 4 {
			continue
		}
		paths = append(paths, f[3:])
		if f[0] == 'R' || f[0] == 'C' {
			// A rename's source follows as its own field.
			if i+1 < len(fields) {
				i++
				paths = append(paths, fields[i])
			}
		}
	}
	return paths, nil
}

// ChangedPaths returns the paths that differ between two commits.
func (r Repo) ChangedPaths(ctx context.Context, from, to string) ([]string, error) {
	out, err := r.Run(ctx, "diff", "--name-only", "-z", "--no-renames", from, to)
	if err != nil {
		return nil, err
	}
	return SplitZ(out)
}

// Snapshot is what a repository has of work trees and branches at one
// moment, read with a constant number of git processes, so that a
// clean-up (azero runs gc) can ask about many work trees cheaply.
type Snapshot struct {
	l        layout
	branches map[string]bool
}

// Snapshot reads the repository's work trees and branches.
func (r Repo) Snapshot(ctx context.Context) (*Snapshot, error) {
	l, err := r.layout(ctx)
	if err != nil {
		return nil, err
	}
	out, err := r.Run(ctx, "for-each-ref", "--format=%(refname)", "refs/heads/")
	if err != nil {
		return nil, err
	}
	s := &Snapshot{l: l, branches: map[string]bool{}}
	for _, ref := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if name, ok := strings.CutPrefix(ref, "refs/heads/"); ok {
			s.branches[name] = true
		}
	}
	return s, nil
}

// Leftovers is what a repository still has of one work tree and its
// branch.
type Leftovers struct {
	Registered bool // git lists a work tree at the path
	Unfinished bool // administrative files of a `git worktree add` that never finished
	Directory  bool // something exists at the path
	Branch     bool // refs/heads/<branch> exists
	BranchLock bool // refs/heads/<branch>.lock exists (stale or held)
}

// Any reports whether anything is left.
func (l Leftovers) Any() bool {
	return l.Registered || l.Unfinished || l.Directory || l.Branch || l.BranchLock
}

// Worktree reports whether anything of the work tree itself is left.
func (l Leftovers) Worktree() bool { return l.Registered || l.Unfinished || l.Directory }

// Leftovers reports what the snapshot holds of the work tree at path and
// of branch ("" for none), reading the file system, not running git.
func (s *Snapshot) Leftovers(path, branch string) (Leftovers, error) {
	st, err := s.l.inspect(path)
	if err != nil {
		return Leftovers{}, err
	}
	out := Leftovers{Registered: st.entry != nil, Directory: st.onDisk}
	out.Unfinished = st.entry == nil && len(st.admins) > 0 ||
		st.entry != nil && st.entry.Locked && st.entry.LockReason == initializingReason
	if branch != "" {
		out.Branch = s.branches[branch]
		if _, err := os.Lstat(filepath.Join(s.l.common, "refs", "heads", filepath.FromSlash(branch)+".lock")); err == nil {
			out.BranchLock = true
		}
	}
	return out, nil
}

// CommonDirOf returns the git directory of the repository a linked work
// tree at path belongs to, read from its .git file (no git runs, so it
// works when the work tree is broken); "" when path is not such a work
// tree.
func CommonDirOf(path string) string {
	b, err := os.ReadFile(filepath.Join(path, ".git"))
	if err != nil {
		return ""
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok || !filepath.IsAbs(gitdir) || filepath.Base(filepath.Dir(gitdir)) != "worktrees" {
		return ""
	}
	return filepath.Dir(filepath.Dir(gitdir))
}
