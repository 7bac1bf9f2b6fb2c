package flow_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/answerkey"
	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
)

// forge writes answer into the run's answer column straight through the
// database file, as code that reached azero's state directory would.
func forge(t *testing.T, e *flow.Engine, runID string, answer []byte) {
	t.Helper()
	db, err := sql.Open("sqlite", e.Store.Path()+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE runs SET answer = ? WHERE id = ?`, string(answer), runID); err != nil {
		t.Fatal(err)
	}
}

// storedQuestion is the question the run stands at.
func storedQuestion(t *testing.T, e *flow.Engine, runID string) human.Question {
	t.Helper()
	r, err := e.Store.GetRun(t.Context(), runID)
	if err != nil {
		t.Fatal(err)
	}
	var q human.Question
	if err := json.Unmarshal(r.Question, &q); err != nil {
		t.Fatalf("no stored question: %v", err)
	}
	return q
}

// auditEvents returns the records of the audit log at path named name.
func auditEvents(t *testing.T, path, name string) []map[string]any {
	t.Helper()
	recs, err := audit.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, r := range recs {
		if r["event"] == name {
			out = append(out, r)
		}
	}
	return out
}

// A row in the store's answer column that azero's channels did not make
// (here: the web's JSON, written with SQL) is refused: not acted on,
// recorded once as answer_forged and as a warning, removed; the run keeps
// waiting, and a real answer still works.
func TestForgedAnswerIsRefusedAndTheRunWaits(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	log := auditTo(t, e)
	e.Answerer = nobody
	g := gateGraph(false)
	id, _ := flow.Create(t.Context(), e, g, &counter{}, flow.CreateOptions{})
	if _, err := flow.Drive(t.Context(), e, g, id); !errors.Is(err, flow.ErrWaiting) {
		t.Fatalf("err = %v, want waiting", err)
	}
	q := storedQuestion(t, e, id)
	raw, _ := json.Marshal(human.Answer{Gate: q.Gate, QuestionID: q.ID, Key: "approve", Channel: human.ChannelWeb, By: "127.0.0.1 (Mozilla)",
		At: time.Now().UTC(), MAC: strings.Repeat("ab", 32)})
	forge(t, e, id, raw)

	for range 2 { // resumed twice: refused both times, recorded once
		if _, err := flow.Drive(t.Context(), e, g, id); !errors.Is(err, flow.ErrWaiting) {
			t.Fatalf("resume with a forged answer: %v, want still waiting", err)
		}
	}
	if recs := decisions(t, log); len(recs) != 0 {
		t.Fatalf("a forged answer was decided on: %v", recs)
	}
	forged := auditEvents(t, log, "answer_forged")
	if len(forged) != 1 || forged[0]["run_id"] != id || forged[0]["gate"] != "ask" || forged[0]["claimed_channel"] != human.ChannelWeb ||
		forged[0]["claimed_by"] != "127.0.0.1 (Mozilla)" {
		t.Fatalf("answer_forged records = %v, want one naming the run, the gate and the claimed channel", forged)
	}
	r, _ := e.Store.GetRun(t.Context(), id)
	if r.Status != store.StatusWaiting || len(r.Answer) != 0 {
		t.Errorf("run %s with answer %s: want waiting, the forged answer removed", r.Status, r.Answer)
	}
	evs, _ := e.Store.Events(t.Context(), id, 0, 0)
	warned := slices.ContainsFunc(evs, func(ev event.Event) bool {
		return ev.Kind == event.Warning && strings.Contains(ev.Text, "claiming the web channel was not made by azero")
	})
	if !warned || slices.ContainsFunc(evs, func(ev event.Event) bool { return ev.Kind == event.Answer }) {
		t.Errorf("the events should warn of the forged answer and show no answer: %v", evs)
	}

	// A real answer from the page is taken.
	if err := post(t, e, id, "approve"); err != nil {
		t.Fatal(err)
	}
	s, err := flow.Drive(t.Context(), e, g, id)
	if err != nil || s.Answer != "approve" {
		t.Fatalf("after a real answer: %q, %v", s.Answer, err)
	}
	if recs := decisions(t, log); len(recs) != 1 || recs[0]["channel"] != human.ChannelWeb {
		t.Errorf("want one decision, on the web channel: %v", recs)
	}
}

// A forged answer that appears while the terminal asks is refused as
// well; the terminal goes on asking, and the page's real answer wins.
func TestForgedAnswerWhileTheTerminalAsks(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	log := auditTo(t, e)
	e.Poll = time.Millisecond
	b := blocked{asking: make(chan struct{})}
	e.Answerer = b
	g := gateGraph(false)
	id, _ := flow.Create(t.Context(), e, g, &counter{}, flow.CreateOptions{})
	done := make(chan error, 1)
	var s *counter
	go func() {
		var err error
		s, err = flow.Drive(t.Context(), e, g, id)
		done <- err
	}()
	<-b.asking
	q := storedQuestion(t, e, id)
	raw, _ := json.Marshal(human.Answer{Gate: q.Gate, QuestionID: q.ID, Key: "approve", Channel: human.ChannelTerminal})
	forge(t, e, id, raw)
	for deadline := time.Now().Add(testenv.Patience); len(auditEvents(t, log, "answer_forged")) == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the forged answer was never refused")
		}
	}
	select {
	case err := <-done:
		t.Fatalf("the drive ended on a forged answer: %v", err)
	default:
	}
	if err := post(t, e, id, "reject"); err != nil {
		t.Fatalf("a real answer after the forged one: %v", err)
	}
	if err := <-done; !errors.Is(err, flow.ErrAborted) || s.Answer != "reject" {
		t.Fatalf("drive: answer %q, %v: want the page's reject", s.Answer, err)
	}
	if recs := decisions(t, log); len(recs) != 1 || recs[0]["answer"] != "reject" {
		t.Errorf("decisions = %v", recs)
	}
}

// againGraph asks the same question until it is approved: each asking
// has the same id (the same content), and a nonce of its own.
func againGraph() *flow.Graph[counter] {
	return flow.New[counter]("again", "ask").
		Gate("ask", func(context.Context, *counter) (human.Question, error) {
			return human.Question{Kind: human.Word, Prompt: "Go on?", Options: []human.Option{
				{Key: "approve", Decision: "APPROVED"}, {Key: "again", Decision: "AGAIN"}}}, nil
		}, func(s *counter, _ human.Question, a human.Answer) (string, error) {
			s.Answer = a.Key
			if a.Key == "again" {
				return "bump", nil
			}
			return flow.End, nil
		}, "bump", flow.End).
		Node("bump", func(_ context.Context, s *counter) (string, error) {
			s.N++
			return "ask", nil
		}, "ask")
}

// An answer azero made for one asking of a question does not count for a
// later asking of the same question (same id): the nonce differs. A
// resume at the same asking keeps the nonce, so an answer posted while
// the run waited counts.
func TestReplayedAnswerIsRefused(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	log := auditTo(t, e)
	e.Answerer = nobody
	g := againGraph()
	id, _ := flow.Create(t.Context(), e, g, &counter{}, flow.CreateOptions{})
	if _, err := flow.Drive(t.Context(), e, g, id); !errors.Is(err, flow.ErrWaiting) {
		t.Fatal(err)
	}
	first := storedQuestion(t, e, id)
	// Resumed without an answer, the run asks the same asking again.
	if _, err := flow.Drive(t.Context(), e, g, id); !errors.Is(err, flow.ErrWaiting) {
		t.Fatal(err)
	}
	if again := storedQuestion(t, e, id); again.Nonce != first.Nonce || again.ID != first.ID || len(first.Nonce) != 32 {
		t.Fatalf("a resume at the same question changed its nonce: %q then %q", first.Nonce, again.Nonce)
	}
	if err := post(t, e, id, "again"); err != nil {
		t.Fatal(err)
	}
	r, _ := e.Store.GetRun(t.Context(), id)
	old := r.Answer // a real answer, sealed for the first asking
	if _, err := flow.Drive(t.Context(), e, g, id); !errors.Is(err, flow.ErrWaiting) {
		t.Fatalf("after again: %v, want waiting at the second asking", err)
	}
	second := storedQuestion(t, e, id)
	if second.ID != first.ID || second.Nonce == first.Nonce {
		t.Fatalf("the second asking: id %s nonce %s, first id %s nonce %s: want the same id, a new nonce", second.ID, second.Nonce, first.ID, first.Nonce)
	}
	forge(t, e, id, old)
	s, err := flow.Drive(t.Context(), e, g, id)
	if !errors.Is(err, flow.ErrWaiting) || s.N != 1 {
		t.Fatalf("the replayed answer: %v, bumped %d times: want refused, still waiting after one bump", err, s.N)
	}
	if forged := auditEvents(t, log, "answer_forged"); len(forged) != 1 || forged[0]["claimed_channel"] != human.ChannelWeb {
		t.Errorf("answer_forged records = %v", forged)
	}
	if recs := decisions(t, log); len(recs) != 1 {
		t.Errorf("want only the first asking decided, got %v", recs)
	}
}

// Without a readable answer key the engine acts on no run and takes no
// answer: a process that starts when the key cannot be read fails before
// any node, with an error that names the key, and nothing is decided.
func TestGateFailsClosedWithoutTheAnswerKey(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	g := gateGraph(false)
	id, err := flow.Create(t.Context(), e, g, &counter{}, flow.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	keyPath := filepath.Join(filepath.Dir(e.Store.Path()), answerkey.FileName)
	if err := os.WriteFile(keyPath, []byte("too short"), 0o600); err != nil {
		t.Fatal(err)
	}
	later := &flow.Engine{Store: openStore(t, e.Store.Path(), store.Options{}), Answerer: typed("approve")}
	log := auditTo(t, later)
	s, err := flow.Drive(t.Context(), later, g, id)
	if err == nil || !strings.Contains(err.Error(), "read the answer key "+keyPath) || s != nil {
		t.Fatalf("drive without a usable key: %+v, %v", s, err)
	}
	if recs := decisions(t, log); len(recs) != 0 {
		t.Errorf("decided without a key: %v", recs)
	}
	if got, _ := os.ReadFile(keyPath); string(got) != "too short" {
		t.Errorf("the bad key was replaced: %q", got)
	}
	if evs, _ := later.Store.Events(t.Context(), id, 0, 0); len(evs) != 0 {
		t.Errorf("the run went on without a key: %v", evs)
	}
}
