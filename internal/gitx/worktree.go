package gitx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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
	_, err := r.Run(ctx, "rev-parse", "--verify", "--quiet", "refs/heads/"+name)
	var ge *Error
	if errors.As(err, &ge) && ge.ExitCode == 1 {
		return false, nil
	}
	return err == nil, err
}

// Worktree is one entry of `git worktree list`.
type Worktree struct {
	Path   string
	Head   string
	Branch string // short name; "" when detached
}

// Worktrees lists the repository's work trees, the main one first.
func (r Repo) Worktrees(ctx context.Context) ([]Worktree, error) {
	out, err := r.Run(ctx, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, err
	}
	var (
		list []Worktree
		cur  *Worktree
	)
	for _, field := range bytes.Split(out, []byte{0}) {
		line := string(field)
		switch {
		case line == "":
			cur = nil
		case strings.HasPrefix(line, "worktree "):
			list = append(list, Worktree{Path: strings.TrimPrefix(line, "worktree ")})
			cur = &list[len(list)-1]
		case cur != nil && strings.HasPrefix(line, "HEAD "):
			cur.Head = strings.TrimPrefix(line, "HEAD ")
		case cur != nil && strings.HasPrefix(line, "branch "):
			cur.Branch = strings.TrimPrefix(strings.TrimPrefix(line, "branch "), "refs/heads/")
		}
	}
	return list, nil
}

// AddWorktree checks out branch in a new work tree at path. When the
// branch does not exist it is created at base. It is safe to repeat: a work
// tree already at path on that branch is kept.
func (r Repo) AddWorktree(ctx context.Context, path, branch, base string) error {
	list, err := r.Worktrees(ctx)
	if err != nil {
		return err
	}
	for _, w := range list {
		if sameDir(w.Path, path) {
			if w.Branch != branch {
				return fmt.Errorf("work tree %s exists on branch %q, not %q", path, w.Branch, branch)
			}
			return nil
		}
	}
	// A work tree removed by hand leaves a registration behind.
	if _, err := r.Run(ctx, "worktree", "prune"); err != nil {
		return err
	}
	exists, err := r.BranchExists(ctx, branch)
	if err != nil {
		return err
	}
	if exists {
		_, err = r.Run(ctx, "worktree", "add", "--quiet", path, branch)
	} else {
		_, err = r.Run(ctx, "worktree", "add", "--quiet", "-b", branch, path, base)
	}
	return err
}

func sameDir(a, b string) bool {
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	if errA == nil && errB == nil {
		return ra == rb
	}
	return filepath.Clean(a) == filepath.Clean(b)
}

// RemoveWorktree removes the work tree at path, discarding its changes,
// and forgets it. A work tree that is already gone is not an error.
func (r Repo) RemoveWorktree(ctx context.Context, path string) error {
	list, err := r.Worktrees(ctx)
	if err != nil {
		return err
	}
	for _, w := range list {
		if sameDir(w.Path, path) {
			if _, err := r.Run(ctx, "worktree", "remove", "--force", "--force", w.Path); err != nil {
				return err
			}
		}
	}
	_, err = r.Run(ctx, "worktree", "prune")
	return err
}

// DeleteBranch deletes a local branch; a missing branch is not an error.
// Without force, git refuses to delete a branch that is not merged.
func (r Repo) DeleteBranch(ctx context.Context, name string, force bool) error {
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
