package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/runs"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
	"github.com/azero-dev/azero/internal/web"
	"github.com/azero-dev/azero/internal/workflow/gates"
)

// The fixture workflow has a gate of each kind a human meets:
//
//	work -> review (type approve, revise with feedback, or abort)
//	     -> edit (an editor question: send, revise, or approve confirmed
//	        by typing "override" when the verdict blocks) -> END
type state struct {
	Works    int    `json:"works"`
	Feedback string `json:"feedback,omitempty"`
	Draft    string `json:"draft"`
	Verdict  string `json:"verdict"`
	Decision string `json:"decision,omitempty"`
	Report   string `json:"report,omitempty"` // the review's report; a diff report by default
	// Repo, when set, makes review the real diff review of the change in
	// this repository (approve or reject).
	Repo string `json:"repo,omitempty"`
}

const testToken = "0123456789abcdef0123456789abcdef-test-token"

// diffReport is laid out as review.FormatReport lays out a change with a
// flagged file.
const diffReport = ` textkit/slug.go | 12 ++++++------
 1 file changed, 6 insertions(+), 6 deletions(-)

1 file flagged for review:
  MODIFIED textkit/slug.go

` + "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!" + `
!! WARNING: MODIFIED: textkit/slug.go
!! before: 10 lines, after: 10 lines (10 → 10; -6 +6), 60% changed
!! More than half of this file changed.
` + "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!" + `
diff --git a/textkit/slug.go b/textkit/slug.go
--- a/textkit/slug.go
+++ b/textkit/slug.go
@@ -1,3 +1,3 @@
-return strings.ToLower(s)
+return slugify(s) // <script>alert(1)</script>
`

func graph() *flow.Graph[state] {
	return flow.New[state]("webtest", "work").
		Node("work", func(ctx context.Context, s *state) (string, error) {
			s.Works++
			return "review", nil
		}, "review").
		Gate("review", reviewQuestion, decideReview, "edit", "work").
		Gate("edit", func(ctx context.Context, s *state) (human.Question, error) {
			approve := human.Option{Key: "A", Label: "Approve", Decision: "approve"}
			if s.Verdict == "BLOCK" {
				approve.Confirm, approve.ConfirmWhy = "override", "The reviewer blocked this draft."
			}
			return human.Question{Kind: human.Editor, Title: "Draft", Prompt: "File it?",
				Files: []human.File{{Name: "draft.md", Content: s.Draft}},
				Options: []human.Option{
					{Key: "S", Label: "Send", Decision: "send"},
					{Key: "R", Label: "Revise", Decision: "revise", Text: "Feedback for the drafter:"},
					approve,
				}}, nil
		}, func(s *state, q human.Question, a human.Answer) (string, error) {
			s.Draft = a.Files["draft.md"]
			s.Decision = a.Key
			return flow.End, nil
		}, flow.End)
}

// reviewQuestion is the review gate's question: the real diff review of
// s.Repo, or a word question over s.Report.
func reviewQuestion(ctx context.Context, s *state) (human.Question, error) {
	if s.Repo != "" {
		return gates.DiffReview(ctx, s.Repo, "")
	}
	return human.Question{Kind: human.Word, Title: "Diff review", Format: "diff-report", Report: s.Report,
		Prompt: "Merge this change?",
		Options: []human.Option{
			{Key: "approve", Label: "to proceed", Decision: "APPROVED"},
			{Key: "revise", Label: "to send it back", Decision: "REVISE", Text: "What should change?"},
			{Key: "abort", Label: "to stop", Decision: "ABORTED"},
		}}, nil
}

// decideReview routes the review: approve to edit, revise back to work,
// anything else aborts.
func decideReview(s *state, q human.Question, a human.Answer) (string, error) {
	switch a.Key {
	case "approve":
		return "edit", nil
	case "revise":
		s.Feedback = a.Text
		return "work", nil
	}
	return "", fmt.Errorf("stopped at review: %w", flow.ErrAborted)
}

// fixture is a store with runs of the fixture workflow, the run
// service over it, and a server over that, listening on a real port.
type fixture struct {
	t        *testing.T
	dir      string
	env      *runs.Env
	st       *store.Store
	audit    *audit.Logger
	eng      *flow.Engine
	runs     runs.Engine
	srv      *web.Server
	http     *httptest.Server
	auditLog string

	mu        sync.Mutex
	continued []string
	stopCont  func()
}

