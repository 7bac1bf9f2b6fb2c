package issue

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/config"
	"github.com/azero-dev/azero/internal/testenv"
)

func TestPrepare(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "")
	tests := []struct {
		name  string
		cfg   config.Issue
		in    Inputs
		want  TrackerConfig
		audit string
		usage bool
		err   string
	}{
		{name: "nothing configured: local", want: TrackerConfig{Kind: "local", IssuesDir: "docs/issues"}, audit: "docs/audit"},
		{name: "--repo means github", in: Inputs{Repo: "acme/w"}, want: TrackerConfig{Kind: "github", Repo: "acme/w"}, audit: "docs/audit"},
		{name: "config repo means github", cfg: config.Issue{Repo: "acme/c"}, want: TrackerConfig{Kind: "github", Repo: "acme/c"}, audit: "docs/audit"},
		{name: "flag repo over config repo", cfg: config.Issue{Repo: "acme/c"}, in: Inputs{Repo: "acme/f"}, want: TrackerConfig{Kind: "github", Repo: "acme/f"}, audit: "docs/audit"},
		{name: "config tracker local wins over config repo", cfg: config.Issue{Tracker: "local", Repo: "acme/c", IssuesDir: "gov/issues", AuditDir: "gov/audit/"},
			want: TrackerConfig{Kind: "local", IssuesDir: "gov/issues"}, audit: "gov/audit"},
		{name: "--tracker local over config github", cfg: config.Issue{Tracker: "github", Repo: "acme/c"}, in: Inputs{Tracker: "local"},
			want: TrackerConfig{Kind: "local", IssuesDir: "docs/issues"}, audit: "docs/audit"},
		{name: "github without a repository", in: Inputs{Tracker: "github"}, usage: true},
		{name: "bad repository", in: Inputs{Repo: "acme"}, usage: true},
		{name: "--repo with the local tracker", in: Inputs{Tracker: "local", Repo: "acme/w"}, usage: true},
		{name: "unknown tracker", in: Inputs{Tracker: "jira"}, usage: true},
		{name: "audit dir outside", cfg: config.Issue{AuditDir: "../elsewhere"}, err: "inside the repository"},
		{name: "absolute issues dir", cfg: config.Issue{IssuesDir: "/tmp/issues"}, err: "inside the repository"},
		{name: "empty brief", in: Inputs{Brief: []byte(" \n")}, err: "is empty"},
		{name: "no slug in the file name", in: Inputs{BriefPath: "!!!.md"}, err: "cannot make a slug"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := tt.in
			in.Dir, in.Config = w.root, tt.cfg
			if in.BriefPath == "" {
				in.BriefPath = "notes/Budget Flag.md"
			}
			if in.Brief == nil {
				in.Brief = []byte("add a budget\n")
			}
			in.Drafter, in.Reviewer, in.MockScript = "mock:scripted", "gemini:gemini-2.5-pro", "replies.toml"
			s, err := Prepare(t.Context(), in)
			var ie *InputError
			switch {
			case tt.usage:
				if !errors.As(err, &ie) {
					t.Fatalf("err = %v, want an input error", err)
				}
				return
			case tt.err != "":
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if s.Tracker != tt.want || s.AuditDir != tt.audit || s.Slug != "budget-flag" || s.Root != w.root || s.Brief != "add a budget\n" {
				t.Errorf("state = %+v; want tracker %+v audit %q", s, tt.want, tt.audit)
			}
			// The run's settings are typed fields of its state, kept for
			// every resume.
			if s.Drafter != "mock:scripted" || s.Reviewer != "gemini:gemini-2.5-pro" || s.MockScript != "replies.toml" || !filepath.IsAbs(s.BriefPath) {
				t.Errorf("state = %+v; want the models, the script and the brief's absolute path", s)
			}
			// Nothing is created or changed before the run claims its slug.
			if st := testenv.Git(t, w.root, "status", "--porcelain", "--untracked-files=all"); st != "" {
				t.Errorf("Prepare changed the repository:\n%s", st)
			}
		})
	}
}
