package integrity

import (
	"context"
	"fmt"
	"slices"
)

// Scope is what a run of the change's code must leave as it found it: the
// run's work tree (its files and its .git link) and, through the link,
// the shared git directory and the run's branch.
type Scope struct {
	Worktree string
	Branch   string // the run's branch, short name
}

// Watch is one run of the change's code being watched: Begin before it,
// End right after it.
type Watch struct {
	scope Scope
	git   *GitPrint
	tree  *Tree
	snap  Snap
}

// Begin fingerprints the git directory (reading files), then the work
// tree, then keeps the work tree's content (Snapshot, which runs git: the
// git directory was checked after any earlier run).
func Begin(ctx context.Context, s Scope) (*Watch, error) {
	g, err := ReadGit(s.Worktree, s.Branch)
	if err != nil {
		return nil, err
	}
	t, err := ReadTree(s.Worktree)
	if err != nil {
		return nil, err
	}
	snap, err := Snapshot(ctx, s.Worktree)
	if err != nil {
		return nil, err
	}
	return &Watch{scope: s, git: g, tree: t, snap: snap}, nil
}

// Digest is the work tree's digest before the run (Tree.Digest).
func (w *Watch) Digest() string { return w.tree.Digest() }

// Outcome is what End found a run did to the work tree, after it put the
// work tree back.
type Outcome struct {
	// Changed is what the run changed but RunnerOutput paths: a run that
	// changed anything here does not count.
	Changed TreeChange
	// Cleaned are the RunnerOutput paths the run wrote, removed.
	Cleaned []string
	// Lost are paths the run changed or removed that could not be put
	// back (ignored files, whose content nothing kept): they are gone.
	Lost []string
}

// Counts reports whether the run left the change as it found it.
func (o Outcome) Counts() bool { return o.Changed.Empty() }

// End checks what the run did. The git directory first, reading files
// only: a difference is a *GitChangedError and End does nothing more (no
// git may run). Then the work tree: whatever the run changed is put back
// (Restore) and checked again; a work tree that cannot be made as it was
// is an error.
func (w *Watch) End(ctx context.Context, by string) (Outcome, error) {
	after, err := w.git.Again()
	if err != nil {
		return Outcome{}, err
	}
	if err := w.git.Check(after, by); err != nil {
		return Outcome{}, err
	}
	now, err := ReadTree(w.scope.Worktree)
	if err != nil {
		return Outcome{}, err
	}
	change := w.tree.Diff(now)
	if change.Empty() {
		return Outcome{}, nil
	}
	out := Outcome{Changed: change.Unexpected()}
	out.Cleaned = slices.DeleteFunc(change.Paths(), func(p string) bool { return !RunnerOutput(p) })
	if out.Lost, err = Restore(ctx, w.scope.Worktree, w.tree, w.snap, change); err != nil {
		return out, err
	}
	again, err := ReadTree(w.scope.Worktree)
	if err != nil {
		return out, err
	}
	left := w.tree.Diff(again)
	if rest := slices.DeleteFunc(left.Paths(), func(p string) bool { return slices.Contains(out.Lost, p) }); len(rest) > 0 {
		return out, fmt.Errorf("%s changed the work tree %s (%s) and azero could not put back %s: inspect it",
			by, w.scope.Worktree, out.Changed, listed(rest, 5))
	}
	return out, nil
}
