package tracker_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/azero-dev/azero/internal/safewrite"
	"github.com/azero-dev/azero/internal/tracker"
	"github.com/azero-dev/azero/internal/tracker/trackertest"
)

func TestParseLabelsAndTitle(t *testing.T) {
	t.Parallel()
	draft := "# Add a login page\n\nSome text\n\n**Labels:** `enhancement`, ui , Enhancement, \"good first issue\"\n"
	if got := strings.Join(tracker.ParseLabels(draft), "|"); got != "enhancement|ui|good first issue" {
		t.Errorf("labels = %s", got)
	}
	if got := tracker.ParseTitle(draft); got != "Add a login page" {
		t.Errorf("title = %q", got)
	}
	if tracker.ParseLabels("no labels here") != nil {
		t.Error("labels from nothing")
	}
}

func newGitHub(t *testing.T, g *trackertest.GitHub, token string) *tracker.GitHub {
	t.Helper()
	gh, err := tracker.NewGitHub(tracker.GitHubOptions{Repo: g.Owner + "/" + g.Repo, Token: token, APIURL: g.URL})
	if err != nil {
		t.Fatal(err)
	}
	return gh
}

func TestGitHubFileWithLabels(t *testing.T) {
	t.Parallel()
	fake := trackertest.NewGitHub(t, "acme", "widgets", "tok", "bug")
	gh := newGitHub(t, fake, "tok")
	ctx := context.Background()
	if err := gh.Check(ctx); err != nil {
		t.Fatal(err)
	}
	created, err := gh.EnsureLabels(ctx, []string{"Bug", "workflow"})
	if err != nil || strings.Join(created, ",") != "workflow" {
		t.Fatalf("EnsureLabels = %v, %v; want only the missing label created", created, err)
	}
	marker := tracker.Marker("261122-abcdef")
	is, err := gh.Create(ctx, tracker.Issue{Title: "Add gate", Body: "body\n\n" + marker, Labels: []string{"bug", "workflow"}})
	if err != nil {
		t.Fatal(err)
	}
	if is.Number != 1 || !strings.HasSuffix(is.URL, "/issues/1") {
		t.Errorf("issue = %+v", is)
	}
	found, ok, err := gh.Find(ctx, marker)
	if err != nil || !ok || found.Number != 1 {
		t.Errorf("Find = %+v %v %v", found, ok, err)
	}
	if _, ok, _ := gh.Find(ctx, tracker.Marker("other")); ok {
		t.Error("found an issue for another run")
	}
}

func TestGitHubWithoutTheUserEndpoint(t *testing.T) {
	t.Parallel()
	fake := trackertest.NewGitHub(t, "acme", "widgets", "tok")
	fake.NoUser = true
	gh := newGitHub(t, fake, "tok")
	if err := gh.Check(context.Background()); err != nil {
		t.Fatalf("Check without GET /user: %v", err)
	}
	marker := tracker.Marker("r")
	if _, err := gh.Create(context.Background(), tracker.Issue{Title: "t", Body: marker}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := gh.Find(context.Background(), marker); !ok || err != nil {
		t.Errorf("Find without a login: %v %v", ok, err)
	}
}

func TestGitHubErrorsAreClear(t *testing.T) {
	t.Parallel()
	fake := trackertest.NewGitHub(t, "acme", "widgets", "tok")
	ctx := context.Background()
	if err := newGitHub(t, fake, "wrong").Check(ctx); err == nil || !strings.Contains(err.Error(), "token was rejected") {
		t.Errorf("bad token: %v", err)
	}
	other, _ := tracker.NewGitHub(tracker.GitHubOptions{Repo: "acme/nope", Token: "tok", APIURL: fake.URL})
	if err := other.Check(ctx); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("missing repo: %v", err)
	}
	gh := newGitHub(t, fake, "tok")
	fake.FailNextCreates(500)
	if _, err := gh.Create(ctx, tracker.Issue{Title: "x", Body: "y"}); err == nil || !strings.Contains(err.Error(), "500") {
		t.Errorf("rejected create: %v", err)
	}
	if _, err := tracker.NewGitHub(tracker.GitHubOptions{Repo: "acme/widgets"}); err != tracker.ErrNoToken {
		t.Errorf("no token: %v", err)
	}
	if _, err := tracker.NewGitHub(tracker.GitHubOptions{Repo: "acme", Token: "t"}); err == nil {
		t.Error("bad repo accepted")
	}
}

func TestLocalTracker(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	w := &safewrite.Writer{}
	l := &tracker.Local{Root: root, Dir: "docs/issues", Writer: w, RunID: "r1"}
	ctx := context.Background()
	if err := l.Check(ctx); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	numbers := make([]int, 8)
	for i := range numbers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			is, err := l.Create(ctx, tracker.Issue{Title: "Issue title", Body: "body " + tracker.Marker(string(rune('a'+i))), Labels: []string{"x"}})
			if err != nil {
				t.Error(err)
				return
			}
			numbers[i] = is.Number
		}()
	}
	wg.Wait()
	seen := map[int]bool{}
	for _, n := range numbers {
		if seen[n] {
			t.Fatalf("number %d allocated twice: %v", n, numbers)
		}
		seen[n] = true
	}
	is, ok, err := l.Find(ctx, tracker.Marker("c"))
	if err != nil || !ok || is.Number != numbers[2] {
		t.Errorf("Find = %+v %v %v, want number %d", is, ok, err, numbers[2])
	}
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(is.URL)))
	if err != nil || !strings.HasPrefix(string(data), "# Issue title\n\n**Labels:** x\n") {
		t.Errorf("issue file = %q, %v", data, err)
	}
	// A draft with its own heading and labels is filed as it is.
	draft := "# Drafted title\n\n**Labels:** bug\n\nBody.\n\n" + tracker.Marker("z")
	filed, err := l.Create(ctx, tracker.Issue{Title: "Drafted title", Body: draft, Labels: []string{"bug"}})
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(root, filepath.FromSlash(filed.URL))); string(data) != draft+"\n" {
		t.Errorf("filed draft = %q, want it unchanged", data)
	}
	bad := &tracker.Local{Root: root, Dir: "../elsewhere", Writer: w}
	if err := bad.Check(ctx); err == nil {
		t.Error("issues dir outside the repository accepted")
	}
}
