package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/rundoc"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
	"github.com/azero-dev/azero/internal/web"
)

// A wrong or partial word is refused with 422; the run keeps waiting with
// the same question, and the refusal is audited with who sent it.
func TestWrongOrPartialWordsAreRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.waitingRun(state{})
	before := question(t, f.run(id))
	for _, tt := range []struct{ name, body, want string }{
		{"partial word", `{"gate":"review","answer":"approv"}`, "type one in full"},
		{"prefix", `{"gate":"review","answer":"a"}`, "type one in full"},
		{"another word", `{"gate":"review","answer":"yes"}`, "type one in full"},
		{"empty", `{"gate":"review","answer":""}`, "type one in full"},
		{"a label is not a word", `{"gate":"review","answer":"to proceed"}`, "type one in full"},
		{"revise without feedback", `{"gate":"review","answer":"revise"}`, "needs text"},
		{"revise with blank feedback", `{"gate":"review","answer":"revise","feedback":"  \n "}`, "needs text"},
		{"no gate named", `{"answer":"approve"}`, "name the gate"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, doc := f.api("POST", "/api/runs/"+id+"/answer", tt.body)
			if code != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422: %v", code, doc)
			}
			if msg, _ := doc["error"].(string); !strings.Contains(msg, tt.want) {
				t.Errorf("error %q lacks %q", msg, tt.want)
			}
		})
	}
	r := f.run(id)
	if r.Status != store.StatusWaiting || len(r.Answer) != 0 || question(t, r).ID != before.ID {
		t.Fatalf("run is %s with answer %s", r.Status, r.Answer)
	}
	refused := f.auditRecords("web_answer_refused")
	if len(refused) != 8 {
		t.Fatalf("%d refusals audited, want 8", len(refused))
	}
	if refused[0]["channel"] != "api" || !strings.HasPrefix(refused[0]["remote_addr"].(string), "127.0.0.1:") || refused[0]["user_agent"] != "Go-http-client/1.1" {
		t.Errorf("refusal record %v", refused[0])
	}
}

// An approval typed in full is posted, serve continues the waiting run,
// and the engine's decision is audited with the channel, the remote
// address and the user agent.
func TestAnApprovalContinuesTheRun(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.waitingRun(state{Draft: "# Title\n"})
	resp, body := f.request("POST", "/api/runs/"+id+"/answer", `{"gate":"review","answer":"APPROVE "}`,
		with(bearer, "User-Agent", "azero-test-script/1.0"))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	var res web.AnswerResult
	if err := json.Unmarshal([]byte(body), &res); err != nil {
		t.Fatal(err)
	}
	if res != (web.AnswerResult{RunID: id, Gate: "review", Answer: "approve", Decision: "APPROVED", Continued: true}) {
		t.Errorf("result %+v", res)
	}
	r := f.waitsAt(id, "edit")
	if q := question(t, r); q.Gate != "edit" || q.Kind != human.Editor {
		t.Fatalf("the next question is %+v", q)
	}
	decisions := f.auditRecords("gate_decision")
	if len(decisions) != 1 {
		t.Fatalf("%d decisions audited", len(decisions))
	}
	d := decisions[0]
	by, _ := d["by"].(string)
	if d["channel"] != "api" || d["decision"] != "APPROVED" || !strings.Contains(by, "127.0.0.1:") || !strings.Contains(by, "azero-test-script/1.0") {
		t.Errorf("decision record %v", d)
	}
	if addr, _ := d["remote_addr"].(string); !strings.HasPrefix(addr, "127.0.0.1:") || d["user_agent"] != "azero-test-script/1.0" {
		t.Errorf("decision record without the remote address and user agent as fields: %v", d)
	}
	if web := f.auditRecords("web_answer"); len(web) != 1 || web[0]["user_agent"] != "azero-test-script/1.0" || web[0]["decision"] != "APPROVED" {
		t.Errorf("web_answer records %v", web)
	}
}

