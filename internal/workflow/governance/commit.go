package governance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/azero-dev/azero/internal/filelock"
	"github.com/azero-dev/azero/internal/gitx"
)

// lockWait bounds how long a commit waits for another git process (a
// parallel run committing its own trail) to release the index.
const lockWait = 30 * time.Second

// Commit records paths (relative to root, slash-separated: files or
// directories) in one commit with msg and returns its id. Paths that
// neither exist nor are tracked are left out (the active/ directory of a
// trail moved before it was ever committed). The commit is made with
// --only, so whatever else the user has staged stays staged and
// uncommitted, and their unstaged changes stay as they are. When the paths
// have nothing left to commit, an earlier attempt committed them: the id
// of the last commit touching the first path is returned. The user's
// commit hooks run, as for a commit of their own (and may refuse it).
func Commit(ctx context.Context, root string, paths []string, msg string) (string, error) {
	repo := gitx.Repo{Dir: root}
	var keep []string
	for _, p := range paths {
		if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(p))); err == nil {
			keep = append(keep, p)
			continue
		}
		out, err := repo.Run(ctx, "ls-files", "-z", "--", p)
		if err != nil {
			return "", err
		}
		if len(out) > 0 {
			keep = append(keep, p)
		}
	}
	if len(keep) == 0 {
		return "", errors.New("nothing to commit: none of the paths exists or is tracked")
	}
	// Staging and committing are two git commands, each taking the index
	// lock on its own: a parallel run's commit between them would write
	// back an index read before this run's paths were staged, and they
	// would be lost ("pathspec did not match any file known to git"). The
	// runs of azero committing in this repository take turns.
	common, err := repo.CommonDir(ctx)
	if err != nil {
		return "", err
	}
	release, err := filelock.Hold(common)
	if err != nil {
		return "", fmt.Errorf("wait for other azero runs committing in %s: %w", root, err)
	}
	defer release()
	if _, err := runLocked(ctx, repo, append([]string{"add", "-A", "--"}, keep...)...); err != nil {
		return "", fmt.Errorf("stage %s: %w", strings.Join(keep, ", "), err)
	}
	_, err = repo.Run(ctx, append([]string{"diff", "--cached", "--quiet", "--"}, keep...)...)
	var ge *gitx.Error
	switch {
	case err == nil:
		out, err := repo.Run(ctx, "log", "-1", "--format=%H", "--", keep[0])
		if err != nil {
			return "", err
		}
		if id := strings.TrimSpace(string(out)); id != "" {
			return id, nil
		}
		return "", fmt.Errorf("nothing to commit in %s, and no commit contains it", keep[0])
	case errors.As(err, &ge) && ge.ExitCode == 1:
	default:
		return "", err
	}
	args := append([]string{"commit", "--quiet", "--only", "-m", msg, "--"}, keep...)
	// The files are committed in the user's checkout as their own commit
	// would be: their commit hooks run (and may refuse it).
	hooked := repo
	hooked.UserHooks = true
	if _, err := runLocked(ctx, hooked, args...); err != nil {
		return "", fmt.Errorf("commit %s: %w", strings.Join(keep, ", "), err)
	}
	// Not HEAD: a parallel run may have committed its own trail since.
	out, err := repo.Run(ctx, "log", "-1", "--format=%H", "--", keep[0])
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// runLocked runs git, again while another git process holds a lock it
// needs (see contended).
func runLocked(ctx context.Context, repo gitx.Repo, args ...string) ([]byte, error) {
	deadline := time.Now().Add(lockWait)
	for {
		out, err := repo.Run(ctx, args...)
		var ge *gitx.Error
		if err == nil || !errors.As(err, &ge) || !contended(ge.Stderr) || time.Now().After(deadline) {
			return out, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// contended reports whether git failed because another git process was
// changing the same repository: it held the index or a ref lock ("Unable
// to create '.../index.lock': File exists"), or it moved HEAD between this
// commit reading it and updating it ("cannot lock ref 'HEAD': is at X but
// expected Y"). Running the command again is then safe and succeeds.
func contended(stderr string) bool {
	return strings.Contains(stderr, ".lock': File exists") || strings.Contains(stderr, "cannot lock ref")
}
