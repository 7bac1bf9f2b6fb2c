package safewrite_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/safewrite"
)

// attackTree builds a project with every kind of symlink an attacker (or
// an accident) could use, next to a directory that must stay untouched.
func attackTree(t *testing.T) project {
	t.Helper()
	p := newProject(t)
	writeFile(t, p.path("src/app.py"), "print('hi')\n")
	writeFile(t, p.path(".git/config"), "[core]\n")
	links := map[string]string{
		"out-file":        filepath.Join(p.outside, "secret.txt"), // symlinked file pointing outside
		"out-dir":         p.outside,                              // symlinked directory pointing outside
		"src/rel-out":     "../../outside",                        // relative symlink climbing out
		"in-file":         "src/app.py",                           // symlink staying inside
		"in-dir":          "src",                                  // symlinked directory staying inside
		"abs-in-dir":      p.path("src"),                          // absolute symlink staying inside
		"loop-a":          "loop-b",                               // a loop
		"loop-b":          "loop-a",
		"self":            "self/x",
		"to-git":          ".git",           // into .git through a symlink
		"dangling-out":    "../outside/new", // dangling, pointing outside
		"src/up-and-back": "../../project/src",
	}
	for name, dest := range links {
		if err := os.Symlink(dest, p.path(name)); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func TestPathAttacksAreRefused(t *testing.T) {
	t.Parallel()
	p := attackTree(t)
	tests := []struct {
		name, path string
		reason     string // part of the refusal's reason
	}{
		{"relative parent", "../x.txt", "climb out"},
		{"relative to the sibling", "../outside/secret.txt", "climb out"},
		{"deep relative", "../../etc/passwd", "climb out"},
		{"climbing after a real directory", "src/../../outside/x", "climb out"},
		{"relative back into the root by name", "../project/x.txt", "climb out"},
		{"absolute outside", "/etc/passwd", "outside the project root"},
		{"absolute sibling", filepath.Join(p.outside, "new.txt"), "outside the project root"},
		{"absolute with dots", p.path("../outside/new.txt"), "outside the project root"},
		{"symlinked file pointing outside", "out-file", "through a symlink"},
		{"symlinked parent directory pointing outside", "out-dir/new.txt", "through a symlink"},
		{"nested under a symlinked directory", "out-dir/a/b/c.txt", "through a symlink"},
		{"relative symlink climbing out", "src/rel-out/new.txt", "through a symlink"},
		{"dangling symlink pointing outside", "dangling-out", "through a symlink"},
		{"dot-dot after a symlink goes to the link's parent", "out-dir/../x.txt", "through a symlink"},
		{"symlink loop", "loop-a", "loop"},
		{"symlink loop as a directory", "loop-b/x.txt", "loop"},
		{"self loop", "self", "loop"},
		{".git config", ".git/config", ".git"},
		{"new file in .git", ".git/hooks/pre-commit", ".git"},
		{".GIT in a subdirectory", "sub/.GIT/x", ".git"},
		{"mixed case .Git", "a/.Git/b/c", ".git"},
		{".git itself", ".git", ".git"},
		{"symlink into .git", "to-git/config", "through a symlink into .git"},
		{"absolute into .git", p.path(".git/config"), "it is inside .git"},
		{"the root itself", p.root, "project root itself"},
		{"dot", ".", "project root itself"},
		{"dot slash", "./", "project root itself"},
		{"sub and back", "src/..", "project root itself"},
		{"empty", "", "empty"},
		{"NUL byte", "src/app.py\x00.txt", "NUL"},
		{"NUL alone", "\x00", "NUL"},
	}
	linkItself := map[string]bool{"out-file": true, "dangling-out": true, "loop-a": true, "self": true}
	before := tree(t, p.outside)
	gitBefore := tree(t, p.path(".git"))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Not parallel with the checks of the outside tree below.
			w := &safewrite.Writer{Force: true, Auto: true}
			for _, s := range []safewrite.Strategy{safewrite.Replace, safewrite.Append} {
				_, err := w.Write(t.Context(), safewrite.Request{Root: p.root, Path: tt.path, Content: []byte("pwned\n"), Strategy: s})
				var pt *safewrite.PathTraversalError
				if !errors.As(err, &pt) {
					t.Fatalf("%s %q: err = %v, want *PathTraversalError", s, tt.path, err)
				}
				if pt.Path != tt.path || !strings.Contains(pt.Reason, tt.reason) {
					t.Fatalf("refusal %+v: want the path and a reason containing %q", pt, tt.reason)
				}
			}
			if _, _, err := safewrite.Read(p.root, tt.path); err == nil {
				t.Errorf("Read %q was allowed", tt.path)
			}
			// A symlink that is itself inside the root is an entry Move and
			// Remove may act on (TestRemoveAndMoveActOnLinksThemselves);
			// removing it here would change the tree for the other cases.
			if !linkItself[tt.path] {
				if err := w.Remove(t.Context(), p.root, tt.path, "test", ""); err == nil {
					t.Errorf("Remove %q was allowed", tt.path)
				}
			}
			if err := w.Move(t.Context(), p.root, "src/app.py", tt.path, "test", ""); err == nil {
				t.Errorf("Move to %q was allowed", tt.path)
			}
			if !linkItself[tt.path] && tt.path != "" && !strings.Contains(tt.path, "\x00") {
				if err := w.Move(t.Context(), p.root, tt.path, "src/stolen", "test", ""); err == nil {
					t.Errorf("Move from %q was allowed", tt.path)
				}
			}
		})
	}
	p.assertOutsideUnchanged(t, before)
	if after := tree(t, p.path(".git")); len(after) != len(gitBefore) || after["config"] != "[core]\n" {
		t.Fatalf(".git changed: %v", after)
	}
	if readFile(t, p.path("src/app.py")) != "print('hi')\n" {
		t.Fatal("src/app.py changed")
	}
}

