package tracker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/google/go-github/v75/github"

	"github.com/azero-dev/azero/internal/lazyre"
)

// Reader reads an issue by its number, with its body: the design workflow
// reads the issue it designs for. GitHub and Local implement it.
type Reader interface {
	Get(ctx context.Context, number int) (Issue, error)
}

// ErrNoIssue is wrapped by Get's error for a number the tracker has no
// issue under.
var ErrNoIssue = errors.New("no such issue")

// MaxBodyBytes bounds the body Get returns: an issue is read to be shown
// to a model, and a body past this is cut (GitHub allows 65,536
// characters; a local file could be anything).
const MaxBodyBytes = 256 << 10

var _ Reader = (*GitHub)(nil)
var _ Reader = (*Local)(nil)

// Get implements Reader: GET /repos/OWNER/NAME/issues/N. A pull request
// (which GitHub serves under the same number space) is refused.
func (g *GitHub) Get(ctx context.Context, number int) (Issue, error) {
	if number < 1 {
		return Issue{}, fmt.Errorf("issue number %d: %w", number, ErrNoIssue)
	}
	is, _, err := g.client.Issues.Get(ctx, g.Owner, g.Repo, number)
	var er *github.ErrorResponse
	switch {
	case errors.As(err, &er) && er.Response != nil && (er.Response.StatusCode == http.StatusNotFound || er.Response.StatusCode == http.StatusGone):
		return Issue{}, fmt.Errorf("github %s/%s has no issue #%d (or the token cannot see it): %w", g.Owner, g.Repo, number, ErrNoIssue)
	case err != nil:
		return Issue{}, g.describe(fmt.Sprintf("read issue #%d", number), err)
	case is.IsPullRequest():
		return Issue{}, fmt.Errorf("github %s/%s #%d is a pull request, not an issue: %w", g.Owner, g.Repo, number, ErrNoIssue)
	}
	out := fromGitHub(is)
	out.Body, out.State = clip(is.GetBody()), is.GetState()
	return out, nil
}

// Get implements Reader: the issue file numbered number. Its title and
// labels are its title and labels lines; its body the rest (Body). Local
// issues have no state: they are open.
func (l *Local) Get(ctx context.Context, number int) (Issue, error) {
	files, err := l.files()
	if err != nil {
		return Issue{}, err
	}
	name, ok := files[number]
	if !ok {
		return Issue{}, fmt.Errorf("%s has no issue %04d-*.md: %w", l.Dir, number, ErrNoIssue)
	}
	f, err := os.Open(filepath.Join(l.abs(), name))
	if err != nil {
		return Issue{}, fmt.Errorf("local tracker: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxBodyBytes+1))
	if err != nil {
		return Issue{}, fmt.Errorf("local tracker: read %s: %w", name, err)
	}
	text := clip(string(data))
	return Issue{Number: number, URL: path.Join(filepath.ToSlash(l.Dir), name), Title: ParseTitle(text),
		Labels: ParseLabels(text), Body: Body(text), State: "open"}, nil
}

// clip cuts a body at MaxBodyBytes, on a line, saying so.
func clip(body string) string {
	if len(body) <= MaxBodyBytes {
		return body
	}
	cut := strings.LastIndexByte(body[:MaxBodyBytes], '\n')
	if cut < 0 {
		cut = MaxBodyBytes
	}
	return body[:cut] + "\n\n[azero: the rest of the issue, past " + fmt.Sprint(MaxBodyBytes>>10) + " KiB, is left out]\n"
}

var markerRe = lazyre.New(`<!-- azero:run ([A-Za-z0-9._-]{1,128}) -->`)

// MarkedRun returns the run named by the marker (Marker) in an issue's
// body: the azero run that filed it.
func MarkedRun(body string) (string, bool) {
	m := markerRe().FindStringSubmatch(body)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// WithoutMarker returns body without the lines that hold only a run's
// marker: it says nothing to a model reading the issue.
func WithoutMarker(body string) string {
	lines := strings.Split(body, "\n")
	out := lines[:0]
	for _, l := range lines {
		if t := strings.TrimSpace(l); t != "" && markerRe().ReplaceAllString(t, "") == "" {
			continue
		}
		out = append(out, l)
	}
	return strings.TrimRight(strings.Join(out, "\n"), "\n") + "\n"
}