// fixtureConfig changes a fixture.
type fixtureConfig struct {
	// wrap, when set, is how the server reads the store.
	wrap func(web.Source) web.Source
	// opt changes the server's options.
	opt func(*web.Options)
	// now is the service's clock (the answers' time); nil: time.Now.
	now func() time.Time
	// still: nothing continues the runs (the answers stay in the store)
	// until the test calls continueRuns.
	still bool
	// graph is the graph the service drives the fixture's runs with; nil:
	// graph().
	graph func() *flow.Graph[state]
	// onDrive is told of each drive the service starts; after of each it
	// ended.
	onDrive, after func(runID string)
	// log receives what the service says of the runs it continues.
	log io.Writer
}

// deps are the fixture workflow's dependencies as the service builds
// them: the graph it drives.
type deps struct{ graph func() *flow.Graph[state] }

// workflows are the catalog's workflows (for what the page shows of
// theirs) and the fixture's, as f's service runs it.
func (f *fixture) workflows(cfg fixtureConfig) runs.Workflows {
	wf := runs.Define(runs.Spec[state, deps]{
		Name: "webtest",
		Graph: func(d deps) *flow.Graph[state] {
			if d.graph != nil {
				return d.graph()
			}
			return graph()
		},
		Deps: func(ctx context.Context, env *runs.Env, run runs.Run, s *state) (deps, error) {
			f.mu.Lock()
			f.continued = append(f.continued, run.ID)
			f.mu.Unlock()
			if cfg.onDrive != nil {
				cfg.onDrive(run.ID)
			}
			return deps{graph: cfg.graph}, nil
		},
		Report: func(env *runs.Env, s *state, err error, o *runs.Outcome) error {
			if cfg.after != nil {
				cfg.after(o.RunID)
			}
			return err
		},
	})
	return append(slices.Clone(runs.Catalog()), wf)
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixtureConfig(t, fixtureConfig{})
}

// newFixtureOver is newFixture with the server reading the store through
// wrap (nil: directly).
func newFixtureOver(t *testing.T, wrap func(web.Source) web.Source) *fixture {
	t.Helper()
	return newFixtureConfig(t, fixtureConfig{wrap: wrap})
}

// newFixtureWith is newFixtureOver with the server's options changed by
// opt (nil: none).
func newFixtureWith(t *testing.T, wrap func(web.Source) web.Source, opt func(*web.Options)) *fixture {
	t.Helper()
	return newFixtureConfig(t, fixtureConfig{wrap: wrap, opt: opt})
}

// wrapped is the run service with its runs read through another source.
type wrapped struct {
	runs.Engine
	src web.Source
}

func (w wrapped) Source() runs.Source { return w.src }