// A gate that is not waiting takes no answer: another gate, a run that
// ended, a run that does not exist, a question that changed.
func TestOnlyTheWaitingGateTakesAnAnswer(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	waiting := f.waitingRun(state{})
	ended := f.waitingRun(state{})
	if code, doc := f.api("POST", "/api/runs/"+ended+"/answer", `{"gate":"review","answer":"abort"}`); code != http.StatusOK {
		t.Fatalf("abort: %d %v", code, doc)
	}
	f.waitFor(ended, "ended", func(r store.Run) bool { return r.Status == store.StatusAborted })
	tests := []struct {
		name, run, body string
		want            int
	}{
		{"another gate", waiting, `{"gate":"edit","answer":"S"}`, http.StatusConflict},
		{"an ended run", ended, `{"gate":"review","answer":"approve"}`, http.StatusConflict},
		{"an unknown run", "261122-nosuch", `{"gate":"review","answer":"approve"}`, http.StatusNotFound},
		{"a question since replaced", waiting, `{"gate":"review","answer":"approve","question_id":"0123abcd"}`, http.StatusConflict},
		{"not json", waiting, `gate=review&answer=approve`, http.StatusBadRequest},
		{"unknown field", waiting, `{"gate":"review","answer":"approve","auto_approve":true}`, http.StatusBadRequest},
		{"two documents", waiting, `{"gate":"review","answer":"approve"}{"gate":"review","answer":"approve"}`, http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, doc := f.api("POST", "/api/runs/"+tt.run+"/answer", tt.body)
			if code != tt.want {
				t.Fatalf("status %d, want %d: %v", code, tt.want, doc)
			}
		})
	}
	if r := f.run(waiting); r.Status != store.StatusWaiting || len(r.Answer) != 0 {
		t.Fatalf("the waiting run changed: %s, %s", r.Status, r.Answer)
	}
}

// Revise takes feedback text, which reaches the workflow.
func TestReviseTakesFeedback(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.waitingRun(state{})
	code, doc := f.api("POST", "/api/runs/"+id+"/answer", `{"gate":"review","answer":"revise","feedback":"handle empty strings"}`)
	if code != http.StatusOK || doc["decision"] != "REVISE" {
		t.Fatalf("%d %v", code, doc)
	}
	f.waitFor(id, "ran work again", func(r store.Run) bool {
		var s state
		_ = json.Unmarshal(r.State, &s)
		return r.Status == store.StatusWaiting && s.Works == 2 && s.Feedback == "handle empty strings"
	})
	recs := f.auditRecords("gate_decision")
	if len(recs) != 1 || recs[0]["text"] != "handle empty strings" {
		t.Errorf("decision records %v", recs)
	}
}

// An editor question takes the files as edited (a file left out stays as
// it was) and a menu key; an option needing a confirmation word needs it
// typed in full.
func TestEditorAnswers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		want       int
		draft, key string
	}{
		{"edited and sent", `{"gate":"edit","answer":"S","files":{"draft.md":"# Better\n"}}`, http.StatusOK, "# Better\n", "S"},
		{"a label chooses too", `{"gate":"edit","answer":"send"}`, http.StatusOK, "# Draft\n", "S"},
		{"approval without the override", `{"gate":"edit","answer":"A"}`, http.StatusUnprocessableEntity, "", ""},
		{"approval with half the override", `{"gate":"edit","answer":"A","confirm":"over"}`, http.StatusUnprocessableEntity, "", ""},
		{"approval with the override", `{"gate":"edit","answer":"A","confirm":"override"}`, http.StatusOK, "# Draft\n", "A"},
		{"a file the question does not have", `{"gate":"edit","answer":"S","files":{"other.md":"x"}}`, http.StatusUnprocessableEntity, "", ""},
		{"not an option", `{"gate":"edit","answer":"X"}`, http.StatusUnprocessableEntity, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			id := f.waitingRun(state{Draft: "# Draft\n", Verdict: "BLOCK"})
			if code, doc := f.api("POST", "/api/runs/"+id+"/answer", `{"gate":"review","answer":"approve"}`); code != http.StatusOK {
				t.Fatalf("%d %v", code, doc)
			}
			f.waitsAt(id, "edit")
			code, doc := f.api("POST", "/api/runs/"+id+"/answer", tt.body)
			if code != tt.want {
				t.Fatalf("status %d, want %d: %v", code, tt.want, doc)
			}
			if tt.want != http.StatusOK {
				if r := f.run(id); r.Status != store.StatusWaiting || len(r.Answer) != 0 {
					t.Fatalf("run %s, answer %s", r.Status, r.Answer)
				}
				return
			}
			r := f.waitFor(id, "finished", func(r store.Run) bool { return r.Status == store.StatusDone })
			var s state
			_ = json.Unmarshal(r.State, &s)
			if s.Draft != tt.draft || s.Decision != tt.key {
				t.Errorf("state %+v, want draft %q decision %q", s, tt.draft, tt.key)
			}
		})
	}
}

