package temporal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/azero-dev/azero/internal/gitx"
)

// snapshotRef is where a run's worktree is snapshotted.
func snapshotRef(runID string) string { return "refs/azero/snapshots/" + runID }

// snapshotEnv makes commit-tree work on machines where git has no
// identity: a snapshot is the engine's bookkeeping, not anyone's commit.
var snapshotEnv = []string{
	"GIT_AUTHOR_NAME=azero", "GIT_AUTHOR_EMAIL=azero@azero.invalid",
	"GIT_COMMITTER_NAME=azero", "GIT_COMMITTER_EMAIL=azero@azero.invalid",
}

// isWorktree reports whether dir is a checkout (it has its .git).
func isWorktree(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, ".git"))
	return err == nil
}

// Snapshot records every file of the worktree at dir (untracked ones
// too, ignored ones not) as a commit whose parent is the worktree's HEAD,
// on refs/azero/snapshots/<run>, without touching the worktree's index or
// files. A run whose worktree is gone (cleaned up) loses its snapshot.
func Snapshot(ctx context.Context, repoDir, dir, runID string) error {
	repo := gitx.Repo{Dir: repoDir}
	if dir == "" || !isWorktree(dir) {
		if _, err := repo.Run(ctx, "update-ref", "-d", snapshotRef(runID)); err != nil {
			return fmt.Errorf("forget the snapshot of run %s: %w", runID, err)
		}
		return nil
	}
	wt := gitx.Repo{Dir: dir}
	out, err := wt.Run(ctx, "rev-parse", "--path-format=absolute", "--git-path", "index")
	if err != nil {
		return fmt.Errorf("snapshot the worktree of run %s: %w", runID, err)
	}
	tmp, err := os.CreateTemp("", "azero-snapshot-index-")
	if err != nil {
		return fmt.Errorf("snapshot the worktree of run %s: %w", runID, err)
	}
	tmpName := tmp.Name()
	defer os.Remove(tmpName)
	// Starting from the worktree's own index keeps git's stat cache: only
	// changed files are read again.
	if src, err := os.Open(strings.TrimSpace(string(out))); err == nil {
		_, err = io.Copy(tmp, src)
		src.Close()
		if err != nil {
			tmp.Close()
			return fmt.Errorf("snapshot the worktree of run %s: %w", runID, err)
		}
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	wt.Env = append([]string{"GIT_INDEX_FILE=" + tmpName}, snapshotEnv...)
	if _, err := wt.Run(ctx, "add", "--all", "--", "."); err != nil {
		return fmt.Errorf("snapshot the worktree of run %s: %w", runID, err)
	}
	tree, err := wt.Run(ctx, "write-tree")
	if err != nil {
		return fmt.Errorf("snapshot the worktree of run %s: %w", runID, err)
	}
	commit, err := wt.Run(ctx, "commit-tree", "-p", "HEAD", "-m", "azero snapshot of run "+runID, strings.TrimSpace(string(tree)))
	if err != nil {
		return fmt.Errorf("snapshot the worktree of run %s: %w", runID, err)
	}
	if _, err := wt.Run(ctx, "update-ref", snapshotRef(runID), strings.TrimSpace(string(commit))); err != nil {
		return fmt.Errorf("snapshot the worktree of run %s: %w", runID, err)
	}
	return nil
}

// ForgetSnapshot deletes a run's snapshot ref; a missing one is fine.
func ForgetSnapshot(ctx context.Context, repoDir, runID string) error {
	if _, err := (gitx.Repo{Dir: repoDir}).Run(ctx, "update-ref", "-d", snapshotRef(runID)); err != nil {
		return fmt.Errorf("forget the snapshot of run %s: %w", runID, err)
	}
	return nil
}

// resolve returns the commit rev names, "" when there is none.
func resolve(ctx context.Context, repo gitx.Repo, rev string) (string, error) {
	out, err := repo.Run(ctx, "rev-parse", "--verify", "--quiet", rev)
	var ge *gitx.Error
	if errors.As(err, &ge) && ge.ExitCode == 1 {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// Relocate makes this worker the holder of a run's worktree: the
// worktree is recreated at dir from the run's branch and its last
// snapshot is laid over it as uncommitted changes, as the previous holder
// left them; the previous holder's worktree (at wt.Dir) is forgotten. A
// run without a snapshot (its worktree not made yet, or already cleaned
// up) only gets its path changed. wt.Dir is set to dir.
//
// A worker may die after its step changed the branch and before it took
// the snapshot. Two such changes are the run's own and are carried on:
// a commit of exactly the snapshot's files (the run committing its work:
// the worktree is recreated at the branch, nothing laid over it), and the
// branch deleted (the run cleaning up after itself: there is no worktree
// to bring back). Any other change of the branch is refused.
func Relocate(ctx context.Context, wt *Worktree, dir, runID string) error {
	repo := gitx.Repo{Dir: wt.Repo}
	snap, err := resolve(ctx, repo, snapshotRef(runID))
	if err != nil {
		return fmt.Errorf("find the snapshot of run %s: %w", runID, err)
	}
	old := *wt.Dir
	if snap == "" {
		*wt.Dir = dir
		return nil
	}
	tip, err := resolve(ctx, repo, "refs/heads/"+wt.Branch)
	if err != nil {
		return err
	}
	parent, err := resolve(ctx, repo, snap+"^")
	if err != nil {
		return err
	}
	lay := true
	switch {
	case tip == "":
		if err := forgetWorktree(ctx, repo, old, dir, runID); err != nil {
			return err
		}
		*wt.Dir = dir
		return nil
	case parent != tip:
		committed, err := committedSnapshot(ctx, repo, snap, parent, tip)
		if err != nil {
			return err
		}
		if !committed {
			return fmt.Errorf("the snapshot of run %s does not sit on its branch %s (snapshot parent %s, branch %s): the branch was changed outside the run; inspect %s",
				runID, wt.Branch, parent, tip, snapshotRef(runID))
		}
		lay = false
	}
	if err := forgetWorktree(ctx, repo, old, dir, runID); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	if err := repo.AddWorktree(ctx, dir, wt.Branch, wt.Base); err != nil {
		return fmt.Errorf("recreate the worktree of run %s from %s: %w", runID, wt.Branch, err)
	}
	if lay {
		w := gitx.Repo{Dir: dir}
		if _, err := w.Run(ctx, "read-tree", "--reset", "-u", snap+"^{tree}"); err != nil {
			return fmt.Errorf("restore the snapshot of run %s: %w", runID, err)
		}
		// The snapshot's changes were uncommitted: the index goes back to HEAD.
		if _, err := w.Run(ctx, "reset", "--quiet"); err != nil {
			return fmt.Errorf("restore the snapshot of run %s: %w", runID, err)
		}
	}
	*wt.Dir = dir
	return nil
}

// forgetWorktree drops the previous holder's worktree at old: the holder
// is gone, and its checkout (or git's record of one on another machine)
// must not keep the branch.
func forgetWorktree(ctx context.Context, repo gitx.Repo, old, dir, runID string) error {
	if old == "" || filepath.Clean(old) == filepath.Clean(dir) {
		return nil
	}
	if err := repo.RemoveWorktree(ctx, old); err != nil {
		return fmt.Errorf("forget the worktree of run %s that %s held: %w", runID, old, err)
	}
	return nil
}

// committedSnapshot reports whether the branch at tip went on from the
// snapshot's parent to a commit of exactly the snapshot's files.
func committedSnapshot(ctx context.Context, repo gitx.Repo, snap, parent, tip string) (bool, error) {
	after, err := repo.IsAncestor(ctx, parent, tip)
	if err != nil || !after {
		return false, err
	}
	want, err := resolve(ctx, repo, snap+"^{tree}")
	if err != nil {
		return false, err
	}
	got, err := resolve(ctx, repo, tip+"^{tree}")
	return err == nil && got != "" && got == want, err
}