func newFixtureConfig(t *testing.T, cfg fixtureConfig) *fixture {
	t.Helper()
	dir := t.TempDir()
	env := &runs.Env{
		Getenv: func(k string) string {
			if k == "AZERO_STATE_DIR" {
				return dir
			}
			return ""
		},
		Environ: func() []string { return nil },
		Now:     cfg.now,
	}
	t.Cleanup(func() { env.Close() })
	st, err := env.Store(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	logger, err := env.Audit()
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, dir: dir, env: env, st: st, audit: logger, auditLog: filepath.Join(dir, audit.FileName)}
	f.eng = &flow.Engine{Store: st, Audit: logger, Poll: 20 * time.Millisecond}
	eng, err := runs.OpenLocal(t.Context(), env, f.workflows(cfg))
	if err != nil {
		t.Fatal(err)
	}
	f.runs = eng
	t.Cleanup(func() { eng.Close() })
	var svc web.Runs = eng
	if cfg.wrap != nil {
		svc = wrapped{Engine: eng, src: cfg.wrap(st)}
	}
	opts := web.Options{Runs: svc, Token: testToken, StateDir: dir, Poll: 20 * time.Millisecond}
	if cfg.opt != nil {
		cfg.opt(&opts)
	}
	srv, err := web.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	f.srv = srv
	if !cfg.still {
		f.continueRuns(cfg.log)
	}
	f.http = httptest.NewUnstartedServer(nil)
	h, err := srv.Handler(f.http.Listener.Addr().String(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.http.Config.Handler = h
	f.http.Start()
	t.Cleanup(func() {
		f.http.Close()
		srv.Close()
		f.stopContinuing()
	})
	return f
}

// continueRuns starts the service's continuation of answered runs, as
// azero serve does; log receives what it says (nil: nothing).
func (f *fixture) continueRuns(log io.Writer) {
	say := func(string) {}
	if log != nil {
		say = func(line string) { fmt.Fprintln(log, line) }
	}
	stop := f.runs.Continue(context.Background(), say, 0)
	f.mu.Lock()
	f.stopCont = stop
	f.mu.Unlock()
}

// stopContinuing stops the continuation, which saves the runs it drives,
// and waits for it.
func (f *fixture) stopContinuing() {
	f.mu.Lock()
	stop := f.stopCont
	f.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// waitingRun starts a run of the fixture workflow that stops at review.
func (f *fixture) waitingRun(s state) string {
	f.t.Helper()
	if s.Report == "" {
		s.Report = diffReport
	}
	id, err := flow.Create(f.t.Context(), f.eng, graph(), &s, flow.CreateOptions{Meta: map[string]string{"repo": "/tmp/repo"}})
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := flow.Drive(f.t.Context(), f.eng, graph(), id); !errors.Is(err, flow.ErrWaiting) {
		f.t.Fatalf("Drive = %v, want waiting", err)
	}
	return id
}

// run reads a run from the store.
func (f *fixture) run(id string) store.Run {
	f.t.Helper()
	r, err := f.st.GetRun(f.t.Context(), id)
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

// waitFor polls the run until ok says so, failing the test after
// testenv.Patience.
func (f *fixture) waitFor(id, what string, ok func(store.Run) bool) store.Run {
	f.t.Helper()
	deadline := time.Now().Add(testenv.Patience)
	for {
		r := f.run(id)
		if ok(r) {
			return r
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("run %s never %s: %s at %s (%s)", id, what, r.Status, r.Node, r.Error)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitsAt waits until the run waits at gate.
func (f *fixture) waitsAt(id, gate string) store.Run {
	f.t.Helper()
	return f.waitFor(id, "waited at "+gate, func(r store.Run) bool { return r.Status == store.StatusWaiting && r.Node == gate })
}

// question decodes the run's pending question.
func question(t *testing.T, r store.Run) human.Question {
	t.Helper()
	var q human.Question
	if err := json.Unmarshal(r.Question, &q); err != nil {
		t.Fatalf("run %s has no question: %v", r.ID, err)
	}
	return q
}

// request sends a request to the server with the headers given.
func (f *fixture) request(method, path, body string, headers map[string]string) (*http.Response, string) {
	f.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(f.t.Context(), method, f.http.URL+path, rd)
	if err != nil {
		f.t.Fatal(err)
	}
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

var bearer = map[string]string{"Authorization": "Bearer " + testToken}

// api calls the JSON API with the token.
func (f *fixture) api(method, path, body string) (int, map[string]any) {
	f.t.Helper()
	resp, text := f.request(method, path, body, bearer)
	var doc map[string]any
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		f.t.Fatalf("%s %s answered %d with no JSON object: %v\n%s", method, path, resp.StatusCode, err, text)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		f.t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	return resp.StatusCode, doc
}

// auditRecords returns the audit log's records with event name.
func (f *fixture) auditRecords(name string) []audit.Record {
	f.t.Helper()
	recs, err := audit.Read(f.auditLog)
	if err != nil {
		f.t.Fatal(err)
	}
	var out []audit.Record
	for _, r := range recs {
		if r["event"] == name {
			out = append(out, r)
		}
	}
	return out
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// reader is a run service that only reads runs from src: nothing answers
// or continues them.
type reader struct{ src web.Source }

func (r reader) Source() runs.Source       { return r.src }
func (r reader) Workflows() runs.Workflows { return runs.Catalog() }
func (r reader) Driving() []string         { return nil }
func (r reader) Answer(context.Context, string, runs.Reply) (runs.Accepted, error) {
	return runs.Accepted{}, errors.New("this test's service takes no answers")
}
