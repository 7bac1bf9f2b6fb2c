package integrity

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// GitPrint is a fingerprint of what of a repository's git directory a
// run's code must not change: each watched place by the name a person
// knows it by (".git/config", ".git/hooks/pre-commit") and what it holds.
// It is read from the files themselves, never by running git, so that
// taking it cannot run anything the repository's configuration names.
type GitPrint struct {
	common, admin, worktree, branch string
	entries                         map[string]string
}

// ReadGit fingerprints the git directory of the linked work tree at
// worktree, whose branch is branch (a short name, "azero/7-multiply"; ""
// for none):
//
//   - the work tree's .git link file;
//   - its administrative directory (.git/worktrees/NAME): gitdir,
//     commondir, HEAD, config.worktree, locked;
//   - the shared git directory's config, config.worktree, commondir,
//     shallow, objects/info/alternates and http-alternates, and every
//     entry of hooks/ and info/ (exclude, attributes, grafts, ...);
//   - refs/heads/<branch>: its loose file and its line of packed-refs.
//
// The refs of a repository using the reftable format are not read (they
// are not files of their own); CheckBranch covers the run's branch there.
func ReadGit(worktree, branch string) (*GitPrint, error) {
	link := filepath.Join(worktree, ".git")
	b, err := os.ReadFile(link)
	if err != nil {
		return nil, fmt.Errorf("read the work tree's git link %s: %w", link, err)
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok {
		return nil, fmt.Errorf("%s is not a linked work tree's git link", link)
	}
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(worktree, gitdir)
	}
	c, err := os.ReadFile(filepath.Join(gitdir, "commondir"))
	if err != nil {
		return nil, fmt.Errorf("read the work tree's commondir: %w", err)
	}
	common := strings.TrimSpace(string(c))
	if !filepath.IsAbs(common) {
		common = filepath.Join(gitdir, common)
	}
	g := &GitPrint{common: filepath.Clean(common), admin: filepath.Clean(gitdir), worktree: worktree, branch: branch}
	return g, g.read()
}

// Again fingerprints the same places again (those ReadGit found, even if
// the .git link now names others).
func (g *GitPrint) Again() (*GitPrint, error) {
	again := &GitPrint{common: g.common, admin: g.admin, worktree: g.worktree, branch: g.branch}
	return again, again.read()
}

// CommonDir is the shared git directory the fingerprint watches.
func (g *GitPrint) CommonDir() string { return g.common }

func (g *GitPrint) read() error {
	g.entries = map[string]string{}
	add := func(name, path string) error {
		v, err := state(path)
		if err != nil {
			return fmt.Errorf("fingerprint %s: %w", path, err)
		}
		g.entries[name] = v
		return nil
	}
	if err := add("the run's work tree's .git link ("+filepath.Join(g.worktree, ".git")+")", filepath.Join(g.worktree, ".git")); err != nil {
		return err
	}
	for _, f := range []string{"gitdir", "commondir", "HEAD", "config.worktree", "locked"} {
		if err := add(g.name(filepath.Join(g.admin, f)), filepath.Join(g.admin, f)); err != nil {
			return err
		}
	}
	for _, f := range []string{"config", "config.worktree", "commondir", "shallow", "objects/info/alternates", "objects/info/http-alternates"} {
		p := filepath.Join(g.common, filepath.FromSlash(f))
		if err := add(g.name(p), p); err != nil {
			return err
		}
	}
	for _, d := range []string{"hooks", "info"} {
		root := filepath.Join(g.common, d)
		if err := add(g.name(root), root); err != nil {
			return err
		}
		err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil {
				return err
			}
			if p != root {
				return add(g.name(p), p)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("fingerprint %s: %w", root, err)
		}
	}
	if g.branch != "" {
		ref := "refs/heads/" + g.branch
		p := filepath.Join(g.common, filepath.FromSlash(ref))
		if err := add(g.name(p), p); err != nil {
			return err
		}
		line, err := packedRef(filepath.Join(g.common, "packed-refs"), ref)
		if err != nil {
			return err
		}
		g.entries[g.name(filepath.Join(g.common, "packed-refs"))+" ("+ref+")"] = line
	}
	return nil
}

// name is how a person knows a path of the git directory: ".git/config"
// when the shared directory is a checkout's .git.
func (g *GitPrint) name(p string) string {
	parent := g.common
	prefix := g.common
	if filepath.Base(g.common) == ".git" {
		parent, prefix = filepath.Dir(g.common), ".git"
	}
	if rel, err := filepath.Rel(g.common, p); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(filepath.Join(prefix, rel))
	}
	if rel, err := filepath.Rel(parent, p); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return p
}

// state says what a path holds: absent, a directory and its mode, a
// symbolic link and its target, or a file's mode and content hash.
func state(p string) (string, error) {
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return "absent", nil
	case err != nil:
		return "", err
	}
	switch m := fi.Mode(); {
	case m&fs.ModeSymlink != 0:
		t, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		return "symlink to " + t, nil
	case m.IsDir():
		return fmt.Sprintf("directory %v", m.Perm()), nil
	case m.IsRegular():
		b, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		sum := sha256.Sum256(b)
		return fmt.Sprintf("file %v %s", m.Perm(), hex.EncodeToString(sum[:])), nil
	default:
		return fmt.Sprintf("special file %v", m), nil
	}
}

// packedRef returns ref's line of a packed-refs file (and the peeled line
// after it), "" when it has none.
func packedRef(path, ref string) (string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	found := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case found && strings.HasPrefix(line, "^"):
			out = append(out, line)
		case strings.HasSuffix(line, " "+ref):
			out = append(out, line)
			found = true
		default:
			found = false
		}
	}
	return strings.Join(out, "\n"), sc.Err()
}

// Changed lists, sorted, the names of what differs in after.
func (g *GitPrint) Changed(after *GitPrint) []string {
	var out []string
	for k, v := range g.entries {
		if w, ok := after.entries[k]; !ok || w != v {
			out = append(out, k)
		}
	}
	for k := range after.entries {
		if _, ok := g.entries[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// Check compares after with g: a *GitChangedError naming what changed,
// with by saying what ran ("the test run"), or nil.
func (g *GitPrint) Check(after *GitPrint, by string) error {
	if changed := g.Changed(after); len(changed) > 0 {
		return &GitChangedError{By: by, Paths: changed, CommonDir: g.common}
	}
	return nil
}

// GitChangedError reports a run of the change's code that changed the
// repository's git directory: its configuration, hooks, attributes,
// alternates, or the run's own refs and work tree links. Nothing git
// would run is trusted after that, so azero stops before its next git
// call and leaves everything as it is for a person to inspect.
type GitChangedError struct {
	By        string   // what ran: "the test run", "the lint step"
	Paths     []string // what changed, as ReadGit names it
	CommonDir string
}

func (e *GitChangedError) Error() string {
	by := e.By
	if by == "" {
		by = "the run of the change's code"
	}
	return fmt.Sprintf("%s changed %s of your repository: azero stopped before running any git command; inspect it (the git directory is %s) and restore it before you use this repository again",
		by, listed(e.Paths, 5), e.CommonDir)
}

// listed names up to n items, and how many more there are.
func listed(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}