// Remove and Move act on the entry itself, as rm and mv do: removing a
// symlink that points outside removes the link, never its target.
func TestRemoveAndMoveActOnLinksThemselves(t *testing.T) {
	t.Parallel()
	p := attackTree(t)
	before := tree(t, p.outside)
	w := &safewrite.Writer{}
	if err := w.Move(t.Context(), p.root, "out-dir", "moved-link", "test", ""); err != nil {
		t.Fatal(err)
	}
	if dest, err := os.Readlink(p.path("moved-link")); err != nil || dest != p.outside {
		t.Fatalf("the link was not moved as a link: %q, %v", dest, err)
	}
	if err := w.Remove(t.Context(), p.root, "out-file", "test", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(p.path("out-file")); !os.IsNotExist(err) {
		t.Fatal("the link is still there")
	}
	p.assertOutsideUnchanged(t, before)
	// Through a link pointing outside, nothing can be moved or removed.
	if err := w.Remove(t.Context(), p.root, "moved-link/secret.txt", "test", ""); err == nil {
		t.Fatal("removed a file outside through a symlinked directory")
	}
	if err := w.Move(t.Context(), p.root, "moved-link/secret.txt", "stolen.txt", "test", ""); err == nil {
		t.Fatal("moved a file from outside into the root")
	}
	p.assertOutsideUnchanged(t, before)
}

func TestLegitimatePathsAreWritten(t *testing.T) {
	t.Parallel()
	p := attackTree(t)
	tests := []struct {
		name, path string
		real       string // where the content must land, relative to the root
	}{
		{"plain", "src/new.py", "src/new.py"},
		{"absolute inside", p.path("src/abs.py"), "src/abs.py"},
		{"absolute through a symlinked root", "", ""}, // filled in below
		{"spaces", "dir with spaces/file name.txt", "dir with spaces/file name.txt"},
		{"quotes", `q/it's "quoted".txt`, `q/it's "quoted".txt`},
		{"newline", "odd/new\nline.txt", "odd/new\nline.txt"},
		{"unicode", "ünïcødé/文件 📄.txt", "ünïcødé/文件 📄.txt"},
		{"leading dash", "-rf", "-rf"},
		{"dot-dot inside a name", "a..b/..c", "a..b/..c"},
		{"dot-dot that stays inside", "src/../docs/x.md", "docs/x.md"},
		{"redundant separators", "src//./deep///x.txt", "src/deep/x.txt"},
		{".github is not .git", ".github/workflows/ci.yml", ".github/workflows/ci.yml"},
		{".gitignore is not .git", ".gitignore", ".gitignore"},
		{"symlinked file inside writes the real file", "in-file", "src/app.py"},
		{"symlinked directory inside", "in-dir/via-link.py", "src/via-link.py"},
		{"absolute symlink inside", "abs-in-dir/via-abs.py", "src/via-abs.py"},
		{"a link that leaves and comes back", "src/up-and-back/back.py", "src/back.py"},
	}
	// The root as reached through a symlink to it.
	alias := filepath.Join(t.TempDir(), "alias")
	if err := os.Symlink(p.root, alias); err != nil {
		t.Fatal(err)
	}
	tests[2].path, tests[2].real = filepath.Join(alias, "src/alias.py"), "src/alias.py"

	before := tree(t, p.outside)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			content := "content of " + tt.name + "\n"
			res, err := (&safewrite.Writer{}).Write(t.Context(), safewrite.Request{Root: p.root, Path: tt.path, Content: []byte(content)})
			if err != nil {
				t.Fatal(err)
			}
			if res.Path != filepath.Clean(tt.real) {
				t.Errorf("result path = %q, want %q", res.Path, tt.real)
			}
			if got := readFile(t, p.path(tt.real)); got != content {
				t.Fatalf("%s holds %q", tt.real, got)
			}
			got, snap, err := safewrite.Read(p.root, tt.path)
			if err != nil || string(got) != content || !snap.Exists {
				t.Fatalf("Read back: %q %+v %v", got, snap, err)
			}
		})
	}
	if fi, err := os.Lstat(p.path("in-file")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("writing through the symlink replaced the link itself")
	}
	p.assertOutsideUnchanged(t, before)
}