// blockingTerminal is a terminal where nobody types: it answers only when
// told, and reports that it was asked.
type blockingTerminal struct {
	asked  chan human.Question
	answer chan human.Answer
}

func (b *blockingTerminal) Answer(ctx context.Context, q human.Question) (human.Answer, error) {
	b.asked <- q
	select {
	case a := <-b.answer:
		return a, nil
	case <-ctx.Done():
		return human.Answer{}, ctx.Err()
	}
}

// A run driven in a terminal can be answered from the page: the first
// answer wins, the terminal's prompt is withdrawn, and serve does not
// drive the run itself.
func TestAnAnswerFromThePageReachesARunAtATerminal(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var s state
	s.Report = diffReport
	id, err := flow.Create(t.Context(), f.eng, graph(), &s, flow.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	term := &blockingTerminal{asked: make(chan human.Question, 4), answer: make(chan human.Answer)}
	eng := &flow.Engine{Store: f.st, Audit: f.audit, Answerer: term, Poll: 20 * time.Millisecond}
	done := make(chan error, 1)
	go func() {
		_, err := flow.Drive(t.Context(), eng, graph(), id)
		done <- err
	}()
	select {
	case q := <-term.asked:
		if q.Gate != "review" {
			t.Fatalf("asked %s", q.Gate)
		}
	case <-time.After(testenv.Patience):
		t.Fatal("the terminal was never asked")
	}
	code, doc := f.api("POST", "/api/runs/"+id+"/answer", `{"gate":"review","answer":"approve"}`)
	if code != http.StatusOK || doc["continued"] != false {
		t.Fatalf("%d %v: the terminal's process drives the run", code, doc)
	}
	// The terminal is asked the next question: the web's answer was taken.
	select {
	case q := <-term.asked:
		if q.Gate != "edit" {
			t.Fatalf("asked %s next", q.Gate)
		}
	case <-time.After(testenv.Patience):
		t.Fatal("the run did not take the page's answer")
	}
	term.answer <- human.Answer{Gate: "edit", Key: "S", Files: map[string]string{"draft.md": "x"}, Channel: human.ChannelTerminal}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Drive: %v", err)
		}
	case <-time.After(testenv.Patience):
		t.Fatal("the run did not end")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.continued) != 0 {
		t.Errorf("serve drove runs %v that a terminal drove", f.continued)
	}
}

