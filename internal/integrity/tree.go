package integrity

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// Tree is a fingerprint of a work tree: every entry below its root,
// ignored files included, without following symbolic links. A regular
// file is its mode and the hash of its content, a symbolic link its
// target, a directory its mode. The work tree's .git link is an entry
// like any file; a .git directory is not descended into.
type Tree struct {
	root    string
	entries map[string]entry // by slash-separated path relative to root
}

// entry is what a path held.
type entry struct {
	kind byte // 'f' regular file, 'd' directory, 'l' symbolic link, 'o' anything else, 'e' unreadable
	mode fs.FileMode
	sum  [sha256.Size]byte // of a file's content
	text string            // a link's target; why an entry could not be read
}

func (e entry) String() string {
	switch e.kind {
	case 'f':
		return fmt.Sprintf("file %v %x", e.mode.Perm(), e.sum)
	case 'd':
		return fmt.Sprintf("directory %v", e.mode.Perm())
	case 'l':
		return "symlink to " + e.text
	case 'e':
		return fmt.Sprintf("unreadable %v: %s", e.mode, e.text)
	}
	return fmt.Sprintf("special %v", e.mode)
}

// ReadTree fingerprints the work tree at root. Reading a file that cannot
// be read (its permissions taken away, say) is not an error: the entry
// says so, and differs from the readable file it was. Files are hashed
// by as many goroutines as there are processors.
func ReadTree(root string) (*Tree, error) {
	t := &Tree{root: root, entries: map[string]entry{}}
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if p == root {
			return err
		}
		rel := filepath.ToSlash(p[len(root)+1:])
		if err != nil {
			t.entries[rel] = entry{kind: 'e', text: err.Error()}
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		switch typ := d.Type(); {
		case typ.IsDir():
			mode := typ
			if info, err := d.Info(); err == nil {
				mode = info.Mode()
			}
			t.entries[rel] = entry{kind: 'd', mode: mode}
			if rel == ".git" {
				return fs.SkipDir
			}
		case typ&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				t.entries[rel] = entry{kind: 'e', mode: typ, text: err.Error()}
				return nil
			}
			t.entries[rel] = entry{kind: 'l', text: target}
		case typ.IsRegular():
			files = append(files, rel)
		default:
			t.entries[rel] = entry{kind: 'o', mode: typ}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("fingerprint the work tree %s: %w", root, err)
	}
	hashed := make([]entry, len(files))
	workers := min(runtime.GOMAXPROCS(0), max(1, len(files)/64))
	var wg sync.WaitGroup
	next := make(chan int, len(files))
	for i := range files {
		next <- i
	}
	close(next)
	for range workers {
		wg.Go(func() {
			buf := make([]byte, 64<<10)
			for i := range next {
				hashed[i] = hashFile(filepath.Join(root, filepath.FromSlash(files[i])), buf)
			}
		})
	}
	wg.Wait()
	for i, rel := range files {
		t.entries[rel] = hashed[i]
	}
	return t, nil
}

// hashFile reads one regular file. It is opened without following a
// symbolic link, and only a regular file is read: a run racing the walk
// cannot make it block on a pipe.
func hashFile(p string, buf []byte) entry {
	f, err := os.OpenFile(p, os.O_RDONLY|oNoFollow|oNonBlock, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return entry{kind: 'e', text: "removed while it was read"}
		}
		return entry{kind: 'e', text: err.Error()}
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return entry{kind: 'e', text: err.Error()}
	}
	if !info.Mode().IsRegular() {
		return entry{kind: 'o', mode: info.Mode()}
	}
	h := sha256.New()
	if _, err := io.CopyBuffer(h, f, buf); err != nil {
		return entry{kind: 'e', mode: info.Mode(), text: err.Error()}
	}
	e := entry{kind: 'f', mode: info.Mode()}
	h.Sum(e.sum[:0])
	return e
}

// Len is the number of entries.
func (t *Tree) Len() int { return len(t.entries) }

