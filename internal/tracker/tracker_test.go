package tracker_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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
	// A label the draft proposes to create is named without its mark.
	for draft, want := range map[string]string{
		"**Labels:** bug, new: performance\n":          "bug|performance",
		"**Labels:** bug, NEW:`perf`, docs (new)\n":    "bug|perf|docs",
		"**Labels:** new: bug, bug, docs (proposed)\n": "bug|docs",
		"**Labels:**\r\n# Title\n":                     "",
		"# Title\r\n\n**Labels:** a\r\n":               "a",
		"#\nNot a title\n**Labels:**\n\nnot: labels\n": "",
	} {
		if got := strings.Join(tracker.ParseLabels(draft), "|"); got != want {
			t.Errorf("ParseLabels(%q) = %s, want %s", draft, got, want)
		}
	}
	// A title is one line: "#" alone does not make the next line one.
	for draft, want := range map[string]string{
		"#\nNot a title\n":      "",
		"# Title ##\r\nbody\n":  "Title",
		"text\n#  Late title\n": "Late title",
	} {
		if got := tracker.ParseTitle(draft); got != want {
			t.Errorf("ParseTitle(%q) = %q, want %q", draft, got, want)
		}
	}
}

func TestBodyLeavesOutTheTitleAndLabelsLines(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, draft, want string }{
		{"the template's shape", "# Add a flag\n\n**Labels:** bug, new: perf\n\n## Summary\n\nText.\n", "## Summary\n\nText.\n"},
		{"labels further down", "# Add a flag\n\n## Summary\n\nText.\n\n**Labels:** bug\n\n## Scope\n", "## Summary\n\nText.\n\n## Scope\n"},
		{"labels last", "# T\n\nText.\n\n**Labels:** bug\n", "Text.\n"},
		{"no labels", "# T\n\nText.\n", "Text.\n"},
		{"neither", "Text.\n\n## Part\n", "Text.\n\n## Part\n"},
		{"only the first title", "# T\n\n```sh\n# a comment\n```\n", "```sh\n# a comment\n```\n"},
		{"crlf", "# T\r\n\r\n**Labels:** a\r\n\r\nText.\r\n", "Text.\r\n"},
		{"marker kept", "# T\n\n**Labels:** a\n\nText.\n\n<!-- azero:run r -->\n", "Text.\n\n<!-- azero:run r -->\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tracker.Body(tt.draft); got != tt.want {
				t.Errorf("Body(%q) = %q, want %q", tt.draft, got, tt.want)
			}
		})
	}
}

// labelsLine is what a "**Labels:**" line is, as the package reads it.
var labelsLine = regexp.MustCompile(`(?i)^[ \t]*\*\*Labels:?\*\*:?[ \t]*(.*)$`)

