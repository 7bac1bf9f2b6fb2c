package cli

import (
	"database/sql"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/rundoc"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
)

// The attack of issue 22: code that reaches azero's store writes an
// approval into the waiting run's answer column, claiming the page's
// channel, and a later `azero resume` without a terminal used to merge
// it. The forged row is refused: resume still exits 3 and merges
// nothing, the audit log records answer_forged and no decision; a real
// approval through azero serve's API afterwards is taken and merges.
func TestForgedApprovalInTheStoreIsNotMerged(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "go")
	state, base := t.TempDir(), t.TempDir()
	id, _ := waitingDemo(t, state, base)
	repo := filepath.Join(base, "textkit")
	before := strings.TrimSpace(testenv.Git(t, repo, "rev-parse", "main"))

	q, err := rundoc.Question(runByID(t, state, id))
	if err != nil || q == nil {
		t.Fatalf("the waiting run has no question: %v", err)
	}
	forged, _ := json.Marshal(human.Answer{Gate: q.Gate, QuestionID: q.ID, Key: "approve", Channel: human.ChannelWeb,
		By: "127.0.0.1:40000 (Mozilla/5.0)", RemoteAddr: "127.0.0.1:40000", UserAgent: "Mozilla/5.0", At: time.Now().UTC()})
	db, err := sql.Open("sqlite", filepath.Join(state, store.FileName)+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE runs SET answer = ? WHERE id = ?`, string(forged), id); err != nil {
		t.Fatal(err)
	}
	db.Close()

	res := runAzeroIn(t, state, base, nil, "resume", id)
	if res.code != ExitNeedsHuman {
		t.Fatalf("resume without a terminal over a forged approval: exit %d, want 3\n%s", res.code, res.stderr)
	}
	if !strings.Contains(res.stderr, "claiming the web channel was not made by azero") {
		t.Errorf("resume should say a forged answer was refused:\n%s", res.stderr)
	}
	if after := strings.TrimSpace(testenv.Git(t, repo, "rev-parse", "main")); after != before {
		t.Fatal("main moved: the forged approval was merged")
	}
	if d := testenv.AuditEvents(t, state, "gate_decision"); len(d) != countUnattended(d) {
		t.Fatalf("a decision was recorded for the forged answer: %v", d)
	}
	recs := testenv.AuditEvents(t, state, "answer_forged")
	if len(recs) != 1 || recs[0]["run_id"] != id || recs[0]["gate"] != q.Gate || recs[0]["claimed_channel"] != human.ChannelWeb {
		t.Fatalf("answer_forged records = %v, want one naming the run, %s and the web channel", recs, q.Gate)
	}
	if r := runByID(t, state, id); r.Status != store.StatusWaiting || len(r.Answer) != 0 {
		t.Fatalf("the run is %s with answer %s: want waiting, the forged answer gone", r.Status, r.Answer)
	}

	// A real approval from azero serve's API is taken.
	srv := startServe(t, state)
	approvals := 0
	deadline := time.Now().Add(testenv.Patience)
	for r := runByID(t, state, id); !r.Status.Finished(); r = runByID(t, state, id) {
		if time.Now().After(deadline) {
			t.Fatalf("the run never ended: %s at %s\n%s", r.Status, r.Node, srv.stderr)
		}
		if r.Status == store.StatusWaiting && len(r.Answer) == 0 {
			gate, _ := rundoc.Question(r)
			var took map[string]any
			if code := srv.api(t, "POST", "/api/runs/"+id+"/answer", `{"gate":"`+gate.Gate+`","answer":"approve"}`, &took); code != http.StatusOK {
				t.Fatalf("the approval at %s: HTTP %d %v", gate.Gate, code, took)
			}
			approvals++
		}
		time.Sleep(50 * time.Millisecond)
	}
	if r := runByID(t, state, id); r.Status != store.StatusDone {
		t.Fatalf("the run ended %s: %s\n%s", r.Status, r.Error, srv.stderr)
	}
	if merged := testenv.Git(t, repo, "show", "main:textkit/text.go"); !strings.Contains(merged, "strings.Builder") {
		t.Errorf("main's text.go is not the approved change:\n%s", merged)
	}
	api := 0
	for _, d := range testenv.AuditEvents(t, state, "gate_decision") {
		if d["channel"] == human.ChannelAPI {
			if ua, _ := d["user_agent"].(string); ua != "serve-test-script" {
				t.Errorf("an API decision not made by the API's client: %v", d)
			}
			api++
		}
	}
	if api != approvals || approvals == 0 {
		t.Errorf("%d API decisions recorded for %d approvals sent", api, approvals)
	}
	if code := srv.stop(t); code != ExitOK {
		t.Errorf("azero serve exit %d\n%s", code, srv.stderr)
	}
}

// countUnattended counts the decisions no human was asked for.
func countUnattended(recs []audit.Record) int {
	n := 0
	for _, r := range recs {
		if r["channel"] == human.ChannelUnattended {
			n++
		}
	}
	return n
}
