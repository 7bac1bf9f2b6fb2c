package tracker

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/go-github/v75/github"
)

// DefaultLabelColor is given to labels azero creates.
const DefaultLabelColor = "ededed"

// GitHub files issues through GitHub's REST API.
type GitHub struct {
	Owner, Repo string
	client      *github.Client
	login       string
}

// GitHubOptions configure the client.
type GitHubOptions struct {
	Repo       string // OWNER/NAME
	Token      string // from GITHUB_TOKEN or GH_TOKEN
	APIURL     string // GITHUB_API_URL; default https://api.github.com
	HTTPClient *http.Client
}

// ErrNoToken is returned when no GitHub token is configured.
var ErrNoToken = errors.New("no GitHub token: set GITHUB_TOKEN (or GH_TOKEN) to a token that can create issues, or use --tracker local")

// NewGitHub returns a GitHub tracker. GITHUB_API_URL is the API root as
// GitHub Actions defines it (https://api.github.com, or
// https://HOST/api/v3 for GitHub Enterprise Server).
func NewGitHub(opts GitHubOptions) (*GitHub, error) {
	owner, name, ok := strings.Cut(opts.Repo, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("github repository %q: use OWNER/NAME", opts.Repo)
	}
	if opts.Token == "" {
		return nil, ErrNoToken
	}
	c := github.NewClient(opts.HTTPClient).WithAuthToken(opts.Token)
	if opts.APIURL != "" {
		u, err := url.Parse(strings.TrimRight(opts.APIURL, "/") + "/")
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("GITHUB_API_URL %q is not an http(s) URL", opts.APIURL)
		}
		c.BaseURL = u
		c.UploadURL = u
	}
	return &GitHub{Owner: owner, Repo: name, client: c}, nil
}

// Name implements Tracker.
func (g *GitHub) Name() string { return "github " + g.Owner + "/" + g.Repo }

// describe turns a go-github error into one a user can act on.
func (g *GitHub) describe(what string, err error) error {
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		switch er.Response.StatusCode {
		case http.StatusUnauthorized:
			return fmt.Errorf("github: %s: the token was rejected (401 %s); check GITHUB_TOKEN/GH_TOKEN", what, er.Message)
		case http.StatusForbidden:
			return fmt.Errorf("github: %s: forbidden (403 %s); the token lacks permission for %s/%s, or a rate limit was hit", what, er.Message, g.Owner, g.Repo)
		case http.StatusNotFound:
			return fmt.Errorf("github: %s: %s/%s not found (404), or the token cannot see it", what, g.Owner, g.Repo)
		}
		return fmt.Errorf("github: %s: %d %s", what, er.Response.StatusCode, er.Message)
	}
	var rl *github.RateLimitError
	if errors.As(err, &rl) {
		return fmt.Errorf("github: %s: rate limited until %s", what, rl.Rate.Reset.Time.Format("15:04:05"))
	}
	return fmt.Errorf("github: %s: %w", what, err)
}

// Check implements Tracker: the repository is visible with the token
// (GET /repos/OWNER/NAME). The token's user (GET /user) only narrows Find:
// tokens that cannot read it (GitHub App tokens) are fine, a rejected
// token is not.
func (g *GitHub) Check(ctx context.Context) error {
	u, _, err := g.client.Users.Get(ctx, "")
	var er *github.ErrorResponse
	switch {
	case err == nil:
		g.login = u.GetLogin()
	case errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusUnauthorized:
		return g.describe("check the token", err)
	}
	if _, _, err := g.client.Repositories.Get(ctx, g.Owner, g.Repo); err != nil {
		return g.describe("check the repository", err)
	}
	return nil
}

// Find implements Tracker: it scans the most recent issues (of the
// token's user when known) for the marker. The search API is not used: it
// lags behind issues created seconds ago, which is exactly the case here.
func (g *GitHub) Find(ctx context.Context, marker string) (Issue, bool, error) {
	opts := &github.IssueListByRepoOptions{State: "all", Sort: "created", Direction: "desc", Creator: g.login,
		ListOptions: github.ListOptions{PerPage: 100}}
	for page := 0; page < 3; page++ {
		issues, resp, err := g.client.Issues.ListByRepo(ctx, g.Owner, g.Repo, opts)
		if err != nil {
			return Issue{}, false, g.describe("look for an issue already filed", err)
		}
		for _, is := range issues {
			if is.IsPullRequest() {
				continue
			}
			if strings.Contains(is.GetBody(), marker) {
				return fromGitHub(is), true, nil
			}
		}
		if resp == nil || resp.NextPage == 0 {
			break
		}
		opts.ListOptions.Page = resp.NextPage
	}
	return Issue{}, false, nil
}

func fromGitHub(is *github.Issue) Issue {
	out := Issue{Number: is.GetNumber(), URL: is.GetHTMLURL(), Title: is.GetTitle()}
	for _, l := range is.Labels {
		out.Labels = append(out.Labels, l.GetName())
	}
	return out
}

// Labels implements Tracker: every page of GET /repos/OWNER/NAME/labels.
func (g *GitHub) Labels(ctx context.Context) ([]string, error) {
	var names []string
	opts := &github.ListOptions{PerPage: 100}
	for {
		page, resp, err := g.client.Issues.ListLabels(ctx, g.Owner, g.Repo, opts)
		if err != nil {
			return nil, g.describe("list labels", err)
		}
		for _, l := range page {
			names = append(names, l.GetName())
		}
		if resp == nil || resp.NextPage == 0 {
			return names, nil
		}
		opts.Page = resp.NextPage
	}
}

// EnsureLabels implements Tracker. GitHub's label names are
// case-insensitive: "Bug" exists when "bug" does.
func (g *GitHub) EnsureLabels(ctx context.Context, labels []string) ([]string, error) {
	if len(labels) == 0 {
		return nil, nil
	}
	names, err := g.Labels(ctx)
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, name := range names {
		have[strings.ToLower(name)] = true
	}
	var created []string
	for _, name := range labels {
		if have[strings.ToLower(name)] {
			continue
		}
		_, _, err := g.client.Issues.CreateLabel(ctx, g.Owner, g.Repo, &github.Label{Name: github.Ptr(name), Color: github.Ptr(DefaultLabelColor)})
		if err != nil {
			return created, g.describe("create label "+name, err)
		}
		created = append(created, name)
	}
	return created, nil
}

// Create implements Tracker.
func (g *GitHub) Create(ctx context.Context, is Issue) (Issue, error) {
	req := &github.IssueRequest{Title: github.Ptr(is.Title), Body: github.Ptr(is.Body)}
	if len(is.Labels) > 0 {
		req.Labels = &is.Labels
	}
	created, _, err := g.client.Issues.Create(ctx, g.Owner, g.Repo, req)
	if err != nil {
		return Issue{}, g.describe("create the issue", err)
	}
	return fromGitHub(created), nil
}
