package gitx

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// RefLockStaleAfter bounds how long a ref lock can be held. git holds
// refs/heads/<name>.lock only while it updates that one ref: it creates
// the lock, writes the new id into it and renames it over the ref within
// milliseconds (a reference-transaction hook can stretch that). A lock
// that outlives its git was left by a git that was killed, and git itself
// never removes it: every later update of the ref fails with "Unable to
// create '...lock': File exists".
//
// A lock is judged stale, and removed, when either
//   - no live git process works in the repository: none has its working
//     directory inside the main work tree, a linked work tree or the git
//     directory (read from /proc on Linux; where processes cannot be
//     listed, every lock counts as possibly held), or
//   - it is older than RefLockStaleAfter, whatever runs.
//
// A younger lock while git processes work in the repository is waited
// for: a live git finishes and removes it, or it ages into staleness.
// Only the lock of a ref the caller owns is ever considered (azero's run
// branch, which one run drives at a time), never a lock of another ref.
const RefLockStaleAfter = 30 * time.Second

// pollEvery is how often a wait for a git process looks again.
const pollEvery = 50 * time.Millisecond

// RemoveStaleBranchLock removes the stale lock of refs/heads/<branch> (see
// RefLockStaleAfter), waiting while it may still be held. It reports
// whether there was one to remove.
func (r Repo) RemoveStaleBranchLock(ctx context.Context, branch string) (bool, error) {
	l, err := r.layout(ctx)
	if err != nil {
		return false, err
	}
	return r.removeStaleRefLock(ctx, l, "refs/heads/"+branch)
}

func (r Repo) removeStaleRefLock(ctx context.Context, l layout, ref string) (bool, error) {
	if !strings.HasPrefix(ref, "refs/") || strings.Contains(ref, "..") {
		return false, fmt.Errorf("%q is not a ref name", ref)
	}
	lock := filepath.Join(l.common, filepath.FromSlash(ref)+".lock")
	inRepo := func(p process) bool { return p.worksIn(l.dirs()...) }
	for {
		fi, err := os.Lstat(lock)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if fi.IsDir() {
			return false, fmt.Errorf("%s is a directory, not a lock: remove it by hand", lock)
		}
		if time.Since(fi.ModTime()) >= RefLockStaleAfter || !busy(inRepo) {
			if err := os.Remove(lock); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return false, fmt.Errorf("remove the stale lock %s: %w", lock, err)
			}
			return true, nil
		}
		select {
		case <-ctx.Done():
			return false, fmt.Errorf("wait for the git holding %s: %w", lock, ctx.Err())
		case <-time.After(pollEvery):
		}
	}
}

// dirs are the directories git processes working in the repository run
// in: every work tree and the common git directory.
func (l layout) dirs() []string {
	out := []string{l.common}
	for _, w := range l.trees {
		out = append(out, w.Path)
	}
	return out
}

// process is a live git process.
type process struct {
	cwd  string   // its working directory; "" when it cannot be read
	args []string // its command line
}

// worksIn reports whether the process runs inside one of dirs. A process
// whose directory cannot be read may.
func (p process) worksIn(dirs ...string) bool {
	if p.cwd == "" {
		return true
	}
	for _, d := range dirs {
		if within(p.cwd, canonical(d)) {
			return true
		}
	}
	return false
}

// worksOn reports whether the process runs inside path or was given path
// as an argument (a `git worktree add` making it).
func (p process) worksOn(path string) bool {
	want := canonical(path)
	if p.cwd != "" && within(p.cwd, want) {
		return true
	}
	for _, a := range p.args {
		if a == path || filepath.IsAbs(a) && canonical(a) == want {
			return true
		}
	}
	return false
}

func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// busy reports whether a live git process matches; true when processes
// cannot be listed.
func busy(match func(process) bool) bool {
	procs, ok := gitProcesses()
	if !ok {
		return true
	}
	for _, p := range procs {
		if match(p) {
			return true
		}
	}
	return false
}

// settle waits, at most RefLockStaleAfter, until no live git process
// matches: a git that a killed azero left running (a child does not die
// with its parent) finishes what it was doing before its work is judged.
func settle(ctx context.Context, match func(process) bool) {
	if _, ok := gitProcesses(); !ok {
		return
	}
	deadline := time.Now().Add(RefLockStaleAfter)
	for busy(match) && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(pollEvery):
		}
	}
}
