package testenv

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Checkout fingerprints a person's checkout: every file but .git, the
// status, HEAD. A run must leave it as it found it.
func Checkout(t testing.TB, dir string) string {
	t.Helper()
	var lines []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			data, _ := os.ReadFile(p)
			sum := sha256.Sum256(data)
			rel, _ := filepath.Rel(dir, p)
			lines = append(lines, rel+" "+hex.EncodeToString(sum[:8]))
		}
		return nil
	})
	sort.Strings(lines)
	lines = append(lines, "status:"+Git(t, dir, "status", "--porcelain"), "head:"+Git(t, dir, "rev-parse", "HEAD"))
	return strings.Join(lines, "\n")
}

// Refs lists the repository's branches and worktrees: a run in progress
// adds its own, and every ending must remove them.
func Refs(t testing.TB, dir string) string {
	t.Helper()
	var paths []string
	for _, l := range strings.Split(Git(t, dir, "worktree", "list", "--porcelain"), "\n") {
		if strings.HasPrefix(l, "worktree ") {
			paths = append(paths, l)
		}
	}
	return Git(t, dir, "branch", "--format=%(refname:short)") + strings.Join(paths, "\n")
}
