package flow_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/prompt"
	"github.com/azero-dev/azero/internal/store"
)

type counter struct {
	N      int      `json:"n"`
	Trail  []string `json:"trail"`
	Answer string   `json:"answer"`
}

func openStore(t testing.TB, path string, opts store.Options) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func newEngine(t testing.TB) *flow.Engine {
	return &flow.Engine{Store: openStore(t, filepath.Join(t.TempDir(), "azero.db"), store.Options{})}
}

// loopGraph counts to limit, then ends.
func loopGraph(limit int) *flow.Graph[counter] {
	return flow.New[counter]("count", "inc").
		Node("inc", func(ctx context.Context, s *counter) (string, error) {
			s.N++
			s.Trail = append(s.Trail, fmt.Sprintf("inc%d", s.N))
			if s.N >= limit {
				return "last", nil
			}
			return "inc", nil
		}, "inc", "last").
		Node("last", func(ctx context.Context, s *counter) (string, error) {
			s.Trail = append(s.Trail, "last")
			return flow.End, nil
		}, flow.End)
}

func TestDriveToEnd(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	g := loopGraph(3)
	id, err := flow.Create(t.Context(), e, g, &counter{}, flow.CreateOptions{Key: "k"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := flow.Drive(t.Context(), e, g, id)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(s.Trail, ","), "inc1,inc2,inc3,last"; got != want {
		t.Errorf("trail = %s, want %s", got, want)
	}
	r, err := e.Store.GetRun(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != store.StatusDone || r.Node != flow.End || r.Steps != 4 || r.Visits["inc"] != 3 {
		t.Errorf("run = %+v, want done at END after 4 steps, 3 visits of inc", r)
	}
	hist, err := e.Store.History(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	var outcomes []string
	for _, h := range hist {
		outcomes = append(outcomes, h.Node+":"+h.Outcome)
	}
	if got, want := strings.Join(outcomes, " "), "inc:started inc:ok inc:ok inc:ok last:ok END:done"; got != want {
		t.Errorf("history = %s, want %s", got, want)
	}
	if _, err := flow.Drive(t.Context(), e, g, id); !errors.Is(err, flow.ErrFinished) {
		t.Errorf("driving a done run: err = %v, want ErrFinished", err)
	}
}

func TestLimits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		graph *flow.Graph[counter]
		want  error
	}{
		{"step limit", loopGraph(100).MaxSteps(10), flow.ErrStepLimit},
		{"visit limit", loopGraph(100).MaxVisits("inc", 3), flow.ErrLoopLimit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEngine(t)
			id, err := flow.Create(t.Context(), e, tt.graph, &counter{}, flow.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			_, err = flow.Drive(t.Context(), e, tt.graph, id)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			r, _ := e.Store.GetRun(t.Context(), id)
			if r.Status != store.StatusFailed {
				t.Errorf("status = %s, want failed", r.Status)
			}
		})
	}
}

func TestUndeclaredNextFails(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	g := flow.New[counter]("bad", "a").
		Node("a", func(ctx context.Context, s *counter) (string, error) { return "b", nil }, flow.End).
		Node("b", func(ctx context.Context, s *counter) (string, error) { return flow.End, nil }, flow.End)
	// b is unreachable by declaration, so the graph itself is invalid.
	if err := g.Validate(); err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("Validate = %v, want unreachable error", err)
	}
	g2 := flow.New[counter]("bad2", "a").
		Node("a", func(ctx context.Context, s *counter) (string, error) { return "nowhere", nil }, flow.End)
	id, err := flow.Create(t.Context(), e, g2, &counter{}, flow.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = flow.Drive(t.Context(), e, g2, id)
	if err == nil || !strings.Contains(err.Error(), "not one of its declared next nodes") {
		t.Fatalf("err = %v, want undeclared next", err)
	}
}

// answerer answers every question with what the function returns.
type answerer func(q human.Question) (human.Answer, error)

func (f answerer) Answer(_ context.Context, q human.Question) (human.Answer, error) { return f(q) }

// typed answers with key at the terminal.
func typed(key string) answerer {
	return func(q human.Question) (human.Answer, error) {
		return human.Answer{Gate: q.Gate, Key: key, Channel: human.ChannelTerminal}, nil
	}
}

// nobody cannot answer.
var nobody = answerer(func(human.Question) (human.Answer, error) { return human.Answer{}, prompt.ErrNoTerminal })

// gateGraph asks approve-or-reject at "ask"; unattended, when set, is the
// answer taken when nobody can answer.
func gateGraph(unattended bool) *flow.Graph[counter] {
	return flow.New[counter]("gate", "before").
		Node("before", func(ctx context.Context, s *counter) (string, error) {
			s.Trail = append(s.Trail, "before")
			return "ask", nil
		}, "ask").
		Gate("ask", func(ctx context.Context, s *counter) (human.Question, error) {
			s.Trail = append(s.Trail, "asked") // never kept: ask works on a copy
			q := human.Question{Kind: human.Word, Prompt: "Go on?", Report: "the report",
				Options: []human.Option{{Key: "approve", Decision: "APPROVED"}, {Key: "reject", Decision: "REJECTED"}},
				Facts:   map[string]any{"flagged_files": []string{"a.py"}}}
			if unattended {
				q.Unattended = &human.Option{Key: "not_required", Decision: "NOT_REQUIRED"}
			}
			return q, nil
		}, func(s *counter, q human.Question, a human.Answer) (string, error) {
			s.Answer = a.Key
			if a.Key == "reject" {
				return "", fmt.Errorf("human said no: %w", flow.ErrAborted)
			}
			return "after", nil
		}, "after").
		Node("after", func(ctx context.Context, s *counter) (string, error) {
			s.Trail = append(s.Trail, "after")
			return flow.End, nil
		}, flow.End)
}

func TestGateWaitsWithoutAnyoneThenResumes(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	logFile := filepath.Join(t.TempDir(), "audit.jsonl")
	logger, err := audit.Open(logFile, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logger.Close() })
	e.Audit = logger
	g := gateGraph(false)
	id, err := flow.Create(t.Context(), e, g, &counter{}, flow.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.Answerer = nobody
	// The caller names the command (go run ./cmd/azero in a checkout).
	e.Resume = func(run string) string { return "go run ./cmd/azero resume " + run }
	_, err = flow.Drive(t.Context(), e, g, id)
	var we *flow.WaitingError
	if !errors.As(err, &we) || !errors.Is(err, flow.ErrWaiting) || we.Node != "ask" {
		t.Fatalf("err = %v, want WaitingError at ask", err)
	}
	if !strings.HasSuffix(err.Error(), "resume it from a terminal with: go run ./cmd/azero resume "+id) {
		t.Errorf("waiting error %q does not say how to resume with the caller's command", err)
	}
	if noHint := (&flow.WaitingError{RunID: id, Node: "ask", Cause: we.Cause}).Error(); strings.Contains(noHint, "resume") {
		t.Errorf("without a command the engine names one of its own: %q", noHint)
	}
	r, _ := e.Store.GetRun(t.Context(), id)
	if r.Status != store.StatusWaiting || r.Node != "ask" {
		t.Fatalf("run = %s at %s, want waiting at ask", r.Status, r.Node)
	}
	if strings.Contains(string(r.State), "asked") {
		t.Errorf("state kept a change made by the gate that could not ask: %s", r.State)
	}
	var q human.Question
	if err := json.Unmarshal(r.Question, &q); err != nil {
		t.Fatalf("the waiting run has no stored question: %v (%q)", err, r.Question)
	}
	if q.Gate != "ask" || q.Prompt != "Go on?" || q.Report != "the report" || len(q.Options) != 2 || q.AskedAt.IsZero() {
		t.Errorf("stored question = %+v", q)
	}

	e.Answerer = typed("approve")
	s, err := flow.Drive(t.Context(), e, g, id)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.Trail, ","); got != "before,after" || s.Answer != "approve" {
		t.Errorf("trail = %s answer = %s", got, s.Answer)
	}
	r, _ = e.Store.GetRun(t.Context(), id)
	if r.Question != nil {
		t.Errorf("a finished run still shows a question: %s", r.Question)
	}
	recs, err := audit.Read(logFile)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, rec := range recs {
		if rec["event"] == "gate_decision" {
			found = true
			if rec["gate"] != "ask" || rec["decision"] != "APPROVED" || rec["channel"] != "terminal" || rec["run_id"] != id {
				t.Errorf("decision record = %v", rec)
			}
			if ff, _ := rec["flagged_files"].([]any); len(ff) != 1 {
				t.Errorf("the question's facts are not in the record: %v", rec)
			}
		}
	}
	if !found {
		t.Error("no gate_decision in the audit log")
	}
	events, err := e.Store.Events(t.Context(), id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, ev := range events {
		kinds = append(kinds, string(ev.Kind))
	}
	for _, want := range []string{"question", "waiting", "answer", "finished"} {
		if !slices.Contains(kinds, want) {
			t.Errorf("events %v lack %s", kinds, want)
		}
	}
}

func TestGateRejectAborts(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	e.Answerer = typed("reject")
	g := gateGraph(false)
	id, _ := flow.Create(t.Context(), e, g, &counter{}, flow.CreateOptions{})
	_, err := flow.Drive(t.Context(), e, g, id)
	if !errors.Is(err, flow.ErrAborted) {
		t.Fatalf("err = %v, want ErrAborted", err)
	}
	r, _ := e.Store.GetRun(t.Context(), id)
	if r.Status != store.StatusAborted {
		t.Errorf("status = %s, want aborted", r.Status)
	}
	if _, err := flow.Drive(t.Context(), e, g, id); !errors.Is(err, flow.ErrFinished) {
		t.Errorf("resuming an aborted run: %v, want ErrFinished", err)
	}
}

func TestGateUnattended(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name       string
		unattended bool
		want       error
	}{
		{"nothing needs a human: passes unattended", true, nil},
		{"a human is needed: waits", false, flow.ErrWaiting},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEngine(t)
			log := auditTo(t, e)
			e.Answerer = nobody
			g := gateGraph(tt.unattended)
			id, _ := flow.Create(t.Context(), e, g, &counter{}, flow.CreateOptions{})
			s, err := flow.Drive(t.Context(), e, g, id)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if tt.want == nil && s.Answer != "not_required" {
				t.Errorf("answer = %q, want the unattended one", s.Answer)
			}
			recs := decisions(t, log)
			switch {
			case tt.want == nil && (len(recs) != 1 || recs[0]["channel"] != human.ChannelUnattended || recs[0]["decision"] != "NOT_REQUIRED"):
				t.Errorf("audit records = %v, want NOT_REQUIRED on the unattended channel", recs)
			case tt.want != nil && len(recs) != 0:
				t.Errorf("a waiting gate recorded a decision: %v", recs)
			}
		})
	}
}

