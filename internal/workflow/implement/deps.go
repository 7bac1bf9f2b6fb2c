package implement

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/azero-dev/azero/internal/gitx"
)

// nodeModules is where npm, yarn and pnpm install a JavaScript project's
// packages.
const nodeModules = "node_modules"

// nodeCaches are the entries of node_modules that test runs write to
// (vite's and vitest's caches, babel's and others' .cache): they are not
// linked, so a run in the worktree writes its own, never the checkout's.
var nodeCaches = map[string]bool{".cache": true, ".vite": true, ".vitest": true}

// Linking outcomes of linkNodeModules.
const (
	depsNone       = iota // no installed packages in the checkout, or the worktree has its own
	depsLinked            // the checkout's packages are usable in the worktree
	depsNotIgnored        // git does not ignore node_modules: nothing was linked
)

// linkNodeModules makes the JavaScript packages installed in the user's
// checkout usable in the worktree. They are not in git, so a fresh
// worktree has none: the project's own runner (node_modules/.bin/jest, the
// `npm test` script), the modules the tests import and the types tsc
// checks against would be missing, and the baseline or the lint step
// would fail on a project whose tests run fine in the checkout.
//
// worktree/node_modules becomes a real directory holding a symbolic link
// to each entry of the checkout's node_modules (not a link to the whole
// directory: `node_modules/`, the usual ignore pattern, matches only a
// directory). It is done only when git ignores that directory, so nothing
// linked can show up in the diff review or be committed; the worktree's
// removal deletes the links, never what they point to. node_modules that
// git tracks is left as checked out. Safe to repeat: what is linked
// already is kept.
func linkNodeModules(ctx context.Context, repo, worktree string) (int, error) {
	src := filepath.Join(repo, nodeModules)
	if info, err := os.Stat(src); err != nil || !info.IsDir() {
		return depsNone, nil
	}
	dst := filepath.Join(worktree, nodeModules)
	wt := gitx.Repo{Dir: worktree}
	created := false
	switch info, err := os.Lstat(dst); {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.Mkdir(dst, 0o755); err != nil {
			return depsNone, fmt.Errorf("link installed packages: %w", err)
		}
		created = true
	case err != nil:
		return depsNone, fmt.Errorf("link installed packages: %w", err)
	case !info.IsDir():
		return depsNone, nil
	default:
		// Left by an earlier attempt of this node, or checked out.
		tracked, err := wt.Run(ctx, "ls-files", "-z", "--", nodeModules)
		if err != nil {
			return depsNone, fmt.Errorf("link installed packages: %w", err)
		}
		if len(tracked) > 0 {
			return depsNone, nil
		}
	}
	if _, err := wt.Run(ctx, "check-ignore", "-q", "--", nodeModules); err != nil {
		var ge *gitx.Error
		if !errors.As(err, &ge) || ge.ExitCode != 1 {
			return depsNone, fmt.Errorf("link installed packages: %w", err)
		}
		if created {
			_ = os.Remove(dst)
		}
		return depsNotIgnored, nil
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return depsNone, fmt.Errorf("link installed packages: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if nodeCaches[name] {
			continue
		}
		link := filepath.Join(dst, name)
		if _, err := os.Lstat(link); err == nil {
			continue
		}
		if err := os.Symlink(filepath.Join(src, name), link); err != nil {
			return depsNone, fmt.Errorf("link installed packages: %w", err)
		}
	}
	return depsLinked, nil
}
