package design

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/config"
	"github.com/azero-dev/azero/internal/testenv"
	"github.com/azero-dev/azero/internal/tracker"
	"github.com/azero-dev/azero/internal/tracker/trackertest"
)

// TestPrepareReadsAGitHubIssue: the issue is read from GitHub by number
// (go-github against the fake GitHub), its marker finds the trail `azero
// issue` left, and nothing is written.
func TestPrepareReadsAGitHubIssue(t *testing.T) {
	t.Parallel()
	root := testenv.NewRepo(t, map[string]string{"calc.go": "package calc\n",
		"docs/audit/done/2-search/003-filed.json": `{"number": 2, "tracker": "github acme/widgets", "run_id": "260101-abcdef"}`})
	fake := trackertest.NewGitHub(t, "acme", "widgets", "tok")
	fake.AddIssue("Unrelated", "x", false)
	n := fake.AddIssue("Search is slow!", "Searching takes 4 s.\n\n"+tracker.Marker("260101-abcdef")+"\n", false, "perf")
	gh, err := tracker.NewGitHub(tracker.GitHubOptions{Repo: "acme/widgets", Token: "tok", APIURL: fake.URL})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Prepare(t.Context(), Inputs{Dir: filepath.Join(root, "docs"), Issue: n, Reader: gh, TrackerName: gh.Name(), Drafter: "mock:scripted", Reviewer: "mock:scripted"})
	if err != nil {
		t.Fatal(err)
	}
	is := s.Issue
	if is.Number != 2 || is.Title != "Search is slow!" || is.URL != "https://github.example/acme/widgets/issues/2" || strings.Contains(is.Body, "azero:run") ||
		is.Trail != "docs/audit/done/2-search" || is.FiledBy != "260101-abcdef" || is.Tracker != "github acme/widgets" || len(is.Labels) != 1 {
		t.Errorf("issue = %+v", is)
	}
	if s.LLDPath != "docs/lld/002-search-is-slow.md" || s.Slug != "design-002-search-is-slow" || s.Root != root || s.AuditDir != "docs/audit" {
		t.Errorf("state = %+v", s)
	}
	if st := testenv.Git(t, root, "status", "--porcelain"); st != "" {
		t.Errorf("Prepare changed the repository: %q", st)
	}
}

func TestPrepareRefuses(t *testing.T) {
	t.Parallel()
	root := testenv.NewRepo(t, map[string]string{"calc.go": "package calc\n", "docs/lld/001-add-a-flag.md": "# x\n",
		"docs/audit/active/design-002-second/001-issue.md": "x\n"})
	local := &tracker.Local{Root: root, Dir: "docs/issues"}
	testenv.WriteFiles(t, root, map[string]string{"docs/issues/0001-add-a-flag.md": "# Add a flag\n\nbody\n", "docs/issues/0002-second.md": "# Second\n\nbody\n",
		"docs/issues/0003-third.md": "# Third\n\nbody\n"})
	in := func(mod func(*Inputs)) Inputs {
		i := Inputs{Dir: root, Reader: local, TrackerName: local.Name()}
		mod(&i)
		return i
	}
	tests := []struct {
		name  string
		in    Inputs
		want  string
		usage bool
	}{
		{"neither issue nor brief", in(func(i *Inputs) {}), "--issue N", true},
		{"both", in(func(i *Inputs) { i.Issue, i.BriefPath, i.Brief = 3, "b.md", []byte("x") }), "not both", true},
		{"no such issue", in(func(i *Inputs) { i.Issue = 9 }), "no issue", true},
		{"a design already there", in(func(i *Inputs) { i.Issue = 1 }), "exists already", false},
		{"an unfinished run's trail", in(func(i *Inputs) { i.Issue = 2 }), "unfinished design run", false},
		{"an empty brief", in(func(i *Inputs) { i.BriefPath, i.Brief = "empty.md", []byte(" \n") }), "is empty", false},
		{"an lld_dir outside", in(func(i *Inputs) { i.Issue, i.Config = 3, config.Config{Design: config.Design{LLDDir: "../x"}} }), "design.lld_dir", true},
		{"--implement without a coder", in(func(i *Inputs) { i.Issue, i.Implement = 3, &ImplementPlan{} }), "coder", true},
		{"outside git", Inputs{Dir: t.TempDir(), Issue: 1, Reader: local}, "git repository", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Prepare(t.Context(), tt.in)
			var ie *InputError
			if err == nil || !strings.Contains(err.Error(), tt.want) || errors.As(err, &ie) != tt.usage {
				t.Errorf("err = %v (usage %v), want %q (usage %v)", err, errors.As(err, &ie), tt.want, tt.usage)
			}
		})
	}
	if _, err := Prepare(t.Context(), in(func(i *Inputs) { i.Issue = 9 })); !errors.Is(err, tracker.ErrNoIssue) {
		t.Errorf("a missing issue: %v, want ErrNoIssue", err)
	}
}

// TestPrepareFromABrief: a brief's design is named after its file, in the
// configured directory.
func TestPrepareFromABrief(t *testing.T) {
	t.Parallel()
	root := testenv.NewRepo(t, map[string]string{"calc.go": "package calc\n"})
	brief := filepath.Join(t.TempDir(), "Faster Search.md")
	if err := os.WriteFile(brief, []byte("## Search is slow\n\nMake it fast.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Prepare(t.Context(), Inputs{Dir: root, BriefPath: brief, Brief: []byte("## Search is slow\n\nMake it fast.\n"),
		Config: config.Config{Design: config.Design{LLDDir: "design/"}, Issue: config.Issue{AuditDir: "trail"}}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Issue != nil || s.LLDPath != "design/faster-search.md" || s.Title != "Search is slow" || s.ActiveDir() != "trail/active/design-faster-search" || s.BriefPath != brief {
		t.Errorf("state = %+v", s)
	}
}
