package issue

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/azero-dev/azero/internal/config"
	"github.com/azero-dev/azero/internal/gitx"
)

// Inputs are what a human asks `azero issue` for: the brief and the
// choices the flags made, over the configuration.
type Inputs struct {
	BriefPath string // as given; its file name is the run's slug
	Brief     []byte // its content (read by the caller, bounded)
	Dir       string // a directory inside the repository
	Tracker   string // --tracker: github, local or "" (config, then github when a repository is named, else local)
	Repo      string // --repo OWNER/NAME
	Config    config.Issue
	// Drafter and Reviewer are the models the run will use, as
	// provider:model (the scripted model when the run is mocked).
	Drafter, Reviewer string
	// MockScript is the scripted model's script when a role is mocked;
	// the run keeps it for every resume.
	MockScript string
}

// InputError marks inputs that are wrong as given (a usage error, exit 2).
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *InputError) Unwrap() error { return e.Err }

func inputErrorf(format string, args ...any) error {
	return &InputError{Err: fmt.Errorf(format, args...)}
}

// Prepare checks the inputs and builds a run's initial state without
// changing anything: the repository, the brief and its slug, the tracker
// and the audit directory. The slug is claimed by the run itself (its
// first step), which asks the human when it is taken.
func Prepare(ctx context.Context, in Inputs) (*State, error) {
	top, err := gitx.TopLevel(ctx, in.Dir)
	if err != nil {
		return nil, fmt.Errorf("azero issue keeps its audit trail in a git repository; run it inside one: %w", err)
	}
	if strings.TrimSpace(string(in.Brief)) == "" {
		return nil, fmt.Errorf("the brief %s is empty: write your notes first", in.BriefPath)
	}
	slug := SlugFromFile(in.BriefPath)
	if slug == "" {
		return nil, fmt.Errorf("cannot make a slug from the file name %q: rename the brief using letters, digits and hyphens", filepath.Base(in.BriefPath))
	}
	tr, err := trackerOf(in)
	if err != nil {
		return nil, err
	}
	dir := in.Config.AuditDir
	if dir == "" {
		dir = DefaultAuditDir
	}
	auditDir, err := repoRelDir("issue.audit_dir", dir)
	if err != nil {
		return nil, err
	}
	briefPath, err := filepath.Abs(in.BriefPath)
	if err != nil {
		return nil, err
	}
	return &State{Slug: slug, BriefPath: briefPath, Brief: string(in.Brief), Root: top, AuditDir: auditDir,
		Tracker: tr, Drafter: in.Drafter, Reviewer: in.Reviewer, MockScript: in.MockScript}, nil
}

// ResolveTracker resolves the tracker as `azero issue` does, from the
// flags (kind: --tracker, repo: --repo; "" when not given) over the
// configuration: the design workflow reads its issues from the tracker
// this one files them to. A choice that cannot be meant is an InputError.
func ResolveTracker(kind, repo string, cfg config.Issue) (TrackerConfig, error) {
	return trackerOf(Inputs{Tracker: kind, Repo: repo, Config: cfg})
}

// trackerOf resolves where the run files: --tracker, else the config, else
// github when a repository is named, else local.
func trackerOf(in Inputs) (TrackerConfig, error) {
	kind, repo := in.Tracker, in.Repo
	if kind == "" {
		kind = in.Config.Tracker
	}
	if repo == "" && kind != TrackerLocal {
		repo = in.Config.Repo
	}
	if kind == "" {
		kind = TrackerLocal
		if repo != "" {
			kind = TrackerGitHub
		}
	}
	switch kind {
	case TrackerGitHub:
		if repo == "" {
			return TrackerConfig{}, inputErrorf("the github tracker needs the repository: pass --repo OWNER/NAME or set issue.repo in the config")
		}
		if o, n, ok := strings.Cut(repo, "/"); !ok || o == "" || n == "" || strings.Contains(n, "/") {
			return TrackerConfig{}, inputErrorf("--repo %q: use OWNER/NAME", repo)
		}
		return TrackerConfig{Kind: kind, Repo: repo}, nil
	case TrackerLocal:
		if in.Repo != "" {
			return TrackerConfig{}, inputErrorf("--repo names a GitHub repository, but the tracker is local; add --tracker github")
		}
		dir := in.Config.IssuesDir
		if dir == "" {
			dir = DefaultIssuesDir
		}
		d, err := repoRelDir("issue.issues_dir", dir)
		if err != nil {
			return TrackerConfig{}, err
		}
		return TrackerConfig{Kind: kind, IssuesDir: d}, nil
	}
	return TrackerConfig{}, inputErrorf("unknown tracker %q: use github or local", kind)
}

// repoRelDir validates a configured directory: relative, inside the
// repository, slash-separated.
func repoRelDir(key, dir string) (string, error) {
	d := path.Clean(filepath.ToSlash(dir))
	if d == "." || path.IsAbs(d) || d == ".." || strings.HasPrefix(d, "../") || filepath.IsAbs(dir) {
		return "", fmt.Errorf("config %s %q: must be a directory inside the repository, relative to its root", key, dir)
	}
	return d, nil
}

// Label names the tracker for humans: "github OWNER/NAME", "local DIR".
func (t TrackerConfig) Label() string {
	switch t.Kind {
	case TrackerGitHub:
		return "github " + t.Repo
	case TrackerLocal:
		return "local " + t.IssuesDir
	}
	return t.Kind
}
