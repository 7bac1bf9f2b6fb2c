package issue_test

// End-to-end tests of the issue workflow driven through the run service
// in this test's process, as every door drives it: a real git repository,
// the local tracker or a fake GitHub speaking its REST API, the scripted
// drafter and reviewer, the store, lineage and audit log in a temporary
// state directory, and the human an answerer in the test, answering each
// question as the terminal's person would. What the command adds (flags,
// exit codes, its --json document, the real terminal and editor,
// processes killed) is tested in internal/cli.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/runs"
	"github.com/azero-dev/azero/internal/runs/runstest"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
	"github.com/azero-dev/azero/internal/tracker"
	"github.com/azero-dev/azero/internal/tracker/trackertest"
	"github.com/azero-dev/azero/internal/workflow/issue"
)

// serviceScript is a drafter and reviewer script: one reply per turn.
func serviceScript(drafts, verdicts []string) string {
	return testenv.ModelScript("drafter", drafts...) + testenv.ModelScript("reviewer", verdicts...)
}

const (
	svcDraft = "# Add a budget flag\n\n**Labels:** enhancement\n\n## Summary\n\nStop runs that cost too much.\n\n## Acceptance Criteria\n\n- [ ] A run over budget stops.\n"
	svcOK    = "**Verdict:** APPROVED\n\nLooks complete.\n"
)

// world is a repository with a commit, a state directory and the
// environment of an azero process under test, for one test.
type world struct {
	t      *testing.T
	repo   string
	notes  string // briefs live here, outside the repository
	state  string
	vars   []string
	fake   *trackertest.GitHub
	events runstest.Events
}

func newWorld(t *testing.T, script string) *world {
	t.Helper()
	testenv.RequireTool(t, "git")
	w := &world{t: t, repo: testenv.NewRepo(t, map[string]string{"README.md": "project\n"}), notes: t.TempDir(), state: t.TempDir()}
	// The editor must exist (the run checks it first); the answerer
	// edits the files itself, as the terminal's editor would.
	w.vars = []string{"AZERO_MOCK_LLM=1", "EDITOR=true"}
	if script != "" {
		w.vars = append(w.vars, "AZERO_MOCK_SCRIPT="+testenv.WriteScript(t, script))
	}
	return w
}

// withGitHub files to a fake GitHub holding acme/widgets.
func (w *world) withGitHub(labels ...string) *trackertest.GitHub {
	w.fake = trackertest.NewGitHub(w.t, "acme", "widgets", "ghp_testtoken123456", labels...)
	w.vars = append(w.vars, "GITHUB_TOKEN="+w.fake.Token, "GITHUB_API_URL="+w.fake.URL)
	return w.fake
}

func (w *world) brief(name, text string) string {
	p := filepath.Join(w.notes, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		w.t.Fatal(err)
	}
	return p
}

// reply is how the human answers one question: the key, the feedback
// text the option asks for, and what becomes of the files of an editor
// question (nil: saved as shown).
type reply struct {
	key  string
	text string
	edit func(name, content string) string
}

// answerer answers the run's questions in order, as the person at the
// terminal would; a question beyond its replies fails the test.
type answerer struct {
	t       *testing.T
	mu      sync.Mutex
	replies []reply
	asked   []human.Question
}

func (a *answerer) Answer(_ context.Context, q human.Question) (human.Answer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, q)
	if len(a.replies) == 0 {
		a.t.Errorf("question %s (%s) beyond the test's replies", q.Gate, q.Title)
		return human.Answer{}, human.ErrNoTerminal
	}
	r := a.replies[0]
	a.replies = a.replies[1:]
	ans := human.Answer{Gate: q.Gate, Key: r.key, Text: r.text, Channel: human.ChannelTerminal}
	if q.Kind == human.Editor {
		ans.Files = map[string]string{}
		for _, f := range q.Files {
			c := f.Content
			if r.edit != nil {
				c = r.edit(f.Name, c)
			}
			ans.Files[f.Name] = c
		}
	}
	return ans, nil
}

// titles are the titles of the questions asked, in order.
func (a *answerer) titles() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, q := range a.asked {
		out = append(out, q.Title)
	}
	return out
}

// reports are the questions asked as the terminal shows them: title,
// report and prompt.
func (a *answerer) reports() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var b strings.Builder
	for _, q := range a.asked {
		b.WriteString(q.Title + "\n" + q.Report + "\n" + q.Prompt + "\n")
	}
	return b.String()
}