// When the terminal answered first, the page is told so and its answer is
// not used.
func TestTheFirstAnswerWins(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.waitingRun(state{})
	q := question(t, f.run(id))
	first, _ := json.Marshal(human.Answer{Gate: "review", QuestionID: q.ID, Key: "abort", Channel: human.ChannelTerminal})
	if err := f.st.PostAnswer(t.Context(), id, q.ID, first); err != nil {
		t.Fatal(err)
	}
	code, doc := f.api("POST", "/api/runs/"+id+"/answer", `{"gate":"review","answer":"approve"}`)
	msg, _ := doc["error"].(string)
	if code != http.StatusConflict || !strings.Contains(msg, "terminal") {
		t.Fatalf("%d %v: want 409 naming the terminal", code, doc)
	}
	var a human.Answer
	_ = json.Unmarshal(f.run(id).Answer, &a)
	if a.Key != "abort" || a.Channel != human.ChannelTerminal {
		t.Fatalf("the stored answer is %+v", a)
	}
}

// When the terminal answered and the run moved on, an answer from the page
// for that gate is refused and says who answered it, and how; so is one
// for a run the terminal ended.
func TestALateAnswerIsToldWhoAnswered(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id, err := flow.Create(t.Context(), f.eng, graph(), &state{Report: diffReport}, flow.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	term := &blockingTerminal{asked: make(chan human.Question, 4), answer: make(chan human.Answer)}
	eng := &flow.Engine{Store: f.st, Audit: f.audit, Answerer: term, Poll: 20 * time.Millisecond}
	done := make(chan error, 1)
	go func() {
		_, err := flow.Drive(t.Context(), eng, graph(), id)
		done <- err
	}()
	asked := func(gate string) {
		t.Helper()
		select {
		case q := <-term.asked:
			if q.Gate != gate {
				t.Fatalf("the terminal was asked %s, want %s", q.Gate, gate)
			}
		case <-time.After(testenv.Patience):
			t.Fatalf("the terminal was never asked %s", gate)
		}
	}
	asked("review")
	term.answer <- human.Answer{Gate: "review", Key: "approve", Channel: human.ChannelTerminal, By: "pid 42"}
	asked("edit")
	code, doc := f.api("POST", "/api/runs/"+id+"/answer", `{"gate":"review","answer":"abort"}`)
	msg, _ := doc["error"].(string)
	if code != http.StatusConflict || !strings.Contains(msg, "review was answered APPROVED on the terminal channel by pid 42 at ") {
		t.Fatalf("%d %q: want 409 saying the terminal approved", code, msg)
	}
	term.answer <- human.Answer{Gate: "edit", Key: "S", Files: map[string]string{"draft.md": "x"}, Channel: human.ChannelTerminal}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Drive: %v", err)
		}
	case <-time.After(testenv.Patience):
		t.Fatal("the run did not end")
	}
	code, doc = f.api("POST", "/api/runs/"+id+"/answer", `{"gate":"edit","answer":"M"}`)
	msg, _ = doc["error"].(string)
	if code != http.StatusConflict || !strings.Contains(msg, "is not waiting") || !strings.Contains(msg, "edit was answered send on the terminal channel") {
		t.Fatalf("%d %q: want 409 saying the terminal sent it", code, msg)
	}
	if r := f.run(id); r.Status != store.StatusDone {
		t.Fatalf("run %s", r.Status)
	}
}

