//go:build temporalserver

package cli

// End-to-end tests of the Temporal engine: a real Temporal server started
// in this process (go.temporal.io/server/temporaltest), two azero workers
// with state directories of their own (two machines, as far as azero can
// tell), the real azero command as a separate process starting and
// answering runs, real git and go test on the demo project.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/server/temporaltest"

	"github.com/azero-dev/azero/internal/answerkey"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/runs"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/temporal"
	"github.com/azero-dev/azero/internal/testenv"
)

// cluster is a Temporal server with azero workers on it.
type cluster struct {
	srv     *temporaltest.TestServer
	ns      string
	addr    string
	client  *temporal.Client
	workers map[string]*testWorker
	// key, when set, is the answer key every worker started from now on
	// gets in its state directory (the team copied one key to each
	// machine); otherwise each worker makes its own.
	key string
}

// shareKey gives the workers started from now on the answer key of the
// state directory state (made if missing): the answers azero sends from
// there prove their channel to them.
func (c *cluster) shareKey(t *testing.T, state string) {
	t.Helper()
	k, err := answerkey.Load(state)
	if err != nil {
		t.Fatal(err)
	}
	c.key = k.Path()
}

// giveKey copies the shared answer key, if any, into state.
func (c *cluster) giveKey(t *testing.T, state string) {
	t.Helper()
	if c.key == "" {
		return
	}
	b, err := os.ReadFile(c.key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, answerkey.FileName), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

type testWorker struct {
	w     *temporal.Worker
	state string
	f     *Factory
	log   *strings.Builder
	stop  func()
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	srv := temporaltest.NewServer(temporaltest.WithT(t))
	c := &cluster{srv: srv, ns: srv.GetDefaultNamespace(), addr: srv.GetFrontendHostPort(), workers: map[string]*testWorker{}}
	c.client = &temporal.Client{C: srv.NewClientWithOptions(client.Options{Logger: quietLogger{}}), Poll: 100 * time.Millisecond}
	return c
}

type quietLogger struct{}

func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Warn(string, ...any)  {}
func (quietLogger) Error(string, ...any) {}

// config writes an azero config choosing this cluster, into the config
// directory azeroEnv gives a process with state dir state.
func (c *cluster) config(t *testing.T, state string) {
	t.Helper()
	testenv.WriteFiles(t, filepath.Join(state, "config", "azero"), map[string]string{"config.toml": fmt.Sprintf(
		"[engine]\nkind = \"temporal\"\naddress = %q\nnamespace = %q\nmove_after = \"4s\"\n", c.addr, c.ns)})
}

// configQueue writes a config that names the cluster's namespace and the
// shared task queue queue, but chooses no engine and no address: the
// commands are given those as flags.
func (c *cluster) configQueue(t *testing.T, state, queue string) {
	t.Helper()
	testenv.WriteFiles(t, filepath.Join(state, "config", "azero"), map[string]string{"config.toml": fmt.Sprintf(
		"[engine]\nnamespace = %q\ntask_queue = %q\nmove_after = \"4s\"\n", c.ns, queue)})
}

// startWorker starts a worker in this process with its own state
// directory and, besides, the environment extra (KEY=VALUE).
func (c *cluster) startWorker(t *testing.T, name string, extra ...string) *testWorker {
	t.Helper()
	state := t.TempDir()
	c.giveKey(t, state)
	io, _, _, errOut := iostreams.Test()
	env := map[string]string{"AZERO_STATE_DIR": state, "XDG_CONFIG_HOME": filepath.Join(state, "config"), "HOME": state}
	for _, kv := range extra {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	f := &Factory{IO: io, Getenv: func(k string) string { return env[k] }, Environ: os.Environ, LookPath: exec.LookPath,
		WorkDir: state, Now: time.Now, Version: "test"}
	w, err := runs.NewWorker(t.Context(), f.Env(), runs.Catalog(), c.client.C, temporal.DefaultTaskQueue, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	tw := &testWorker{w: w, state: state, f: f}
	stopped := false
	tw.stop = func() {
		if !stopped {
			stopped = true
			w.Stop()
			f.Close()
		}
	}
	t.Cleanup(tw.stop)
	_ = errOut
	c.workers[name] = tw
	return tw
}

func (c *cluster) status(t *testing.T, runID string) temporal.Status {
	t.Helper()
	st, err := c.client.Status(t.Context(), runID)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// waitFor polls the run until cond holds.
func (c *cluster) waitFor(t *testing.T, runID, what string, cond func(temporal.Status) bool) temporal.Status {
	t.Helper()
	deadline := time.Now().Add(testenv.Patience)
	for {
		st, err := c.client.Status(t.Context(), runID)
		if err == nil && cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s: %s did not happen; last status %+v (%v)", runID, what, st, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// updatesInHistory returns what reached the run's history of Temporal
// Updates: the arguments of each accepted one, and whether any event of
// the history mentions marker.
func updatesInHistory(t *testing.T, c *cluster, runID, marker string) (accepted []string, mentioned bool) {
	t.Helper()
	it := c.client.C.GetWorkflowHistory(t.Context(), runID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(ev.String(), marker) {
			mentioned = true
		}
		if a := ev.GetWorkflowExecutionUpdateAcceptedEventAttributes(); a != nil {
			for _, p := range a.GetAcceptedRequest().GetInput().GetArgs().GetPayloads() {
				accepted = append(accepted, string(p.GetData()))
			}
		}
	}
	return accepted, mentioned
}

// checkVocabulary fails the test when a --json document leaves azero's
// JSON vocabulary (see TestJSONVocabulary).
func checkVocabulary(t *testing.T, name, doc string) {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Errorf("%s: not one JSON document: %v\n%s", name, err, doc)
		return
	}
	for _, p := range vocabularyProblems(v) {
		t.Errorf("%s: %s", name, p)
	}
}

// The acceptance scenario: a demo run on Temporal reaches its first gate
// on one worker; that worker is stopped; the approval, sent from anywhere,
// moves the run to the other worker, which recreates the worktree from the
// run's branch and snapshot; the final approval is typed at a terminal
// with `azero resume`; the change is merged exactly once.
func TestDemoOnTemporalSurvivesItsWorker(t *testing.T) {
	testenv.RequireTool(t, "git")
	testenv.RequireTool(t, "go")
	c := newCluster(t)
	// The workers share the answer key of the state directory azero is
	// run from: the approval typed at its terminal keeps its channel.
	state := t.TempDir()
	c.shareKey(t, state)
	a := c.startWorker(t, "worker-a")
	b := c.startWorker(t, "worker-b")

	c.config(t, state)
	demoDir := t.TempDir()

	// No terminal: the run stops at its first question, exit 3.
	res := runAzeroIn(t, state, demoDir, nil, "demo", "--dir", demoDir, "--json")
	if res.code != ExitNeedsHuman {
		t.Fatalf("demo exit %d, want 3\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	var out runOutcome
	if err := json.Unmarshal([]byte(res.stdout), &out); err != nil {
		t.Fatalf("demo --json: %v\n%s", err, res.stdout)
	}
	// The diff review flags nothing (a new test file, a small change):
	// it passes unattended; the merge approval needs a human.
	if out.Status != store.StatusWaiting || out.Node != "human_review" || !strings.Contains(out.Resume, selfCommand(t)+" resume --engine temporal "+out.RunID) {
		t.Fatalf("the run should wait at human_review with a resume command, got %+v\nstderr:\n%s", out, res.stderr)
	}
	runID := out.RunID
	checkVocabulary(t, "demo --json", res.stdout)

	// `azero runs` lists it with its question; `runs show` has it in full.
	list := runAzeroIn(t, state, demoDir, nil, "runs", "--json")
	if list.code != 0 || !strings.Contains(list.stdout, runID) || !strings.Contains(list.stdout, `"gate": "human_review"`) {
		t.Fatalf("azero runs on Temporal (exit %d) should list %s waiting at human_review:\n%s\n%s", list.code, runID, list.stdout, list.stderr)
	}
	checkVocabulary(t, "runs --json", list.stdout)
	var listed struct {
		Engine string `json:"engine"`
		Runs   []struct {
			ID       string          `json:"id"`
			Status   store.Status    `json:"status"`
			Worker   string          `json:"worker"`
			Question *human.Question `json:"question"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(list.stdout), &listed); err != nil || listed.Engine != "temporal" || len(listed.Runs) != 1 ||
		listed.Runs[0].Status != store.StatusWaiting || listed.Runs[0].Question == nil || listed.Runs[0].Question.ID == "" || listed.Runs[0].Worker == "" {
		t.Errorf("runs --json should list the run waiting, with its question (and its id) and its worker: %v\n%s", err, list.stdout)
	}
	showJSON := runAzeroIn(t, state, demoDir, nil, "runs", "show", runID[:8], "--json", "--events")
	if showJSON.code != 0 {
		t.Fatalf("runs show --json by a prefix of the id: exit %d\n%s", showJSON.code, showJSON.stderr)
	}
	checkVocabulary(t, "runs show --json --events", showJSON.stdout)
	var shown struct {
		Run     struct{ ID string } `json:"run"`
		Engine  string              `json:"engine"`
		History []temporal.Step     `json:"history"`
		Events  []struct {
			Kind string `json:"kind"`
		} `json:"events"`
	}
	if err := json.Unmarshal([]byte(showJSON.stdout), &shown); err != nil || shown.Run.ID != runID || shown.Engine != "temporal" ||
		len(shown.History) == 0 || shown.History[0].Worker == "" || !strings.Contains(fmt.Sprint(shown.Events), "test_result") {
		t.Errorf("runs show --json should describe the run with its steps, their workers and its events (test results included): %v\n%s", err, showJSON.stdout)
	}
	show := runAzeroIn(t, state, demoDir, nil, "runs", "show", runID)
	if show.code != 0 || !strings.Contains(show.stdout, "Waiting at human_review") || !strings.Contains(show.stdout, " into main?") {
		t.Fatalf("azero runs show (exit %d) should show the question:\n%s\n%s", show.code, show.stdout, show.stderr)
	}
	// Without a terminal, resume refuses to answer: exit 3.
	if r := runAzeroIn(t, state, demoDir, nil, "resume", runID); r.code != ExitNeedsHuman {
		t.Fatalf("resume without a terminal: exit %d, want 3\n%s", r.code, r.stderr)
	}
	// A wrong word is refused by the workflow's validator, whoever sends
	// it, and never reaches the run's history.
	if _, err := c.client.Answer(t.Context(), runID, human.Answer{Gate: "human_review", Key: "aprove", Channel: human.ChannelTemporal}); !errors.Is(err, temporal.ErrRefused) {
		t.Fatalf("a misspelt approval should be refused by the validator, got %v", err)
	}
	if accepted, mentioned := updatesInHistory(t, c, runID, "aprove"); len(accepted) != 0 || mentioned {
		t.Fatalf("the refused answer reached the history: accepted %q, mentioned %v", accepted, mentioned)
	}

	st := c.status(t, runID)
	holder, other := a, b
	if st.Holder.Identity == "worker-b" {
		holder, other = b, a
	}
	if st.Holder.Identity != "worker-a" && st.Holder.Identity != "worker-b" {
		t.Fatalf("the run is held by %q", st.Holder.Identity)
	}
	oldWorktree := filepath.Join(holder.state, "worktrees", runID)
	if _, err := os.Stat(filepath.Join(oldWorktree, "textkit", "slug_test.go")); err != nil {
		t.Fatalf("the holder should have the worktree, with the new tests, in its state directory: %v", err)
	}
	holder.stop()

	// The approval, typed at a terminal, goes through an Update; the
	// stopped worker never takes the next step, the other one does.
	s := startAzero(t, state, demoDir, nil, "resume", runID, "--json")
	s.WaitFor(t, "to merge it", 1)
	s.Type(t, "approve")
	if code := s.exit(t); code != 0 {
		t.Fatalf("resume exit %d, screen:\n%s", code, s.Text())
	}
	var final runOutcome
	if err := json.Unmarshal(s.stdout.Bytes(), &final); err != nil {
		t.Fatalf("resume --json: %v\n%s", err, s.stdout.String())
	}
	checkVocabulary(t, "resume --json", s.stdout.String())
	result, _ := json.Marshal(final.Result)
	if final.Status != store.StatusDone || !strings.Contains(string(result), `"result":"merged"`) {
		t.Fatalf("the run should be done and merged, got %+v %s\nscreen:\n%s", final, result, s.Text())
	}
	st = c.status(t, runID)
	if st.Holder.Identity != other.w.Identity() || st.Moves != 1 {
		t.Fatalf("the run should have moved once to %s, got holder %s after %d moves", other.w.Identity(), st.Holder.Identity, st.Moves)
	}
	if _, err := os.Stat(oldWorktree); !os.IsNotExist(err) {
		t.Errorf("the stopped worker's worktree should be gone after the move: %v", err)
	}

	// Merged exactly once into the demo repository.
	repo := filepath.Join(demoDir, "textkit")
	log := testenv.Git(t, repo, "log", "--format=%s", "main")
	var commits []string
	for _, l := range strings.Split(strings.TrimSpace(log), "\n") {
		if l != "textkit: initial import" {
			commits = append(commits, l)
		}
	}
	if len(commits) == 0 {
		t.Fatalf("nothing was merged:\n%s", log)
	}
	merged := testenv.Git(t, repo, "log", "--format=%H", "main", "--", "textkit/slug_test.go")
	if n := len(strings.Fields(merged)); n != 1 {
		t.Errorf("the tests should have been added by exactly one commit on main, got %d:\n%s", n, log)
	}
	if text, err := os.ReadFile(filepath.Join(repo, "textkit", "text.go")); err != nil || !strings.Contains(string(text), "strings.Builder") {
		t.Errorf("the implementation should be merged into the checkout (%v)", err)
	}
	if refs := testenv.Git(t, repo, "for-each-ref", "refs/azero/"); strings.TrimSpace(refs) != "" {
		t.Errorf("the run's snapshot should be forgotten when it ends, got %s", refs)
	}

	// The decisions were recorded by the worker that acted on them: the
	// unattended diff review by the first, the approval by the second.
	recs := testenv.AuditEvents(t, holder.state, "gate_decision")
	if len(recs) != 1 || recs[0]["gate"] != "diff_review" || recs[0]["channel"] != human.ChannelUnattended || recs[0]["worker"] != holder.w.Identity() {
		t.Fatalf("the first worker should have recorded the unattended diff review, got %v", recs)
	}
	recs = testenv.AuditEvents(t, other.state, "gate_decision")
	if len(recs) != 1 {
		t.Fatalf("want 1 gate decision in %s's audit log, got %v", other.w.Identity(), recs)
	}
	if r := recs[0]; r["gate"] != "human_review" || r["decision"] == nil || r["channel"] != human.ChannelTerminal || r["claimed_channel"] != nil ||
		r["worker"] != other.w.Identity() || r["run_id"] != runID || !strings.HasPrefix(fmt.Sprint(r["by"]), "terminal of ") || r["client_identity"] == nil {
		t.Errorf("the approval's record = %v: want the terminal's channel, proven by its seal, and the Temporal client's identity", r)
	}
	if r := testenv.AuditEvents(t, holder.state, "node"); len(r) == 0 {
		t.Error("the first worker's audit log should record the nodes it ran")
	}
	// The lineage (the model's prompts and responses, the test runs) is
	// written by the worker that ran those steps, in its state directory;
	// nothing of it where the run was started and answered.
	lineage, err := os.ReadDir(filepath.Join(holder.state, "runs", runID))
	if err != nil {
		t.Fatalf("the first worker should hold the run's lineage: %v", err)
	}
	var kinds []string
	for _, e := range lineage {
		for _, k := range []string{"-prompt-", "-response-", "-tests-red.txt", "-tests-green.txt"} {
			if strings.Contains(e.Name(), k) && !slices.Contains(kinds, k) {
				kinds = append(kinds, k)
			}
		}
	}
	if len(kinds) != 4 {
		t.Errorf("the first worker's lineage of the run should hold prompts, responses and the red and green test runs, has %d of them: %v", len(kinds), lineage)
	}
	if _, err := os.Stat(filepath.Join(state, "runs", runID)); !os.IsNotExist(err) {
		t.Errorf("no lineage should be written where the run was started: %v", err)
	}
	hist := c.status(t, runID).History
	moved, merges := 0, 0
	for _, h := range hist {
		if h.Outcome == "moved" {
			moved++
		}
		if h.Node == "merge" && h.Outcome == "ok" {
			merges++
			if h.Worker != other.w.Identity() {
				t.Errorf("merge ran on %s", h.Worker)
			}
		}
	}
	if moved != 1 || merges != 1 {
		t.Errorf("want one move and one merge in the history, got %d and %d", moved, merges)
	}
	if accepted, mentioned := updatesInHistory(t, c, runID, "aprove"); len(accepted) != 1 || !strings.Contains(accepted[0], `"approve"`) || mentioned {
		t.Errorf("exactly the approval should be in the history, got %q (the refused word mentioned: %v)", accepted, mentioned)
	}
	// The worker's store keeps its own record of the run, which a local
	// resume refuses to drive.
	if r := runAzeroIn(t, other.state, demoDir, nil, "resume", "--engine", "local", runID); r.code == 0 || !strings.Contains(r.stderr, "runs on Temporal") {
		t.Errorf("a local resume of the worker's record should be refused: exit %d\n%s", r.code, r.stderr)
	}
}

// The same run answered from the page of `azero serve` pointed at
// Temporal: it lists the run and its question, refuses a wrong word itself,
// sends the approval as an Update, and the run's worker merges it.
func TestServeAnswersTemporalRunsThroughAnUpdate(t *testing.T) {
	testenv.RequireTool(t, "git")
	testenv.RequireTool(t, "go")
	c := newCluster(t)
	state := t.TempDir()
	c.shareKey(t, state)
	w := c.startWorker(t, "worker-a")
	c.config(t, state)
	demoDir := t.TempDir()
	res := runAzeroIn(t, state, demoDir, nil, "demo", "--dir", demoDir, "--json")
	if res.code != ExitNeedsHuman {
		t.Fatalf("demo exit %d, want 3\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	var out runOutcome
	if err := json.Unmarshal([]byte(res.stdout), &out); err != nil {
		t.Fatal(err)
	}
	runID := out.RunID

	srv := startServe(t, state)
	// The line after the URL says whose runs the page shows.
	select {
	case line := <-srv.lines:
		if !strings.Contains(line, "the runs on Temporal at "+c.addr) {
			t.Errorf("azero serve should say it shows the runs on Temporal, said %q", line)
		}
	case <-time.After(testenv.Patience):
		t.Error("azero serve said nothing after its URL")
	}
	var gates struct {
		Gates []struct {
			Run      struct{ ID, Status string }
			Question human.Question
		}
	}
	if code := srv.api(t, "GET", "/api/gates", "", &gates); code != 200 || len(gates.Gates) != 1 || gates.Gates[0].Run.ID != runID ||
		gates.Gates[0].Run.Status != "waiting" || gates.Gates[0].Question.Gate != "human_review" || gates.Gates[0].Question.ID == "" {
		t.Fatalf("GET /api/gates = %d %+v: want the run waiting at human_review", code, gates)
	}
	var runs map[string]any
	if code := srv.api(t, "GET", "/api/runs", "", &runs); code != 200 || !strings.Contains(fmt.Sprint(runs), runID) {
		t.Fatalf("GET /api/runs = %d %v", code, runs)
	}
	raw, _ := json.Marshal(runs)
	checkVocabulary(t, "GET /api/runs", string(raw))
	var detail map[string]any
	if code := srv.api(t, "GET", "/api/runs/"+runID+"?events=1", "", &detail); code != 200 || detail["question"] == nil || len(fmt.Sprint(detail["events"])) < 10 {
		t.Fatalf("GET /api/runs/RUN = %d: want the question and the events, got %v", code, detail)
	}
	raw, _ = json.Marshal(detail)
	checkVocabulary(t, "GET /api/runs/RUN", string(raw))
	page := getPage(t, srv, "/runs/"+runID)
	for _, want := range []string{" into main?", "driven by azero on " + w.w.Identity()} {
		if !strings.Contains(page, want) {
			t.Errorf("the run's page should show %q", want)
		}
	}

	var refused struct{ Error string }
	if code := srv.api(t, "POST", "/api/runs/"+runID+"/answer", `{"gate":"human_review","answer":"aprove"}`, &refused); code != http.StatusUnprocessableEntity {
		t.Fatalf("a misspelt word: HTTP %d (%s), want 422", code, refused.Error)
	}
	if code := srv.api(t, "POST", "/api/runs/"+runID+"/answer", `{"gate":"human_review","answer":"approve","question_id":"0123456789abcdef01234567"}`, &refused); code != http.StatusConflict {
		t.Fatalf("an answer to another version of the question: HTTP %d (%s), want 409", code, refused.Error)
	}
	// Someone is being asked at a terminal meanwhile: the page's answer
	// comes first, the terminal stops asking and says so.
	term := startAzero(t, state, demoDir, nil, "resume", runID)
	term.WaitFor(t, "to merge it", 1)
	var taken struct {
		RunID, Gate, Decision string
		Continued             bool
	}
	if code := srv.api(t, "POST", "/api/runs/"+runID+"/answer", `{"gate":"human_review","answer":"approve"}`, &taken); code != 200 ||
		taken.Decision != "APPROVED" || taken.Continued {
		t.Fatalf("the approval: HTTP %d %+v: want APPROVED, continued by the run's worker (not by serve)", code, taken)
	}
	if code := srv.api(t, "POST", "/api/runs/"+runID+"/answer", `{"gate":"human_review","answer":"approve"}`, &refused); code != http.StatusConflict {
		t.Errorf("a second approval: HTTP %d (%s), want 409", code, refused.Error)
	}
	term.WaitFor(t, "human_review was answered on the api channel first", 1)
	if code := term.exit(t); code != 0 {
		t.Errorf("the terminal's resume should follow the run to its end: exit %d\n%s", code, term.Text())
	}
	st := c.waitFor(t, runID, "the end", func(st temporal.Status) bool { return st.Ended })
	if st.Status != store.StatusDone {
		t.Fatalf("the run should be done, got %s (%s)", st.Status, st.Error)
	}
	if text, err := os.ReadFile(filepath.Join(demoDir, "textkit", "textkit", "text.go")); err != nil || !strings.Contains(string(text), "strings.Builder") {
		t.Errorf("the implementation should be merged into the checkout (%v)", err)
	}
	recs := testenv.AuditEvents(t, w.state, "gate_decision")
	var web []map[string]any
	for _, r := range recs {
		if r["channel"] == human.ChannelAPI {
			web = append(web, r)
		}
	}
	if len(web) != 1 || web[0]["gate"] != "human_review" || web[0]["worker"] != w.w.Identity() || !strings.Contains(fmt.Sprint(web[0]["by"]), "serve-test-script") ||
		web[0]["user_agent"] != "serve-test-script" || web[0]["client_identity"] == nil {
		t.Errorf("the worker should record the approval from the web with its channel, worker and client: %v", recs)
	}
	if len(testenv.AuditEvents(t, state, "web_answer")) != 1 || len(testenv.AuditEvents(t, state, "web_answer_refused")) != 3 {
		t.Errorf("azero serve should audit the answer it sent and the three it refused")
	}
	if accepted, mentioned := updatesInHistory(t, c, runID, "aprove"); len(accepted) != 1 || mentioned {
		t.Errorf("only the approval should reach the history, got %q (misspelt word mentioned: %v)", accepted, mentioned)
	}
	if code := srv.stop(t); code != 0 {
		t.Errorf("azero serve exit %d", code)
	}
}

// getPage fetches a page of azero serve with its token.
func getPage(t *testing.T, s *server, path string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, s.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d\n%s", path, resp.StatusCode, b)
	}
	return string(b)
}

// The governance workflow on Temporal: the drafter and reviewer are called
// on the worker, the menus are answered at the terminal that started the
// run (each answer an Update), and the issue is filed once.
func TestIssueOnTemporal(t *testing.T) {
	w := newIssWorld(t, issScript([]string{issDraft1}, []string{issOK}))
	fake := w.withGitHub("enhancement")
	testenv.RequireTool(t, "git")
	c := newCluster(t)
	wk := c.startWorker(t, "worker-a", "AZERO_MOCK_LLM=1", "AZERO_MOCK_SCRIPT="+w.script,
		"GITHUB_TOKEN="+fake.Token, "GITHUB_API_URL="+w.apiURL)
	c.config(t, w.state)
	brief := w.brief("governance-notes.md", "# Governance notes\n\nStop runaway spending.\n")
	p := w.start(nil, "issue", "--brief", brief, "--tracker", "github", "--repo", "acme/widgets", "--json")
	p.answer(issDraftMenu, 1, "S")
	p.answer(issVerdictMenu, 1, "A")
	if code := p.exit(); code != 0 {
		t.Fatalf("exit %d; screen:\n%s", code, p.text())
	}
	checkVocabulary(t, "issue --json", p.stdout.String())
	o := w.outcome(p.stdout.String())
	if o.Status != "done" || o.Result.Issue == nil || o.Result.Issue.Number != 1 || o.Result.Slug != "governance-notes" ||
		o.Result.Drafts != 1 || o.Result.Verdicts != 1 || len(o.Result.Trail) == 0 {
		t.Fatalf("outcome = %+v", o)
	}
	if issues := fake.Issues(); len(issues) != 1 || issues[0]["title"] != "Add a budget flag" {
		t.Errorf("want the issue filed once, got %v", issues)
	}
	var seen []string
	// The worker does not share the answer key of the terminal's state
	// directory: what the terminal says of itself is a claim.
	for _, r := range testenv.AuditEvents(t, wk.state, "gate_decision") {
		seen = append(seen, fmt.Sprintf("%v:%v:%v:%v:%v", r["gate"], r["decision"], r["channel"], r["claimed_channel"], r["worker"]))
	}
	if want := []string{"edit_draft:send:temporal:terminal:worker-a", "edit_verdict:approve:temporal:terminal:worker-a"}; strings.Join(seen, " ") != strings.Join(want, " ") {
		t.Errorf("the worker's gate decisions = %v, want %v", seen, want)
	}
	if st := c.status(t, o.RunID); !st.Ended || st.Status != store.StatusDone || st.Workflow != "issue" {
		t.Errorf("the run on Temporal = %s %s (ended %v)", st.Workflow, st.Status, st.Ended)
	}
}

// The governance workflow on Temporal without a terminal stops at its
// first menu (exit 3, the run waiting on Temporal with its question); the
// terminal of `azero issue --resume SLUG` finds the run on Temporal by its
// slug and answers it, and the issue is filed once.
func TestIssueOnTemporalResumedBySlug(t *testing.T) {
	w := newIssWorld(t, issScript([]string{issDraft1}, []string{issOK}))
	fake := w.withGitHub("enhancement")
	testenv.RequireTool(t, "git")
	c := newCluster(t)
	wk := c.startWorker(t, "worker-a", "AZERO_MOCK_LLM=1", "AZERO_MOCK_SCRIPT="+w.script,
		"GITHUB_TOKEN="+fake.Token, "GITHUB_API_URL="+w.apiURL)
	c.config(t, w.state)
	brief := w.brief("governance-notes.md", "# Governance notes\n\nStop runaway spending.\n")
	res := w.runPiped(nil, "issue", "--brief", brief, "--tracker", "github", "--repo", "acme/widgets", "--json")
	if res.code != ExitNeedsHuman {
		t.Fatalf("issue without a terminal: exit %d, want 3\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	o := w.outcome(res.stdout)
	if o.Status != "waiting" || o.Node != "edit_draft" || !strings.Contains(o.Resume, selfCommand(t)+" resume --engine temporal "+o.RunID) {
		t.Fatalf("the run should wait at edit_draft with how to resume it, got %+v", o)
	}
	if st := c.status(t, o.RunID); st.Question == nil || st.Question.Gate != "edit_draft" || st.Ended {
		t.Fatalf("the run on Temporal should wait with its question, got %+v", st)
	}

	p := w.start(nil, "issue", "--resume", "governance-notes", "--json")
	p.answer(issDraftMenu, 1, "S")
	p.answer(issVerdictMenu, 1, "A")
	if code := p.exit(); code != 0 {
		t.Fatalf("issue --resume: exit %d; screen:\n%s", code, p.text())
	}
	done := w.outcome(p.stdout.String())
	if done.RunID != o.RunID || done.Status != "done" || done.Result.Issue == nil || done.Result.Issue.Number != 1 {
		t.Fatalf("the same run should be done with its issue filed, got %+v", done)
	}
	if issues := fake.Issues(); len(issues) != 1 {
		t.Errorf("want the issue filed once, got %d", len(issues))
	}
	if n := len(testenv.AuditEvents(t, wk.state, "gate_decision")); n != 2 {
		t.Errorf("the worker should have recorded the two decisions, got %d", n)
	}
	if r := w.runPiped(nil, "issue", "--resume", "governance-notes"); r.code != ExitError || !strings.Contains(r.stderr, "no unfinished issue run on Temporal") {
		t.Errorf("a finished run is not resumed again: exit %d\n%s", r.code, r.stderr)
	}
}

// workerProcess is `azero worker` running as its own process.
type workerProcess struct {
	cmd    *exec.Cmd
	state  string
	stderr *syncBuffer
	done   chan struct{}
	code   int
}

// syncBuffer is a buffer written by one goroutine and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startWorkerProcess starts `azero worker --identity name` with a state
// directory of its own, and waits until it polls. Without flags its config
// names the cluster; with flags it has no config and is given flags.
func (c *cluster) startWorkerProcess(t *testing.T, name string, flags ...string) *workerProcess {
	t.Helper()
	state := t.TempDir()
	c.giveKey(t, state)
	if len(flags) == 0 {
		c.config(t, state)
	}
	w := &workerProcess{state: state, stderr: &syncBuffer{}, done: make(chan struct{})}
	w.cmd = exec.Command(os.Args[0], append([]string{"worker", "--identity", name}, flags...)...)
	w.cmd.Env = azeroEnv(state)
	w.cmd.Dir = state
	w.cmd.Stderr = w.stderr
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		w.code = exitCode(w.cmd.Wait())
		close(w.done)
	}()
	t.Cleanup(func() {
		select {
		case <-w.done:
		default:
			w.cmd.Process.Kill()
			<-w.done
		}
	})
	deadline := time.Now().Add(testenv.Patience)
	for !strings.Contains(w.stderr.String(), "worker "+name+" on "+c.addr) {
		select {
		case <-w.done:
			t.Fatalf("azero worker exited %d:\n%s", w.code, w.stderr)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("azero worker did not start:\n%s", w.stderr)
		}
	}
	return w
}

// The acceptance scenario with workers as separate `azero worker`
// processes, and the one holding the run killed outright (a machine that
// died, not a worker told to stop): the approval, sent as an Update by any
// Temporal client, is acted on by the other worker, which merges once.
// Everything is chosen by flags: the workers are given the cluster, the
// namespace and a task queue of the team's (--temporal, --namespace,
// --task-queue) and have no config; the demo and the list are given
// --engine temporal --temporal, their config naming only the namespace
// and the queue.
func TestDemoOnTemporalSurvivesAKilledWorkerProcess(t *testing.T) {
	testenv.RequireTool(t, "git")
	testenv.RequireTool(t, "go")
	c := newCluster(t)
	const queue = "team-queue"
	flags := []string{"--temporal", c.addr, "--namespace", c.ns, "--task-queue", queue}
	workers := map[string]*workerProcess{"worker-a": c.startWorkerProcess(t, "worker-a", flags...), "worker-b": c.startWorkerProcess(t, "worker-b", flags...)}
	for name, w := range workers {
		if want := "task queues " + queue + " and " + temporal.OwnQueue(queue, name); !strings.Contains(w.stderr.String(), want) {
			t.Fatalf("azero worker %s should poll %q:\n%s", name, want, w.stderr)
		}
	}
	state := t.TempDir()
	c.configQueue(t, state, queue)
	demoDir := t.TempDir()
	res := runAzeroIn(t, state, demoDir, nil, "demo", "--dir", demoDir, "--json", "--engine", "temporal", "--temporal", c.addr)
	if res.code != ExitNeedsHuman {
		t.Fatalf("demo exit %d, want 3\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	var out runOutcome
	if err := json.Unmarshal([]byte(res.stdout), &out); err != nil {
		t.Fatal(err)
	}
	// Without the flags the same config chooses the local engine, whose
	// store has no such run.
	if r := runAzeroIn(t, state, demoDir, nil, "runs", "--json"); r.code != 0 || strings.Contains(r.stdout, out.RunID) {
		t.Errorf("azero runs without --engine should list the local runs only: exit %d\n%s", r.code, r.stdout)
	}
	list := runAzeroIn(t, state, demoDir, nil, "runs", "--json", "--temporal", c.addr)
	if list.code != 0 || !strings.Contains(list.stdout, out.RunID) || !strings.Contains(list.stdout, `"engine": "temporal"`) {
		t.Fatalf("azero runs --temporal should list the run on the team's queue: exit %d\n%s\n%s", list.code, list.stdout, list.stderr)
	}
	st := c.status(t, out.RunID)
	holder := workers[st.Holder.Identity]
	if holder == nil {
		t.Fatalf("the run is held by %q, not by one of the workers", st.Holder.Identity)
	}
	otherName := "worker-a"
	if st.Holder.Identity == "worker-a" {
		otherName = "worker-b"
	}
	if err := holder.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-holder.done
	// Its worktree stays while Temporal names it as the run's holder (it
	// may come back under its --identity).
	deadWorktree := filepath.Join(holder.state, "worktrees", out.RunID)
	gcFlags := append([]string{"runs", "gc", "--json"}, flags...)
	if res := runAzeroIn(t, holder.state, holder.state, nil, gcFlags...); res.code != 0 || strings.Contains(res.stdout, out.RunID) {
		t.Fatalf("gc on the dead holder's machine: exit %d, want its worktree kept\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if _, err := os.Stat(deadWorktree); err != nil {
		t.Fatalf("the dead holder's worktree: %v", err)
	}
	restore := onOtherMachine(t, deadWorktree)

	reply, err := c.client.Answer(t.Context(), out.RunID, human.Answer{Gate: "human_review", Key: "approve", Channel: human.ChannelTemporal, By: "a test"})
	if err != nil || reply.Decision != "APPROVED" {
		t.Fatalf("the approval: %+v, %v", reply, err)
	}
	st = c.waitFor(t, out.RunID, "the end", func(st temporal.Status) bool { return st.Ended })
	if st.Status != store.StatusDone || st.Holder.Identity != otherName || st.Moves != 1 {
		t.Fatalf("the run should be done on %s after one move, got %s on %s after %d moves (%s)", otherName, st.Status, st.Holder.Identity, st.Moves, st.Error)
	}
	repo := filepath.Join(demoDir, "textkit")
	if n := len(strings.Fields(testenv.Git(t, repo, "log", "--format=%H", "main", "--", "textkit/slug_test.go"))); n != 1 {
		t.Errorf("the change should be merged by exactly one commit, got %d", n)
	}
	// The run ended on the other worker: gc on the dead holder's machine
	// collects the worktree it left.
	restore()
	if res := runAzeroIn(t, holder.state, holder.state, nil, gcFlags...); res.code != 0 ||
		!strings.Contains(res.stdout, `"reason": "the run has ended on Temporal (done)"`) || !strings.Contains(res.stdout, `"on_temporal": true`) {
		t.Errorf("gc after the run ended elsewhere: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if _, err := os.Stat(deadWorktree); !os.IsNotExist(err) {
		t.Errorf("the dead holder's worktree is still there after gc: %v", err)
	}
	other := workers[otherName]
	recs := testenv.AuditEvents(t, other.state, "gate_decision")
	// Sent by a plain Temporal client: by the client's identity, not by
	// the name the answer gave itself.
	if len(recs) != 1 || recs[0]["gate"] != "human_review" || recs[0]["worker"] != otherName || recs[0]["channel"] != human.ChannelTemporal ||
		recs[0]["client_identity"] == nil || recs[0]["by"] != "Temporal client "+fmt.Sprint(recs[0]["client_identity"]) {
		t.Errorf("the surviving worker should record the approval it acted on, got %v", recs)
	}
	// A worker told to stop lets its work finish and exits 0.
	if err := other.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-other.done:
	case <-time.After(testenv.Patience):
		t.Fatalf("the worker did not stop on SIGTERM:\n%s", other.stderr)
	}
	if other.code != 0 || !strings.Contains(other.stderr.String(), "stopping the worker") {
		t.Errorf("azero worker on SIGTERM: exit %d\n%s", other.code, other.stderr)
	}
}
