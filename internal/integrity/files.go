package integrity

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/azero-dev/azero/internal/gitx"
)

// Absent is the hash HashFiles gives a file that does not exist.
const Absent = "absent"

// HashFiles hashes the files at paths (slash-separated, relative to root)
// as they are: the sha256 of a regular file's content, "symlink:TARGET"
// for a symbolic link (never followed), Absent for a missing file.
func HashFiles(root string, paths []string) (map[string]string, error) {
	out := make(map[string]string, len(paths))
	for _, rel := range paths {
		p := filepath.Join(root, filepath.FromSlash(rel))
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			out[rel] = Absent
			continue
		case err != nil:
			return nil, fmt.Errorf("hash %s: %w", rel, err)
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return nil, fmt.Errorf("hash %s: %w", rel, err)
			}
			out[rel] = "symlink:" + target
			continue
		case !fi.Mode().IsRegular():
			out[rel] = "special:" + fi.Mode().String()
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("hash %s: %w", rel, err)
		}
		sum := sha256.Sum256(b)
		out[rel] = hex.EncodeToString(sum[:])
	}
	return out, nil
}

// CheckFiles proves that the files want names (from HashFiles) still hash
// the same under root: a *FilesChangedError names those that do not.
func CheckFiles(root string, want map[string]string) error {
	paths := make([]string, 0, len(want))
	for p := range want {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	now, err := HashFiles(root, paths)
	if err != nil {
		return err
	}
	var changed []string
	for _, p := range paths {
		if now[p] != want[p] {
			changed = append(changed, p)
		}
	}
	if len(changed) > 0 {
		return &FilesChangedError{Paths: changed}
	}
	return nil
}

// FilesChangedError reports files that no longer hash as recorded.
type FilesChangedError struct {
	Paths []string
	// What names the files and since when, for the message: "the test
	// files changed since the red run".
	What string
}

func (e *FilesChangedError) Error() string {
	what := e.What
	if what == "" {
		what = "the files changed"
	}
	return fmt.Sprintf("%s: %s no longer hash as recorded, and nothing of azero's wrote them: azero stopped; inspect them", what, listed(e.Paths, 5))
}

// CheckBranch proves that the run's branch (refs/heads/<branch>) and the
// HEAD of its work tree both name one of allowed (the commit the run
// started from, or azero's own commit on it): a *MovedError otherwise. It
// runs git (rev-parse only).
func CheckBranch(ctx context.Context, worktree, branch string, allowed ...string) error {
	wt := gitx.Repo{Dir: worktree}
	head, err := resolve(ctx, wt, "HEAD")
	if err != nil {
		return err
	}
	tip, err := resolve(ctx, wt, "refs/heads/"+branch)
	if err != nil {
		return err
	}
	if slices.Contains(allowed, head) && tip == head {
		return nil
	}
	return &MovedError{Branch: branch, Head: head, Tip: tip, Allowed: slices.DeleteFunc(slices.Clone(allowed), func(s string) bool { return s == "" })}
}

// resolve returns the commit rev names, "" when it names none.
func resolve(ctx context.Context, r gitx.Repo, rev string) (string, error) {
	out, err := r.Run(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	var ge *gitx.Error
	if errors.As(err, &ge) && ge.ExitCode == 1 {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", rev, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// MovedError reports a run's branch or work tree HEAD that moved by
// anything but azero's own commit: a commit made on it behind azero's back
// (by the code a test run executed, say) would otherwise be reviewed
// unseen and merged.
type MovedError struct {
	Branch  string
	Head    string   // the work tree's HEAD; "" when it names no commit
	Tip     string   // the branch's commit; "" when it is gone
	Allowed []string // the commits azero left it at
}

func (e *MovedError) Error() string {
	short := func(id string) string {
		if id == "" {
			return "nothing"
		}
		return gitx.ShortID(id)
	}
	allowed := make([]string, len(e.Allowed))
	for i, a := range e.Allowed {
		allowed[i] = gitx.ShortID(a)
	}
	return fmt.Sprintf("the run's branch %s is at %s and its work tree's HEAD at %s, but azero left them at %s: something other than azero committed or moved them; azero stopped and reviews, commits and merges nothing (inspect it with: git log %s)",
		e.Branch, short(e.Tip), short(e.Head), strings.Join(allowed, " or "), e.Branch)
}
