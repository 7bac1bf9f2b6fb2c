package cli

// Tests of `azero design` as a user runs it: the real azero process (this
// test binary), the editor a shell script, the gates answered on a real
// pseudo-terminal or through the API of a real `azero serve`, the models
// the scripted offline model, the tracker the local one.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
	designwf "github.com/azero-dev/azero/internal/workflow/design"
)

const desCalcGo = "// Package calc does arithmetic.\npackage calc\n\n// Add returns a + b.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n"

// desIssue is issue #1 on the local tracker, as azero issue files it.
const desIssue = "# Multiply\n\n**Labels:** enhancement\n\n## Summary\n\nAdd a Multiply function to calc.go: Multiply(2, 3) is 6.\n"

// newDesWorld is a Go project with issue #1 filed on its local tracker.
func newDesWorld(t *testing.T, script string) *issWorld {
	t.Helper()
	w := newIssWorld(t, script)
	testenv.WriteFiles(t, w.repo, map[string]string{"go.mod": "module example.com/calc\n\ngo 1.22\n", "calc.go": desCalcGo,
		"docs/issues/0001-multiply.md": desIssue})
	w.git("add", "-A")
	w.git("commit", "-q", "-m", "calc, and issue #1")
	return w
}

// desOutcome is `azero design --json`'s document.
type desOutcome struct {
	RunID   string `json:"run_id"`
	Status  string `json:"status"`
	Node    string `json:"node"`
	Issue   int    `json:"issue"`
	LLDPath string `json:"lld_path"`
	Commit  string `json:"commit"`
	Next    string `json:"next_command"`
	Result  struct {
		Slug         string             `json:"slug"`
		AuditDir     string             `json:"audit_dir"`
		Drafts       int                `json:"drafts"`
		CheckReturns int                `json:"check_returns"`
		Findings     []designwf.Finding `json:"findings"`
		Resume       string             `json:"resume_command"`
	} `json:"result"`
}

func desDoc(t *testing.T, stdout string) desOutcome {
	t.Helper()
	var o desOutcome
	if err := json.Unmarshal([]byte(stdout), &o); err != nil {
		t.Fatalf("stdout is not the JSON outcome: %v\n%s", err, stdout)
	}
	return o
}

func TestDesignCommandFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{},
		{"--issue", "1", "--brief", "b.md"},
		{"--resume", "design-001-x", "--issue", "1"},
		{"--resume", "design-001-x", "--drafter", "mock:scripted"},
		{"--resume", "Not A Slug"},
		{"--issue", "-3"},
		{"--brief", "b.md", "--tracker", "local"},
		{"--issue", "1", "--tracker", "jira"},
		{"--issue", "1", "--coder", "mock:scripted"},
		{"--issue", "1", "--runner", "go"},
		{"--issue", "1", "--drafter", "nocolon"},
		{"--issue", "1", "--implement", "--budget", "-1"},
	} {
		got, _, err := parseFlags(NewCmdDesign, args)
		if code := ExitCode(err); code != ExitUsage || got != nil {
			t.Errorf("design %q: err = %v (exit %d), ran = %v; want a usage error", args, err, code, got != nil)
		}
	}
	got, _, err := parseFlags(NewCmdDesign, []string{"--issue", "12", "--implement", "--coder", "mock:scripted", "--runner", "go", "--json"})
	if err != nil || got == nil || got.Issue != 12 || !got.Implement || got.Coder != "mock:scripted" || got.Runner != "go" || !got.JSON {
		t.Fatalf("design --issue 12 --implement ...: %+v, %v", got, err)
	}
	got, _, err = parseFlags(NewCmdDesign, []string{"--resume", "design-012-add-a-budget-flag"})
	if err != nil || got == nil || got.Resume != "design-012-add-a-budget-flag" {
		t.Fatalf("design --resume: %+v, %v", got, err)
	}
}