// A form refused because the run moved on (another channel answered)
// says so above the page, and what was typed does not reappear in the
// next question's form; a form refused for its own question (a wrong
// answer) is shown again as typed, with its error.
func TestARefusedFormIsNotCarriedToTheNextQuestion(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.waitingRun(state{Draft: "# Draft\n"})
	csrf := csrfOf(t, f, id)
	review := question(t, f.run(id))
	form := map[string]string{"Cookie": "azero_" + portOf(t, f) + "=" + testToken, "Content-Type": "application/x-www-form-urlencoded"}
	post := func(values url.Values) (int, string) {
		t.Helper()
		values.Set("csrf", csrf)
		resp, body := f.request("POST", "/runs/"+id+"/answer", values.Encode(), form)
		return resp.StatusCode, body
	}

	if code, doc := f.api("POST", "/api/runs/"+id+"/answer", `{"gate":"review","answer":"approve"}`); code != http.StatusOK {
		t.Fatal(code, doc)
	}
	edit := question(t, f.waitsAt(id, "edit"))
	code, body := post(url.Values{"gate": {"review"}, "question_id": {review.ID}, "answer": {"revise"}, "feedback": {"typed for the review"}})
	if code != http.StatusConflict || !strings.Contains(body, `id="answer-refused"`) ||
		!strings.Contains(body, "review was answered APPROVED on the api channel") {
		t.Errorf("a form for a gate answered elsewhere: %d\n%s", code, body)
	}
	if strings.Contains(body, "typed for the review") || strings.Contains(body, `id="answer-error"`) || !strings.Contains(body, `data-gate="edit"`) {
		t.Errorf("the next question's form holds what was typed for the last:\n%s", body)
	}

	code, body = post(url.Values{"gate": {"edit"}, "question_id": {edit.ID}, "answer": {"X"}, "file:draft.md": {"# Typed draft"}})
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, `id="answer-error"`) || !strings.Contains(body, "# Typed draft</textarea>") ||
		strings.Contains(body, `id="answer-refused"`) {
		t.Errorf("a wrong answer to the question asked: %d\n%s", code, body)
	}

	if code, doc := f.api("POST", "/api/runs/"+id+"/answer", `{"gate":"edit","answer":"S"}`); code != http.StatusOK {
		t.Fatal(code, doc)
	}
	f.waitFor(id, "finished", func(r store.Run) bool { return r.Status == store.StatusDone })
	code, body = post(url.Values{"gate": {"edit"}, "question_id": {edit.ID}, "answer": {"M"}})
	if code != http.StatusConflict || !strings.Contains(body, `id="answer-refused"`) || !strings.Contains(body, "is not waiting") ||
		!strings.Contains(body, "edit was answered send on the api channel") {
		t.Errorf("a form for a run that ended: %d\n%s", code, body)
	}
	if r := f.run(id); r.Status != store.StatusDone {
		t.Fatalf("run %s", r.Status)
	}
}

