package safewrite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxLinks bounds the symbolic links followed while resolving one path, as
// the kernel's ELOOP limit does; more is a loop.
const maxLinks = 40

// target is a confined path: Root is the resolved project root, Rel the
// resolved path below it (never ".", never through .git, no symlink in
// any component that existed when it was resolved).
type target struct {
	Given string // the path as the caller gave it, for messages
	Root  string
	Rel   string
}

// Abs is the target's absolute path.
func (t target) Abs() string { return filepath.Join(t.Root, t.Rel) }

// resolveRoot returns the absolute, symlink-free project root.
func resolveRoot(root string) (string, error) {
	if root == "" {
		return "", errors.New("no project root given")
	}
	if strings.ContainsRune(root, 0) {
		return "", fmt.Errorf("project root %q contains a NUL byte", root)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("project root %s: %w", root, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("project root: %w", err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("project root: %w", err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("project root %s is not a directory", root)
	}
	return real, nil
}

// confine resolves p against root and checks it is a legitimate target.
// With followLast false the last component is not resolved when it is a
// symlink (Move and Remove act on the link itself, as mv and rm do).
func confine(root, p string, followLast bool) (target, error) {
	refuse := func(reason string) (target, error) {
		return target{}, &PathTraversalError{Path: p, Reason: reason}
	}
	switch {
	case p == "":
		return refuse("the path is empty")
	case strings.ContainsRune(p, 0):
		return refuse("the path contains a NUL byte")
	}
	// A relative path naming .git is refused as written, even when its
	// ".." would lead out again; an absolute one is judged by where it
	// resolves (the root itself may legitimately lie below a .git).
	if !filepath.IsAbs(p) && hasGitComponent(p) {
		return refuse("azero never writes inside .git")
	}
	rootReal, err := resolveRoot(root)
	if err != nil {
		return target{}, err
	}
	start := rootReal
	if filepath.IsAbs(p) {
		start = string(filepath.Separator)
	} else {
		switch c := filepath.Clean(p); {
		case c == ".":
			return refuse("it is the project root itself, not a file in it")
		case c == ".." || strings.HasPrefix(c, ".."+string(filepath.Separator)):
			return refuse("a relative path may not climb out of the project root with ..")
		}
	}

	var r resolver
	dir, last := p, ""
	if !followLast {
		dir, last = splitLast(p)
		if last == "." || last == ".." {
			return refuse("it names a directory through " + last + "; name the entry itself")
		}
	}
	real, err := r.walk(start, dir)
	if err != nil {
		if errors.Is(err, errLoop) {
			return refuse("it goes through a symlink loop")
		}
		return target{}, fmt.Errorf("resolve %q: %w", p, err)
	}
	if last != "" {
		real = filepath.Join(real, last)
	}

	rel, err := filepath.Rel(rootReal, real)
	if err != nil {
		return refuse(fmt.Sprintf("it resolves to %s, outside the project root %s", real, rootReal))
	}
	switch {
	case rel == ".":
		return refuse("it is the project root itself, not a file in it")
	case rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)):
		how := ""
		if r.links > 0 {
			how = " through a symlink"
		}
		return refuse(fmt.Sprintf("it resolves%s to %s, outside the project root %s", how, real, rootReal))
	case hasGitComponent(rel):
		if r.links > 0 {
			return refuse("it resolves through a symlink into .git, and azero never writes inside .git")
		}
		return refuse("it is inside .git, and azero never writes inside .git")
	}
	return target{Given: p, Root: rootReal, Rel: rel}, nil
}

// splitLast splits p into the directory part and its last component,
// ignoring trailing separators.
func splitLast(p string) (dir, last string) {
	trimmed := strings.TrimRight(p, string(filepath.Separator))
	if trimmed == "" { // p was "/" or "///"
		return p, ""
	}
	i := strings.LastIndexByte(trimmed, filepath.Separator)
	if i < 0 {
		return ".", trimmed
	}
	if i == 0 {
		return string(filepath.Separator), trimmed[1:]
	}
	return trimmed[:i], trimmed[i+1:]
}

// hasGitComponent reports whether any component of p is .git, in any case
// (case-insensitive file systems would otherwise let .GIT through).
func hasGitComponent(p string) bool {
	for _, c := range strings.Split(filepath.ToSlash(p), "/") {
		if strings.EqualFold(c, ".git") {
			return true
		}
	}
	return false
}

var errLoop = errors.New("too many levels of symbolic links")

// resolver walks a path the way the kernel does: each existing component
// is examined with Lstat and a symlink is replaced by its target, so ".."
// after a symlink goes to the parent of where the link points, not of the
// link. Components that do not exist yet are taken literally.
type resolver struct {
	links int
}

func (r *resolver) walk(start, p string) (string, error) {
	cur := start
	queue := splitComponents(p)
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			cur = next
			continue
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		r.links++
		if r.links > maxLinks {
			return "", errLoop
		}
		dest, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(dest) {
			cur = string(filepath.Separator)
		}
		queue = append(splitComponents(dest), queue...)
	}
	return cur, nil
}

func splitComponents(p string) []string {
	return strings.Split(p, string(filepath.Separator))
}
