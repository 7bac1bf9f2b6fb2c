package demo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/lld"
	"github.com/azero-dev/azero/internal/safewrite"
	"github.com/azero-dev/azero/internal/testenv"
)

// TestPrepare makes the demo without starting azero: a repository with
// one commit and nothing uncommitted, its design, and the coder's script
// outside the change under review.
func TestPrepare(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "git")
	base := filepath.Join(t.TempDir(), "new")
	d, err := Prepare(t.Context(), &safewrite.Writer{}, base)
	if err != nil {
		t.Fatal(err)
	}
	if d.Project != filepath.Join(base, "textkit") || filepath.Dir(d.Script) != base {
		t.Errorf("setup = %+v", d)
	}
	if n := strings.TrimSpace(testenv.Git(t, d.Project, "rev-list", "--count", "HEAD")); n != "1" {
		t.Errorf("%s commits, want 1", n)
	}
	if st := testenv.Git(t, d.Project, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Errorf("uncommitted in the demo repository:\n%s", st)
	}
	if ls := testenv.Git(t, d.Project, "ls-files"); !strings.Contains(ls, "go.mod\n") || !strings.Contains(ls, Design) {
		t.Errorf("committed files:\n%s", ls)
	}
	design, err := os.ReadFile(d.Design)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := lld.Parse(string(design))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lld.Check(doc, d.Project); err != nil {
		t.Errorf("the demo's design does not fit its project: %v", err)
	}
	if script, err := os.ReadFile(d.Script); err != nil || string(script) != string(CoderScript) {
		t.Errorf("script: %v", err)
	}
	if _, err := Prepare(t.Context(), &safewrite.Writer{}, base); err == nil || !strings.Contains(err.Error(), "choose another --dir") {
		t.Errorf("a second demo in the same directory: %v", err)
	}
}
