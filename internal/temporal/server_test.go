//go:build temporalserver

package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/server/temporaltest"

	"github.com/azero-dev/azero/internal/answerkey"
	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
)

// A long run on a real server continues as new every few steps: every
// execution after the first picks up where the one before stopped, the
// run is followed and answered by its id across executions (the status
// query never fails between them), and every node runs once.
func TestTemporalLongRunContinuesAsNew(t *testing.T) {
	srv := temporaltest.NewServer(temporaltest.WithT(t))
	c := srv.NewClientWithOptions(client.Options{Logger: quiet{}})
	reg := toyRegistry(t, 0)
	ws := newWorkerState(t)
	w, err := NewWorker(c, WorkerConfig{Registry: reg, Store: ws.store, Audit: ws.audit, StateDir: ws.dir, Identity: "worker-a"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)

	work := t.TempDir()
	raw, _ := json.Marshal(toy{Dir: work, Loops: 10})
	cl := &Client{C: c, Poll: 20 * time.Millisecond}
	const runID = "261124-long"
	if err := cl.Start(t.Context(), Input{RunID: runID, Workflow: toyName, State: raw, Options: Options{StepsPerExecution: 3}}); err != nil {
		t.Fatal(err)
	}
	// Followed closely, through every continue-as-new, up to the gate.
	ctx, cancel := context.WithTimeout(t.Context(), testenv.Patience)
	defer cancel()
	seen := 0
	waiting, err := cl.Follow(ctx, runID, func(Status) { seen++ })
	if err != nil {
		t.Fatalf("following the run across its executions: %v", err)
	}
	if waiting.Question == nil || waiting.Node != "check" || waiting.Steps != 11 {
		t.Fatalf("want the run at its gate after 11 steps, got %s at %s after %d steps (question %v)", waiting.Status, waiting.Node, waiting.Steps, waiting.Question)
	}
	reply, err := cl.Answer(t.Context(), runID, human.Answer{Gate: "check", QuestionID: waiting.Question.ID, Key: "approve", Channel: human.ChannelTemporal})
	if err != nil || reply.Decision != "APPROVED" {
		t.Fatalf("the approval: %+v %v", reply, err)
	}
	var res Result
	if err := c.GetWorkflow(ctx, runID, "").Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	if res.Status != store.StatusDone || res.Steps != 13 {
		t.Fatalf("want done after 13 steps, got %s after %d (%s)", res.Status, res.Steps, res.Error)
	}
	if len(res.History) != 13 || res.History[0].Node != "work" || res.Started.IsZero() {
		t.Errorf("the run's steps and start should travel across executions: %d steps, first %+v, started %v", len(res.History), res.History[0], res.Started)
	}
	for i, ev := range res.Events {
		if ev.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d: the numbering should go on across executions", i, ev.Seq)
		}
	}
	got := effects(t, work)
	if len(got) != 12 || got[0] != "work 1 "+runID || got[10] != "work 11 "+runID || got[11] != "finish APPROVED" {
		t.Errorf("every node should have run once across executions, got %q", got)
	}
	if n := len(auditRecords(t, ws.auditLog, "gate_decision")); n != 1 {
		t.Errorf("want one recorded decision, got %d", n)
	}

	// The executions of the run: 13 steps, 3 an execution. Visibility
	// follows the executions' ends a little later: looked at until it has
	// caught up (only a hang exhausts the patience).
	continued, completed := 0, 0
	for deadline := time.Now().Add(testenv.Patience); ; time.Sleep(50 * time.Millisecond) {
		resp, err := c.ListWorkflow(t.Context(), &workflowservice.ListWorkflowExecutionsRequest{Query: "WorkflowId = '" + runID + "'"})
		if err != nil {
			t.Fatal(err)
		}
		continued, completed = 0, 0
		for _, e := range resp.GetExecutions() {
			switch e.GetStatus() {
			case enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW:
				continued++
			case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
				completed++
			}
		}
		if continued+completed >= 5 || time.Now().After(deadline) {
			break
		}
	}
	if continued != 4 || completed != 1 {
		t.Errorf("want 4 executions continued as new and 1 completed, got %d and %d", continued, completed)
	}
	// azero runs lists the run once, as it ended, whatever its executions.
	listed, err := cl.List(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) != 1 || listed[0].RunID != runID || listed[0].Status != store.StatusDone {
		t.Errorf("the run's executions listed as %+v, want the run once, done", listed)
	}
	// The last execution's history is short: it started where the one
	// before stopped.
	it := c.GetWorkflowHistory(t.Context(), runID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var first string
	events := 0
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if events == 0 {
			first = string(ev.GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads()[0].GetData())
		}
		events++
	}
	if !strings.Contains(first, `"carry":{"node":"finish","steps":12`) {
		t.Errorf("the last execution should start from the carry at finish after 12 steps, started with %.300s", first)
	}
}

