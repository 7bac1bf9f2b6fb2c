package implement

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/review"
	"github.com/azero-dev/azero/internal/testenv"
)

// The packages installed in the user's checkout are usable in the run's
// worktree, invisible to git there, and untouched when it is removed.
func TestLinkNodeModules(t *testing.T) {
	t.Parallel()
	installed := map[string]string{
		"node_modules/left-pad/index.js":       "module.exports = (s) => ' ' + s\n",
		"node_modules/@scope/util/index.js":    "exports.x = 1\n",
		"node_modules/.bin/left-pad":           "#!/bin/sh\n",
		"node_modules/.vite/vitest/results.js": "{}\n",
	}
	tests := []struct {
		name      string
		committed map[string]string // the base commit
		installed bool              // node_modules in the checkout, not committed
		want      int
		visible   []string // paths readable in the worktree after linking
		absent    []string // paths that must not be in the worktree
	}{
		{"ignored and installed", map[string]string{".gitignore": "node_modules/\n", "index.js": ""}, true, depsLinked,
			[]string{"node_modules/left-pad/index.js", "node_modules/@scope/util/index.js", "node_modules/.bin/left-pad"},
			[]string{"node_modules/.vite"}},
		{"ignored without a slash", map[string]string{".gitignore": "/node_modules\n", "index.js": ""}, true, depsLinked,
			[]string{"node_modules/left-pad/index.js"}, nil},
		{"not ignored", map[string]string{"index.js": ""}, true, depsNotIgnored, nil, []string{"node_modules"}},
		{"nothing installed", map[string]string{".gitignore": "node_modules/\n", "index.js": ""}, false, depsNone, nil, []string{"node_modules"}},
		{"committed node_modules", map[string]string{"node_modules/vendored/index.js": "exports.v = 1\n"}, true, depsNone,
			[]string{"node_modules/vendored/index.js"}, []string{"node_modules/left-pad"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			repo := testenv.NewRepo(t, tt.committed)
			if tt.installed {
				testenv.WriteFiles(t, repo, installed)
			}
			before := testenv.Git(t, repo, "status", "--porcelain", "--ignored")
			wt := filepath.Join(t.TempDir(), "wt")
			r := gitx.Repo{Dir: repo}
			if err := r.AddWorktree(t.Context(), wt, "azero/deps", "HEAD"); err != nil {
				t.Fatal(err)
			}
			for range 2 { // safe to repeat
				got, err := linkNodeModules(t.Context(), repo, wt)
				if err != nil || got != tt.want {
					t.Fatalf("linkNodeModules = %d, %v; want %d", got, err, tt.want)
				}
			}
			for _, p := range tt.visible {
				if _, err := os.Stat(filepath.Join(wt, p)); err != nil {
					t.Errorf("%s is not usable in the worktree: %v", p, err)
				}
			}
			for _, p := range tt.absent {
				if _, err := os.Lstat(filepath.Join(wt, p)); err == nil {
					t.Errorf("%s is in the worktree", p)
				}
			}
			if st := testenv.Git(t, wt, "status", "--porcelain"); st != "" {
				t.Errorf("git sees changes in the worktree:\n%s", st)
			}
			files, err := review.Analyze(t.Context(), wt, review.AnalyzeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != 0 {
				t.Errorf("the diff review sees %d files: %+v", len(files), files)
			}
			if err := r.RemoveWorktree(t.Context(), wt); err != nil {
				t.Fatal(err)
			}
			if after := testenv.Git(t, repo, "status", "--porcelain", "--ignored"); after != before {
				t.Errorf("the checkout changed:\n%s\n---\n%s", before, after)
			}
			for p, content := range installed {
				if got, err := os.ReadFile(filepath.Join(repo, p)); tt.installed && (err != nil || string(got) != content) {
					t.Errorf("the checkout's %s is gone or changed: %q, %v", p, got, err)
				}
			}
			if strings.Contains(testenv.Git(t, repo, "worktree", "list"), wt) {
				t.Error("the worktree is still registered")
			}
		})
	}
}
