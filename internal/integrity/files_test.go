package integrity_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/integrity"
	"github.com/azero-dev/azero/internal/testenv"
)

func TestCheckFiles(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		change  func(dir string)
		changed []string
	}{
		{"untouched", func(dir string) {}, nil},
		{"written again the same", func(dir string) { os.WriteFile(filepath.Join(dir, "tests/test_a.py"), []byte("assert 1\n"), 0o644) }, nil},
		{"rewritten", func(dir string) { os.WriteFile(filepath.Join(dir, "tests/test_a.py"), []byte("assert True\n"), 0o644) }, []string{"tests/test_a.py"}},
		{"removed", func(dir string) { os.Remove(filepath.Join(dir, "test_b.py")) }, []string{"test_b.py"}},
		{"made to appear", func(dir string) { os.WriteFile(filepath.Join(dir, "test_c.py"), []byte("x"), 0o644) }, []string{"test_c.py"}},
		{"replaced by a link to the same content", func(dir string) {
			os.Rename(filepath.Join(dir, "test_b.py"), filepath.Join(dir, "elsewhere.py"))
			os.Symlink("elsewhere.py", filepath.Join(dir, "test_b.py"))
		}, []string{"test_b.py"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			testenv.WriteFiles(t, dir, map[string]string{"tests/test_a.py": "assert 1\n", "test_b.py": "assert 2\n"})
			want, err := integrity.HashFiles(dir, []string{"tests/test_a.py", "test_b.py", "test_c.py"})
			if err != nil {
				t.Fatal(err)
			}
			if want["test_c.py"] != integrity.Absent {
				t.Fatalf("a missing file hashes as %q", want["test_c.py"])
			}
			tt.change(dir)
			err = integrity.CheckFiles(dir, want)
			var fe *integrity.FilesChangedError
			switch {
			case tt.changed == nil && err != nil:
				t.Errorf("CheckFiles = %v, want nil", err)
			case tt.changed != nil && (!errors.As(err, &fe) || !slices.Equal(fe.Paths, tt.changed)):
				t.Errorf("CheckFiles = %v, want the files %q named", err, tt.changed)
			case tt.changed != nil && !strings.Contains(err.Error(), tt.changed[0]):
				t.Errorf("the message %q does not name %s", err, tt.changed[0])
			}
		})
	}
}

func TestCheckBranch(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	repo, wt := runRepo(t)
	base := strings.TrimSpace(testenv.Git(t, repo, "rev-parse", "HEAD"))
	if err := integrity.CheckBranch(ctx, wt, branch, base); err != nil {
		t.Fatalf("at the base: %v", err)
	}
	testenv.Git(t, wt, "add", "-A")
	testenv.Git(t, wt, "commit", "-qm", "azero's commit")
	own := strings.TrimSpace(testenv.Git(t, wt, "rev-parse", "HEAD"))
	if err := integrity.CheckBranch(ctx, wt, branch, base, own); err != nil {
		t.Fatalf("at azero's own commit: %v", err)
	}

	// A commit on top, behind azero's back.
	testenv.Git(t, wt, "commit", "-q", "--allow-empty", "-m", "hidden")
	err := integrity.CheckBranch(ctx, wt, branch, base, own)
	var me *integrity.MovedError
	if !errors.As(err, &me) || !strings.Contains(err.Error(), branch) || !strings.Contains(err.Error(), base[:12]) {
		t.Fatalf("CheckBranch after a hidden commit = %v", err)
	}
	// The branch put back but HEAD detached elsewhere.
	testenv.Git(t, wt, "reset", "-q", "--hard", own)
	testenv.Git(t, wt, "checkout", "-q", "--detach", base)
	if err := integrity.CheckBranch(ctx, wt, branch, base, own); !errors.As(err, &me) {
		t.Errorf("CheckBranch with a detached HEAD = %v", err)
	}
	// The branch deleted.
	testenv.Git(t, wt, "checkout", "-q", branch)
	testenv.Git(t, repo, "update-ref", "-d", "refs/heads/"+branch)
	if err := integrity.CheckBranch(ctx, wt, branch, base, own); !errors.As(err, &me) || me.Tip != "" {
		t.Errorf("CheckBranch with the branch gone = %v", err)
	}
}