func TestGateRefusesInvalidAnswers(t *testing.T) {
	t.Parallel()
	for name, a := range map[string]answerer{
		"a word that is not an option": func(q human.Question) (human.Answer, error) {
			return human.Answer{Gate: q.Gate, Key: "appr", Channel: "web"}, nil
		},
		"the unattended answer from a channel": func(q human.Question) (human.Answer, error) {
			return human.Answer{Gate: q.Gate, Key: "not_required", Channel: human.ChannelUnattended}, nil
		},
		"another gate's answer": func(q human.Question) (human.Answer, error) {
			return human.Answer{Gate: "elsewhere", Key: "approve", Channel: "web"}, nil
		},
		"no channel": func(q human.Question) (human.Answer, error) {
			return human.Answer{Gate: q.Gate, Key: "approve"}, nil
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEngine(t)
			e.Answerer = a
			g := gateGraph(false)
			id, _ := flow.Create(t.Context(), e, g, &counter{}, flow.CreateOptions{})
			s, err := flow.Drive(t.Context(), e, g, id)
			var ie *human.InvalidError
			if !errors.As(err, &ie) {
				t.Fatalf("err = %v, want an invalid answer", err)
			}
			if s.Answer != "" {
				t.Errorf("the gate decided on an invalid answer: %q", s.Answer)
			}
			r, _ := e.Store.GetRun(t.Context(), id)
			if r.Status != store.StatusFailed || r.Node != "ask" {
				t.Errorf("run = %s at %s, want failed at the gate", r.Status, r.Node)
			}
		})
	}
}

