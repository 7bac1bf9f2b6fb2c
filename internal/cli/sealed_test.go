package cli

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/runs"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
)

// rewriteRun changes a run's row with SQL through the store's file alone,
// as code that reached azero's state directory would.
func rewriteRun(t *testing.T, state, query string, args ...any) {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(state, store.FileName)+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(query, args...); err != nil {
		t.Fatal(err)
	}
}

// The second attack of issue 22: code that reaches azero's store moves a
// run waiting for its review past the gate, to the merge, with a commit it
// made on the run's branch. `azero resume` without a terminal used to
// merge that commit into the user's branch with no decision at all. The
// row's seal no longer verifies: resume exits 1 saying so, merges nothing,
// records run_forged once; the run is still listed, marked.
func TestRunRowRewrittenToTheMergeIsNotMerged(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "go")
	state, base := t.TempDir(), t.TempDir()
	id, _ := waitingDemo(t, state, base)
	repo := filepath.Join(base, "textkit")
	before := strings.TrimSpace(testenv.Git(t, repo, "rev-parse", "main"))
	var s struct {
		Worktree string `json:"worktree"`
		Branch   string `json:"branch"`
	}
	if err := json.Unmarshal(runByID(t, state, id).State, &s); err != nil || s.Worktree == "" {
		t.Fatalf("the waiting run's state names no worktree: %v", err)
	}
	// The change, committed on the run's branch as the model's code could.
	testenv.Git(t, s.Worktree, "add", "-A")
	testenv.Git(t, s.Worktree, "-c", "user.name=m", "-c", "user.email=m@example.com", "commit", "-q", "-m", "unreviewed")
	commit := strings.TrimSpace(testenv.Git(t, s.Worktree, "rev-parse", "HEAD"))
	rewriteRun(t, state, `UPDATE runs SET node = 'merge', status = 'interrupted', question = '', answer = '',
		state = json_set(CAST(state AS TEXT), '$.commit', ?) WHERE id = ?`, commit, id)

	for range 2 {
		res := runAzeroIn(t, state, base, nil, "resume", id)
		if res.code != ExitError {
			t.Fatalf("resume of a row moved to the merge: exit %d, want 1\n%s", res.code, res.stderr)
		}
		for _, want := range []string{"run " + id + ": its stored row in " + filepath.Join(state, store.FileName) + " was changed outside azero",
			"azero will not act on it", "azero runs show " + id} {
			if !strings.Contains(res.stderr, want) {
				t.Errorf("resume does not say %q:\n%s", want, res.stderr)
			}
		}
	}
	if after := strings.TrimSpace(testenv.Git(t, repo, "rev-parse", "main")); after != before {
		t.Fatal("main moved: the commit was merged without a decision")
	}
	if merged := testenv.Git(t, repo, "branch", "--contains", commit); strings.Contains(merged, "main") {
		t.Fatalf("the commit reached main:\n%s", merged)
	}
	if d := testenv.AuditEvents(t, state, "gate_decision"); len(d) != countUnattended(d) {
		t.Fatalf("a decision was recorded: %v", d)
	}
	recs := testenv.AuditEvents(t, state, "run_forged")
	if len(recs) != 1 || recs[0]["run_id"] != id || recs[0]["by"] != "resume" || recs[0]["claimed_node"] != "merge" {
		t.Fatalf("run_forged records = %v, want one naming the run, resume and the claimed node", recs)
	}
	for _, r := range testenv.AuditEvents(t, state, "run_resumed") {
		if r["run_id"] == id {
			t.Errorf("the forged run was resumed: %v", r)
		}
	}

	// Listed and shown, marked; never offered to resume.
	list := runAzeroIn(t, state, base, nil, "runs")
	if list.code != 0 || !strings.Contains(list.stdout, id) || !strings.Contains(list.stdout, "(not verified)") {
		t.Errorf("azero runs: exit %d\n%s\n%s", list.code, list.stdout, list.stderr)
	}
	var doc struct {
		Runs []struct {
			ID         string `json:"id"`
			Unverified string `json:"unverified"`
		} `json:"runs"`
	}
	listJSON := runAzeroIn(t, state, base, nil, "runs", "--json")
	if err := json.Unmarshal([]byte(listJSON.stdout), &doc); err != nil || len(doc.Runs) != 1 || !strings.Contains(doc.Runs[0].Unverified, "was changed outside azero") {
		t.Errorf("azero runs --json: %v\n%s", err, listJSON.stdout)
	}
	show := runAzeroIn(t, state, base, nil, "runs", "show", id)
	if show.code != 0 || !strings.Contains(show.stdout, "NOT VERIFIED:") || strings.Contains(show.stdout, "azero resume") {
		t.Errorf("azero runs show: exit %d\n%s\n%s", show.code, show.stdout, show.stderr)
	}
}