// The root may be given relative, with a trailing slash, or through a
// symlink; a missing root is an error, not a place to create.
func TestRootForms(t *testing.T) {
	p := newProject(t)
	t.Chdir(filepath.Dir(p.root))
	for _, root := range []string{"project", "project/", "./project/../project"} {
		if _, err := (&safewrite.Writer{}).Write(t.Context(), safewrite.Request{Root: root, Path: "f.txt", Content: []byte(root)}); err != nil {
			t.Fatalf("root %q: %v", root, err)
		}
	}
	for _, root := range []string{"", "missing", "project/f.txt"} {
		if _, err := (&safewrite.Writer{}).Write(t.Context(), safewrite.Request{Root: root, Path: "g.txt", Content: []byte("x")}); err == nil {
			t.Errorf("root %q was accepted", root)
		}
	}
	if _, err := os.Stat("missing"); !os.IsNotExist(err) {
		t.Fatal("a missing root was created")
	}
}

// A symlink swapped in while the human decides (between the check and the
// write) still cannot lead the write outside: the I/O goes through an
// os.Root, which refuses to follow it.
func TestSwapDuringApprovalCannotEscape(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		swap func(t *testing.T, p project)
	}{
		{"parent directory becomes a symlink to outside", func(t *testing.T, p project) {
			if err := os.Rename(p.path("sub"), p.path("sub.orig")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(p.outside, p.path("sub")); err != nil {
				t.Fatal(err)
			}
		}},
		{"the file becomes a symlink to outside", func(t *testing.T, p project) {
			if err := os.Remove(p.path("sub/big.txt")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(p.outside, "secret.txt"), p.path("sub/big.txt")); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := newProject(t)
			writeFile(t, p.path("sub/big.txt"), numbered("old", 1, 150))
			writeFile(t, filepath.Join(p.outside, "big.txt"), numbered("old", 1, 150))
			before := tree(t, p.outside)
			w := &safewrite.Writer{Approver: approverFunc(func(context.Context, safewrite.Proposal) (safewrite.Decision, error) {
				tt.swap(t, p)
				return safewrite.Decision{Approved: true, Strategy: safewrite.Replace}, nil
			})}
			_, err := w.Write(t.Context(), safewrite.Request{Root: p.root, Path: "sub/big.txt", Content: []byte("pwned\n")})
			if err == nil {
				t.Fatal("the write went through the swapped-in symlink")
			}
			t.Log(err)
			p.assertOutsideUnchanged(t, before)
			for name := range tree(t, p.root) {
				if strings.Contains(name, ".azero-tmp-") {
					t.Errorf("temporary file left: %s", name)
				}
			}
		})
	}
}
