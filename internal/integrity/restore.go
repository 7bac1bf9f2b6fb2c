package integrity

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/azero-dev/azero/internal/gitx"
)

// Snap is the content of a work tree's tracked and untracked, not ignored
// files at one moment: a tree in the repository's object store, written
// through a temporary index, so the work tree's own index and files are
// untouched.
type Snap struct {
	Tree string // the tree's object id
}

// Snapshot writes the content of the work tree at worktree as a tree. It
// starts from a copy of the work tree's index, whose stat cache lets git
// read again only the files that changed.
func Snapshot(ctx context.Context, worktree string) (Snap, error) {
	wt := gitx.Repo{Dir: worktree}
	out, err := wt.Run(ctx, "rev-parse", "--path-format=absolute", "--git-path", "index")
	if err != nil {
		return Snap{}, fmt.Errorf("snapshot the work tree: %w", err)
	}
	tmp, err := tempIndex(strings.TrimSpace(string(out)))
	if err != nil {
		return Snap{}, fmt.Errorf("snapshot the work tree: %w", err)
	}
	defer os.Remove(tmp)
	wt.Env = []string{"GIT_INDEX_FILE=" + tmp}
	if _, err := wt.Run(ctx, "add", "--all", "--", "."); err != nil {
		return Snap{}, fmt.Errorf("snapshot the work tree: %w", err)
	}
	tree, err := wt.Run(ctx, "write-tree")
	if err != nil {
		return Snap{}, fmt.Errorf("snapshot the work tree: %w", err)
	}
	return Snap{Tree: strings.TrimSpace(string(tree))}, nil
}

// tempIndex makes a temporary index file, a copy of the index at from
// when there is one.
func tempIndex(from string) (string, error) {
	tmp, err := os.CreateTemp("", "azero-integrity-index-")
	if err != nil {
		return "", err
	}
	name := tmp.Name()
	if from != "" {
		if src, err := os.Open(from); err == nil {
			_, err = io.Copy(tmp, src)
			src.Close()
			if err != nil {
				tmp.Close()
				os.Remove(name)
				return "", err
			}
		}
	}
	if err := tmp.Close(); err != nil {
		os.Remove(name)
		return "", err
	}
	return name, nil
}

// Restore puts the work tree at worktree back as before (its fingerprint)
// and snap (its content) had it, undoing change (what a run did, as
// before.Diff found it): what the run added is removed; directories and
// symbolic links are made again as the fingerprint says; files are
// written again from the snapshot, with their modes. A file the snapshot
// does not hold (an ignored file: its content was never kept) that the
// run changed or removed stays removed; those paths are returned.
//
// Restore runs git: call it only once the git directory is known to be
// as it was (GitPrint.Check).
func Restore(ctx context.Context, worktree string, before *Tree, snap Snap, change TreeChange) ([]string, error) {
	var lost []string
	// What the run made or changed goes first, whole: a directory it made
	// goes with everything in it.
	for _, rel := range slices.Concat(change.Added, change.Modified) {
		if err := os.RemoveAll(filepath.Join(worktree, filepath.FromSlash(rel))); err != nil {
			return nil, fmt.Errorf("restore the work tree: %w", err)
		}
	}
	back := slices.Concat(change.Removed, change.Modified)
	slices.Sort(back) // a directory before what it holds
	var files []string
	for _, rel := range back {
		e := before.entries[rel]
		p := filepath.Join(worktree, filepath.FromSlash(rel))
		switch e.kind {
		case 'd':
			if err := os.MkdirAll(p, 0o755); err != nil {
				return nil, fmt.Errorf("restore the work tree: %w", err)
			}
		case 'l':
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return nil, fmt.Errorf("restore the work tree: %w", err)
			}
			if err := os.Symlink(e.text, p); err != nil && !errors.Is(err, fs.ErrExist) {
				return nil, fmt.Errorf("restore the work tree: %w", err)
			}
		case 'f':
			files = append(files, rel)
		default:
			lost = append(lost, rel)
		}
	}
	if len(files) > 0 {
		missing, err := checkout(ctx, worktree, snap, files)
		if err != nil {
			return nil, err
		}
		lost = append(lost, missing...)
	}
	// Modes last, once every file and directory is there again.
	for _, rel := range back {
		e := before.entries[rel]
		if e.kind != 'd' && e.kind != 'f' || slices.Contains(lost, rel) {
			continue
		}
		if err := os.Chmod(filepath.Join(worktree, filepath.FromSlash(rel)), e.mode.Perm()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("restore the work tree: %w", err)
		}
	}
	slices.Sort(lost)
	return lost, nil
}

// checkout writes files from the snapshot into the work tree, through a
// temporary index holding the snapshot's tree; it returns the files the
// snapshot does not hold.
func checkout(ctx context.Context, worktree string, snap Snap, files []string) ([]string, error) {
	tmp, err := tempIndex("")
	if err != nil {
		return nil, fmt.Errorf("restore the work tree: %w", err)
	}
	defer os.Remove(tmp)
	// An empty file is not an index: git must write it from scratch.
	if err := os.Remove(tmp); err != nil {
		return nil, fmt.Errorf("restore the work tree: %w", err)
	}
	wt := gitx.Repo{Dir: worktree, Env: []string{"GIT_INDEX_FILE=" + tmp}}
	if _, err := wt.Run(ctx, "read-tree", snap.Tree); err != nil {
		return nil, fmt.Errorf("restore the work tree from %s: %w", gitx.ShortID(snap.Tree), err)
	}
	out, err := wt.Run(ctx, "ls-files", "-z")
	if err != nil {
		return nil, fmt.Errorf("restore the work tree: %w", err)
	}
	held, err := gitx.SplitZ(out)
	if err != nil {
		return nil, fmt.Errorf("restore the work tree: %w", err)
	}
	inSnap := make(map[string]bool, len(held))
	for _, h := range held {
		inSnap[h] = true
	}
	var write, missing []string
	for _, f := range files {
		if inSnap[f] {
			write = append(write, f)
		} else {
			missing = append(missing, f)
		}
	}
	if len(write) == 0 {
		return missing, nil
	}
	feed := func(ctx context.Context, w io.Writer) error {
		bw := bufio.NewWriter(w)
		for _, f := range write {
			if _, err := bw.WriteString(f + "\x00"); err != nil {
				return err
			}
		}
		return bw.Flush()
	}
	discard := func(r io.Reader) error { _, err := io.Copy(io.Discard, r); return err }
	if err := wt.Stream(ctx, feed, discard, "checkout-index", "--force", "-z", "--stdin"); err != nil {
		return nil, fmt.Errorf("restore the work tree from %s: %w", gitx.ShortID(snap.Tree), err)
	}
	return missing, nil
}
