//go:build temporalserver

package cli

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/temporal"
	"github.com/azero-dev/azero/internal/testenv"
	designwf "github.com/azero-dev/azero/internal/workflow/design"
)

// The design workflow on Temporal: started without a terminal, the run
// waits on Temporal at its draft gate (exit 3); the draft gate is answered
// through the API of azero serve (an Update), the verdict gate at the
// terminal of `azero design --resume SLUG` (an Update too); the worker
// drafts, reviews and commits the design with its trail, once.
func TestDesignOnTemporal(t *testing.T) {
	w := newDesWorld(t, "")
	c := newCluster(t)
	c.shareKey(t, w.state)
	wk := c.startWorker(t, "worker-a", "AZERO_MOCK_LLM=1", "EDITOR="+filepath.Join(w.bin, "editor"), "AZERO_TEST_EDITOR_DIR="+w.edits)
	c.config(t, w.state)
	base := strings.TrimSpace(w.git("rev-parse", "HEAD"))

	res := w.runPiped(nil, "design", "--issue", "1", "--json")
	if res.code != ExitNeedsHuman {
		t.Fatalf("design without a terminal: exit %d, want 3\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	checkVocabulary(t, "design --json", res.stdout)
	o := desDoc(t, res.stdout)
	if o.Status != "waiting" || o.Node != designwf.NodeEditDraft || o.LLDPath != "docs/lld/001-multiply.md" || o.Commit != "" ||
		!strings.Contains(o.Result.Resume, selfCommand(t)+" resume --engine temporal "+o.RunID) {
		t.Fatalf("the run should wait at edit_draft with how to resume it, got %+v", o)
	}
	if st := c.status(t, o.RunID); st.Question == nil || st.Question.Gate != designwf.NodeEditDraft || st.Ended || st.Workflow != designwf.Name {
		t.Fatalf("the run on Temporal should wait with its draft question, got %+v", st)
	}

	srv := startServeWith(t, w.state, w.extras())
	var taken struct {
		Decision  string
		Continued bool
	}
	if code := srv.api(t, "POST", "/api/runs/"+o.RunID+"/answer", `{"gate":"edit_draft","answer":"send"}`, &taken); code != 200 || taken.Continued {
		t.Fatalf("answering the draft gate through serve: HTTP %d %+v: want it taken, continued by the worker\n%s", code, taken, srv.stderr)
	}
	c.waitFor(t, o.RunID, "the verdict gate", func(st temporal.Status) bool {
		return st.Question != nil && st.Question.Gate == designwf.NodeEditVerdict
	})
	if code := srv.stop(t); code != 0 {
		t.Errorf("azero serve exit %d", code)
	}

	p := w.start(nil, "design", "--resume", "design-001-multiply", "--json")
	p.answer(issVerdictMenu, 1, "a")
	if code := p.exit(); code != ExitOK {
		t.Fatalf("design --resume: exit %d; screen:\n%s", code, p.text())
	}
	if strings.Contains(p.text(), issDraftMenu) {
		t.Errorf("the terminal was asked the draft gate serve answered:\n%s", p.text())
	}
	checkVocabulary(t, "design --resume --json", p.stdout.String())
	done := desDoc(t, p.stdout.String())
	if done.RunID != o.RunID || done.Status != "done" || done.Commit == "" || done.Issue != 1 || !strings.HasSuffix(done.Next, "implement --lld docs/lld/001-multiply.md") {
		t.Fatalf("the same run should be done with its design committed, got %+v", done)
	}
	if st := c.status(t, o.RunID); !st.Ended || st.Status != store.StatusDone || st.Workflow != designwf.Name {
		t.Errorf("the run on Temporal = %s %s (ended %v)", st.Workflow, st.Status, st.Ended)
	}

	// One commit, holding exactly the design and its trail.
	if n := strings.TrimSpace(w.git("rev-list", "--count", base+"..HEAD")); n != "1" {
		t.Errorf("%s commits after the run, want 1:\n%s", n, w.git("log", "--oneline"))
	}
	if head := strings.TrimSpace(w.git("rev-parse", "HEAD")); !strings.HasPrefix(head, done.Commit) {
		t.Errorf("HEAD %s, the run's commit %s", head, done.Commit)
	}
	files := strings.Fields(w.git("show", "--name-only", "--format=", "HEAD"))
	want := []string{"docs/audit/done/design-001-multiply/001-issue.md", "docs/audit/done/design-001-multiply/002-draft.md",
		"docs/audit/done/design-001-multiply/003-verdict.md", "docs/audit/done/design-001-multiply/004-designed.json", "docs/lld/001-multiply.md"}
	if !slices.Equal(files, want) {
		t.Errorf("the commit holds %v, want exactly %v", files, want)
	}
	if !strings.Contains(w.read("docs/lld/001-multiply.md"), "Files Changed") {
		t.Errorf("the committed design:\n%s", w.read("docs/lld/001-multiply.md"))
	}

	// The worker drove the run: it called the models and recorded both
	// decisions, each sent as an Update (the draft's from serve, with the
	// shared key proving its channel; the verdict's from the terminal).
	var seen []string
	for _, r := range testenv.AuditEvents(t, wk.state, "gate_decision") {
		if r["run_id"] == o.RunID {
			seen = append(seen, fmt.Sprintf("%v:%v:%v:%v", r["gate"], r["decision"], r["channel"], r["worker"]))
		}
	}
	if want := []string{"edit_draft:send:api:worker-a", "edit_verdict:approve:terminal:worker-a"}; !slices.Equal(seen, want) {
		t.Errorf("the worker's gate decisions = %v, want %v", seen, want)
	}
	accepted, _ := updatesInHistory(t, c, o.RunID, "")
	if len(accepted) != 2 {
		t.Errorf("%d answers reached the run's history as Updates, want 2: %q", len(accepted), accepted)
	}
	wst := openStore(t, wk.state)
	defer wst.Close()
	calls, err := wst.Calls(t.Context(), o.RunID)
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, c := range calls {
		roles = append(roles, c.Role)
	}
	if !slices.Equal(roles, []string{"drafter", "reviewer"}) {
		t.Errorf("the worker's store records the model calls %v, want the draft and the review", roles)
	}
}
