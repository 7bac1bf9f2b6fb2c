package tracker_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/safewrite"
	"github.com/azero-dev/azero/internal/testenv"
	"github.com/azero-dev/azero/internal/tracker"
	"github.com/azero-dev/azero/internal/tracker/trackertest"
)

func TestGitHubGet(t *testing.T) {
	t.Parallel()
	fake := trackertest.NewGitHub(t, "acme", "widgets", "tok", "bug")
	n := fake.AddIssue("Search is slow", "Searching 10k notes takes 4 s.\n\n<!-- azero:run 260101-abcdef -->\n", false, "bug", "perf")
	pr := fake.AddIssue("Speed up search", "Fixes #1", true)
	gh := newGitHub(t, fake, "tok")
	ctx := context.Background()
	is, err := gh.Get(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	if is.Number != n || is.Title != "Search is slow" || !strings.Contains(is.Body, "takes 4 s.") || is.State != "open" ||
		!slices.Equal(is.Labels, []string{"bug", "perf"}) || !strings.HasSuffix(is.URL, "/issues/1") {
		t.Errorf("issue = %+v", is)
	}
	if run, ok := tracker.MarkedRun(is.Body); !ok || run != "260101-abcdef" {
		t.Errorf("marker = %q, %v", run, ok)
	}
	for _, missing := range []int{pr, 99, 0} {
		if _, err := gh.Get(ctx, missing); !errors.Is(err, tracker.ErrNoIssue) {
			t.Errorf("Get(%d) = %v, want ErrNoIssue", missing, err)
		}
	}
	if _, err := newGitHub(t, fake, "wrong").Get(ctx, n); err == nil || !strings.Contains(err.Error(), "token was rejected") {
		t.Errorf("bad token: %v", err)
	}
	if got := fake.Requests(); !slices.Contains(got, "GET /repos/acme/widgets/issues/1") {
		t.Errorf("requests = %v", got)
	}
}

func TestLocalGet(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	l := &tracker.Local{Root: root, Dir: "docs/issues", Writer: &safewrite.Writer{}, RunID: "r1"}
	ctx := context.Background()
	filed, err := l.Create(ctx, tracker.Issue{Title: "Add a budget flag", Labels: []string{"enhancement"},
		Body: "## Summary\n\nStop runs that cost too much.\n\n" + tracker.Marker("r1") + "\n"})
	if err != nil {
		t.Fatal(err)
	}
	is, err := l.Get(ctx, filed.Number)
	if err != nil {
		t.Fatal(err)
	}
	if is.Title != "Add a budget flag" || !slices.Equal(is.Labels, []string{"enhancement"}) || is.URL != filed.URL ||
		strings.Contains(is.Body, "**Labels:**") || strings.Contains(is.Body, "# Add a budget flag") || !strings.HasPrefix(is.Body, "## Summary") {
		t.Errorf("issue = %+v", is)
	}
	if got := tracker.WithoutMarker(is.Body); strings.Contains(got, "azero:run") || !strings.Contains(got, "cost too much.") {
		t.Errorf("WithoutMarker = %q", got)
	}
	if _, err := l.Get(ctx, 7); !errors.Is(err, tracker.ErrNoIssue) {
		t.Errorf("missing issue: %v", err)
	}
	// A huge issue file is read only up to the bound, and says so.
	testenv.WriteFiles(t, root, map[string]string{"docs/issues/0002-huge.md": "# Huge\n\n" + strings.Repeat("line of text\n", 40000)})
	huge, err := l.Get(ctx, 2)
	if err != nil || len(huge.Body) > tracker.MaxBodyBytes+200 || !strings.Contains(huge.Body, "is left out") {
		t.Errorf("huge issue: %d bytes, %v", len(huge.Body), err)
	}
}

// FuzzMarkedRun: a run read from a marker gives the same marker back.
func FuzzMarkedRun(f *testing.F) {
	f.Add("body\n<!-- azero:run 260101-abcdef -->\n")
	f.Add("<!-- azero:run -->")
	f.Add("<!-- azero:run a b -->")
	f.Fuzz(func(t *testing.T, body string) {
		run, ok := tracker.MarkedRun(body)
		if !ok {
			return
		}
		if run == "" || !strings.Contains(body, tracker.Marker(run)) {
			t.Fatalf("MarkedRun(%q) = %q, not a marker of the body", body, run)
		}
		if strings.Contains(tracker.WithoutMarker(body+"\n"+tracker.Marker(run)+"\n"), tracker.Marker(run)+"\n") {
			t.Fatalf("WithoutMarker kept a marker line")
		}
	})
}