// A run started before any worker is up waits for one: following it does
// not fail meanwhile, and the run goes on once a worker starts.
func TestTemporalFollowWaitsForAWorker(t *testing.T) {
	srv := temporaltest.NewServer(temporaltest.WithT(t))
	c := srv.NewClientWithOptions(client.Options{Logger: quiet{}})
	cl := &Client{C: c, Poll: 50 * time.Millisecond}
	raw, _ := json.Marshal(toy{Dir: t.TempDir()})
	const runID = "261124-early"
	if err := cl.Start(t.Context(), Input{RunID: runID, Workflow: toyName, State: raw}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), testenv.Patience)
	defer cancel()
	type followed struct {
		st  Status
		err error
	}
	done := make(chan followed, 1)
	go func() {
		st, err := cl.Follow(ctx, runID, nil)
		done <- followed{st, err}
	}()
	// A while with nobody working on the run (a slow machine only makes an
	// early end less likely): following it must not end.
	select {
	case f := <-done:
		t.Fatalf("following a run nobody works on yet ended: %+v %v", f.st, f.err)
	case <-time.After(750 * time.Millisecond):
	}
	ws := newWorkerState(t)
	w, err := NewWorker(c, WorkerConfig{Registry: toyRegistry(t, 0), Store: ws.store, Audit: ws.audit, StateDir: ws.dir, Identity: "late"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	f := <-done
	if f.err != nil || f.st.Question == nil || f.st.Node != "check" {
		t.Fatalf("once a worker started, the run should reach its gate: %+v %v", f.st, f.err)
	}
}

// startWorker starts a worker called name on srv with a store, audit log
// and state directory of its own.
func startWorker(t *testing.T, c client.Client, reg *Registry, name string) (*Worker, string) {
	t.Helper()
	ws := newWorkerState(t)
	w, err := NewWorker(c, WorkerConfig{Registry: reg, Store: ws.store, Audit: ws.audit, StateDir: ws.dir, Identity: name})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return w, ws.dir
}

// A worker asked to stop (azero worker on SIGINT or SIGTERM) lets the
// step under way finish and records it; the run's next step moves to
// another worker.
func TestTemporalStoppedWorkerFinishesItsStep(t *testing.T) {
	srv := temporaltest.NewServer(temporaltest.WithT(t))
	c := srv.NewClientWithOptions(client.Options{Logger: quiet{}})
	reg := toyRegistry(t, 0)
	a, _ := startWorker(t, c, reg, "worker-a")
	work := t.TempDir()
	raw, _ := json.Marshal(toy{Dir: work, SlowMS: 3000})
	cl := &Client{C: c, Poll: 50 * time.Millisecond}
	const runID = "261124-stop"
	if err := cl.Start(t.Context(), Input{RunID: runID, Workflow: toyName, State: raw, Options: Options{MoveAfter: 2 * time.Second}}); err != nil {
		t.Fatal(err)
	}
	// Stop the worker once it is working on the slow node.
	deadline := time.Now().Add(testenv.Patience)
	for {
		desc, err := c.DescribeWorkflowExecution(t.Context(), runID, "")
		if err != nil {
			t.Fatal(err)
		}
		if p := desc.GetPendingActivities(); len(p) == 1 && p[0].GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the worker never started the node")
		}
		time.Sleep(20 * time.Millisecond)
	}
	a.Stop()
	if got := effects(t, work); len(got) != 1 || got[0] != "work 1 "+runID {
		t.Fatalf("the step under way should have finished before the worker stopped, effects %q", got)
	}
	startWorker(t, c, reg, "worker-b")
	ctx, cancel := context.WithTimeout(t.Context(), testenv.Patience)
	defer cancel()
	waiting, err := cl.Follow(ctx, runID, nil)
	if err != nil || waiting.Question == nil {
		t.Fatalf("the run should reach its gate on the other worker: %+v %v", waiting, err)
	}
	if _, err := cl.Answer(ctx, runID, human.Answer{Gate: "check", Key: "approve", Channel: human.ChannelTemporal}); err != nil {
		t.Fatal(err)
	}
	var res Result
	if err := c.GetWorkflow(ctx, runID, "").Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	if res.Status != store.StatusDone || res.Moves != 1 || len(res.History) == 0 || res.History[0].Node != "work" ||
		res.History[0].Outcome != "ok" || res.History[0].Worker != "worker-a" {
		t.Fatalf("the node should have completed on worker-a and the run moved once, got %s after %d moves, steps %+v", res.Status, res.Moves, res.History)
	}
	if got := effects(t, work); len(got) != 2 {
		t.Errorf("work and finish should each have run once, got %q", got)
	}
}