// failingWriter fails every write, like a full disk.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

func TestGateFailsClosedWhenTheAuditLogCannotBeWritten(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	e.Audit = audit.New(failingWriter{}, nil)
	e.Answerer = typed("approve")
	g := gateGraph(false)
	id, _ := flow.Create(t.Context(), e, g, &counter{}, flow.CreateOptions{})
	s, err := flow.Drive(t.Context(), e, g, id)
	var ae *flow.AuditError
	if !errors.As(err, &ae) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("err = %v, want an AuditError with the write's cause", err)
	}
	if !strings.Contains(err.Error(), "not acted on") {
		t.Errorf("the error does not say the decision was not acted on: %v", err)
	}
	if s.Answer != "" || slices.Contains(s.Trail, "after") {
		t.Errorf("the decision was acted on: %+v", s)
	}
	r, _ := e.Store.GetRun(t.Context(), id)
	if r.Status != store.StatusFailed || r.Node != "ask" {
		t.Errorf("run = %s at %s, want failed at the gate (resumable)", r.Status, r.Node)
	}
	// Once the log can be written, the gate asks again.
	e.Audit = nil
	if _, err := flow.Drive(t.Context(), e, g, id); err != nil {
		t.Fatalf("resume after the disk was freed: %v", err)
	}
}