// A forged row never makes gc delete what it names: an ended run whose
// state was pointed at a folder outside azero's state directory (in a
// repository that is gone, where gc removes the folder itself) is not
// touched, said so, recorded once as run_forged; and a run's own row,
// sealed, naming a worktree outside azero's worktrees directory, is not
// removed either.
func TestRunsGCNeverRemovesWhatAForgedRowNames(t *testing.T) {
	t.Parallel()
	state, parent := t.TempDir(), t.TempDir()
	repo := filepath.Join(parent, "project")
	os.MkdirAll(repo, 0o755)
	testenv.Git(t, repo, "init", "-q", "-b", "main")
	testenv.Git(t, repo, "commit", "-q", "--allow-empty", "-m", "init")
	forged, _ := putRun(t, state, store.StatusDone, "END", repo, "azero/1-forged", "")
	victim := filepath.Join(t.TempDir(), "the user's work")
	if err := os.MkdirAll(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(victim, "precious.txt"), []byte("years of work\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rewriteRun(t, state, `UPDATE runs SET state = json_set(CAST(state AS TEXT), '$.worktree', ?, '$.repo', ?) WHERE id = ?`,
		victim, filepath.Join(parent, "gone"), forged)

	// A row azero sealed that names a folder outside its worktrees.
	st := openStore(t, state)
	sealed := store.NewID(time.Now())
	raw, _ := json.Marshal(gcRunState{Repo: filepath.Join(parent, "gone-too"), Branch: "azero/2-elsewhere", Worktree: victim})
	if err := st.CreateRun(t.Context(), store.Run{ID: sealed, Workflow: "implement", Node: "END", Status: store.StatusDone, State: raw}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	for range 2 {
		res := runAzeroIn(t, state, parent, nil, "runs", "gc", "--all", "--json")
		var doc struct {
			Removed []runs.GCAction  `json:"removed"`
			Refused []runs.GCRefusal `json:"refused"`
		}
		if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
			t.Fatalf("gc --json: %v\n%s", err, res.stdout)
		}
		if len(doc.Refused) != 1 || doc.Refused[0].RunID != forged || !strings.Contains(doc.Refused[0].Reason, "was changed outside azero") {
			t.Errorf("gc refused %+v, want the forged run", doc.Refused)
		}
		if len(doc.Removed) != 1 || doc.Removed[0].RunID != sealed || doc.Removed[0].Done || doc.Removed[0].Worktree != victim ||
			doc.Removed[0].Error != "azero makes a run's worktree in "+filepath.Join(state, "worktrees", sealed)+", and removes none elsewhere" {
			t.Errorf("gc did %+v, want the sealed run's worktree refused", doc.Removed)
		}
		if res.code != ExitError {
			t.Errorf("gc exit %d, want 1 (a worktree it could not remove)\n%s", res.code, res.stderr)
		}
	}
	if b, err := os.ReadFile(filepath.Join(victim, "precious.txt")); err != nil || string(b) != "years of work\n" {
		t.Fatalf("gc removed the folder a row named: %v", err)
	}
	recs := testenv.AuditEvents(t, state, "run_forged")
	if len(recs) != 1 || recs[0]["run_id"] != forged || recs[0]["by"] != "gc" {
		t.Errorf("run_forged records = %v, want one, by gc", recs)
	}
	text := runAzeroIn(t, state, parent, nil, "runs", "gc")
	if !strings.Contains(text.stderr, forged+": not touched: run "+forged+": its stored row") {
		t.Errorf("gc does not say it left the forged run:\n%s", text.stderr)
	}
}
