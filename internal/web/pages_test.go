package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
	"github.com/azero-dev/azero/internal/web"
	"github.com/azero-dev/azero/internal/workflow/governance"
	"github.com/azero-dev/azero/internal/workflow/issue"
)

// The pages show what the issue asks for, and escape what runs report.
func TestPagesShowRunsAndGates(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.waitingRun(state{})
	done := f.waitingRun(state{})
	if code, doc := f.api("POST", "/api/runs/"+done+"/answer", `{"gate":"review","answer":"abort"}`); code != http.StatusOK {
		t.Fatal(code, doc)
	}
	f.waitFor(done, "aborted", func(r store.Run) bool { return r.Status == store.StatusAborted })
	writeFile(t, filepath.Join(f.dir, "runs", id, "prompts", "001-coder.txt"), "the prompt <b>as sent</b>\n")
	tests := []struct {
		name, path string
		want       []string
		not        []string
	}{
		{"runs", "/", []string{id, done, "webtest", "waiting", "aborted", "asks: Diff review · Merge this change?", "$0.0000", `href="/runs/` + id + `"`}, nil},
		{"runs filtered", "/?status=aborted", []string{done}, []string{`data-run="` + id + `"`}},
		{"gates", "/gates", []string{id, "Merge this change?", `name="answer"`, `name="csrf"`}, []string{`data-run="` + done + `"`}},
		{"run", "/runs/" + id, []string{"Waiting at review", "Merge this change?", "Type <code>approve</code> to proceed",
			"What should change?", `name="feedback"`, `name="question_id"`, "▸ work", "? review asks: Diff review · Merge this change?",
			"prompts/001-coder.txt", "/runs/" + id + "/diff", `<span class="line add">+return slugify(s) // &lt;script&gt;alert(1)&lt;/script&gt;</span>`,
			`<span class="line warning">!! WARNING: MODIFIED: textkit/slug.go</span>`, `<span class="change">MODIFIED</span>`},
			[]string{"<script>alert(1)</script>", `type="submit" name="answer"`}},
		{"run by prefix", "/runs/" + id[:len(id)-2], []string{"Run " + id}, nil},
		{"ended run", "/runs/" + done, []string{"aborted", "review answered ABORTED on the api channel by 127.0.0.1:"}, []string{`name="answer"`}},
		{"diff", "/runs/" + id + "/diff", []string{"the report of the question waiting at review", `<span class="line file">diff --git a/textkit/slug.go b/textkit/slug.go</span>`,
			`<span class="line hunk">@@ -1,3 +1,3 @@</span>`, `<span class="line del">-return strings.ToLower(s)</span>`}, nil},
		{"diff of an ended run", "/runs/" + done + "/diff", []string{"the report review showed at", "diff --git"}, nil},
		{"lineage file", "/runs/" + id + "/lineage/prompts/001-coder.txt", []string{"the prompt &lt;b&gt;as sent&lt;/b&gt;"}, []string{"<b>as sent"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := f.request("GET", tt.path, "", bearer)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET %s = %d\n%s", tt.path, resp.StatusCode, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
				t.Errorf("Content-Type %q", ct)
			}
			// html/template writes + as &#43;, which a browser shows as +.
			plus := strings.ReplaceAll(body, "&#43;", "+")
			for _, w := range tt.want {
				if !strings.Contains(plus, w) {
					t.Errorf("GET %s lacks %q", tt.path, w)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(body, n) {
					t.Errorf("GET %s has %q", tt.path, n)
				}
			}
			if t.Failed() {
				t.Logf("page:\n%s", body)
			}
		})
	}
}

// Files are read inside the run's lineage only.
func TestLineageFilesStayInside(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.waitingRun(state{})
	dir := filepath.Join(f.dir, "runs", id)
	writeFile(t, filepath.Join(dir, "ok.txt"), "fine\n")
	writeFile(t, filepath.Join(f.dir, "secret.txt"), "outside\n")
	if err := os.Symlink(filepath.Join(f.dir, "secret.txt"), filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"../../secret.txt", "..%2F..%2Fsecret.txt", "link.txt", "%2Fetc%2Fpasswd", "nope.txt", "."} {
		t.Run(p, func(t *testing.T) {
			resp, body := f.request("GET", "/runs/"+id+"/lineage/"+p, "", bearer)
			if resp.StatusCode == http.StatusOK || strings.Contains(body, "outside") || strings.Contains(body, "root:") {
				t.Fatalf("GET lineage/%s = %d\n%s", p, resp.StatusCode, body)
			}
		})
	}
	if resp, body := f.request("GET", "/runs/"+id+"/lineage/ok.txt", "", bearer); resp.StatusCode != http.StatusOK || !strings.Contains(body, "fine") {
		t.Fatalf("ok.txt: %d\n%s", resp.StatusCode, body)
	}
}

