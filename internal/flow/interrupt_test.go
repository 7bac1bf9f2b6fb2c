package flow_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/store"
)

// A signal while a gate asks (Ctrl-C at the prompt) stops the process,
// not the asking: the run waits at the gate with its question stored, and
// an answer from another channel (the page of azero serve) is taken.
func TestInterruptWhileAskingLeavesTheRunWaiting(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	log := auditTo(t, e)
	b := blocked{asking: make(chan struct{})}
	e.Answerer = b
	e.Resume = func(id string) string { return "go run ./cmd/azero resume " + id }
	g := gateGraph(false)
	id, _ := flow.Create(t.Context(), e, g, &counter{}, flow.CreateOptions{})
	ctx, cancel := context.WithCancel(t.Context())
	go func() { <-b.asking; cancel() }()
	_, err := flow.Drive(ctx, e, g, id)
	var ie *flow.InterruptedError
	if !errors.As(err, &ie) || !errors.Is(err, flow.ErrInterrupted) || !ie.Waiting || ie.Node != "ask" {
		t.Fatalf("err = %v, want an interruption at ask that leaves the run waiting", err)
	}
	if !strings.Contains(err.Error(), "waits there with its question") || !strings.Contains(err.Error(), "go run ./cmd/azero resume "+id) {
		t.Errorf("the message %q does not say the run waits and how to answer it", err)
	}
	r, _ := e.Store.GetRun(t.Context(), id)
	if r.Status != store.StatusWaiting || r.Node != "ask" || r.Lease.Token != "" {
		t.Fatalf("run %s at %s, lease %q: want waiting at ask, lease released", r.Status, r.Node, r.Lease.Token)
	}
	if q := storedQuestion(t, e, id); q.Gate != "ask" || q.Prompt != "Go on?" {
		t.Fatalf("stored question = %+v", q)
	}
	if err := post(t, e, id, "approve"); err != nil {
		t.Fatalf("the page's answer to the interrupted question: %v", err)
	}
	e.Answerer = nobody
	s, err := flow.Drive(t.Context(), e, g, id)
	if err != nil || s.Answer != "approve" {
		t.Fatalf("resume: answer %q, %v", s.Answer, err)
	}
	if recs := decisions(t, log); len(recs) != 1 || recs[0]["channel"] != human.ChannelWeb {
		t.Errorf("decisions = %v, want one on the web channel", recs)
	}
}

// A signal while a node works, or while a gate is still building its
// question, interrupts the run: nothing was asked.
func TestInterruptWhileWorkingStaysInterrupted(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	e.Answerer = typed("approve")
	ctx, cancel := context.WithCancel(t.Context())
	g := flow.New[counter]("building", "ask").
		Gate("ask", func(ctx context.Context, _ *counter) (human.Question, error) {
			cancel() // the diff is still being computed
			<-ctx.Done()
			return human.Question{}, ctx.Err()
		}, func(*counter, human.Question, human.Answer) (string, error) { return flow.End, nil }, flow.End)
	id, _ := flow.Create(t.Context(), e, g, &counter{}, flow.CreateOptions{})
	_, err := flow.Drive(ctx, e, g, id)
	var ie *flow.InterruptedError
	if !errors.As(err, &ie) || ie.Waiting {
		t.Fatalf("err = %v, want an interruption that leaves the run interrupted", err)
	}
	r, _ := e.Store.GetRun(t.Context(), id)
	if r.Status != store.StatusInterrupted || len(r.Question) != 0 {
		t.Errorf("run %s with question %s: want interrupted, nothing asked", r.Status, r.Question)
	}
}

// Times are ordered: a question asked again unchanged (a resume at the
// gate) keeps the time it was first asked, so that an answer posted while
// the run waited is never recorded as answered before it was asked.
func TestAnswerTimesAreOrdered(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	log := auditTo(t, e)
	e.Answerer = nobody
	var mu sync.Mutex
	clock := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	e.Now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(time.Second)
		return clock
	}
	g := gateGraph(false)
	id, _ := flow.Create(t.Context(), e, g, &counter{}, flow.CreateOptions{})
	if _, err := flow.Drive(t.Context(), e, g, id); !errors.Is(err, flow.ErrWaiting) {
		t.Fatal(err)
	}
	first := storedQuestion(t, e, id)
	if _, err := flow.Drive(t.Context(), e, g, id); !errors.Is(err, flow.ErrWaiting) {
		t.Fatal(err)
	}
	if again := storedQuestion(t, e, id); !again.AskedAt.Equal(first.AskedAt) {
		t.Fatalf("asked again unchanged, the question's asked_at moved from %s to %s", first.AskedAt, again.AskedAt)
	}
	// The page answers now, between the first asking and the resume that
	// takes its answer.
	answeredAt := e.Now().UTC()
	raw, _ := json.Marshal(human.Answer{Gate: first.Gate, QuestionID: first.ID, Key: "approve", Channel: human.ChannelWeb,
		By: "127.0.0.1 test", At: answeredAt})
	if err := e.Store.PostAnswer(t.Context(), id, first.ID, raw); err != nil {
		t.Fatal(err)
	}
	if _, err := flow.Drive(t.Context(), e, g, id); err != nil {
		t.Fatal(err)
	}
	recs := decisions(t, log)
	if len(recs) != 1 {
		t.Fatalf("decisions = %v", recs)
	}
	asked, err1 := time.Parse(time.RFC3339Nano, recs[0]["asked_at"].(string))
	answered, err2 := time.Parse(time.RFC3339Nano, recs[0]["answered_at"].(string))
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	if !asked.Equal(first.AskedAt) || !answered.Equal(answeredAt) || answered.Before(asked) {
		t.Errorf("asked_at %s, answered_at %s: want asked_at %s (the first asking), answered_at %s, in that order",
			asked, answered, first.AskedAt, answeredAt)
	}
}