// Digest is one hash of the whole fingerprint: equal digests, equal work
// trees.
func (t *Tree) Digest() string {
	names := make([]string, 0, len(t.entries))
	for k := range t.entries {
		names = append(names, k)
	}
	slices.Sort(names)
	h := sha256.New()
	for _, k := range names {
		io.WriteString(h, k)
		h.Write([]byte{0})
		io.WriteString(h, t.entries[k].String())
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TreeChange is what differs between two fingerprints of a work tree:
// slash-separated paths relative to its root, each list sorted.
type TreeChange struct {
	Added    []string `json:"added,omitempty"`
	Removed  []string `json:"removed,omitempty"`
	Modified []string `json:"modified,omitempty"`
}

// Empty reports no difference.
func (c TreeChange) Empty() bool {
	return len(c.Added) == 0 && len(c.Removed) == 0 && len(c.Modified) == 0
}

// Paths are every path of the change, sorted.
func (c TreeChange) Paths() []string {
	out := slices.Concat(c.Added, c.Removed, c.Modified)
	slices.Sort(out)
	return out
}

// String says what changed, a directory added or removed whole once:
// "tests/test_calc.py modified, conftest.py added".
func (c TreeChange) String() string {
	var parts []string
	for _, l := range []struct {
		paths []string
		word  string
	}{{c.Modified, "modified"}, {collapse(c.Added), "added"}, {collapse(c.Removed), "removed"}} {
		for _, p := range l.paths {
			parts = append(parts, p+" "+l.word)
		}
	}
	return listed(parts, 8)
}

// collapse leaves out the paths below another path of the list (a
// directory added or removed whole), marking that one as a directory.
func collapse(paths []string) []string {
	var out []string
	for _, p := range paths {
		if n := len(out); n > 0 && strings.HasPrefix(p, strings.TrimSuffix(out[n-1], "/")+"/") {
			if !strings.HasSuffix(out[n-1], "/") {
				out[n-1] += "/"
			}
			continue
		}
		out = append(out, p)
	}
	return out
}

// Diff compares after with t.
func (t *Tree) Diff(after *Tree) TreeChange {
	var c TreeChange
	for k, v := range t.entries {
		w, ok := after.entries[k]
		switch {
		case !ok:
			c.Removed = append(c.Removed, k)
		case w != v:
			c.Modified = append(c.Modified, k)
		}
	}
	for k := range after.entries {
		if _, ok := t.entries[k]; !ok {
			c.Added = append(c.Added, k)
		}
	}
	slices.Sort(c.Added)
	slices.Sort(c.Removed)
	slices.Sort(c.Modified)
	return c
}

// RunnerOutput reports a path test runners are known to write into a
// project when nothing sends it elsewhere: Python's bytecode caches (a
// __pycache__ directory, *.pyc files), pytest's cache (.pytest_cache),
// the caches vite, vitest and others keep in node_modules (.vite, .vitest,
// .cache), and TypeScript's incremental build information (*.tsbuildinfo,
// written by tsc --noEmit in an incremental project's lint step). A run
// that writes only these still counts; they are
// removed after every run all the same, as anything a run writes may be
// read by the next one (a .pyc is imported in place of its source).
func RunnerOutput(rel string) bool {
	if ext := path.Ext(rel); ext == ".pyc" || ext == ".tsbuildinfo" {
		return true
	}
	parts := strings.Split(rel, "/")
	for i, part := range parts {
		switch {
		case part == "__pycache__" || part == ".pytest_cache":
			return true
		case i > 0 && parts[i-1] == "node_modules" && (part == ".vite" || part == ".vitest" || part == ".cache"):
			return true
		}
	}
	return false
}

// Unexpected is the change without RunnerOutput paths.
func (c TreeChange) Unexpected() TreeChange {
	keep := func(ps []string) []string {
		return slices.DeleteFunc(slices.Clone(ps), RunnerOutput)
	}
	return TreeChange{Added: keep(c.Added), Removed: keep(c.Removed), Modified: keep(c.Modified)}
}
