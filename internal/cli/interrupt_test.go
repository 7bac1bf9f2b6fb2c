package cli

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
)

// Ctrl-C at a gate's prompt during azero resume (SIGINT on a real
// terminal while the prompt waits) stops the process, not the question:
// the run stays waiting with its question, runs show shows it, and the
// API of azero serve answers it; the audit record of that answer says it
// was answered after it was asked.
func TestCtrlCAtAPromptLeavesTheRunWaiting(t *testing.T) {
	t.Parallel()
	state, dir := t.TempDir(), t.TempDir()
	res := runAzeroIn(t, state, dir, nil, "selftest", "--steps", "1", "--delay", "1ms", "--dir", dir)
	if res.code != ExitNeedsHuman {
		t.Fatalf("selftest without a terminal: exit %d\n%s", res.code, res.stderr)
	}
	id := onlyRun(t, state).ID
	asked := storedQuestionOf(t, state, id)

	s := startAzero(t, state, dir, nil, "resume", id)
	s.WaitFor(t, "to proceed", 1)
	if err := s.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := s.exit(t); code != ExitInterrupted {
		t.Fatalf("exit %d after Ctrl-C at the prompt, want %d; screen:\n%s", code, ExitInterrupted, s.Text())
	}
	if !strings.Contains(s.Text(), "waits there with its question") || !strings.Contains(s.Text(), selfCommand(t)+" resume "+id) {
		t.Errorf("the terminal does not say the run waits and how to answer it:\n%s", s.Text())
	}
	r := runByID(t, state, id)
	if r.Status != store.StatusWaiting || r.Node != asked.Gate || len(r.Question) == 0 {
		t.Fatalf("after Ctrl-C: %s at %s with question %s; want waiting at %s with its question", r.Status, r.Node, r.Question, asked.Gate)
	}
	if again := storedQuestionOf(t, state, id); again.ID != asked.ID || again.Nonce != asked.Nonce || !again.AskedAt.Equal(asked.AskedAt) {
		t.Errorf("the question after Ctrl-C is another asking: %+v, was %+v", again, asked)
	}
	shown := runAzeroIn(t, state, dir, nil, "runs", "show", id)
	if !strings.Contains(shown.stdout, "Waiting at "+asked.Gate+" for an answer") || !strings.Contains(shown.stdout, asked.Prompt) {
		t.Errorf("runs show does not show the question:\n%s", shown.stdout)
	}

	srv := startServe(t, state)
	var out map[string]any
	body := `{"gate":"` + asked.Gate + `","answer":"approve"}`
	if code := srv.api(t, "POST", "/api/runs/"+id+"/answer", body, &out); code != http.StatusOK {
		t.Fatalf("the API's answer to the interrupted question: %d %v", code, out)
	}
	for deadline := time.Now().Add(testenv.Patience); !runByID(t, state, id).Status.Finished(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("serve never continued the run:\n%s", srv.stderr)
		}
	}
	if r := runByID(t, state, id); r.Status != store.StatusDone {
		t.Fatalf("run %s: %s", r.Status, r.Error)
	}
	recs, err := audit.Read(filepath.Join(state, audit.FileName))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, rec := range recs {
		if rec["event"] != "gate_decision" || rec["run_id"] != id {
			continue
		}
		n++
		askedAt, err1 := time.Parse(time.RFC3339Nano, rec["asked_at"].(string))
		answeredAt, err2 := time.Parse(time.RFC3339Nano, rec["answered_at"].(string))
		if err1 != nil || err2 != nil || rec["channel"] != human.ChannelAPI || !askedAt.Equal(asked.AskedAt) || answeredAt.Before(askedAt) {
			t.Errorf("decision %v: want the API's, asked_at %s (the first asking) not after answered_at", rec, asked.AskedAt)
		}
	}
	if n != 1 {
		t.Errorf("%d decisions recorded, want 1", n)
	}
}

// storedQuestionOf is the question run id stands at in the store.
func storedQuestionOf(t *testing.T, state, id string) human.Question {
	t.Helper()
	var q human.Question
	if err := json.Unmarshal(runByID(t, state, id).Question, &q); err != nil {
		t.Fatalf("run %s has no stored question: %v", id, err)
	}
	return q
}

// At a terminal the demo asks exactly what its help and the README say,
// in that order: the diff review (approve commits), then the final review
// (approve merges, or revise, or abort).
func TestDemoAsksTwiceAsDocumented(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "go")
	state, base := t.TempDir(), t.TempDir()
	s := startAzero(t, state, base, []string{"NO_COLOR=1"}, "demo", "--dir", base)
	s.WaitFor(t, "you will be asked twice", 1)
	s.WaitFor(t, "Commit the changes to 2 files? Nothing is committed unless you type approve.", 1)
	s.Type(t, "approve")
	s.WaitFor(t, "Final review: the merge", 1)
	s.WaitFor(t, "Merge azero/42-slugify-makes-url-slugs into main?", 1)
	s.WaitFor(t, "'approve' to merge it, 'revise' to send it back to the coder with your feedback or 'abort' to drop it", 1)
	s.Type(t, "approve")
	if code := s.exit(t); code != ExitOK {
		t.Fatalf("exit %d\n%s", code, s.Text())
	}
	r := onlyRun(t, state)
	st := openStore(t, state)
	defer st.Close()
	evs, err := st.Events(t.Context(), r.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var asked []string
	for _, ev := range evs {
		if ev.Kind == event.Question {
			asked = append(asked, ev.Node)
		}
	}
	if strings.Join(asked, " ") != "diff_review human_review" {
		t.Errorf("the demo asked %v, want the diff review then the final review", asked)
	}
	help := runAzeroIn(t, state, base, nil, "demo", "--help")
	for _, want := range []string{"asked twice", "1. the diff review: 'approve' commits", "2. the final review: 'approve' merges"} {
		if !strings.Contains(help.stdout, want) {
			t.Errorf("demo --help does not say %q", want)
		}
	}
}
