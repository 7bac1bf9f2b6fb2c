package temporal

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/azero-dev/azero/internal/answerkey"
	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/store"
)

// toy is the state of a small graph that exercises what the engine does:
// work steps with effects on disk, a gate, loops, failures.
type toy struct {
	Dir        string `json:"dir"`
	Loops      int    `json:"loops"`       // how often "work" loops before the gate
	Done       int    `json:"done"`        // work steps done
	FailTimes  int    `json:"fail_times"`  // "work" fails this often first (counted on disk)
	Unattended bool   `json:"unattended"`  // the gate needs nobody
	NeedHuman  bool   `json:"need_human"`  // "work" needs a human the first time
	AbortNode  bool   `json:"abort_node"`  // "work" aborts
	Decision   string `json:"decision"`    // the gate's decision
	NoLimitHit bool   `json:"no_limit"`    // unused by the graph; shows extra fields travel
	Answered   string `json:"answered_by"` // the gate's answer channel
	SlowMS     int    `json:"slow_ms"`     // "work" takes this long (a model call, a test run)
}

const toyName = "toy"

func effect(dir, line string) error {
	f, err := os.OpenFile(filepath.Join(dir, "effects.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = fmt.Fprintln(f, line)
	return err
}

func effects(t *testing.T, dir string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "effects.log"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

// countFile bumps a counter kept on disk and returns its new value.
func countFile(dir, name string) int {
	p := filepath.Join(dir, name)
	b, _ := os.ReadFile(p)
	n := len(b) + 1
	_ = os.WriteFile(p, []byte(strings.Repeat("x", n)), 0o644)
	return n
}

func toyGraph(maxVisits int) *flow.Graph[toy] {
	g := flow.New[toy](toyName, "work").
		Node("work", func(ctx context.Context, s *toy) (string, error) {
			if s.AbortNode {
				return "", fmt.Errorf("the human said no: %w", flow.ErrAborted)
			}
			if s.NeedHuman && countFile(s.Dir, "needhuman") == 1 {
				return "", &human.NobodyError{Reason: "a file write needs approval"}
			}
			if s.FailTimes > 0 && countFile(s.Dir, "failures") <= s.FailTimes {
				return "", errors.New("the model service is down")
			}
			select {
			case <-time.After(time.Duration(s.SlowMS) * time.Millisecond):
			case <-ctx.Done():
				return "", context.Cause(ctx)
			}
			s.Done++
			if err := effect(s.Dir, fmt.Sprintf("work %d %s", s.Done, flow.RunID(ctx))); err != nil {
				return "", err
			}
			if s.Done <= s.Loops {
				return "work", nil
			}
			return "check", nil
		}, "work", "check").
		Gate("check", func(ctx context.Context, s *toy) (human.Question, error) {
			q := human.Question{Kind: human.Word, Prompt: "Type approve or reject", Title: fmt.Sprintf("%d steps done", s.Done),
				Options: []human.Option{{Key: "approve", Decision: "APPROVED"}, {Key: "reject", Decision: "REJECTED"}},
				Facts:   map[string]any{"steps_done": s.Done}}
			if s.Unattended {
				q.Unattended = &human.Option{Key: "pass", Decision: "NOT_REQUIRED"}
			}
			return q, nil
		}, func(s *toy, q human.Question, a human.Answer) (string, error) {
			o, _ := q.Option(a.Key)
			s.Decision, s.Answered = o.Decision, a.Channel
			return "finish", nil
		}, "finish").
		Node("finish", func(ctx context.Context, s *toy) (string, error) {
			return flow.End, effect(s.Dir, "finish "+s.Decision)
		}, flow.End).
		Finish(func(s *toy) error {
			if s.Decision == "REJECTED" {
				return fmt.Errorf("rejected at the gate: %w", flow.ErrAborted)
			}
			return nil
		})
	if maxVisits > 0 {
		g.MaxVisits("work", maxVisits)
	}
	return g
}

func toyRegistry(t testing.TB, maxVisits int) *Registry {
	t.Helper()
	reg := NewRegistry()
	err := Register(reg, Definition[toy]{
		Shape: toyGraph(maxVisits),
		Build: func(ctx context.Context, run Run, s *toy) (*flow.Graph[toy], error) { return toyGraph(maxVisits), nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// testWorker is a worker's activities over a real store, audit log and
// answer key. The test environment has no history to read the identity
// of an Update's client from: the server tests check that.
type testWorker struct {
	acts     *activities
	auditLog string
	st       *store.Store
	key      *answerkey.Key
}

func newTestWorker(t testing.TB, reg *Registry, name string) *testWorker {
	t.Helper()
	ws := newWorkerState(t)
	key, err := answerkey.Load(ws.dir)
	if err != nil {
		t.Fatal(err)
	}
	me := WorkerRef{Queue: OwnQueue(DefaultTaskQueue, name), Identity: name}
	return &testWorker{st: ws.store, auditLog: ws.auditLog, key: key,
		acts: &activities{reg: reg, store: ws.store, audit: ws.audit, stateDir: ws.dir, me: me, now: time.Now, key: key}}
}

// workerState is a worker's own state directory with its store and audit
// log, closed when the test ends.
type workerState struct {
	dir, auditLog string
	store         *store.Store
	audit         *audit.Logger
}

func newWorkerState(t testing.TB) workerState {
	t.Helper()
	ws := workerState{dir: t.TempDir()}
	var err error
	if ws.store, err = store.Open(context.Background(), filepath.Join(ws.dir, store.FileName), store.Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.store.Close() })
	ws.auditLog = filepath.Join(ws.dir, audit.FileName)
	if ws.audit, err = audit.Open(ws.auditLog, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.audit.Close() })
	return ws
}

func (w *testWorker) register(env *testsuite.TestWorkflowEnvironment) {
	env.RegisterActivityWithOptions(w.acts.Node, activity.RegisterOptions{Name: activityNode})
	env.RegisterActivityWithOptions(w.acts.Ask, activity.RegisterOptions{Name: activityAsk})
	env.RegisterActivityWithOptions(w.acts.Decision, activity.RegisterOptions{Name: activityDecision})
	env.RegisterActivityWithOptions(w.acts.Finish, activity.RegisterOptions{Name: activityFinish})
}

// auditRecords reads the audit log's records of one event.
func auditRecords(t *testing.T, path, name string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		if rec["event"] == name {
			out = append(out, rec)
		}
	}
	return out
}

type toyEnv struct {
	env *testsuite.TestWorkflowEnvironment
	w   *testWorker
	dir string
}

func newToyEnv(t *testing.T, maxVisits int) *toyEnv {
	t.Helper()
	var ts testsuite.WorkflowTestSuite
	ts.SetLogger(quiet{})
	env := ts.NewTestWorkflowEnvironment()
	reg := toyRegistry(t, maxVisits)
	d, _ := reg.get(toyName)
	env.RegisterWorkflowWithOptions(workflowFunc(d), workflow.RegisterOptions{Name: toyName})
	w := newTestWorker(t, reg, "worker-a")
	w.register(env)
	return &toyEnv{env: env, w: w, dir: t.TempDir()}
}

func (te *toyEnv) start(t *testing.T, s toy, o Options) {
	t.Helper()
	s.Dir = te.dir
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	te.env.ExecuteWorkflow(toyName, Input{RunID: "261124-toyrun", Workflow: toyName, State: raw, Options: o})
}

func (te *toyEnv) status(t *testing.T) Status {
	t.Helper()
	v, err := te.env.QueryWorkflow(QueryStatus)
	if err != nil {
		t.Fatal(err)
	}
	var st Status
	if err := v.Get(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// outcome is what became of an Update: rejected by the validator, or
// accepted and completed (failed: the handler's error). The test
// environment delivers it after the callback that sent the Update.
type outcome struct {
	accepted, completed bool
	rejected, failed    error
}

// update sends an Update.
func (te *toyEnv) update(name string, args ...any) *outcome {
	o := &outcome{}
	te.env.UpdateWorkflow(name, fmt.Sprintf("u-%d", time.Now().UnixNano()), &testsuite.TestUpdateCallback{
		OnAccept:   func() { o.accepted = true },
		OnReject:   func(err error) { o.rejected = err },
		OnComplete: func(r any, err error) { o.completed, o.failed = true, err },
	}, args...)
	return o
}

// ok fails the test unless the Update was accepted and succeeded.
func (o *outcome) ok(t *testing.T, what string) {
	t.Helper()
	if !o.accepted || !o.completed || o.rejected != nil || o.failed != nil {
		t.Errorf("%s: accepted %v, completed %v, rejected %v, failed %v", what, o.accepted, o.completed, o.rejected, o.failed)
	}
}

func (te *toyEnv) result(t *testing.T) Result {
	t.Helper()
	if !te.env.IsWorkflowCompleted() {
		t.Fatal("the workflow did not complete")
	}
	if err := te.env.GetWorkflowError(); err != nil {
		t.Fatalf("workflow error: %v", err)
	}
	var res Result
	if err := te.env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	return res
}

func TestGateWaitsForAValidAnswer(t *testing.T) {
	te := newToyEnv(t, 0)
	var waiting Status
	var wrong, partial, unattended, otherGate, approved *outcome
	te.env.RegisterDelayedCallback(func() {
		waiting = te.status(t)
		wrong = te.update(UpdateAnswer, human.Answer{Gate: "check", Key: "yes", Channel: human.ChannelTemporal})
		partial = te.update(UpdateAnswer, human.Answer{Gate: "check", Key: "appr", Channel: human.ChannelTemporal})
		unattended = te.update(UpdateAnswer, human.Answer{Gate: "check", Key: "pass", Channel: human.ChannelUnattended})
		otherGate = te.update(UpdateAnswer, human.Answer{Gate: "review", Key: "approve", Channel: human.ChannelTemporal})
		approved = te.update(UpdateAnswer, human.Answer{Gate: "check", Key: "approve", Channel: human.ChannelTemporal, By: "tester"})
	}, time.Minute)
	te.start(t, toy{Loops: 2}, Options{})

	if waiting.Status != store.StatusWaiting || waiting.Question == nil || waiting.Question.Gate != "check" {
		t.Fatalf("before the answer the run should wait at check with its question, got %s at %s (question %v)", waiting.Status, waiting.Node, waiting.Question)
	}
	if waiting.Question.Title != "3 steps done" {
		t.Errorf("the pending question should be the one ask built, got title %q", waiting.Question.Title)
	}
	for name, o := range map[string]*outcome{"a wrong word": wrong, "a partial word": partial, "an unattended answer": unattended, "an answer for another gate": otherGate} {
		if o.rejected == nil || o.accepted {
			t.Errorf("%s was not rejected by the validator", name)
		}
	}
	approved.ok(t, "approve")
	res := te.result(t)
	if res.Status != store.StatusDone || res.Node != flow.End {
		t.Fatalf("the run should be done at END, got %s at %s (%s)", res.Status, res.Node, res.Error)
	}
	var s toy
	if err := json.Unmarshal(res.State, &s); err != nil {
		t.Fatal(err)
	}
	if s.Decision != "APPROVED" || s.Answered != human.ChannelTemporal {
		t.Errorf("decide should have seen the approval through the temporal channel, got %q via %q", s.Decision, s.Answered)
	}
	got := effects(t, te.dir)
	want := []string{"work 1 261124-toyrun", "work 2 261124-toyrun", "work 3 261124-toyrun", "finish APPROVED"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("effects = %q, want %q", got, want)
	}
	recs := auditRecords(t, te.w.auditLog, "gate_decision")
	if len(recs) != 1 {
		t.Fatalf("want exactly one gate_decision record (refused answers are never recorded), got %d", len(recs))
	}
	r := recs[0]
	// "by" is what the client said of itself, proven by nothing: the
	// record names the client as Temporal does (unknown here, see
	// TestTemporalUpdateClaimingWebIsRecordedAsTemporal).
	for k, v := range map[string]any{"gate": "check", "decision": "APPROVED", "answer": "approve", "channel": "temporal",
		"worker": "worker-a", "by": "a Temporal client", "run_id": "261124-toyrun", "steps_done": float64(3)} {
		if r[k] != v {
			t.Errorf("gate_decision %s = %v, want %v", k, r[k], v)
		}
	}
}

func TestRejectAbortsTheRun(t *testing.T) {
	te := newToyEnv(t, 0)
	var rejected *outcome
	te.env.RegisterDelayedCallback(func() {
		rejected = te.update(UpdateAnswer, human.Answer{Gate: "check", Key: "reject", Channel: human.ChannelTemporal})
	}, time.Minute)
	te.start(t, toy{}, Options{})
	rejected.ok(t, "reject")
	res := te.result(t)
	if res.Status != store.StatusAborted || !strings.Contains(res.Error, "rejected at the gate") {
		t.Fatalf("want aborted by the finish judge, got %s (%s)", res.Status, res.Error)
	}
	if recs := auditRecords(t, te.w.auditLog, "run_finished"); len(recs) != 1 || recs[0]["status"] != "aborted" {
		t.Errorf("want one run_finished record with status aborted, got %v", recs)
	}
}

func TestUnattendedGatePassesWithoutAnUpdate(t *testing.T) {
	te := newToyEnv(t, 0)
	te.start(t, toy{Unattended: true}, Options{})
	res := te.result(t)
	var s toy
	if err := json.Unmarshal(res.State, &s); err != nil {
		t.Fatal(err)
	}
	if res.Status != store.StatusDone || s.Decision != "NOT_REQUIRED" || s.Answered != human.ChannelUnattended {
		t.Fatalf("want done through the unattended answer, got %s, decision %q via %q", res.Status, s.Decision, s.Answered)
	}
	recs := auditRecords(t, te.w.auditLog, "gate_decision")
	if len(recs) != 1 || recs[0]["channel"] != human.ChannelUnattended {
		t.Fatalf("the unattended decision must be audited with its channel, got %v", recs)
	}
}

func TestFailedNodeWaitsForResume(t *testing.T) {
	te := newToyEnv(t, 0)
	var failed Status
	var early, resumed, approved *outcome
	te.env.RegisterDelayedCallback(func() {
		failed = te.status(t)
		early = te.update(UpdateAnswer, human.Answer{Gate: "check", Key: "approve", Channel: human.ChannelTemporal})
		resumed = te.update(UpdateResume)
	}, time.Hour)
	te.env.RegisterDelayedCallback(func() {
		approved = te.update(UpdateAnswer, human.Answer{Gate: "check", Key: "approve", Channel: human.ChannelTemporal})
	}, 2*time.Hour)
	// Three attempts fail (the retry policy's), the fourth, after resume,
	// succeeds.
	te.start(t, toy{FailTimes: 3}, Options{Attempts: 3})
	if failed.Status != store.StatusFailed || failed.Node != "work" || !strings.Contains(failed.Error, "model service is down") {
		t.Fatalf("after its attempts the run should be failed at work with the node's error, got %s at %s (%q)", failed.Status, failed.Node, failed.Error)
	}
	if early.rejected == nil {
		t.Error("an answer to a run that asks nothing was accepted")
	}
	resumed.ok(t, "resume")
	approved.ok(t, "approve")
	res := te.result(t)
	if res.Status != store.StatusDone {
		t.Fatalf("after resume the run should finish, got %s (%s)", res.Status, res.Error)
	}
	if got := effects(t, te.dir); len(got) != 2 || got[0] != "work 1 261124-toyrun" {
		t.Errorf("failed attempts must leave no effect and the work step run once, got %q", got)
	}
}

func TestNodeNeedingAHumanWaits(t *testing.T) {
	te := newToyEnv(t, 0)
	var st Status
	var resumed *outcome
	te.env.RegisterDelayedCallback(func() {
		st = te.status(t)
		resumed = te.update(UpdateResume)
	}, time.Hour)
	te.env.RegisterDelayedCallback(func() {
		te.update(UpdateAnswer, human.Answer{Gate: "check", Key: "approve", Channel: human.ChannelTemporal})
	}, 2*time.Hour)
	te.start(t, toy{NeedHuman: true}, Options{})
	if st.Status != store.StatusWaiting || st.Question != nil || !strings.Contains(st.Error, "needs approval") {
		t.Fatalf("a node needing a human should leave the run waiting without a question, got %s (%q, question %v)", st.Status, st.Error, st.Question)
	}
	resumed.ok(t, "resume")
	if res := te.result(t); res.Status != store.StatusDone {
		t.Fatalf("want done after resume, got %s", res.Status)
	}
}

func TestAbortingNodeEndsTheRun(t *testing.T) {
	te := newToyEnv(t, 0)
	te.start(t, toy{AbortNode: true}, Options{})
	res := te.result(t)
	if res.Status != store.StatusAborted || res.Node != "work" {
		t.Fatalf("want aborted at work, got %s at %s", res.Status, res.Node)
	}
}

func TestLoopLimitStopsTheRun(t *testing.T) {
	te := newToyEnv(t, 3)
	te.start(t, toy{Loops: 10}, Options{})
	res := te.result(t)
	if res.Status != store.StatusFailed || !strings.Contains(res.Error, flow.ErrLoopLimit.Error()) {
		t.Fatalf("want failed by the loop limit, got %s (%s)", res.Status, res.Error)
	}
	if got := effects(t, te.dir); len(got) != 3 {
		t.Errorf("work should have run 3 times, got %d", len(got))
	}
}

func TestLongRunContinuesAsNew(t *testing.T) {
	te := newToyEnv(t, 0)
	te.start(t, toy{Loops: 10}, Options{StepsPerExecution: 4})
	if !te.env.IsWorkflowCompleted() {
		t.Fatal("the first execution did not end")
	}
	err := te.env.GetWorkflowError()
	var can *workflow.ContinueAsNewError
	if !errors.As(err, &can) {
		t.Fatalf("want continue-as-new after 4 steps, got %v", err)
	}
	if can.WorkflowType.Name != toyName {
		t.Errorf("continued as %q", can.WorkflowType.Name)
	}
	var next Input
	if err := json.Unmarshal(can.Input.GetPayloads()[0].GetData(), &next); err != nil {
		t.Fatal(err)
	}
	if next.Carry == nil || next.Carry.Node != "work" || next.Carry.Steps != 4 || next.Carry.Visits["work"] != 4 || len(next.Carry.History) != 4 {
		t.Fatalf("the carry should stand at work after 4 steps, got %+v", next.Carry)
	}
	var s toy
	if err := json.Unmarshal(next.State, &s); err != nil || s.Done != 4 {
		t.Fatalf("the state should travel with the run: done %d (%v)", s.Done, err)
	}
	if next.Carry.Holder.Identity != "worker-a" {
		t.Errorf("the holder should travel with the run, got %+v", next.Carry.Holder)
	}

	// The next execution picks up where the first stopped.
	te2 := newToyEnv(t, 0)
	te2.dir = te.dir
	te2.env.RegisterDelayedCallback(func() {
		te2.update(UpdateAnswer, human.Answer{Gate: "check", Key: "approve", Channel: human.ChannelTemporal})
	}, time.Minute)
	next.Options.StepsPerExecution = 100
	te2.env.ExecuteWorkflow(toyName, next)
	res := te2.result(t)
	if res.Status != store.StatusDone || res.Steps != 13 {
		t.Fatalf("want done after 13 steps in all, got %s after %d", res.Status, res.Steps)
	}
	if got := effects(t, te.dir); len(got) != 12 || got[10] != "work 11 261124-toyrun" {
		t.Errorf("every work step should have run once across executions, got %q", got)
	}
}

// failing is a writer that fails until it is told to work.
type failing struct {
	works bool
	buf   strings.Builder
}

func (f *failing) Write(p []byte) (int, error) {
	if !f.works {
		return 0, errors.New("disk full")
	}
	return f.buf.Write(p)
}

func TestDecisionNotRecordedIsNotActedOn(t *testing.T) {
	te := newToyEnv(t, 0)
	w := &failing{}
	te.w.acts.audit = audit.New(w, nil)
	var first, second *outcome
	var after Status
	var effectsThen []string
	te.env.RegisterDelayedCallback(func() {
		first = te.update(UpdateAnswer, human.Answer{Gate: "check", Key: "approve", Channel: human.ChannelTemporal})
	}, time.Minute)
	te.env.RegisterDelayedCallback(func() {
		after = te.status(t)
		effectsThen = effects(t, te.dir)
		w.works = true
		second = te.update(UpdateAnswer, human.Answer{Gate: "check", Key: "approve", Channel: human.ChannelTemporal})
	}, time.Hour)
	te.start(t, toy{}, Options{})
	if first == nil || !first.accepted || first.failed == nil || !strings.Contains(first.failed.Error(), "could not be recorded in the audit log") {
		t.Fatalf("the first answer should fail because its decision could not be audited, got %+v", first)
	}
	if after.Status != store.StatusWaiting || after.Question == nil || after.Question.Gate != "check" {
		t.Fatalf("the question should still be pending after the failed record, got %s (%v)", after.Status, after.Question)
	}
	if len(effectsThen) != 1 {
		t.Fatalf("nothing after the gate may run before its decision is recorded, effects %q", effectsThen)
	}
	second.ok(t, "approve again")
	if res := te.result(t); res.Status != store.StatusDone {
		t.Fatalf("want done, got %s", res.Status)
	}
	if n := strings.Count(w.buf.String(), `"gate_decision"`); n != 1 {
		t.Errorf("want one recorded decision, got %d", n)
	}
}

// appType is the type of the ApplicationError an Update was refused with.
func appType(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return app.Type()
	}
	return ""
}

func TestValidatorRefusalsAreTyped(t *testing.T) {
	te := newToyEnv(t, 0)
	var waiting Status
	var wrong, otherGate, staleQuestion, approved, second *outcome
	te.env.RegisterDelayedCallback(func() {
		waiting = te.status(t)
		wrong = te.update(UpdateAnswer, human.Answer{Gate: "check", Key: "aprove", Channel: human.ChannelWeb})
		otherGate = te.update(UpdateAnswer, human.Answer{Gate: "review", Key: "approve", Channel: human.ChannelWeb})
		staleQuestion = te.update(UpdateAnswer, human.Answer{Gate: "check", QuestionID: "0123456789abcdef01234567", Key: "approve", Channel: human.ChannelWeb})
		approved = te.update(UpdateAnswer, human.Answer{Gate: "check", QuestionID: waiting.Question.ID, Key: "approve", Channel: human.ChannelWeb})
		second = te.update(UpdateAnswer, human.Answer{Gate: "check", Key: "reject", Channel: human.ChannelTemporal})
	}, time.Minute)
	te.start(t, toy{}, Options{})

	q := waiting.Question
	if q == nil || q.ID == "" || q.ID != human.Fingerprint(*q) {
		t.Fatalf("the pending question should carry its fingerprint as id, got %+v", q)
	}
	for name, c := range map[string]struct {
		o    *outcome
		want string
	}{
		"a misspelt word":          {wrong, errTypeInvalid},
		"another gate":             {otherGate, errTypeNotAsked},
		"a question since changed": {staleQuestion, errTypeNotAsked},
		"a second answer":          {second, errTypeAnswered},
	} {
		if c.o == nil || c.o.rejected == nil || c.o.accepted {
			t.Errorf("%s was not rejected by the validator: %+v", name, c.o)
			continue
		}
		if got := appType(c.o.rejected); got != c.want {
			t.Errorf("%s: refused as %q, want %q (%v)", name, got, c.want, c.o.rejected)
		}
		// Sending the same answer again cannot help: nothing retries it.
		var app *temporal.ApplicationError
		if errors.As(c.o.rejected, &app) && !app.NonRetryable() {
			t.Errorf("%s: the refusal is retryable, want non-retryable (%v)", name, c.o.rejected)
		}
	}
	approved.ok(t, "approve with the question's id")
	if res := te.result(t); res.Status != store.StatusDone {
		t.Fatalf("want done, got %s (%s)", res.Status, res.Error)
	}
}

func TestRunReportsEventsAndMirrorsOnTheWorker(t *testing.T) {
	te := newToyEnv(t, 0)
	te.env.RegisterDelayedCallback(func() {
		te.update(UpdateAnswer, human.Answer{Gate: "check", Key: "approve", Channel: human.ChannelTemporal})
	}, time.Minute)
	te.start(t, toy{Loops: 1}, Options{})
	res := te.result(t)
	if res.Status != store.StatusDone {
		t.Fatalf("want done, got %s (%s)", res.Status, res.Error)
	}
	// The run's events, in order: what the engine and the activities
	// reported, numbered.
	var kinds []string
	for i, ev := range res.Events {
		if ev.Seq != int64(i+1) || ev.RunID != "261124-toyrun" || ev.At.IsZero() {
			t.Errorf("event %d = %+v: want seq %d, the run's id and a time", i, ev, i+1)
		}
		kinds = append(kinds, string(ev.Kind)+":"+ev.Node)
	}
	want := []string{"run_started:", "node_started:work", "node_done:work", "node_started:work", "node_done:work",
		"node_started:check", "question:check", "answer:check", "node_done:check", "node_started:finish", "node_done:finish", "finished:END"}
	if strings.Join(kinds, " ") != strings.Join(want, " ") {
		t.Errorf("events\n got %v\nwant %v", kinds, want)
	}
	for _, h := range res.History {
		if h.Outcome == "ok" && (h.Worker != "worker-a" || h.Finished.Before(h.Started) || h.DurationMS != h.Finished.Sub(h.Started).Milliseconds()) {
			t.Errorf("step %+v: want the worker and a duration in ms", h)
		}
	}
	// The worker's store keeps its bookkeeping of the run: marked as a
	// Temporal run, ended as the run did, with the steps it ran.
	r, err := te.w.st.GetRun(context.Background(), "261124-toyrun")
	if err != nil {
		t.Fatal(err)
	}
	if r.Meta[MetaEngine] != EngineName || r.Status != store.StatusDone || r.Lease.Token != "" {
		t.Errorf("the worker's row = status %s, meta %v, lease %q: want done, engine temporal, no lease", r.Status, r.Meta, r.Lease.Token)
	}
	hist, err := te.w.st.History(context.Background(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	oks := 0
	for _, h := range hist {
		if h.Outcome == "ok" {
			oks++
		}
	}
	if oks != 3 { // work, work, finish: the gate is decided in the workflow
		t.Errorf("want the 3 nodes the worker ran in its store's history, got %d of %+v", oks, hist)
	}
}

// talk is a graph whose one node makes a model call (recorded as the
// roles package records one) and fails its first attempt after it.
type talk struct {
	Dir string `json:"dir"`
}

func talkRegistry(t *testing.T, st *store.Store, stops bool) *Registry {
	t.Helper()
	build := func() *flow.Graph[talk] {
		return flow.New[talk]("talk", "speak").
			Node("speak", func(ctx context.Context, s *talk) (string, error) {
				if err := st.RecordCall(ctx, store.Call{RunID: flow.RunID(ctx), Node: flow.CurrentNode(ctx), Role: "coder",
					Model: "mock:scripted", Attempt: flow.Attempt(ctx)}); err != nil {
					return "", err
				}
				if countFile(s.Dir, "tries") == 1 {
					return "", errMerge
				}
				return flow.End, nil
			}, flow.End)
	}
	reg := NewRegistry()
	d := Definition[talk]{Shape: build(), Build: func(context.Context, Run, *talk) (*flow.Graph[talk], error) { return build(), nil }}
	if stops {
		d.Stops = func(err error) bool { return errors.Is(err, errMerge) }
	}
	if err := Register(reg, d); err != nil {
		t.Fatal(err)
	}
	return reg
}

var errMerge = errors.New("your checkout holds changes the merge would touch")

func TestRetriedNodeAsksTheSameTurn(t *testing.T) {
	var ts testsuite.WorkflowTestSuite
	ts.SetLogger(quiet{})
	env := ts.NewTestWorkflowEnvironment()
	w := newTestWorker(t, NewRegistry(), "worker-a")
	reg := talkRegistry(t, w.st, false)
	w.acts.reg = reg
	d, _ := reg.get("talk")
	env.RegisterWorkflowWithOptions(workflowFunc(d), workflow.RegisterOptions{Name: "talk"})
	w.register(env)
	raw, _ := json.Marshal(talk{Dir: t.TempDir()})
	env.ExecuteWorkflow("talk", Input{RunID: "261124-talk", Workflow: "talk", State: raw})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	calls, err := w.st.Calls(ctx, "261124-talk")
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 2 {
		t.Fatalf("both attempts called the model: want 2 calls, got %d", len(calls))
	}
	// Only the call of the attempt that completed is a turn of the run's
	// conversation: a retried node asks its turn again.
	n, err := w.st.Turns(ctx, "261124-talk", "coder", "")
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("want 1 turn after the retried node completed, got %d", n)
	}
}

func TestStoppingErrorIsNotRetried(t *testing.T) {
	var ts testsuite.WorkflowTestSuite
	ts.SetLogger(quiet{})
	env := ts.NewTestWorkflowEnvironment()
	w := newTestWorker(t, NewRegistry(), "worker-a")
	reg := talkRegistry(t, w.st, true)
	w.acts.reg = reg
	d, _ := reg.get("talk")
	env.RegisterWorkflowWithOptions(workflowFunc(d), workflow.RegisterOptions{Name: "talk"})
	w.register(env)
	dir := t.TempDir()
	raw, _ := json.Marshal(talk{Dir: dir})
	var stopped Status
	var resumed *outcome
	te := &toyEnv{env: env, w: w}
	env.RegisterDelayedCallback(func() {
		stopped = te.status(t)
		resumed = te.update(UpdateResume)
	}, time.Hour)
	env.ExecuteWorkflow("talk", Input{RunID: "261124-talk", Workflow: "talk", State: raw, Options: Options{Attempts: 5}})
	if stopped.Status != store.StatusFailed || stopped.Node != "speak" || !strings.Contains(stopped.Error, errMerge.Error()) {
		t.Fatalf("the run should stop failed at speak with the node's error, got %s at %s (%q)", stopped.Status, stopped.Node, stopped.Error)
	}
	resumed.ok(t, "resume")
	if res := te.result(t); res.Status != store.StatusDone {
		t.Fatalf("want done after resume, got %s (%s)", res.Status, res.Error)
	}
	// Tried once, stopped, tried again after the resume: never retried
	// by the retry policy in between.
	if n := countFile(dir, "tries"); n != 3 { // countFile itself adds one
		t.Errorf("want 2 tries of speak, got %d", n-1)
	}
}

func TestRecordPresentsARunAsTheStoreDoes(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	q := &human.Question{Gate: "human_review", Kind: human.Word, Prompt: "Merge this change?",
		Options: []human.Option{{Key: "approve", Decision: "APPROVED"}}}
	q.ID = human.Fingerprint(*q)
	for _, c := range []struct {
		name     string
		st       Status
		status   store.Status
		live     bool
		question bool
	}{
		{"a run asking a question waits", Status{RunID: "r1", Status: store.StatusRunning, Question: q, Holder: WorkerRef{Identity: "w1"}}, store.StatusWaiting, true, true},
		{"a running run is driven by its worker", Status{RunID: "r2", Status: store.StatusRunning, Holder: WorkerRef{Identity: "w1"}}, store.StatusRunning, true, false},
		{"a failed run not ended waits for a resume, driven", Status{RunID: "r3", Status: store.StatusFailed}, store.StatusFailed, true, false},
		{"an ended run is driven by nobody", Status{RunID: "r4", Status: store.StatusDone, Ended: true}, store.StatusDone, false, false},
		{"a run whose status could not be read counts as running", Status{RunID: "r5", Error: "no worker"}, store.StatusRunning, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.st.Started = start
			c.st.Meta = map[string]string{"repo": "/src/x"}
			r := Record(c.st)
			if _, leaked := c.st.Meta[MetaEngine]; leaked {
				t.Error("Record wrote into the status's meta")
			}
			runs := &Runs{}
			if r.Status != c.status || runs.LeaseLive(r) != c.live || (len(r.Question) > 0) != c.question {
				t.Errorf("record = status %s, live %v, question %v; want %s, %v, %v", r.Status, runs.LeaseLive(r), len(r.Question) > 0, c.status, c.live, c.question)
			}
			if r.Meta[MetaEngine] != EngineName || r.Meta["repo"] != "/src/x" || !r.CreatedAt.Equal(start) || !r.UpdatedAt.Equal(start) {
				t.Errorf("record meta %v, created %v, updated %v", r.Meta, r.CreatedAt, r.UpdatedAt)
			}
			if c.question {
				var got human.Question
				if err := json.Unmarshal(r.Question, &got); err != nil || got.ID != q.ID {
					t.Errorf("the record's question should be the run's, with its id: %v %+v", err, got)
				}
			}
		})
	}
}

func TestStepsAreTheStoresHistory(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	got := Steps(Status{History: []Step{
		{Node: "scaffold", Next: "red", Outcome: "ok", Worker: "w1", Started: at, Finished: at.Add(1500 * time.Millisecond), DurationMS: 1500},
		{Node: "red", Next: "red", Outcome: "moved", Worker: "w1", Started: at, Finished: at, Error: "worker w1 did not take azero.node"},
	}})
	if len(got) != 2 || got[0].Node != "scaffold" || got[0].Duration != 1500*time.Millisecond || got[0].DurationMS != 1500 ||
		got[1].Outcome != "moved" || got[1].Error == "" {
		t.Errorf("steps = %+v", got)
	}
}

// slow is an audit log's writer that takes its time (a log on a network
// disk).
type slow struct {
	delay time.Duration
	buf   strings.Builder
}

func (w *slow) Write(p []byte) (int, error) {
	time.Sleep(w.delay)
	return w.buf.Write(p)
}

// Every activity heartbeats while it works: a node busy longer than the
// heartbeat timeout (a model call, a test run), and recording a decision
// or the end on a slow disk, are not mistaken for a dead worker (which
// would move the run or fail the step).
func TestSlowActivitiesHeartbeat(t *testing.T) {
	te := newToyEnv(t, 0)
	const beat = 200 * time.Millisecond
	w := &slow{delay: 4 * beat}
	te.w.acts.audit = audit.New(w, nil)
	var approved *outcome
	te.env.RegisterDelayedCallback(func() {
		approved = te.update(UpdateAnswer, human.Answer{Gate: "check", Key: "approve", Channel: human.ChannelTemporal})
	}, time.Minute)
	te.start(t, toy{SlowMS: int(4 * beat / time.Millisecond)}, Options{Heartbeat: beat})
	approved.ok(t, "approve")
	res := te.result(t)
	if res.Status != store.StatusDone || res.Moves != 0 {
		t.Fatalf("want done without a move, got %s after %d moves (%s)", res.Status, res.Moves, res.Error)
	}
	for _, h := range res.History {
		if h.Outcome != "ok" {
			t.Errorf("step %s: %s (%s)", h.Node, h.Outcome, h.Error)
		}
	}
	if got := effects(t, te.dir); len(got) != 2 {
		t.Errorf("work and finish should each have run once, got %q", got)
	}
	for _, ev := range []string{"gate_decision", "run_finished"} {
		if n := strings.Count(w.buf.String(), `"`+ev+`"`); n != 1 {
			t.Errorf("want one %s record, got %d", ev, n)
		}
	}
}

// Every activity is scheduled with the timeouts and retry policy declared
// where the workflow calls it: a node gets the long node timeout, a
// question, a decision or the end a short one; all heartbeat; errors
// retrying cannot fix are not retried. The first activity goes to the
// shared queue, every later one to the holder's own.
func TestActivitiesDeclareTheirOptions(t *testing.T) {
	te := newToyEnv(t, 0)
	type started struct {
		name string
		info activity.Info
	}
	var seen []started
	te.env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		seen = append(seen, started{info.ActivityType.Name, *info})
	})
	te.env.RegisterDelayedCallback(func() {
		te.update(UpdateAnswer, human.Answer{Gate: "check", Key: "approve", Channel: human.ChannelTemporal})
	}, time.Minute)
	o := Options{NodeTimeout: 90 * time.Minute, Heartbeat: 45 * time.Second, Attempts: 4}
	te.start(t, toy{Loops: 1}, o)
	if res := te.result(t); res.Status != store.StatusDone {
		t.Fatalf("want done, got %s (%s)", res.Status, res.Error)
	}
	var names []string
	for _, s := range seen {
		names = append(names, s.name)
	}
	if want := []string{activityNode, activityNode, activityAsk, activityDecision, activityNode, activityFinish}; !slices.Equal(names, want) {
		t.Fatalf("activities %v, want %v", names, want)
	}
	own := OwnQueue(DefaultTaskQueue, "worker-a")
	for i, s := range seen {
		in := s.info
		wantTimeout := 10 * time.Minute
		if s.name == activityNode {
			wantTimeout = o.NodeTimeout
		}
		if in.StartToCloseTimeout != wantTimeout || in.HeartbeatTimeout != o.Heartbeat {
			t.Errorf("%d %s: start-to-close %v, heartbeat %v; want %v and %v", i, s.name, in.StartToCloseTimeout, in.HeartbeatTimeout, wantTimeout, o.Heartbeat)
		}
		if i == 0 && in.TaskQueue == own || i > 0 && in.TaskQueue != own {
			t.Errorf("%d %s ran on queue %q: the first activity goes to the shared queue, the later ones to the holder's %q", i, s.name, in.TaskQueue, own)
		}
	}
	// The test environment does not report an activity's retry policy:
	// read it where the workflow declares it. (The attempts themselves are
	// counted in TestFailedNodeWaitsForResume, the errors not retried in
	// TestStoppingErrorIsNotRetried.)
	for _, long := range []bool{true, false} {
		rp := (&driver{o: o.withDefaults()}).activityOptions(long).RetryPolicy
		if rp == nil || rp.MaximumAttempts != o.Attempts || rp.InitialInterval <= 0 || rp.BackoffCoefficient < 1 || rp.MaximumInterval < rp.InitialInterval {
			t.Errorf("retry policy %+v, want %d attempts with backoff", rp, o.Attempts)
			continue
		}
		for _, typ := range []string{errTypeNeedsHuman, errTypeAborted, errTypeAudit, errTypeFatal, errTypeStopped} {
			if !slices.Contains(rp.NonRetryableErrorTypes, typ) {
				t.Errorf("%s should not be retried (%v)", typ, rp.NonRetryableErrorTypes)
			}
		}
	}
}

// An answer sent by any Temporal client (the temporal CLI's workflow
// update) need not name its channel: it came through Temporal, and the
// decision record says so. Its word is still checked.
func TestAnswerWithoutAChannelIsTemporals(t *testing.T) {
	te := newToyEnv(t, 0)
	var wrong, approved *outcome
	te.env.RegisterDelayedCallback(func() {
		wrong = te.update(UpdateAnswer, human.Answer{Gate: "check", Key: "approved"})
		approved = te.update(UpdateAnswer, human.Answer{Gate: "check", Key: "approve", By: "ops"})
	}, time.Minute)
	te.start(t, toy{}, Options{})
	if wrong == nil || wrong.rejected == nil || appType(wrong.rejected) != errTypeInvalid {
		t.Errorf("a wrong word without a channel should be refused as invalid, got %+v", wrong)
	}
	approved.ok(t, "approve without a channel")
	res := te.result(t)
	var s toy
	if err := json.Unmarshal(res.State, &s); err != nil {
		t.Fatal(err)
	}
	if res.Status != store.StatusDone || s.Answered != human.ChannelTemporal {
		t.Fatalf("want done, answered through the temporal channel; got %s via %q", res.Status, s.Answered)
	}
	recs := auditRecords(t, te.w.auditLog, "gate_decision")
	if len(recs) != 1 || recs[0]["channel"] != human.ChannelTemporal || recs[0]["by"] != "a Temporal client" || recs[0]["worker"] != "worker-a" ||
		recs[0]["claimed_channel"] != nil {
		t.Errorf("the decision record should name the temporal channel, the client (not who it claims to be) and the worker: %v", recs)
	}
}

// The events a run keeps stay under a size that fits Temporal's payload
// limit, however many long ones its nodes report: the newest are kept,
// numbered in order.
func TestEventsKeptFitAPayload(t *testing.T) {
	t.Parallel()
	d, _ := toyRegistry(t, 0).get(toyName)
	dr := &driver{d: d, in: Input{RunID: "261124-big"}, now: time.Now}
	long := strings.Repeat("x", 2*eventText)
	data := json.RawMessage(`"` + strings.Repeat("d", eventData-16) + `"`)
	for range 2 * eventsKept {
		dr.emit(event.Event{Kind: event.TestResult, Text: long, Data: data})
	}
	raw, err := json.Marshal(dr.snapshot(true))
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) > 2<<20 {
		t.Errorf("the status weighs %d bytes, over Temporal's 2 MiB payload limit", len(raw))
	}
	if n := len(dr.events); n == 0 || n >= eventsKept {
		t.Fatalf("kept %d events: want the newest that fit", n)
	}
	last := dr.events[len(dr.events)-1]
	if last.Seq != int64(2*eventsKept) {
		t.Errorf("the last event kept is %d, want the newest, %d", last.Seq, 2*eventsKept)
	}
	for i := 1; i < len(dr.events); i++ {
		if dr.events[i].Seq != dr.events[i-1].Seq+1 {
			t.Fatalf("events kept out of order at %d", i)
		}
	}
}

// Anyone who can reach the cluster can send the answer Update, naming any
// channel, address and browser. Only an answer sealed with the worker's
// answer key for this asking of the question (azero's terminal and page
// seal theirs) keeps what it claims; any other is recorded, and decided,
// as an answer through Temporal, the claim kept as claimed_channel.
func TestUpdateKeepsItsChannelOnlyWithASeal(t *testing.T) {
	other, err := answerkey.Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	web := human.Answer{Gate: "check", Key: "approve", Channel: human.ChannelWeb, By: "127.0.0.1:5000 (Firefox)",
		RemoteAddr: "127.0.0.1:5000", UserAgent: "Firefox", At: time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)}
	terminal := human.Answer{Gate: "check", Key: "approve", Channel: human.ChannelTerminal, By: "terminal of ana@box", At: web.At}
	for _, c := range []struct {
		name string
		// answer builds the Update's answer for the question the run asks,
		// with the worker's key.
		answer     func(q human.Question, key *answerkey.Key) human.Answer
		channel    string
		claimed    string
		by         string
		remote, ua string
	}{
		{name: "web claimed without a seal", answer: func(q human.Question, _ *answerkey.Key) human.Answer { return web },
			channel: human.ChannelTemporal, claimed: human.ChannelWeb, by: "a Temporal client"},
		{name: "web sealed with the worker's key", answer: func(q human.Question, k *answerkey.Key) human.Answer { return k.Seal(runOfToy, q, web) },
			channel: human.ChannelWeb, by: web.By, remote: web.RemoteAddr, ua: web.UserAgent},
		{name: "terminal sealed with the worker's key", answer: func(q human.Question, k *answerkey.Key) human.Answer { return k.Seal(runOfToy, q, terminal) },
			channel: human.ChannelTerminal, by: terminal.By},
		{name: "web sealed with another key", answer: func(q human.Question, _ *answerkey.Key) human.Answer { return other.Seal(runOfToy, q, web) },
			channel: human.ChannelTemporal, claimed: human.ChannelWeb, by: "a Temporal client"},
		{name: "web sealed for an earlier asking of the question", answer: func(q human.Question, k *answerkey.Key) human.Answer {
			q.Nonce = questionNonce("an earlier execution", 1, q.ID)
			return k.Seal(runOfToy, q, web)
		}, channel: human.ChannelTemporal, claimed: human.ChannelWeb, by: "a Temporal client"},
		{name: "web sealed for another run", answer: func(q human.Question, k *answerkey.Key) human.Answer { return k.Seal("261124-other", q, web) },
			channel: human.ChannelTemporal, claimed: human.ChannelWeb, by: "a Temporal client"},
		{name: "web sealed, then its address changed", answer: func(q human.Question, k *answerkey.Key) human.Answer {
			a := k.Seal(runOfToy, q, web)
			a.RemoteAddr = "10.1.1.1:80"
			return a
		}, channel: human.ChannelTemporal, claimed: human.ChannelWeb, by: "a Temporal client"},
	} {
		t.Run(c.name, func(t *testing.T) {
			te := newToyEnv(t, 0)
			var sent *outcome
			var asked Status
			te.env.RegisterDelayedCallback(func() {
				asked = te.status(t)
				sent = te.update(UpdateAnswer, c.answer(*asked.Question, te.w.key))
			}, time.Minute)
			te.start(t, toy{}, Options{})
			if asked.Question == nil || len(asked.Question.Nonce) != 32 {
				t.Fatalf("the pending question should carry a nonce: %+v", asked.Question)
			}
			sent.ok(t, "the approval")
			res := te.result(t)
			var s toy
			if err := json.Unmarshal(res.State, &s); err != nil {
				t.Fatal(err)
			}
			if s.Answered != c.channel {
				t.Errorf("decide saw the answer through %q, want %q", s.Answered, c.channel)
			}
			recs := auditRecords(t, te.w.auditLog, "gate_decision")
			if len(recs) != 1 {
				t.Fatalf("want one gate_decision, got %v", recs)
			}
			r := recs[0]
			want := map[string]any{"channel": c.channel, "by": c.by, "decision": "APPROVED"}
			for k, v := range map[string]string{"claimed_channel": c.claimed, "remote_addr": c.remote, "user_agent": c.ua} {
				if v != "" {
					want[k] = v
				} else {
					want[k] = nil
				}
			}
			for k, v := range want {
				if r[k] != v {
					t.Errorf("gate_decision %s = %v, want %v", k, r[k], v)
				}
			}
			if r["mac"] != nil {
				t.Errorf("the record carries the seal: %v", r)
			}
			for _, ev := range res.Events {
				var a human.Answer
				if ev.Kind == event.Answer && (ev.Decode(&a) != nil || a.Channel != c.channel || a.MAC != "") {
					t.Errorf("the answer event = %s: want channel %s, no seal", ev.Data, c.channel)
				}
			}
		})
	}
}

const runOfToy = "261124-toyrun"

func TestQuestionNonceIsOnePerAsking(t *testing.T) {
	t.Parallel()
	base := questionNonce("exec-1", 3, "q1")
	if base != questionNonce("exec-1", 3, "q1") {
		t.Error("the nonce changes when the workflow replays the same asking")
	}
	for name, other := range map[string]string{
		"another execution (continued as new)": questionNonce("exec-2", 3, "q1"),
		"a later step (asked again)":           questionNonce("exec-1", 4, "q1"),
		"another question":                     questionNonce("exec-1", 3, "q2"),
	} {
		if other == base {
			t.Errorf("%s has the same nonce", name)
		}
	}
}