// issue starts a run as azero issue does and drives it as far as it goes,
// the human answering with replies.
func (w *world) issue(req runs.IssueRequest, replies ...reply) (runs.Outcome, *answerer, error) {
	w.t.Helper()
	env := runstest.NewEnv(w.t, w.state, w.repo, w.vars...)
	cfg, err := env.Config(w.repo)
	if err != nil {
		w.t.Fatal(err)
	}
	if req.BriefPath != "" {
		if req.Brief, err = os.ReadFile(req.BriefPath); err != nil {
			w.t.Fatal(err)
		}
	}
	req.Repo = w.repo
	a := &answerer{t: w.t, replies: replies}
	p, _, err := runs.PrepareIssue(w.t.Context(), env, cfg, req, runs.Terminal{Watch: w.events.Watch, Answerer: a})
	if err != nil {
		return runs.Outcome{}, a, err
	}
	out, err := runstest.Start(w.t, env, p)
	if len(a.replies) > 0 {
		w.t.Errorf("the run ended (%v) before the human's last %d answers", err, len(a.replies))
	}
	return out, a, err
}

// shown is what the run's events said, one text to a line.
func (w *world) shown() string { return w.events.String() }

// result is the run's report, as azero issue --json prints it.
type result struct {
	Slug      string        `json:"slug"`
	AuditDir  string        `json:"audit_dir"`
	Tracker   string        `json:"tracker"`
	Iteration int           `json:"iteration"`
	Drafts    int           `json:"drafts"`
	Verdicts  int           `json:"verdicts"`
	Issue     *issue.Filed  `json:"issue"`
	Trail     []issue.Entry `json:"trail"`
}

func (w *world) result(out runs.Outcome) result {
	w.t.Helper()
	raw, err := json.Marshal(out.Result)
	if err != nil {
		w.t.Fatal(err)
	}
	var r result
	if err := json.Unmarshal(raw, &r); err != nil {
		w.t.Fatalf("the run's report: %v\n%s", err, raw)
	}
	return r
}

func (w *world) names(dir string) []string {
	w.t.Helper()
	entries, err := issue.Trail{Root: w.repo, Dir: dir}.Entries()
	if err != nil {
		w.t.Fatal(err)
	}
	out := []string{}
	for _, e := range entries {
		out = append(out, e.Name)
	}
	return out
}

func (w *world) exists(rel string) bool {
	_, err := os.Stat(filepath.Join(w.repo, filepath.FromSlash(rel)))
	return err == nil
}

func (w *world) read(rel string) string {
	w.t.Helper()
	b, err := os.ReadFile(filepath.Join(w.repo, filepath.FromSlash(rel)))
	if err != nil {
		w.t.Fatal(err)
	}
	return string(b)
}

func (w *world) git(args ...string) string {
	w.t.Helper()
	return testenv.Git(w.t, w.repo, args...)
}

func (w *world) auditEvents(name string) []audit.Record {
	w.t.Helper()
	return testenv.AuditEvents(w.t, w.state, name)
}

// lineage returns the run's lineage file whose name ends with suffix, the
// n-th such (from 1).
func (w *world) lineage(runID, suffix string, n int) string {
	w.t.Helper()
	return testenv.NthFile(w.t, filepath.Join(w.state, "runs", runID), suffix, n)
}

// calls counts a run's model calls by role.
func (w *world) calls(runID string) map[string]int {
	w.t.Helper()
	st, err := store.Open(w.t.Context(), filepath.Join(w.state, store.FileName), store.Options{})
	if err != nil {
		w.t.Fatal(err)
	}
	defer st.Close()
	calls, err := st.Calls(w.t.Context(), runID)
	if err != nil {
		w.t.Fatal(err)
	}
	out := map[string]int{}
	for _, c := range calls {
		out[c.Role]++
	}
	return out
}

// files are the names of the files each editor question gave the human.
func (a *answerer) files() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, q := range a.asked {
		if q.Kind != human.Editor {
			continue
		}
		var names []string
		for _, f := range q.Files {
			names = append(names, f.Name)
		}
		out = append(out, strings.Join(names, " "))
	}
	return out
}

