package safewrite

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzTree is a project with symlinks of every kind next to an outside
// directory.
func fuzzTree(f *testing.F) (root, outside string) {
	f.Helper()
	parent, err := filepath.EvalSymlinks(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	root, outside = filepath.Join(parent, "project"), filepath.Join(parent, "outside")
	for _, d := range []string{"project/src/pkg", "project/.git/hooks", "project/docs", "outside/deep"} {
		if err := os.MkdirAll(filepath.Join(parent, d), 0o755); err != nil {
			f.Fatal(err)
		}
	}
	for _, file := range []string{"project/src/app.py", "project/.git/config", "outside/secret"} {
		if err := os.WriteFile(filepath.Join(parent, file), []byte("x\n"), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	links := map[string]string{
		"out-file":     filepath.Join(outside, "secret"),
		"out-dir":      outside,
		"src/rel-out":  "../../outside/deep",
		"in-file":      "src/app.py",
		"in-dir":       "src",
		"abs-in":       filepath.Join(root, "src/pkg"),
		"loop-a":       "loop-b",
		"loop-b":       "loop-a",
		"to-git":       ".git",
		"src/to-git":   "../.GIT/hooks",
		"dangling":     "../outside/none",
		"src/back":     "../../project/docs",
		"src/pkg/up":   "..",
		"src/pkg/root": "../..",
	}
	for name, dest := range links {
		if err := os.Symlink(dest, filepath.Join(root, name)); err != nil {
			f.Fatal(err)
		}
	}
	return root, outside
}

// realPath resolves p with filepath.EvalSymlinks on its longest existing
// prefix: an oracle independent of confine's own walk.
func realPath(p string) (string, error) {
	rest := ""
	cur := p
	for {
		if _, err := os.Lstat(cur); err == nil {
			real, err := filepath.EvalSymlinks(cur)
			if err != nil {
				return "", err
			}
			return filepath.Join(real, rest), nil
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// FuzzConfine: for any path, confine either refuses it or returns a target
// that is strictly inside the root, not under .git, and free of symlinks;
// and a plain relative path (no "..", no symlink, no .git) is never
// refused.
func FuzzConfine(f *testing.F) {
	root, outside := fuzzTree(f)
	for _, seed := range []string{
		"a.txt", "src/app.py", "src/new/dir/file.go", "../x", "../../etc/passwd", "/etc/passwd",
		"out-file", "out-dir/x", "src/rel-out/x", "in-file", "in-dir/x", "abs-in/x", "loop-a/x",
		".git/config", "to-git/config", "src/to-git/x", "sub/.GIT/x", "dangling", "src/back/x",
		"src/pkg/up/up/x", "src/pkg/root/x", "src/pkg/root/../x", ".", "", "\x00", "a\x00b",
		"in-dir/../../x", "out-dir/../project/x", root + "/src/x", outside + "/x", "./././a",
		"a/b/../../..", "src//pkg///x", "é/文件 .txt", "x\ny", ".gitignore", ".github/ci.yml",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, p string) {
		tg, err := confine(root, p, true)
		if err != nil {
			if plainRelative(root, p) {
				t.Fatalf("plain path %q refused: %v", p, err)
			}
			var pt *PathTraversalError
			if errors.As(err, &pt) && pt.Path != p {
				t.Fatalf("refusal names %q, not %q", pt.Path, p)
			}
			return
		}
		if strings.ContainsRune(p, 0) || p == "" || (!filepath.IsAbs(p) && hasGitComponent(p)) {
			t.Fatalf("%q accepted", p)
		}
		if tg.Root != root || tg.Rel == "." || tg.Rel == "" || filepath.IsAbs(tg.Rel) {
			t.Fatalf("%q: target %+v", p, tg)
		}
		abs := filepath.Join(root, tg.Rel)
		real, err := realPath(abs)
		if err != nil {
			// Only a loop can make the oracle fail on an accepted path:
			// confine must have refused it.
			t.Fatalf("%q accepted as %s, which does not resolve: %v", p, tg.Rel, err)
		}
		if real != abs {
			t.Fatalf("%q accepted as %s, which still goes through a symlink to %s", p, abs, real)
		}
		if !strings.HasPrefix(real, root+string(filepath.Separator)) {
			t.Fatalf("%q accepted although it resolves to %s, outside %s", p, real, root)
		}
		if hasGitComponent(tg.Rel) {
			t.Fatalf("%q accepted inside .git: %s", p, tg.Rel)
		}
		if plainRelative(root, p) && tg.Rel != filepath.Clean(p) {
			t.Fatalf("plain path %q became %s", p, tg.Rel)
		}
	})
}

// plainRelative reports whether p is an ordinary relative path: no NUL,
// no "..", no .git, not the root, and no existing component that is a
// symlink or not a directory where one is needed.
func plainRelative(root, p string) bool {
	if p == "" || filepath.IsAbs(p) || strings.ContainsRune(p, 0) || hasGitComponent(p) || strings.Contains("/"+p+"/", "/../") {
		return false
	}
	c := filepath.Clean(p)
	if c == "." {
		return false
	}
	parts := strings.Split(c, string(filepath.Separator))
	cur := root
	for i, part := range parts {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return true
		}
		if err != nil || fi.Mode()&fs.ModeSymlink != 0 || (i < len(parts)-1 && !fi.IsDir()) {
			return false
		}
	}
	return true
}
