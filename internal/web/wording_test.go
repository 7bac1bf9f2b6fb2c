package web_test

import (
	"encoding/json"
	"html"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/prompt"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
	"github.com/azero-dev/azero/internal/web"
)

// flaggedRepo is a repository with a change the diff review flags: most
// of textkit/slug.go rewritten, and a new file.
func flaggedRepo(t *testing.T) string {
	t.Helper()
	before := "package textkit\n\n" + strings.Repeat("// a line that stays or goes\n", 8)
	repo := testenv.NewRepo(t, map[string]string{"textkit/slug.go": before})
	testenv.WriteFiles(t, repo, map[string]string{
		"textkit/slug.go":      "package textkit\n\nfunc Slug(s string) string { return s }\n",
		"textkit/slug_test.go": "package textkit\n",
	})
	return repo
}

// textOf is what a browser shows of a piece of HTML: its text, with the
// tags dropped and the spaces collapsed.
func textOf(s string) string {
	s = regexp.MustCompile(`<[^>]*>`).ReplaceAllString(s, "")
	return strings.Join(strings.Fields(html.UnescapeString(s)), " ")
}

// The diff review's prompt is written to follow its report ("1 file is
// flagged above"): where the report is not shown (the list of runs, the
// run's events) the question names the flagged files instead.
func TestListsSayWhatIsAskedWithoutTheReport(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.waitingRun(state{Repo: flaggedRepo(t)})
	if q := question(t, f.run(id)); !strings.Contains(q.Prompt, "flagged above") {
		t.Fatalf("the diff review's prompt no longer points at its report (%q): this test needs another question", q.Prompt)
	}
	_, list := f.request("GET", "/", "", bearer)
	row := regexp.MustCompile(`(?s)<tr class="run" data-run="` + id + `".*?</tr>`).FindString(list)
	asks := textOf(regexp.MustCompile(`(?s)<a class="asks"[^>]*>.*?</a>`).FindString(row))
	_, page := f.request("GET", "/runs/"+id, "", bearer)
	event := textOf(regexp.MustCompile(`(?s)<li class="ev question[^>]*>.*?</li>`).FindString(page))
	for where, text := range map[string]string{"the list of runs": asks, "the run's events": event} {
		if !strings.Contains(text, "Diff review") || !strings.Contains(text, "1 flagged file: textkit/slug.go") ||
			!strings.Contains(text, "Commit the changes to 2 files?") || strings.Contains(text, "above") || strings.Contains(text, "!!") {
			t.Errorf("%s says %q", where, text)
		}
	}
	// Below its report, the prompt reads as written.
	if form := textOf(regexp.MustCompile(`(?s)<p class="prompt">.*?</p>`).FindString(page)); !strings.Contains(form, "1 file is flagged above") {
		t.Errorf("the form's prompt: %q", form)
	}
}

// terminalAsk is the line the terminal asks q with: "Type 'approve' to
// proceed or 'reject' to stop".
func terminalAsk(t *testing.T, q human.Question) string {
	t.Helper()
	ios, in, _, errOut := iostreams.Test()
	ios.SetTTY(true, false, true)
	in.WriteString(q.Options[0].Key + "\n")
	if _, err := prompt.New(ios, func(string) string { return "" }, exec.LookPath).Answer(t.Context(), q); err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(errOut.String(), "\n") {
		if strings.HasPrefix(line, "Type ") {
			return strings.TrimSuffix(strings.TrimSpace(line), ":")
		}
	}
	t.Fatalf("the terminal asked:\n%s", errOut)
	return ""
}

// A word question's form offers the words as the terminal does, each
// with what it does, and says which options need the feedback asked for.
func TestFormsWordTheQuestionAsTheTerminal(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	diff := f.waitingRun(state{Repo: flaggedRepo(t)})
	labelled := f.waitingRun(state{})
	for _, id := range []string{diff, labelled} {
		q := question(t, f.run(id))
		_, page := f.request("GET", "/runs/"+id, "", bearer)
		words := textOf(regexp.MustCompile(`(?s)<span class="words">.*?</span>`).FindString(page))
		want := strings.ReplaceAll(terminalAsk(t, q), "'", "")
		if words != want {
			t.Errorf("%s: the form says %q, the terminal %q", q.Gate, words, want)
		}
	}
	_, page := f.request("GET", "/runs/"+labelled, "", bearer)
	if feedback := textOf(regexp.MustCompile(`(?s)<label class="feedback">.*?</span>`).FindString(page)); feedback != "What should change? (needed for revise)" {
		t.Errorf("the feedback's label: %q", feedback)
	}
}

// Every time a page shows names its zone; the API's times are RFC 3339.
func TestTimesShowTheirZone(t *testing.T) {
	t.Parallel()
	zone := time.FixedZone("XST", 5*3600+30*60)
	f := newFixtureWith(t, nil, func(o *web.Options) { o.Location = zone })
	id := f.waitingRun(state{})
	done := f.waitingRun(state{})
	if code, doc := f.api("POST", "/api/runs/"+done+"/answer", `{"gate":"review","answer":"abort"}`); code != http.StatusOK {
		t.Fatal(code, doc)
	}
	f.waitFor(done, "aborted", func(r store.Run) bool { return r.Status.Finished() })
	clock := regexp.MustCompile(`\d\d:\d\d(:\d\d)?`)
	for _, path := range []string{"/", "/gates", "/runs/" + id, "/runs/" + done, "/runs/" + done + "/diff"} {
		_, page := f.request("GET", path, "", bearer)
		// Machine-readable times, in attributes, are RFC 3339.
		for _, m := range regexp.MustCompile(`datetime="([^"]*)"`).FindAllStringSubmatch(page, -1) {
			if _, err := time.Parse(time.RFC3339, m[1]); err != nil {
				t.Errorf("GET %s: datetime %q: %v", path, m[1], err)
			}
		}
		text := regexp.MustCompile(`datetime="[^"]*"`).ReplaceAllString(page, "")
		seen := 0
		for _, loc := range clock.FindAllStringIndex(text, -1) {
			seen++
			if rest := text[loc[1]:]; !strings.HasPrefix(rest, " XST") {
				t.Errorf("GET %s: the time %q has no zone: %q", path, text[loc[0]:loc[1]], text[loc[0]:min(loc[1]+20, len(text))])
			}
		}
		if seen == 0 && path != "/gates" {
			t.Errorf("GET %s shows no time", path)
		}
	}
	var doc struct {
		Runs []struct {
			CreatedAt string `json:"created_at"`
		} `json:"runs"`
	}
	resp, body := f.request("GET", "/api/runs", "", bearer)
	if err := json.Unmarshal([]byte(body), &doc); err != nil || resp.StatusCode != http.StatusOK || len(doc.Runs) != 2 {
		t.Fatalf("%d %v\n%s", resp.StatusCode, err, body)
	}
	for _, r := range doc.Runs {
		if _, err := time.Parse(time.RFC3339, r.CreatedAt); err != nil {
			t.Errorf("created_at %q: %v", r.CreatedAt, err)
		}
	}
}