// The issue workflow's drafts and verdicts: the current ones, and the
// trail's files.
func TestIssueRunsShowDraftsAndVerdicts(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	root := t.TempDir()
	s := issue.State{Slug: "fast-search", Root: root, AuditDir: "docs/audit", Loop: governance.Loop{Draft: "# Fast search\n<img src=x>", Verdict: "BLOCK: too vague",
		ReviewerVerdict: "BLOCK", Iteration: 2, Drafts: 2, Verdicts: 1}}
	trail := filepath.Join(root, "docs", "audit", "active", "fast-search")
	writeFile(t, filepath.Join(trail, "001-brief.md"), "make search fast")
	writeFile(t, filepath.Join(trail, "002-draft.md"), "# Fast search")
	writeFile(t, filepath.Join(trail, "003-verdict.md"), "BLOCK: too vague")
	g := flow.New[issue.State](issue.Name, "wait").Node("wait", func(ctx context.Context, s *issue.State) (string, error) { return flow.End, nil }, flow.End)
	id, err := flow.Create(t.Context(), f.eng, g, &s, flow.CreateOptions{Key: s.Slug})
	if err != nil {
		t.Fatal(err)
	}
	resp, body := f.request("GET", "/runs/"+id, "", bearer)
	for _, w := range []string{"Drafts and verdicts", "Iteration 2", "BLOCK", "001-brief.md", "003-verdict.md", "# Fast search\n&lt;img src=x&gt;", "BLOCK: too vague"} {
		if !strings.Contains(body, w) {
			t.Errorf("run page lacks %q", w)
		}
	}
	if resp.StatusCode != http.StatusOK || t.Failed() {
		t.Fatalf("%d\n%s", resp.StatusCode, body)
	}
	if resp, body := f.request("GET", "/runs/"+id+"/trail/003-verdict.md", "", bearer); resp.StatusCode != http.StatusOK || !strings.Contains(body, "BLOCK: too vague") {
		t.Fatalf("trail file: %d\n%s", resp.StatusCode, body)
	}
	if resp, _ := f.request("GET", "/runs/"+id+"/trail/..%2F..%2F..%2F..%2Fetc%2Fpasswd", "", bearer); resp.StatusCode == http.StatusOK {
		t.Fatal("a path out of the trail was served")
	}
	if _, body := f.request("GET", "/", "", bearer); !strings.Contains(body, "fast-search") {
		t.Errorf("the runs page does not name the slug")
	}
}

// The run's page follows it live: its events arrive as server-sent
// events, each with its line of HTML, and a question or an answer asks
// the page to show the run anew.
func TestEventsStreamLive(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.waitingRun(state{})
	all, err := f.st.Events(t.Context(), id, 0, 0)
	if err != nil || len(all) == 0 {
		t.Fatal(err)
	}
	last := all[len(all)-1].Seq
	ctx, cancel := context.WithTimeout(t.Context(), testenv.Patience)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", f.http.URL+"/runs/"+id+"/events?after="+itoa(last), nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	if code, doc := f.api("POST", "/api/runs/"+id+"/answer", `{"gate":"review","answer":"approve"}`); code != http.StatusOK {
		t.Fatal(code, doc)
	}
	sc := bufio.NewScanner(resp.Body)
	var kinds []string
	reloaded := false
	for sc.Scan() {
		line := sc.Text()
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var m struct {
			Seq    int64  `json:"seq"`
			Kind   string `json:"kind"`
			HTML   string `json:"html"`
			Reload bool   `json:"reload"`
		}
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("data %q: %v", data, err)
		}
		if m.Seq <= last {
			t.Fatalf("event %d repeats one the page has", m.Seq)
		}
		if !strings.HasPrefix(m.HTML, `<li class="ev `+m.Kind) {
			t.Errorf("html %q", m.HTML)
		}
		kinds = append(kinds, m.Kind)
		reloaded = reloaded || m.Reload && m.Kind == "answer"
		if m.Kind == "waiting" {
			break
		}
	}
	joined := strings.Join(kinds, " ")
	if !strings.Contains(joined, "answer") || !strings.Contains(joined, "node_done") || !strings.Contains(joined, "question") || !reloaded {
		t.Fatalf("streamed %q (reload on the answer: %v)", joined, reloaded)
	}
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// endsOnRead lets a run end right after the server first finds or lists
// runs, as a driver elsewhere may while a page is being made.
type endsOnRead struct {
	web.Source
	armed atomic.Bool
	end   func()
}