// The happy path on GitHub: send the draft, approve the verdict; the issue
// is filed with the run's marker, every gate decision is in the audit log
// with its counts, and the reviewer got the built-in prompt.
func TestIssue010HappyPath(t *testing.T) {
	t.Parallel()
	w := newWorld(t, serviceScript([]string{svcDraft}, []string{svcOK}))
	fake := w.withGitHub("enhancement")
	brief := w.brief("governance-notes.md", "# Governance notes\n\nStop runaway spending.\n")
	out, a, err := w.issue(runs.IssueRequest{BriefPath: brief, Tracker: "github", GitHub: "acme/widgets"},
		reply{key: issue.AnswerSend}, reply{key: issue.AnswerApprove})
	if err != nil {
		t.Fatalf("err = %v\n%s", err, w.shown())
	}
	r := w.result(out)
	is := r.Issue
	if out.Status != "done" || is == nil || is.Number != 1 || is.URL != "https://github.example/acme/widgets/issues/1" {
		t.Fatalf("outcome = %+v", out)
	}
	if r.Slug != "governance-notes" || r.AuditDir != "docs/audit/done/1-governance-notes" || r.Iteration != 1 ||
		r.Drafts != 1 || r.Verdicts != 1 || len(r.Trail) != 4 {
		t.Errorf("result = %+v", r)
	}
	if got := a.titles(); !slices.Equal(got, []string{"Iteration 1 | Draft #1", "Iteration 1 | Draft #1 | Verdict #1"}) {
		t.Errorf("questions = %q", got)
	}
	for _, want := range []string{"Reviewer's verdict: APPROVED", "Filed issue #1: https://github.example/acme/widgets/issues/1"} {
		if !strings.Contains(a.reports()+w.shown(), want) {
			t.Errorf("the run did not say %q:\n%s%s", want, a.reports(), w.shown())
		}
	}
	issues := fake.Issues()
	if len(issues) != 1 || issues[0]["title"] != "Add a budget flag" ||
		!strings.Contains(issues[0]["body"].(string), tracker.Marker(out.RunID)) || !strings.Contains(issues[0]["body"].(string), "Stop runs that cost too much.") {
		t.Errorf("issues = %v", issues)
	}
	// Every gate decision is in the audit log, with the counts.
	var seen []string
	for _, rec := range w.auditEvents("gate_decision") {
		seen = append(seen, fmt.Sprintf("%v:%v:%v/%v/%v", rec["gate"], rec["decision"], rec["iteration"], rec["drafts"], rec["verdicts"]))
		if rec["run_id"] != out.RunID {
			t.Errorf("decision without the run id: %v", rec)
		}
	}
	if !slices.Equal(seen, []string{"edit_draft:send:1/1/0", "edit_verdict:approve:1/1/1"}) {
		t.Errorf("gate decisions = %v", seen)
	}
	if rev := w.auditEvents("issue_review"); len(rev) != 1 || rev[0]["review_prompt_sha256"] != issue.ReviewPromptSHA256() {
		t.Errorf("review events = %v", rev)
	}
	// The reviewer got the built-in prompt, whatever the repository holds.
	if p := w.lineage(out.RunID, "prompt-review.md", 1); !strings.Contains(p, strings.TrimSpace(issue.ReviewPrompt())) {
		t.Errorf("the reviewer's prompt is not the built-in one:\n%s", p)
	}
}

// Labels the draft names that the tracker lacks are created once, in the
// tracker's spelling when it has them in another case.
func TestIssue100LabelCreation(t *testing.T) {
	t.Parallel()
	draft := "# Audit the gates\n\n**Labels:** `enhancement`, governance-workflow, Enhancement\n\n## Summary\n\nx\n"
	w := newWorld(t, serviceScript([]string{draft}, []string{svcOK}))
	fake := w.withGitHub("enhancement", "bug")
	brief := w.brief("gates.md", "audit the gates\n")
	_, _, err := w.issue(runs.IssueRequest{BriefPath: brief, GitHub: "acme/widgets"}, reply{key: issue.AnswerSend}, reply{key: issue.AnswerApprove})
	if err != nil {
		t.Fatalf("err = %v\n%s", err, w.shown())
	}
	if got := fake.Labels(); !slices.Equal(got, []string{"enhancement", "bug", "governance-workflow"}) {
		t.Errorf("labels = %v", got)
	}
	posts := 0
	for _, r := range fake.Requests() {
		if r == "POST /repos/acme/widgets/labels" {
			posts++
		}
	}
	if posts != 1 {
		t.Errorf("%d label creations, want 1", posts)
	}
	is := fake.Issues()
	if len(is) != 1 || fmt.Sprint(is[0]["labels"]) != "[map[name:enhancement] map[name:governance-workflow]]" {
		t.Errorf("issue = %v", is)
	}
	if !strings.Contains(w.shown(), "Created labels on github acme/widgets: governance-workflow") {
		t.Errorf("events:\n%s", w.shown())
	}
}