// The API's documents are those of `azero runs --json` and `azero runs
// show RUN --json`, which rundoc builds.
func TestAPIDocumentsAreTheCLIs(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.waitingRun(state{})
	f.waitingRun(state{})
	code, got := f.api("GET", "/api/runs", "")
	if code != http.StatusOK {
		t.Fatal(code, got)
	}
	views, err := rundoc.List(t.Context(), f.st, rundoc.Filter{Limit: 50}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// The API adds where the page stands in the list.
	sameShape(t, got, map[string]any{"runs": views, "total": 2, "offset": 0, "limit": 50}, "age_ms")

	code, got = f.api("GET", "/api/runs/"+id, "")
	if code != http.StatusOK {
		t.Fatal(code, got)
	}
	d, err := rundoc.DetailOf(t.Context(), f.st, f.run(id), time.Now(), "", false)
	if err != nil {
		t.Fatal(err)
	}
	sameShape(t, got, d, "age_ms")
	q, _ := got["question"].(map[string]any)
	if q["gate"] != "review" || q["prompt"] != "Merge this change?" {
		t.Errorf("the pending question: %v", q)
	}

	code, got = f.api("GET", "/api/runs?status=done", "")
	if runs, _ := got["runs"].([]any); code != http.StatusOK || len(runs) != 0 {
		t.Errorf("status=done: %d %v", code, got)
	}
	if code, got = f.api("GET", "/api/runs?status=asleep", ""); code != http.StatusBadRequest {
		t.Errorf("status=asleep: %d %v", code, got)
	}
	code, got = f.api("GET", "/api/gates", "")
	if gs, _ := got["gates"].([]any); code != http.StatusOK || len(gs) != 2 {
		t.Errorf("gates: %d %v", code, got)
	}
	code, got = f.api("GET", "/api/runs/"+id+"/events?after=0", "")
	if evs, _ := got["events"].([]any); code != http.StatusOK || len(evs) < 5 {
		t.Errorf("events: %d %v", code, got)
	}
}

// sameShape compares two documents as JSON, ignoring the keys that
// depend on the moment they were made.
func sameShape(t *testing.T, got map[string]any, want any, ignore ...string) {
	t.Helper()
	raw, _ := json.Marshal(want)
	var w map[string]any
	_ = json.Unmarshal(raw, &w)
	strip := func(v any) string {
		var walk func(any) any
		walk = func(v any) any {
			switch x := v.(type) {
			case map[string]any:
				for _, k := range ignore {
					delete(x, k)
				}
				for k, e := range x {
					x[k] = walk(e)
				}
			case []any:
				for i, e := range x {
					x[i] = walk(e)
				}
			}
			return v
		}
		b, _ := json.Marshal(walk(v))
		return string(b)
	}
	if g, w := strip(got), strip(w); g != w {
		t.Errorf("document\n got %s\nwant %s", g, w)
	}
}

// The service started over a store holding an answer nobody took (a
// server stopped before it continued the run) continues that run; a
// server stopped stops taking requests.
func TestServeContinuesAnsweredRunsAndStops(t *testing.T) {
	t.Parallel()
	f := newFixtureConfig(t, fixtureConfig{still: true})
	id := f.waitingRun(state{})
	q := question(t, f.run(id))
	a, _ := json.Marshal(human.Answer{Gate: "review", QuestionID: q.ID, Key: "approve", Channel: human.ChannelWeb, By: "earlier"})
	if err := f.st.PostAnswer(t.Context(), id, q.ID, a); err != nil {
		t.Fatal(err)
	}
	srv, err := web.New(web.Options{Runs: f.runs, Token: testToken, Poll: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln, "127.0.0.1:0") }()
	f.continueRuns(nil)
	f.waitsAt(id, "edit")
	resp, err := http.Get("http://" + ln.Addr().String() + "/api/runs")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("Serve answered %d without the token", resp.StatusCode)
	}
	stop()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(testenv.Patience):
		t.Fatal("Serve did not stop")
	}
	if _, err := http.Get("http://" + ln.Addr().String() + "/"); err == nil || errors.Is(err, context.Canceled) {
		t.Errorf("the server still answers after it stopped")
	}
}

// An answer posted while the service's own drive was stopping at the
// next gate (too late for that drive to see it) is taken by driving
// again.
func TestAnAnswerPostedWhileServeStopsIsTaken(t *testing.T) {
	t.Parallel()
	late := false
	var f *fixture
	f = newFixtureConfig(t, fixtureConfig{after: func(runID string) {
		ctx := t.Context()
		if r, gerr := f.st.GetRun(ctx, runID); gerr == nil && !late && r.Status == store.StatusWaiting && r.Node == "edit" {
			late = true
			var q human.Question
			_ = json.Unmarshal(r.Question, &q)
			a, _ := json.Marshal(human.Answer{Gate: "edit", QuestionID: q.ID, Key: "S", Channel: human.ChannelWeb,
				Files: map[string]string{"draft.md": "late\n"}})
			if perr := f.st.PostAnswer(ctx, runID, q.ID, a); perr != nil {
				t.Error(perr)
			}
		}
	}})
	id := f.waitingRun(state{Draft: "# D\n"})
	srv := f.srv
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln, "127.0.0.1:0") }()
	defer func() {
		// The server's drives end before the test does.
		stop()
		<-served
	}()
	req, _ := http.NewRequestWithContext(t.Context(), "POST", "http://"+ln.Addr().String()+"/api/runs/"+id+"/answer",
		strings.NewReader(`{"gate":"review","answer":"approve"}`))
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	r := f.waitFor(id, "finished", func(r store.Run) bool { return r.Status == store.StatusDone })
	var s state
	_ = json.Unmarshal(r.State, &s)
	if s.Draft != "late\n" {
		t.Errorf("draft %q", s.Draft)
	}
}