// counting is a client that counts the calls List may make per run.
type counting struct {
	client.Client
	describe, get, query atomic.Int32
}

func (c *counting) DescribeWorkflowExecution(ctx context.Context, id, run string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	c.describe.Add(1)
	return c.Client.DescribeWorkflowExecution(ctx, id, run)
}

func (c *counting) GetWorkflow(ctx context.Context, id, run string) client.WorkflowRun {
	c.get.Add(1)
	return c.Client.GetWorkflow(ctx, id, run)
}

func (c *counting) QueryWorkflow(ctx context.Context, id, run, name string, args ...any) (converter.EncodedValue, error) {
	c.query.Add(1)
	return c.Client.QueryWorkflow(ctx, id, run, name, args...)
}

// Listing runs again (the page of azero serve does every second) reads a
// finished run's result once; a run still going is asked every time.
func TestTemporalListReadsAFinishedRunOnce(t *testing.T) {
	srv := temporaltest.NewServer(temporaltest.WithT(t))
	c := srv.NewClientWithOptions(client.Options{Logger: quiet{}})
	reg := toyRegistry(t, 0)
	startWorker(t, c, reg, "worker-a")
	cc := &counting{Client: c}
	cl := &Client{C: cc, Poll: 50 * time.Millisecond}
	ctx, cancel := context.WithTimeout(t.Context(), testenv.Patience)
	defer cancel()
	for _, r := range []struct {
		id string
		s  toy
	}{{"261124-ended", toy{Unattended: true}}, {"261124-asking", toy{}}} {
		r.s.Dir = t.TempDir()
		raw, _ := json.Marshal(r.s)
		if err := cl.Start(ctx, Input{RunID: r.id, Workflow: toyName, State: raw}); err != nil {
			t.Fatal(err)
		}
		if _, err := cl.Follow(ctx, r.id, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.GetWorkflow(ctx, "261124-ended", "").Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	list := func() map[string]Status {
		t.Helper()
		// Visibility may lag a moment behind the runs' ends.
		deadline := time.Now().Add(testenv.Patience)
		for {
			runs, err := cl.List(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]Status{}
			for _, st := range runs {
				out[st.RunID] = st
			}
			if len(out) == 2 && out["261124-ended"].Ended {
				return out
			}
			if time.Now().After(deadline) {
				t.Fatalf("the list never showed both runs, the first ended: %+v", runs)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	first := list()
	cc.describe.Store(0)
	cc.get.Store(0)
	cc.query.Store(0)
	again := list()
	if d, g, q := cc.describe.Load(), cc.get.Load(), cc.query.Load(); d != 1 || g != 0 || q != 1 {
		t.Errorf("listing again: %d describes, %d results read, %d queries; want the running run described and queried once, nothing read of the ended one", d, g, q)
	}
	for id, st := range first {
		a := again[id]
		if a.Status != st.Status || a.Ended != st.Ended || a.Node != st.Node || a.Workflow != st.Workflow || (a.Question == nil) != (st.Question == nil) {
			t.Errorf("%s listed again as %+v, first as %+v", id, a, st)
		}
	}
	if st := again["261124-ended"]; st.Status != store.StatusDone {
		t.Errorf("the ended run is %s", st.Status)
	}
	if st := again["261124-asking"]; st.Question == nil {
		t.Errorf("the run asking should be listed with its question: %+v", st)
	}
}

// On a real server: an Update claiming the page's channel, sent by a
// plain Temporal client, is recorded as an answer through Temporal with
// the client's identity as the server recorded it, the claim kept as
// claimed_channel; azero's own client, sealing its answer with the
// worker's answer key, keeps the web channel. A refused answer comes back
// not retryable.
func TestTemporalUpdateClaimingWebIsRecordedAsTemporal(t *testing.T) {
	srv := temporaltest.NewServer(temporaltest.WithT(t))
	c := srv.NewClientWithOptions(client.Options{Logger: quiet{}, Identity: "worker-client"})
	_, dir := startWorker(t, c, toyRegistry(t, 0), "worker-a")
	key, err := answerkey.Load(dir) // the worker's own key: azero serve sharing its state directory
	if err != nil {
		t.Fatal(err)
	}
	plain := &Client{C: srv.NewClientWithOptions(client.Options{Logger: quiet{}, Identity: "mallory@laptop"}), Poll: 50 * time.Millisecond}
	azero := &Client{C: srv.NewClientWithOptions(client.Options{Logger: quiet{}, Identity: "azero-serve@box"}), Poll: 50 * time.Millisecond, Key: key}
	ctx, cancel := context.WithTimeout(t.Context(), testenv.Patience)
	defer cancel()
	claim := human.Answer{Gate: "check", Key: "approve", Channel: human.ChannelWeb, By: "127.0.0.1:5000 (Firefox)",
		RemoteAddr: "127.0.0.1:5000", UserAgent: "Firefox"}

	for _, r := range []struct {
		id                  string
		cl                  *Client
		channel, claimed    string
		by, identity, agent string
	}{
		{"261124-plain", plain, human.ChannelTemporal, human.ChannelWeb, "Temporal client mallory@laptop", "mallory@laptop", ""},
		{"261124-azero", azero, human.ChannelWeb, "", claim.By, "azero-serve@box", "Firefox"},
	} {
		raw, _ := json.Marshal(toy{Dir: t.TempDir()})
		if err := r.cl.Start(ctx, Input{RunID: r.id, Workflow: toyName, State: raw}); err != nil {
			t.Fatal(err)
		}
		waiting, err := r.cl.Follow(ctx, r.id, nil)
		if err != nil || waiting.Question == nil || waiting.Question.Nonce == "" {
			t.Fatalf("%s should wait at its gate with a nonce: %+v %v", r.id, waiting.Question, err)
		}
		if r.id == "261124-plain" {
			// A misspelt word is refused, and not retryable.
			h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: r.id, UpdateName: UpdateAnswer,
				Args: []any{human.Answer{Gate: "check", Key: "aprove"}}, WaitForStage: client.WorkflowUpdateStageCompleted})
			if err == nil {
				err = h.Get(ctx, nil)
			}
			var app *temporal.ApplicationError
			if !errors.As(err, &app) || app.Type() != errTypeInvalid || !app.NonRetryable() {
				t.Errorf("a misspelt word: %v, want a non-retryable %s", err, errTypeInvalid)
			}
		}
		if reply, err := r.cl.Answer(ctx, r.id, claim); err != nil || reply.Decision != "APPROVED" {
			t.Fatalf("%s: the approval: %+v %v", r.id, reply, err)
		}
		var res Result
		if err := c.GetWorkflow(ctx, r.id, "").Get(ctx, &res); err != nil || res.Status != store.StatusDone {
			t.Fatalf("%s: %s, %v", r.id, res.Status, err)
		}
	}
	recs := auditRecords(t, filepath.Join(dir, audit.FileName), "gate_decision")
	if len(recs) != 2 {
		t.Fatalf("want 2 decisions, got %v", recs)
	}
	want := map[string]map[string]any{
		"261124-plain": {"channel": human.ChannelTemporal, "claimed_channel": human.ChannelWeb, "by": "Temporal client mallory@laptop",
			"client_identity": "mallory@laptop", "remote_addr": nil, "user_agent": nil},
		"261124-azero": {"channel": human.ChannelWeb, "claimed_channel": nil, "by": claim.By, "client_identity": "azero-serve@box",
			"remote_addr": claim.RemoteAddr, "user_agent": claim.UserAgent},
	}
	for _, rec := range recs {
		w, ok := want[fmt.Sprint(rec["run_id"])]
		if !ok {
			t.Fatalf("a decision for another run: %v", rec)
		}
		for k, v := range w {
			if rec[k] != v {
				t.Errorf("%s: gate_decision %s = %v, want %v", rec["run_id"], k, rec[k], v)
			}
		}
	}
}