// TestIssue170SequentialNumbering: ten revision loops through both gates
// number every file in event order, without gaps.
func TestIssue170SequentialNumbering(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "") // built-in replies for any number of turns
	brief := w.brief("loops.md", "# Loops\n\nMany revisions.\n")
	want := []string{"brief", "draft"}
	var replies []reply
	for i := 1; i <= 10; i++ {
		feedback := fmt.Sprintf("loop %d", i)
		if i%2 == 1 { // revise at the draft gate
			replies = append(replies, reply{key: issue.AnswerRevise, text: feedback})
			want = append(want, "feedback", "draft")
		} else { // send, then revise at the verdict gate
			replies = append(replies, reply{key: issue.AnswerSend}, reply{key: issue.AnswerRevise, text: feedback})
			want = append(want, "verdict", "feedback", "draft")
		}
	}
	replies = append(replies, reply{key: issue.AnswerSend}, reply{key: issue.AnswerApprove})
	want = append(want, "verdict", "filed")
	out, a, err := w.issue(runs.IssueRequest{BriefPath: brief}, replies...)
	if err != nil {
		t.Fatalf("err = %v\n%s", err, w.shown())
	}
	r := w.result(out)
	if r.Iteration != 11 || r.Drafts != 11 || r.Verdicts != 6 {
		t.Errorf("counts = %+v", r)
	}
	if titles := a.titles(); len(titles) == 0 || titles[len(titles)-1] != "Iteration 11 | Draft #11 | Verdict #6" {
		t.Errorf("the last gate did not show the counts: %q", titles)
	}
	names := w.names(r.AuditDir)
	if len(names) != len(want) {
		t.Fatalf("trail = %v\nwant kinds %v", names, want)
	}
	for i, name := range names {
		e, _ := issue.ParseEntry(name)
		if e.N != i+1 || e.Kind != want[i] {
			t.Errorf("file %d is %s, want %03d-%s", i+1, name, i+1, want[i])
		}
	}
	for i := 1; i <= 10; i++ {
		found := false
		for _, name := range names {
			if strings.HasSuffix(name, "feedback.txt") && w.read(r.AuditDir+"/"+name) == fmt.Sprintf("loop %d\n", i) {
				found = true
			}
		}
		if !found {
			t.Errorf("feedback of loop %d is missing", i)
		}
	}
}

// localRun files an issue with the local tracker in a repository holding
// the user's own work: a staged file and an unstaged edit.
func localRun(t *testing.T) (*world, runs.Outcome, result) {
	w := newWorld(t, serviceScript([]string{svcDraft}, []string{svcOK}))
	testenv.WriteFiles(t, w.repo, map[string]string{"wip.txt": "mine\n", "README.md": "project, edited\n"})
	w.git("add", "wip.txt")
	brief := w.brief("budget.md", "add a budget\n")
	out, _, err := w.issue(runs.IssueRequest{BriefPath: brief}, reply{key: issue.AnswerSend}, reply{key: issue.AnswerApprove})
	if err != nil {
		t.Fatalf("err = %v\n%s", err, w.shown())
	}
	return w, out, w.result(out)
}