// FuzzBody: Body takes out exactly the first title line and the first
// labels line, and otherwise only blank lines; the rest keeps its order.
func FuzzBody(f *testing.F) {
	f.Add("# Add a flag\n\n**Labels:** bug, new: perf\n\n## Summary\n\nText.\n")
	f.Add("# T\n# U\n**Labels:**\n**labels** x\n")
	f.Add("\n\n# T\r\n\r\n")
	f.Fuzz(func(t *testing.T, draft string) {
		body := tracker.Body(draft)
		count := func(s string, read func(string) bool) int {
			n := 0
			for _, l := range strings.Split(s, "\n") {
				if read(l) {
					n++
				}
			}
			return n
		}
		for what, read := range map[string]func(string) bool{
			"title":  func(l string) bool { return tracker.ParseTitle(l) != "" },
			"labels": func(l string) bool { return labelsLine.MatchString(strings.TrimSuffix(l, "\r")) },
		} {
			before, after := count(draft, read), count(body, read)
			if before > 0 && after != before-1 || before == 0 && after != 0 {
				t.Fatalf("%s lines: %d before, %d after Body(%q) = %q", what, before, after, draft, body)
			}
		}
		// What is left is the draft's lines in order, less some.
		rest := strings.Split(draft, "\n")
		for _, l := range strings.Split(body, "\n") {
			if strings.TrimSpace(l) == "" {
				continue
			}
			for len(rest) > 0 && rest[0] != l {
				rest = rest[1:]
			}
			if len(rest) == 0 {
				t.Fatalf("Body(%q) = %q holds a line not in the draft, or out of order: %q", draft, body, l)
			}
			rest = rest[1:]
		}
	})
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

// FuzzParseLabels: the names read are trimmed, never empty, never marked
// as proposed, and each is there once whatever its case.
func FuzzParseLabels(f *testing.F) {
	f.Add("**Labels:** bug, new: performance, docs (new)\n")
	f.Add("**Labels:** `a`, A, \"b\",, new:\n")
	f.Fuzz(func(t *testing.T, draft string) {
		seen := map[string]bool{}
		for _, name := range tracker.ParseLabels(draft) {
			k := strings.ToLower(name)
			if name == "" || name != strings.TrimSpace(name) || seen[k] || strings.HasPrefix(k, "new:") {
				t.Fatalf("ParseLabels(%q) = %q", draft, tracker.ParseLabels(draft))
			}
			seen[k] = true
		}
	})
}

// TestGitHubLabelsReadsEveryPage: a repository with more labels than one
// page holds has all of them listed (the fake pages as GitHub does), and
// a label on the last page is not created again.
func TestGitHubLabelsReadsEveryPage(t *testing.T) {
	t.Parallel()
	var names []string
	for i := range 250 {
		names = append(names, fmt.Sprintf("label-%03d", i))
	}
	fake := trackertest.NewGitHub(t, "acme", "widgets", "tok", names...)
	gh := newGitHub(t, fake, "tok")
	got, err := gh.Labels(t.Context())
	if err != nil || !slices.Equal(got, names) {
		t.Fatalf("Labels = %d names, %v; want all %d in order", len(got), err, len(names))
	}
	pages := func() int {
		n := 0
		for _, r := range fake.Requests() {
			if r == "GET /repos/acme/widgets/labels" {
				n++
			}
		}
		return n
	}
	if pages() != 3 {
		t.Errorf("%d label pages read, want 3 (100 a page)", pages())
	}
	created, err := gh.EnsureLabels(t.Context(), []string{"LABEL-249", "new-one"})
	if err != nil || !slices.Equal(created, []string{"new-one"}) {
		t.Errorf("EnsureLabels = %v, %v; want only new-one created", created, err)
	}
	empty := newGitHub(t, trackertest.NewGitHub(t, "acme", "widgets", "tok"), "tok")
	if got, err := empty.Labels(t.Context()); err != nil || len(got) != 0 {
		t.Errorf("Labels of a repository without labels = %v, %v", got, err)
	}
	if _, err := newGitHub(t, fake, "wrong").Labels(t.Context()); err == nil || !strings.Contains(err.Error(), "list labels") {
		t.Errorf("Labels with a rejected token: %v", err)
	}
}

// TestLocalLabels: the labels configured and those the issue files name,
// each once, sorted; none for an empty directory.
func TestLocalLabels(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	l := &tracker.Local{Root: root, Dir: "docs/issues", Writer: &safewrite.Writer{}, KnownLabels: []string{"triage", " Bug "}}
	ctx := t.Context()
	if got, err := l.Labels(ctx); err != nil || !slices.Equal(got, []string{"Bug", "triage"}) {
		t.Fatalf("Labels before any issue = %v, %v", got, err)
	}
	for _, is := range []tracker.Issue{
		{Title: "One", Body: "x", Labels: []string{"bug", "enhancement"}},
		{Title: "Two", Body: "y", Labels: []string{"Docs"}},
		{Title: "Three", Body: "z"},
	} {
		if _, err := l.Create(ctx, is); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := l.Labels(ctx); err != nil || !slices.Equal(got, []string{"Bug", "Docs", "enhancement", "triage"}) {
		t.Errorf("Labels = %v, %v", got, err)
	}
	if got, err := (&tracker.Local{Root: root, Dir: "nowhere"}).Labels(ctx); err != nil || len(got) != 0 {
		t.Errorf("Labels of a missing directory = %v, %v", got, err)
	}
}

// TestLocalIssueFileHasOneTitleAndOneLabelsLine: the issue file is
// written with the title and labels given, once, whether the body holds
// them too or not.
func TestLocalIssueFileHasOneTitleAndOneLabelsLine(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	l := &tracker.Local{Root: root, Dir: "docs/issues", Writer: &safewrite.Writer{}}
	want := "# Add a flag\n\n**Labels:** bug, perf\n\n## Summary\n\nText.\n"
	for _, body := range []string{
		"## Summary\n\nText.\n",
		"# Add a flag\n\n**Labels:** bug, new: perf\n\n## Summary\n\nText.\n",
	} {
		is, err := l.Create(t.Context(), tracker.Issue{Title: "Add a flag", Body: body, Labels: []string{"bug", "perf"}})
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(is.URL)))
		if err != nil || string(got) != want {
			t.Errorf("issue file from body %q = %q, %v; want %q", body, got, err, want)
		}
	}
}