func TestGraphDecideChecksRoutes(t *testing.T) {
	t.Parallel()
	g := gateGraph(true)
	q, err := g.Ask(t.Context(), "ask", &counter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range append(q.Options, *q.Unattended) {
		channel := human.ChannelTerminal
		if o.Key == q.Unattended.Key {
			channel = human.ChannelUnattended
		}
		next, err := g.Decide("ask", &counter{}, q, human.Answer{Gate: "ask", Key: o.Key, Channel: channel})
		if o.Key == "reject" {
			if !errors.Is(err, flow.ErrAborted) {
				t.Errorf("reject: %v", err)
			}
			continue
		}
		if err != nil || next != "after" {
			t.Errorf("%s routes to %q (%v)", o.Key, next, err)
		}
	}
	if _, err := g.Decide("ask", &counter{}, q, human.Answer{Gate: "ask", Key: "maybe", Channel: "web"}); err == nil {
		t.Error("Decide accepted an answer the question does not allow")
	}
}

func TestFailedNodeResumesThere(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	calls := 0
	g := flow.New[counter]("flaky", "a").
		Node("a", func(ctx context.Context, s *counter) (string, error) { s.N++; return "b", nil }, "b").
		Node("b", func(ctx context.Context, s *counter) (string, error) {
			calls++
			if calls == 1 {
				return "", errors.New("disk on fire")
			}
			s.N += 10
			return flow.End, nil
		}, flow.End)
	id, _ := flow.Create(t.Context(), e, g, &counter{}, flow.CreateOptions{})
	_, err := flow.Drive(t.Context(), e, g, id)
	var ne *flow.NodeError
	if !errors.As(err, &ne) || ne.Node != "b" {
		t.Fatalf("err = %v, want NodeError at b", err)
	}
	r, _ := e.Store.GetRun(t.Context(), id)
	if r.Status != store.StatusFailed || r.Node != "b" || !strings.Contains(r.Error, "disk on fire") {
		t.Fatalf("run = %s at %s (%s)", r.Status, r.Node, r.Error)
	}
	s, err := flow.Drive(t.Context(), e, g, id)
	if err != nil {
		t.Fatal(err)
	}
	if s.N != 11 {
		t.Errorf("N = %d, want 11 (a once, b once)", s.N)
	}
}

func TestCancelInterrupts(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	ctx, cancel := context.WithCancel(t.Context())
	g := flow.New[counter]("slow", "a").
		Node("a", func(ctx context.Context, s *counter) (string, error) {
			cancel()
			<-ctx.Done()
			return "", ctx.Err()
		}, flow.End)
	id, _ := flow.Create(t.Context(), e, g, &counter{}, flow.CreateOptions{})
	_, err := flow.Drive(ctx, e, g, id)
	if !errors.Is(err, flow.ErrInterrupted) {
		t.Fatalf("err = %v, want ErrInterrupted", err)
	}
	r, _ := e.Store.GetRun(t.Context(), id)
	if r.Status != store.StatusInterrupted || r.Node != "a" || r.Lease.Token != "" {
		t.Errorf("run = %s at %s lease %q, want interrupted at a, lease released", r.Status, r.Node, r.Lease.Token)
	}
}

func TestSecondDriverRefused(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	entered := make(chan struct{})
	release := make(chan struct{})
	g := flow.New[counter]("hold", "a").
		Node("a", func(ctx context.Context, s *counter) (string, error) {
			close(entered)
			<-release
			return flow.End, nil
		}, flow.End)
	id, _ := flow.Create(t.Context(), e, g, &counter{}, flow.CreateOptions{})
	done := make(chan error, 1)
	go func() { _, err := flow.Drive(t.Context(), e, g, id); done <- err }()
	<-entered
	_, err := flow.Drive(t.Context(), e, g, id)
	var held *store.LeaseHeldError
	if !errors.As(err, &held) {
		t.Fatalf("second driver: err = %v, want LeaseHeldError", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestDeadDriverLeaseIsTakenOver(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "azero.db")
	dead := openStore(t, path, store.Options{Alive: func(int) bool { return false }})
	live := openStore(t, path, store.Options{})
	g := loopGraph(1)
	id, err := flow.Create(t.Context(), &flow.Engine{Store: live}, g, &counter{}, flow.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A lease held by this (live) process for a long time...
	if err := live.Acquire(t.Context(), id, store.Lease{Token: "other", PID: 1 << 30}, time.Hour); err != nil {
		t.Fatal(err)
	}
	// ...is refused by a store that sees the process alive,
	if _, err := flow.Drive(t.Context(), &flow.Engine{Store: openStore(t, path, store.Options{Alive: func(int) bool { return true }})}, g, id); err == nil {
		t.Fatal("drive over a live lease succeeded")
	}
	// ...and taken over by one that sees it dead (killed with SIGKILL).
	if _, err := flow.Drive(t.Context(), &flow.Engine{Store: dead}, g, id); err != nil {
		t.Fatalf("drive over a dead lease: %v", err)
	}
}

func TestManyConcurrentRunsOneStore(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "azero.db")
	const runs = 50
	var wg sync.WaitGroup
	errs := make(chan error, runs)
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// One store handle per run, as separate processes would have.
			st, err := store.Open(context.Background(), path, store.Options{})
			if err != nil {
				errs <- err
				return
			}
			defer st.Close()
			e := &flow.Engine{Store: st}
			g := loopGraph(5 + i%5)
			id, err := flow.Create(context.Background(), e, g, &counter{}, flow.CreateOptions{})
			if err != nil {
				errs <- err
				return
			}
			if _, err := flow.Drive(context.Background(), e, g, id); err != nil {
				errs <- fmt.Errorf("run %d: %w", i, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st := openStore(t, path, store.Options{})
	done, err := st.ListRuns(t.Context(), store.Filter{Status: store.StatusDone})
	if err != nil {
		t.Fatal(err)
	}
	if len(done) != runs {
		t.Errorf("%d runs done, want %d", len(done), runs)
	}
}

func TestPathAvoiding(t *testing.T) {
	t.Parallel()
	noop := func(ctx context.Context, s *counter) (string, error) { return flow.End, nil }
	g := flow.New[counter]("walk", "a").
		Node("a", noop, "gate", "b").
		Node("b", noop, "gate").
		Gate("gate", func(context.Context, *counter) (human.Question, error) { return human.Question{}, nil },
			func(*counter, human.Question, human.Answer) (string, error) { return "commit", nil }, "commit", "a").
		Node("commit", noop, flow.End)
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	if p := g.PathAvoiding("commit", "gate"); p != nil {
		t.Errorf("found path %v to commit avoiding gate", p)
	}
	if p := g.PathAvoiding("commit", "b"); strings.Join(p, ",") != "a,gate,commit" {
		t.Errorf("path avoiding b = %v", p)
	}
	if !g.IsGate("gate") || g.IsGate("a") {
		t.Error("IsGate wrong")
	}
}

// BenchmarkCheckpoint measures the engine's overhead per node: each
// iteration is one full cycle of a trivial node, so its time is the
// engine's bookkeeping (state encoding, one transaction writing state and
// history, audit). It reports the median, the target being < 2 ms.
func BenchmarkCheckpoint(b *testing.B) {
	e := &flow.Engine{Store: openStore(b, filepath.Join(b.TempDir(), "azero.db"), store.Options{})}
	step := make(chan bool)
	entered := make(chan struct{})
	g := flow.New[counter]("bench", "inc").
		Node("inc", func(ctx context.Context, s *counter) (string, error) {
			entered <- struct{}{}
			if !<-step {
				return flow.End, nil
			}
			s.N++
			s.Trail = append(s.Trail[:0], strings.Repeat("x", 1024)) // a realistic kilobyte of state
			return "inc", nil
		}, "inc", flow.End).
		MaxSteps(1 << 40)
	id, err := flow.Create(context.Background(), e, g, &counter{}, flow.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := flow.Drive(context.Background(), e, g, id); done <- err }()
	<-entered
	var times []time.Duration
	for b.Loop() {
		t0 := time.Now()
		step <- true
		<-entered
		times = append(times, time.Since(t0))
	}
	b.StopTimer()
	step <- false
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median-ms/node")
	b.ReportMetric(float64(times[len(times)*99/100].Microseconds())/1000, "p99-ms/node")
}

func TestSignalAsANodeFinishesKeepsItsWork(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	ctx, cancel := context.WithCancel(t.Context())
	g := flow.New[counter]("late", "a").
		Node("a", func(ctx context.Context, s *counter) (string, error) {
			s.N = 42
			cancel() // the signal arrives as the node returns successfully
			return "b", nil
		}, "b").
		Node("b", func(ctx context.Context, s *counter) (string, error) { return flow.End, nil }, flow.End)
	id, _ := flow.Create(t.Context(), e, g, &counter{}, flow.CreateOptions{})
	if _, err := flow.Drive(ctx, e, g, id); !errors.Is(err, flow.ErrInterrupted) {
		t.Fatalf("err = %v, want ErrInterrupted", err)
	}
	r, _ := e.Store.GetRun(t.Context(), id)
	if r.Status != store.StatusInterrupted || r.Node != "b" || !strings.Contains(string(r.State), `"n":42`) {
		t.Fatalf("run %s at %s state %s: the finished node's work was lost", r.Status, r.Node, r.State)
	}
}

// post answers the question the run stands at, as the web page does.
func post(t *testing.T, e *flow.Engine, runID, key string) error {
	t.Helper()
	r, err := e.Store.GetRun(t.Context(), runID)
	if err != nil {
		t.Fatal(err)
	}
	var q human.Question
	if err := json.Unmarshal(r.Question, &q); err != nil {
		t.Fatalf("no stored question: %v", err)
	}
	raw, _ := json.Marshal(human.Answer{Gate: q.Gate, QuestionID: q.ID, Key: key, Channel: human.ChannelWeb, By: "127.0.0.1 test"})
	return e.Store.PostAnswer(t.Context(), runID, q.ID, raw)
}

func TestAnswerPostedWhileWaitingIsTakenOnResume(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	e.Answerer = nobody
	g := gateGraph(false)
	id, _ := flow.Create(t.Context(), e, g, &counter{}, flow.CreateOptions{})
	if _, err := flow.Drive(t.Context(), e, g, id); !errors.Is(err, flow.ErrWaiting) {
		t.Fatalf("err = %v, want waiting", err)
	}
	if err := post(t, e, id, "approve"); err != nil {
		t.Fatal(err)
	}
	if err := post(t, e, id, "reject"); !errors.Is(err, store.ErrAnswered) {
		t.Errorf("a second answer: %v, want ErrAnswered (the first answer wins)", err)
	}
	// A driver nobody can answer at takes the posted answer.
	s, err := flow.Drive(t.Context(), e, g, id)
	if err != nil || s.Answer != "approve" {
		t.Fatalf("resume: answer %q, %v", s.Answer, err)
	}
	raw, _ := json.Marshal(human.Answer{Gate: "ask", Key: "approve", Channel: human.ChannelWeb})
	if err := e.Store.PostAnswer(t.Context(), id, "any", raw); !errors.Is(err, store.ErrNotAsked) {
		t.Errorf("an answer for a run that asks nothing: %v, want ErrNotAsked", err)
	}
}

func TestAnswerForAChangedQuestionIsNotUsed(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	e.Answerer = nobody
	report := "first report"
	g := flow.New[counter]("changing", "ask").
		Gate("ask", func(context.Context, *counter) (human.Question, error) {
			return human.Question{Kind: human.Word, Prompt: "Go on?", Report: report,
				Options: []human.Option{{Key: "approve", Decision: "APPROVED"}}}, nil
		}, func(s *counter, _ human.Question, a human.Answer) (string, error) {
			s.Answer = a.Key
			return flow.End, nil
		}, flow.End)
	id, _ := flow.Create(t.Context(), e, g, &counter{}, flow.CreateOptions{})
	if _, err := flow.Drive(t.Context(), e, g, id); !errors.Is(err, flow.ErrWaiting) {
		t.Fatal(err)
	}
	if err := post(t, e, id, "approve"); err != nil {
		t.Fatal(err)
	}
	report = "the change is different now" // what the human approved is not what would pass
	if _, err := flow.Drive(t.Context(), e, g, id); !errors.Is(err, flow.ErrWaiting) {
		t.Fatalf("err = %v: an answer to another question was used", err)
	}
	r, _ := e.Store.GetRun(t.Context(), id)
	if r.Answer != nil || !strings.Contains(string(r.Question), "different now") {
		t.Errorf("the stale answer stayed (%s) or the new question is not stored (%s)", r.Answer, r.Question)
	}
}

// blocked asks forever, like a terminal nobody types at, until cancelled.
type blocked struct{ asking chan struct{} }

func (b blocked) Answer(ctx context.Context, q human.Question) (human.Answer, error) {
	close(b.asking)
	<-ctx.Done()
	return human.Answer{}, ctx.Err()
}

// decisions returns the gate decisions the audit log at path holds.
func decisions(t *testing.T, path string) []map[string]any {
	t.Helper()
	recs, err := audit.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, r := range recs {
		if r["event"] == "gate_decision" {
			out = append(out, r)
		}
	}
	return out
}

// auditTo gives e an audit log and returns its path.
func auditTo(t *testing.T, e *flow.Engine) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	logger, err := audit.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logger.Close() })
	e.Audit = logger
	return path
}

func TestFirstAnswerWinsAcrossChannels(t *testing.T) {
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
	<-b.asking // the terminal is asking: answer on the web
	if err := post(t, e, id, "approve"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil || s.Answer != "approve" {
		t.Fatalf("drive: answer %q, %v", s.Answer, err)
	}
	events, _ := e.Store.Events(t.Context(), id, 0, 0)
	found := false
	for _, ev := range events {
		var a human.Answer
		if ev.Kind == "answer" && ev.Decode(&a) == nil && a.Channel == human.ChannelWeb && a.By == "127.0.0.1 test" {
			found = true
		}
	}
	if !found {
		t.Error("the web answer is not in the run's events with its channel")
	}
	if recs := decisions(t, log); len(recs) != 1 || recs[0]["channel"] != human.ChannelWeb || recs[0]["by"] != "127.0.0.1 test" || recs[0]["answer"] != "approve" {
		t.Errorf("audit records of the decision = %v, want one naming the web channel and who answered", recs)
	}

	// The terminal answers first: a later web answer is refused.
	e2 := newEngine(t)
	e2.Answerer = typed("approve")
	id2, _ := flow.Create(t.Context(), e2, g, &counter{}, flow.CreateOptions{})
	if _, err := flow.Drive(t.Context(), e2, g, id2); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(human.Answer{Gate: "ask", Key: "reject", Channel: human.ChannelWeb})
	if err := e2.Store.PostAnswer(t.Context(), id2, "any", raw); !errors.Is(err, store.ErrNotAsked) {
		t.Errorf("a web answer after the terminal's: %v, want ErrNotAsked", err)
	}
}