// The filed run's trail moves to done/<issue#>-<slug>/ and ends with the
// filing's record; the local issue carries the run's marker.
func TestIssue180MoveToDone(t *testing.T) {
	t.Parallel()
	w, out, r := localRun(t)
	if r.AuditDir != "docs/audit/done/1-budget" || w.exists("docs/audit/active/budget") {
		t.Fatalf("audit dir %s, active still there: %v", r.AuditDir, w.exists("docs/audit/active/budget"))
	}
	want := []string{"001-brief.md", "002-draft.md", "003-verdict.md", "004-filed.json"}
	if got := w.names("docs/audit/done/1-budget"); !slices.Equal(got, want) {
		t.Errorf("trail = %v", got)
	}
	var rec issue.Filed
	if err := json.Unmarshal([]byte(w.read("docs/audit/done/1-budget/004-filed.json")), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Number != 1 || rec.URL != "docs/issues/0001-add-a-budget-flag.md" || rec.Title != "Add a budget flag" ||
		!slices.Equal(rec.Labels, []string{"enhancement"}) || rec.At.IsZero() || rec.Tracker != "local docs/issues" {
		t.Errorf("filed.json = %+v", rec)
	}
	if body := w.read(rec.URL); !strings.Contains(body, tracker.Marker(out.RunID)) {
		t.Errorf("local issue = %q", body)
	}
}

// One commit records exactly the trail and the local issue; the user's
// staged and unstaged work stays as it was.
func TestIssue190OneCommit(t *testing.T) {
	t.Parallel()
	w, out, r := localRun(t)
	if got := strings.TrimSpace(w.git("rev-list", "--count", "HEAD")); got != "2" {
		t.Fatalf("commits = %s, want 2", got)
	}
	head := strings.TrimSpace(w.git("rev-parse", "HEAD"))
	if r.Issue.Commit != head {
		t.Errorf("reported commit %s, HEAD %s", r.Issue.Commit, head)
	}
	files := strings.Fields(w.git("show", "--name-only", "--format=", "HEAD"))
	want := []string{"docs/audit/done/1-budget/001-brief.md", "docs/audit/done/1-budget/002-draft.md",
		"docs/audit/done/1-budget/003-verdict.md", "docs/audit/done/1-budget/004-filed.json", "docs/issues/0001-add-a-budget-flag.md"}
	slices.Sort(files)
	if !slices.Equal(files, want) {
		t.Errorf("commit holds %v, want %v", files, want)
	}
	if msg := w.git("log", "-1", "--format=%B"); !strings.Contains(msg, "issue #1") || !strings.Contains(msg, out.RunID) {
		t.Errorf("message = %q", msg)
	}
	status := w.git("status", "--porcelain")
	if !strings.Contains(status, "A  wip.txt") || !strings.Contains(status, " M README.md") || strings.Contains(status, "docs/") {
		t.Errorf("status after the commit = %q; the user's changes must stay as they were", status)
	}
}

const svcBlock = "**Verdict:** BLOCK\n\n## Tier 1: blocking\n\n- INTERNAL-ONLY remark: the acceptance criteria are missing.\n"

// TestIssue050And060ReviseAtDraftGate: R at N3 loops to the drafter, and
// the reviewer is never called.
func TestIssue050And060ReviseAtDraftGate(t *testing.T) {
	t.Parallel()
	draft2 := "# Add a budget flag to every workflow\n\n**Labels:** enhancement\n\n## Summary\n\nRevised.\n"
	w := newWorld(t, serviceScript([]string{svcDraft, draft2}, []string{svcOK}))
	brief := w.brief("budget.md", "add a budget\n")
	out, a, err := w.issue(runs.IssueRequest{BriefPath: brief},
		reply{key: issue.AnswerRevise, text: "Name every workflow."}, reply{key: issue.AnswerManual})
	if !errors.Is(err, human.ErrAborted) {
		t.Fatalf("err = %v, want the run stopped by the human\n%s", err, w.shown())
	}
	if titles := a.titles(); len(titles) != 2 || titles[1] != "Iteration 2 | Draft #2" {
		t.Errorf("questions = %q", titles)
	}
	r := w.result(out)
	if c := w.calls(out.RunID); c["drafter"] != 2 || c["reviewer"] != 0 {
		t.Errorf("calls = %v; want the drafter twice and the reviewer never", c)
	}
	if r.Verdicts != 0 || r.Drafts != 2 || r.Iteration != 2 {
		t.Errorf("counts = %+v", r)
	}
	want := []string{"001-brief.md", "002-draft.md", "003-feedback.txt", "004-draft.md"}
	if got := w.names("docs/audit/active/budget"); !slices.Equal(got, want) {
		t.Errorf("trail = %v, want %v", got, want)
	}
	if fb := w.read("docs/audit/active/budget/003-feedback.txt"); fb != "Name every workflow.\n" {
		t.Errorf("feedback = %q", fb)
	}
	if rev := w.lineage(out.RunID, "prompt-draft.md", 2); !strings.Contains(rev, "Name every workflow.") || !strings.Contains(rev, "Stop runs that cost too much.") {
		t.Errorf("the revision prompt lacks the feedback or the draft:\n%s", rev)
	}
	said := err.Error() + w.shown() + strings.Join(out.Notes, "\n")
	if !strings.Contains(said, "stopped for manual handling at edit_draft") || !strings.Contains(said, "docs/audit/active/budget/") {
		t.Errorf("manual message missing:\n%s", said)
	}
}

// TestIssue070And080ReviseAtVerdictGateWithSanitisedVerdict: R at N5
// loops to the drafter with the verdict as the human left it.
func TestIssue070And080ReviseAtVerdictGateWithSanitisedVerdict(t *testing.T) {
	t.Parallel()
	draft2 := "# Add a budget flag to every workflow\n\n**Labels:** enhancement\n\n## Summary\n\nRevised.\n"
	w := newWorld(t, serviceScript([]string{svcDraft, draft2}, []string{svcBlock, svcOK}))
	brief := w.brief("budget.md", "add a budget\n")
	// The second editor question is N5 (draft, verdict): the human
	// rewrites the verdict.
	sanitise := func(name, content string) string {
		if name == "verdict.md" {
			return "**Verdict:** BLOCK\n\nSanitised: add acceptance criteria.\n"
		}
		return content
	}
	out, a, err := w.issue(runs.IssueRequest{BriefPath: brief},
		reply{key: issue.AnswerSend}, reply{key: issue.AnswerRevise, text: "Follow the reviewer.", edit: sanitise}, reply{key: issue.AnswerManual})
	if !errors.Is(err, human.ErrAborted) {
		t.Fatalf("err = %v, want the run stopped by the human\n%s", err, w.shown())
	}
	want := []string{"001-brief.md", "002-draft.md", "003-verdict.md", "004-verdict-edited.md", "005-feedback.txt", "006-draft.md"}
	if got := w.names("docs/audit/active/budget"); !slices.Equal(got, want) {
		t.Fatalf("trail = %v, want %v", got, want)
	}
	if c := w.calls(out.RunID); c["drafter"] != 2 || c["reviewer"] != 1 {
		t.Errorf("calls = %v", c)
	}
	rev := w.lineage(out.RunID, "prompt-draft.md", 2)
	if !strings.Contains(rev, "Sanitised: add acceptance criteria.") || !strings.Contains(rev, "Follow the reviewer.") {
		t.Errorf("the drafter did not get the sanitised verdict and the feedback:\n%s", rev)
	}
	if strings.Contains(rev, "INTERNAL-ONLY") {
		t.Error("text the human removed from the verdict reached the drafter")
	}
	if got := a.files(); !slices.Equal(got, []string{"draft.md", "draft.md verdict.md", "draft.md"}) {
		t.Errorf("editor questions' files = %q; want draft, draft+verdict, draft", got)
	}
}

// TestIssue090BlockVerdict: a BLOCK verdict is saved as the model wrote it
// and shown at the gate.
func TestIssue090BlockVerdict(t *testing.T) {
	t.Parallel()
	noCriteria := "# Add a budget flag\n\n**Labels:** enhancement\n\n## Summary\n\nNo criteria here.\n"
	w := newWorld(t, serviceScript([]string{noCriteria}, []string{svcBlock}))
	brief := w.brief("budget.md", "add a budget\n")
	_, a, err := w.issue(runs.IssueRequest{BriefPath: brief}, reply{key: issue.AnswerSend}, reply{key: issue.AnswerManual})
	if !errors.Is(err, human.ErrAborted) {
		t.Fatalf("err = %v, want the run stopped by the human\n%s", err, w.shown())
	}
	if !strings.Contains(a.reports(), "Reviewer's verdict: BLOCK") {
		t.Errorf("the gate did not show the verdict:\n%s", a.reports())
	}
	if v := w.read("docs/audit/active/budget/003-verdict.md"); !strings.Contains(v, "**Verdict:** BLOCK") {
		t.Errorf("verdict = %q", v)
	}
	if d := w.auditEvents("gate_decision"); len(d) != 2 || d[1]["verdict"] != "BLOCK" || d[1]["decision"] != "manual" {
		t.Errorf("decisions = %v", d)
	}
}

// rejected runs an issue whose first creation GitHub rejects, up to the
// Retry / Edit / Abort question, where the human answers with then.
func rejected(t *testing.T, then ...reply) (*world, runs.Outcome, *answerer, error) {
	w := newWorld(t, serviceScript([]string{svcDraft}, []string{svcOK}))
	w.withGitHub("enhancement").FailNextCreates(http.StatusUnprocessableEntity)
	brief := w.brief("budget.md", "add a budget\n")
	replies := append([]reply{{key: issue.AnswerSend}, {key: issue.AnswerApprove}}, then...)
	out, a, err := w.issue(runs.IssueRequest{BriefPath: brief, GitHub: "acme/widgets"}, replies...)
	if titles := a.titles(); len(titles) < 3 || titles[2] != "Filing failed: github: create the issue: 422 simulated failure 422" {
		t.Errorf("questions = %q", titles)
	}
	return w, out, a, err
}

func (w *world) postIssues() int {
	n := 0
	for _, r := range w.fake.Requests() {
		if r == "POST /repos/acme/widgets/issues" {
			n++
		}
	}
	return n
}

// TestIssue120RetryAfterError: Retry files on the second attempt.
func TestIssue120RetryAfterError(t *testing.T) {
	t.Parallel()
	w, out, _, err := rejected(t, reply{key: issue.AnswerRetry})
	if err != nil {
		t.Fatalf("err = %v\n%s", err, w.shown())
	}
	if n := w.postIssues(); n != 2 || len(w.fake.Issues()) != 1 {
		t.Errorf("%d creates, %d issues; want 2 and 1", n, len(w.fake.Issues()))
	}
	if r := w.result(out); out.Status != "done" || r.Issue == nil || r.Issue.Number != 1 {
		t.Errorf("outcome = %+v", out)
	}
}

// TestIssue130EditAfterError: Edit asks the verdict gate again; the edited
// draft is what gets filed.
func TestIssue130EditAfterError(t *testing.T) {
	t.Parallel()
	addLine := func(name, content string) string {
		if name == "draft.md" {
			return content + "\nA line added after the rejection.\n"
		}
		return content
	}
	w, _, a, err := rejected(t, reply{key: issue.AnswerEdit}, reply{key: issue.AnswerApprove, edit: addLine})
	if err != nil {
		t.Fatalf("err = %v\n%s", err, w.shown())
	}
	if got := a.files(); len(got) != 3 || got[2] != "draft.md verdict.md" {
		t.Errorf("editor questions' files = %q; want the verdict gate asked again", got)
	}
	is := w.fake.Issues()
	if len(is) != 1 || !strings.Contains(is[0]["body"].(string), "A line added after the rejection.") {
		t.Errorf("issues = %v", is)
	}
	want := []string{"001-brief.md", "002-draft.md", "003-verdict.md", "004-draft-edited.md", "005-filed.json"}
	if got := w.names("docs/audit/done/1-budget"); !slices.Equal(got, want) {
		t.Errorf("trail = %v, want %v", got, want)
	}
}

// TestIssue140AbortAfterError: Abort fails the run with the error; the
// files stay in active/ and nothing is committed.
func TestIssue140AbortAfterError(t *testing.T) {
	t.Parallel()
	w, out, _, err := rejected(t, reply{key: issue.AnswerAbort})
	if err == nil || errors.Is(err, human.ErrAborted) || errors.Is(err, flow.ErrWaiting) {
		t.Fatalf("err = %v, want the run failed with the filing's error", err)
	}
	if said := err.Error() + w.shown(); !strings.Contains(said, "filing aborted; nothing was filed and the audit trail stays in docs/audit/active/budget/") {
		t.Errorf("the run did not say so:\n%s", said)
	}
	if got := w.names("docs/audit/active/budget"); len(got) != 3 || w.exists("docs/audit/done") {
		t.Errorf("active = %v", got)
	}
	if got := strings.TrimSpace(w.git("rev-list", "--count", "HEAD")); got != "1" {
		t.Errorf("commits = %s", got)
	}
	if out.Status != "failed" || out.Resume == "" {
		t.Errorf("outcome = %+v; want failed and resumable", out)
	}
}

// TestIssue110GitHubRejection: the error is shown with the choices, and
// the files stay in active/.
func TestIssue110GitHubRejection(t *testing.T) {
	t.Parallel()
	w, _, a, _ := rejected(t, reply{key: issue.AnswerAbort})
	if q := a.asked[2]; !strings.Contains(q.Title, "422 simulated failure 422") || len(q.Options) != 3 {
		t.Errorf("the filing error's question: %+v", q)
	}
	if got := w.names("docs/audit/active/budget"); len(got) != 3 || w.exists("docs/audit/done") {
		t.Errorf("active = %v", got)
	}
}

// The draft as the human edited it is what the reviewer reads and what is
// filed.
func TestIssueEditedDraftIsWhatIsSentAndFiled(t *testing.T) {
	t.Parallel()
	w := newWorld(t, serviceScript([]string{svcDraft}, []string{svcOK}))
	retitle := func(name, content string) string {
		return strings.Replace(content, "# Add a budget flag\n", "# Add a spending budget\n", 1)
	}
	brief := w.brief("budget.md", "add a budget\n")
	out, _, err := w.issue(runs.IssueRequest{BriefPath: brief}, reply{key: issue.AnswerSend, edit: retitle}, reply{key: issue.AnswerApprove})
	if err != nil {
		t.Fatalf("err = %v\n%s", err, w.shown())
	}
	r := w.result(out)
	want := []string{"001-brief.md", "002-draft.md", "003-draft-edited.md", "004-verdict.md", "005-filed.json"}
	if got := w.names(r.AuditDir); !slices.Equal(got, want) {
		t.Errorf("trail = %v", got)
	}
	if r.Issue == nil || r.Issue.Title != "Add a spending budget" {
		t.Errorf("filed %+v", r.Issue)
	}
	if rev := w.lineage(out.RunID, "prompt-review.md", 1); !strings.Contains(rev, "# Add a spending budget") {
		t.Errorf("the reviewer did not get the edited draft:\n%s", rev)
	}
}

// The lines the human added to the draft reach the reviewer as the
// human's own facts, the drafter is told the tracker's labels, and the
// issue's body is the draft without its title and labels lines.
func TestIssueReviewerSeesTheHumansFact(t *testing.T) {
	t.Parallel()
	w := newWorld(t, serviceScript([]string{svcDraft}, []string{svcOK}))
	fake := w.withGitHub("bug", "enhancement")
	addFact := func(name, content string) string {
		return content + "\nThe default budget is 5 USD per run (HUMAN-FACT).\n"
	}
	brief := w.brief("budget.md", "add a budget\n")
	out, a, err := w.issue(runs.IssueRequest{BriefPath: brief, GitHub: "acme/widgets"}, reply{key: issue.AnswerSend, edit: addFact}, reply{key: issue.AnswerApprove})
	if err != nil {
		t.Fatalf("err = %v\n%s", err, w.shown())
	}
	if strings.Contains(a.reports(), "override") {
		t.Errorf("filing asked for an override:\n%s", a.reports())
	}
	rev := w.lineage(out.RunID, "prompt-review.md", 1)
	if !strings.Contains(rev, "<human>\nLines the human wrote into draft #1, at the draft gate (each marked +):\n+The default budget is 5 USD per run (HUMAN-FACT).\n</human>") ||
		!strings.Contains(rev, "facts and decisions from the\nperson responsible") {
		t.Errorf("the reviewer was not given the human's fact as theirs:\n%s", rev)
	}
	if d := w.lineage(out.RunID, "prompt-draft.md", 1); !strings.Contains(d, "<labels>\nbug\nenhancement\n</labels>") {
		t.Errorf("the drafter was not told the labels:\n%s", d)
	}
	issues := fake.Issues()
	if len(issues) != 1 {
		t.Fatalf("issues = %v", issues)
	}
	body := issues[0]["body"].(string)
	if issues[0]["title"] != "Add a budget flag" || strings.Contains(body, "# Add a budget flag") || strings.Contains(body, "**Labels:**") ||
		!strings.HasPrefix(body, "## Summary") || !strings.Contains(body, "HUMAN-FACT") {
		t.Errorf("issue %q with body %q; want the body without the title and labels lines", issues[0]["title"], body)
	}
}

// The repository's config chooses the audit and issues directories and
// the local tracker's labels.
func TestIssueConfiguredDirectories(t *testing.T) {
	t.Parallel()
	w := newWorld(t, serviceScript([]string{svcDraft}, []string{svcOK}))
	testenv.WriteFiles(t, w.repo, map[string]string{".azero/config.toml": "[issue]\naudit_dir = \"governance/trail\"\nissues_dir = \"governance/issues\"\nlabels = [\"triage\", \"enhancement\"]\n"})
	w.git("add", ".azero/config.toml")
	w.git("commit", "-q", "-m", "config")
	brief := w.brief("budget.md", "add a budget\n")
	out, _, err := w.issue(runs.IssueRequest{BriefPath: brief}, reply{key: issue.AnswerSend}, reply{key: issue.AnswerApprove})
	if err != nil {
		t.Fatalf("err = %v\n%s", err, w.shown())
	}
	r := w.result(out)
	if r.AuditDir != "governance/trail/done/1-budget" || r.Issue == nil || r.Issue.URL != "governance/issues/0001-add-a-budget-flag.md" {
		t.Errorf("outcome = %+v", r)
	}
	if len(w.names("governance/trail/done/1-budget")) != 4 || w.exists("docs") {
		t.Error("the configured directories were not used")
	}
	// issue.labels are the local tracker's labels, offered to the drafter.
	if d := w.lineage(out.RunID, "prompt-draft.md", 1); !strings.Contains(d, "<labels>\nenhancement\ntriage\n</labels>") {
		t.Errorf("the drafter was not told the configured labels:\n%s", d)
	}
}