func (s *endsOnRead) FindRun(ctx context.Context, ref string) (store.Run, error) {
	r, err := s.Source.FindRun(ctx, ref)
	s.changed()
	return r, err
}

func (s *endsOnRead) ListRuns(ctx context.Context, f store.Filter) ([]store.Run, error) {
	runs, err := s.Source.ListRuns(ctx, f)
	s.changed()
	return runs, err
}

func (s *endsOnRead) changed() {
	if s.armed.CompareAndSwap(true, false) {
		s.end()
	}
}

// endingFixture is a fixture with a run waiting at review that, once
// armed, ends right after the server next finds or lists runs: the answers
// ("gate=answer") are posted in turn, each when the run waits at its gate.
func endingFixture(t *testing.T, s state, answers ...string) (*fixture, *endsOnRead, string) {
	t.Helper()
	var f *fixture
	var id string
	src := &endsOnRead{end: func() {
		for _, a := range answers {
			gate, answer, _ := strings.Cut(a, "=")
			f.waitsAt(id, gate)
			if code, doc := f.api("POST", "/api/runs/"+id+"/answer", fmt.Sprintf(`{"gate":%q,"answer":%q}`, gate, answer)); code != http.StatusOK {
				t.Error(code, doc)
			}
		}
		f.waitFor(id, "ended", func(r store.Run) bool { return r.Status.Finished() })
	}}
	f = newFixtureOver(t, func(st web.Source) web.Source {
		src.Source = st
		return src
	})
	id = f.waitingRun(s)
	return f, src, id
}

// The lists are not older than the state they follow: a run that ends
// while the list is made is shown ended, or the page is told of a change.
func TestListsAreNotOlderThanTheirStreams(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"/", "/gates"} {
		f, src, _ := endingFixture(t, state{}, "review=abort")
		since := regexp.MustCompile(`data-stream="/events\?since=([0-9a-f]+)(?:&amp;[^"]*)?"`)
		src.armed.Store(true)
		_, page := f.request("GET", path, "", bearer)
		_, now := f.request("GET", path, "", bearer)
		fp, fpNow := since.FindStringSubmatch(page), since.FindStringSubmatch(now)
		if src.armed.Load() || fp == nil || fpNow == nil {
			t.Fatalf("GET %s: the run ended while the page was made: %v; stream %q, then %q\n%s", path, !src.armed.Load(), fp, fpNow, page)
		}
		// The runs list names the run's status; the gates list shows its form while it waits.
		shownWaiting := strings.Contains(page, `data-status="waiting"`) || strings.Contains(page, `name="question_id"`)
		if shownWaiting && fp[1] == fpNow[1] {
			t.Errorf("GET %s shows the run waiting and follows changes after the state where it has ended", path)
		}
	}
}

// A run's page is never older than the events it shows: a run that ends
// while its page is made is shown ended, or the page follows the events
// from before the end, so the end reaches it live. (Shown running with the
// end among its events, the page waited for a change already come.)
func TestRunPageIsNotOlderThanItsEvents(t *testing.T) {
	t.Parallel()
	f, src, id := endingFixture(t, state{Draft: "# Draft\n"}, "review=approve", "edit=S")
	src.armed.Store(true)
	resp, page := f.request("GET", "/runs/"+id, "", bearer)
	if resp.StatusCode != http.StatusOK || src.armed.Load() {
		t.Fatalf("GET = %d (the run ended while the page was made: %v)\n%s", resp.StatusCode, !src.armed.Load(), page)
	}
	evs, err := f.st.Events(t.Context(), id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var end int64
	for _, ev := range evs {
		if ev.Kind == event.Finished {
			end = ev.Seq
		}
	}
	status := regexp.MustCompile(`id="run-status" data-status="([a-z]+)"`).FindStringSubmatch(page)
	after := regexp.MustCompile(`data-stream="/runs/[^"?]+/events\?after=(\d+)"`).FindStringSubmatch(page)
	if end == 0 || status == nil || after == nil {
		t.Fatalf("end event %d, status %q, stream %q in:\n%s", end, status, after, page)
	}
	if from, _ := strconv.ParseInt(after[1], 10, 64); status[1] != "done" && from >= end {
		t.Errorf("the page shows the run %s and follows events after %d, past its end (%d)", status[1], from, end)
	}
}
