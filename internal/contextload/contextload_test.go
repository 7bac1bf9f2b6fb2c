package contextload_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/azero-dev/azero/internal/contextload"
	"github.com/azero-dev/azero/internal/testenv"
)

func words(s string) int { return len(strings.Fields(s)) }

func TestLoadRules(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	root := filepath.Join(base, "repo")
	outside := filepath.Join(base, "outside")
	testenv.WriteFiles(t, root, map[string]string{
		"pkg/util.py":        "def helper():\n    return 1\n",
		"pkg/more.py":        "X = 2\n",
		".env":               "KEY=1\n",
		".env.production":    "KEY=2\n",
		"certs/server.pem":   "-----BEGIN\n",
		"deploy/prod.key":    "k\n",
		"home/id_rsa.pub":    "ssh-rsa\n",
		"config/secrets.yml": "a: b\n",
		"secrets/readme.md":  "x\n",
		"aws/credentials":    "[default]\n",
		"big.txt":            strings.Repeat("a", contextload.MaxFileBytes+1),
		"exactly.txt":        strings.Repeat("a", contextload.MaxFileBytes),
		"bin.dat":            "ab\x00cd",
	})
	testenv.WriteFiles(t, outside, map[string]string{"pass": "root:x\n"})
	if err := os.Symlink(filepath.Join(outside, "pass"), filepath.Join(root, "link-out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "dir-out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "pkg", "more.py"), filepath.Join(root, "link-in.py")); err != nil {
		t.Fatal(err)
	}
	// A named pipe nobody writes to: opening it to read would wait forever.
	if err := syscall.Mkfifo(filepath.Join(root, "pipe.txt"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		rule string
	}{
		{"pkg/util.py", ""},
		{"pkg", ""},
		{filepath.Join(root, "pkg/util.py"), ""},
		{"link-in.py", ""},
		{"exactly.txt", ""},
		{"../outside/pass", contextload.RuleTraversal},
		{"pkg/../pkg/util.py", contextload.RuleTraversal},
		{filepath.Join(outside, "pass"), contextload.RuleOutside},
		{"link-out", contextload.RuleOutside},
		{"dir-out/pass", contextload.RuleOutside},
		{".env", contextload.RuleSecret},
		{".env.production", contextload.RuleSecret},
		{"certs/server.pem", contextload.RuleSecret},
		{"deploy/prod.key", contextload.RuleSecret},
		{"home/id_rsa.pub", contextload.RuleSecret},
		{"config/secrets.yml", contextload.RuleSecret},
		{"secrets/readme.md", contextload.RuleSecret},
		{"aws/credentials", contextload.RuleSecret},
		{"big.txt", contextload.RuleSize},
		{"bin.dat", contextload.RuleBinary},
		{"pipe.txt", contextload.RuleBinary},
		{"missing.py", contextload.RuleMissing},
		{".git/config", contextload.RuleMissing},
	}
	for _, tt := range tests {
		files, err := contextload.Load(t.Context(), root, []string{tt.path}, contextload.Options{CountTokens: words})
		if tt.rule == "" {
			if err != nil || len(files) == 0 {
				t.Errorf("%s: %v", tt.path, err)
			}
			continue
		}
		var re *contextload.RefusedError
		if !errors.As(err, &re) || re.Rule != tt.rule {
			t.Errorf("%s: err = %v, want rule %s", tt.path, err, tt.rule)
			continue
		}
		if !strings.Contains(err.Error(), tt.path) {
			t.Errorf("%s: error %q does not name the path", tt.path, err)
		}
	}
}

func TestDirectoryExpansionChecksEveryFile(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	testenv.WriteFiles(t, root, map[string]string{"src/a.py": "a\n", "src/b.py": "b\n", "src/.env": "K=1\n"})
	_, err := contextload.Load(t.Context(), root, []string{"src"}, contextload.Options{CountTokens: words})
	var re *contextload.RefusedError
	if !errors.As(err, &re) || re.Rule != contextload.RuleSecret || re.Path != "src/.env" {
		t.Fatalf("err = %v, want the secret inside the directory refused", err)
	}
}

func TestTokenLimit(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	perByte := func(s string) int { return len(s) }
	half := strings.Repeat("w", contextload.MaxTotalTokens/2)
	testenv.WriteFiles(t, root, map[string]string{"a.txt": half, "b.txt": half, "c.txt": "x"})
	files, err := contextload.Load(t.Context(), root, []string{"a.txt", "b.txt"}, contextload.Options{CountTokens: perByte})
	if err != nil || len(files) != 2 {
		t.Fatalf("exactly at the limit: %v", err)
	}
	_, err = contextload.Load(t.Context(), root, []string{"a.txt", "b.txt", "c.txt"}, contextload.Options{CountTokens: perByte})
	var re *contextload.RefusedError
	if !errors.As(err, &re) || re.Rule != contextload.RuleTokens || re.Path != "c.txt" {
		t.Fatalf("over the limit: %v", err)
	}
	// The design document's tokens count too.
	_, err = contextload.Load(t.Context(), root, []string{"c.txt"}, contextload.Options{CountTokens: perByte, Reserved: contextload.MaxTotalTokens})
	if !errors.As(err, &re) || re.Rule != contextload.RuleTokens {
		t.Fatalf("reserved tokens ignored: %v", err)
	}
}

// TestDirectoriesHonourGitignore: a directory gives the files git sees in
// it; an ignored file is left out unless named on its own.
func TestDirectoriesHonourGitignore(t *testing.T) {
	t.Parallel()
	root := testenv.NewRepo(t, map[string]string{
		".gitignore":     "*.log\nbuild/\n",
		"pkg/tracked.go": "package pkg\n",
	})
	testenv.WriteFiles(t, root, map[string]string{
		"pkg/new.go":        "package pkg // untracked, not ignored\n",
		"pkg/debug.log":     "noise\n",
		"pkg/build/out.txt": "generated\n",
	})
	files, err := contextload.Load(t.Context(), root, []string{"pkg"}, contextload.Options{CountTokens: words})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		got = append(got, f.Rel)
	}
	if strings.Join(got, ",") != "pkg/new.go,pkg/tracked.go" {
		t.Errorf("files = %v, want the tracked and the untracked-but-not-ignored ones", got)
	}
	files, err = contextload.Load(t.Context(), root, []string{"pkg/debug.log"}, contextload.Options{CountTokens: words})
	if err != nil || len(files) != 1 {
		t.Errorf("an ignored file named on its own: %v, %v", files, err)
	}
	// A root below the work tree's top: the same files, relative to it.
	files, err = contextload.Load(t.Context(), filepath.Join(root, "pkg"), []string{"."}, contextload.Options{CountTokens: words})
	got = got[:0]
	for _, f := range files {
		got = append(got, f.Rel)
	}
	if err != nil || strings.Join(got, ",") != "new.go,tracked.go" {
		t.Errorf("from pkg/: files = %v, %v; want new.go and tracked.go", got, err)
	}
}

func TestLooksSecret(t *testing.T) {
	t.Parallel()
	for rel, want := range map[string]bool{
		".env": true, "config/.env.local": true, "deploy/server.pem": true, "secrets/db.txt": true, "home/.netrc": true,
		"calc.py": false, "docs/environment.md": false, "internal/keys.go": false,
	} {
		if pat, got := contextload.LooksSecret(rel); got != want || (got && pat == "") {
			t.Errorf("LooksSecret(%q) = %q, %v; want %v", rel, pat, got, want)
		}
	}
}