// waitAt waits until run id waits at node for an answer nobody posted yet.
func waitAt(t *testing.T, state, id, node string, srv *server) store.Run {
	t.Helper()
	deadline := time.Now().Add(testenv.Patience)
	for {
		r := runByID(t, state, id)
		if r.Status == store.StatusWaiting && r.Node == node && len(r.Answer) == 0 {
			return r
		}
		if r.Status.Finished() || time.Now().After(deadline) {
			t.Fatalf("run %s is %s at %s, never waiting at %s (%s)\n%s", id, r.Status, r.Node, node, r.Error, srv.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestDesignWaitsAndIsAnsweredThroughServe: without a terminal the run
// stops at its first gate (exit 3) with its --json document; both gates
// are answered through the API of azero serve, which continues the run to
// its commit. The commit holds exactly the design and its trail; the
// user's staged and unstaged changes stay as they were.
func TestDesignWaitsAndIsAnsweredThroughServe(t *testing.T) {
	t.Parallel()
	w := newDesWorld(t, "")
	// The user's work in progress: a staged change and an unstaged one.
	testenv.WriteFiles(t, w.repo, map[string]string{"staged.txt": "staged\n", "README.md": "project, edited\n"})
	w.git("add", "staged.txt")
	staged, unstaged := w.git("diff", "--cached"), w.git("diff")

	res := w.runPiped(nil, "design", "--issue", "1", "--json")
	if res.code != ExitNeedsHuman {
		t.Fatalf("exit %d, want 3\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	o := desDoc(t, res.stdout)
	if o.RunID == "" || o.Status != "waiting" || o.Node != designwf.NodeEditDraft || o.Issue != 1 || o.LLDPath != "docs/lld/001-multiply.md" || o.Commit != "" ||
		o.Result.Slug != "design-001-multiply" || !strings.HasSuffix(o.Result.Resume, "design --resume design-001-multiply") {
		t.Fatalf("the waiting run's document: %+v\n%s", o, res.stdout)
	}
	srv := startServeWith(t, w.state, w.extras())
	waitAt(t, w.state, o.RunID, designwf.NodeEditDraft, srv)
	var shown map[string]any
	if code := srv.api(t, "GET", "/api/runs/"+o.RunID, "", &shown); code != 200 {
		t.Fatalf("GET /api/runs/%s: %d", o.RunID, code)
	}
	if raw, _ := json.Marshal(shown); !strings.Contains(string(raw), "002-draft.md") || !strings.Contains(string(raw), `"editor"`) {
		t.Errorf("the API does not show the draft gate's editor question: %s", raw)
	}
	var listed struct {
		Runs []struct {
			ID, Workflow, Status string
		} `json:"runs"`
	}
	if code := srv.api(t, "GET", "/api/runs", "", &listed); code != 200 || len(listed.Runs) != 1 || listed.Runs[0].Workflow != "design" {
		t.Errorf("GET /api/runs: %d %+v", code, listed)
	}
	if code := srv.api(t, "POST", "/api/runs/"+o.RunID+"/answer", `{"gate":"edit_draft","answer":"send"}`, nil); code != 200 {
		t.Fatalf("answering the draft gate: %d\n%s", code, srv.stderr)
	}
	waitAt(t, w.state, o.RunID, designwf.NodeEditVerdict, srv)
	if code := srv.api(t, "POST", "/api/runs/"+o.RunID+"/answer", `{"gate":"edit_verdict","answer":"approve"}`, nil); code != 200 {
		t.Fatalf("answering the verdict gate: %d\n%s", code, srv.stderr)
	}
	deadline := time.Now().Add(testenv.Patience)
	for r := runByID(t, w.state, o.RunID); r.Status != store.StatusDone; r = runByID(t, w.state, o.RunID) {
		if r.Status.Finished() || time.Now().After(deadline) {
			t.Fatalf("the run is %s at %s (%s)\n%s", r.Status, r.Node, r.Error, srv.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}

	files := strings.Fields(w.git("show", "--name-only", "--format=", "HEAD"))
	want := []string{"docs/audit/done/design-001-multiply/001-issue.md", "docs/audit/done/design-001-multiply/002-draft.md",
		"docs/audit/done/design-001-multiply/003-verdict.md", "docs/audit/done/design-001-multiply/004-designed.json", "docs/lld/001-multiply.md"}
	if !slices.Equal(files, want) {
		t.Errorf("the commit holds %v, want exactly %v", files, want)
	}
	if got := w.git("diff", "--cached"); got != staged {
		t.Errorf("the staged change was touched:\n%s", got)
	}
	if got := w.git("diff"); got != unstaged {
		t.Errorf("the unstaged change was touched:\n%s", got)
	}
	decisions := 0
	for _, r := range w.auditEvents("gate_decision") {
		if r["channel"] == "api" && r["run_id"] == o.RunID {
			decisions++
		}
	}
	if decisions != 2 {
		t.Errorf("%d gate decisions through the API audited, want 2", decisions)
	}
}

// TestDesignInventedPathGoesBackWithoutAHuman: drafts naming an invented
// src/ go back to the drafter with the checker's findings, without a
// human and without the reviewer, 3 times; the 4th reaches the human (here
// nobody: the run waits at the draft gate) with the findings.
func TestDesignInventedPathGoesBackWithoutAHuman(t *testing.T) {
	t.Parallel()
	invented := "# 1 - Feature: Multiply\n\n## 1. Context & Goal\n\nMultiply.\n\n## 2. Proposed Changes\n\n### 2.1 Files Changed\n\n" +
		"| File | Change Type | Description |\n|---|---|---|\n| `src/calc.go` | Modify | multiply |\n| `src/calc_test.go` | Add | tests |\n"
	w := newDesWorld(t, issScript([]string{invented, invented, invented, invented}, []string{"**Verdict:** APPROVED\n"}))
	res := w.runPiped(nil, "design", "--issue", "1", "--json")
	if res.code != ExitNeedsHuman {
		t.Fatalf("exit %d, want 3\n%s", res.code, res.stderr)
	}
	o := desDoc(t, res.stdout)
	if o.Node != designwf.NodeEditDraft || o.Result.Drafts != 4 || o.Result.CheckReturns != designwf.MaxCheckReturns || len(o.Result.Findings) == 0 {
		t.Fatalf("document %+v", o)
	}
	if calls := w.calls(o.RunID); calls["drafter"] != 4 || calls["reviewer"] != 0 {
		t.Errorf("model calls %v: want 4 drafts and no review", calls)
	}
	checks := 0
	for _, n := range w.names(o.Result.AuditDir) {
		if strings.HasSuffix(n, "-check.md") || strings.Contains(n, "check") {
			checks++
		}
	}
	if checks != 4 {
		t.Errorf("trail %v: want 4 checks recorded", w.names(o.Result.AuditDir))
	}
	if !strings.Contains(res.stderr, "goes back to the drafter (1 of 3)") || !strings.Contains(res.stderr, "you decide at the draft gate") {
		t.Errorf("stderr does not say what the checker did:\n%s", res.stderr)
	}
	if !strings.Contains(w.lineage(o.RunID, "prompt-design.md", 2), "src/calc.go") {
		t.Error("the second draft's prompt does not carry the checker's findings")
	}
}

// TestDesignResumeAfterKill: killed at its first gate, the run is
// continued with --resume SLUG, without asking the drafter again, and
// commits the design.
func TestDesignResumeAfterKill(t *testing.T) {
	t.Parallel()
	w := newDesWorld(t, "")
	p := w.start(nil, "design", "--issue", "1")
	p.waitFor(issDraftMenu, 1)
	p.kill()
	r := w.store()
	runs, err := r.ListRuns(t.Context(), store.Filter{Workflow: designwf.Name})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v, %v", runs, err)
	}
	id := runs[0].ID
	q := w.start(nil, "design", "--resume", "design-001-multiply", "--json")
	q.answer(issDraftMenu, 1, "s")
	q.answer(issVerdictMenu, 1, "a")
	if code := q.exit(); code != ExitOK {
		t.Fatalf("exit %d\n%s", code, q.text())
	}
	o := desDoc(t, q.stdout.String())
	if o.RunID != id || o.Status != "done" || o.Commit == "" || !strings.HasSuffix(o.Next, "implement --lld docs/lld/001-multiply.md") {
		t.Fatalf("document %+v", o)
	}
	if calls := w.calls(id); calls["drafter"] != 1 || calls["reviewer"] != 1 {
		t.Errorf("model calls %v: the resumed run asked the drafter again", calls)
	}
	if !strings.Contains(q.text(), "implement --lld docs/lld/001-multiply.md") {
		t.Errorf("the run does not end with the next command:\n%s", q.text())
	}
	if head := strings.TrimSpace(w.git("rev-parse", "HEAD")); !strings.HasPrefix(head, o.Commit) && head != o.Commit {
		t.Errorf("HEAD %s, the run's commit %s", head, o.Commit)
	}
}

// TestPipelineAsDocumented runs the README's "From notes to merged code"
// as written: the project, the notes and the coder's script it shows, its
// three commands on a terminal answering every gate, and the files it
// says each step leaves.
func TestPipelineAsDocumented(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "go")
	section := readmeSection(t, "## From notes to merged code")
	infos, bodies := fencedBlocks(section)
	if strings.Join(infos, " ") != "go markdown toml sh text" {
		t.Fatalf("the section's code blocks are %q", infos)
	}
	w := newIssWorld(t, "")
	testenv.WriteFiles(t, w.repo, map[string]string{"go.mod": "module example.com/calc\n\ngo 1.22\n", "calc.go": bodies[0]})
	w.git("add", "-A")
	w.git("commit", "-q", "-m", "calc")
	testenv.WriteFiles(t, w.repo, map[string]string{"notes/multiply.md": bodies[1], "notes/coder.toml": bodies[2]})
	base := strings.TrimSpace(w.git("rev-parse", "HEAD"))

	lines := strings.Split(strings.TrimSpace(bodies[3]), "\n")
	if len(lines) != 3 {
		t.Fatalf("the section's commands: %q", lines)
	}
	for i, line := range lines {
		var env, args []string
		fields := strings.Fields(line)
		for len(fields) > 0 && strings.Contains(fields[0], "=") {
			env, fields = append(env, fields[0]), fields[1:]
		}
		if len(fields) < 2 || fields[0] != "azero" {
			t.Fatalf("line %d of the commands is not azero's: %q", i+1, line)
		}
		args = fields[1:]
		p := w.start(env, args...)
		switch args[0] {
		case "issue", "design":
			p.answer(issDraftMenu, 1, "s")
			p.answer(issVerdictMenu, 1, "a")
		case "implement":
			// The diff review asks only when something is flagged; the
			// merge always asks.
			deadline := time.Now().Add(testenv.Patience)
			for reviewed := false; !strings.Contains(p.text(), "to merge it"); time.Sleep(20 * time.Millisecond) {
				if !reviewed && strings.Contains(p.text(), "unless you type approve") {
					p.Type(t, "approve")
					reviewed = true
				}
				if time.Now().After(deadline) {
					t.Fatalf("implement never asked to merge:\n%s", p.text())
				}
			}
			p.Type(t, "approve")
		}
		if code := p.exit(); code != ExitOK {
			t.Fatalf("%s: exit %d\n%s", line, code, p.text())
		}
		if args[0] == "design" && !strings.Contains(p.text(), "implement --lld docs/lld/001-multiply.md") {
			t.Errorf("the design run does not end with the next command:\n%s", p.text())
		}
	}
	if n := strings.TrimSpace(w.git("rev-list", "--count", base+"..HEAD")); n != "3" {
		t.Errorf("%s commits after the walk, want 3:\n%s", n, w.git("log", "--oneline"))
	}
	for _, f := range strings.Fields(bodies[4]) {
		if _, err := os.Stat(filepath.Join(w.repo, f)); err != nil || strings.TrimSpace(w.git("ls-files", f)) != f {
			t.Errorf("the README says the walk leaves %s: %v", f, err)
		}
	}
	if got := w.read("calc.go"); !strings.Contains(got, "return a * b") {
		t.Errorf("main's calc.go is not the implementation:\n%s", got)
	}
	// The lineage: the design's trail names the issue's, which names its run.
	if got := w.read("docs/audit/done/design-001-multiply/001-issue.md"); !strings.Contains(got, "docs/audit/done/1-multiply/") {
		t.Errorf("the design's trail does not link the issue's:\n%s", got)
	}
	if w.exists("notes/multiply.md") && strings.TrimSpace(w.git("ls-files", "notes")) != "" {
		t.Error("the user's notes were committed")
	}
}
