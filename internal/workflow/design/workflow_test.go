package design

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
	"github.com/azero-dev/azero/internal/tracker"
)

// project is a small Go module whose Multiply is wrong.
var project = map[string]string{
	"go.mod":       "module example.com/calc\n\ngo 1.22\n",
	"calc.go":      "package calc\n\n// Add returns a + b.\nfunc Add(a, b int) int { return a + b }\n\n// Multiply returns a times b.\nfunc Multiply(a, b int) int { return 0 }\n",
	"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"add\")\n\t}\n}\n",
	"README.md":    "calc\n",
}

// tomlText quotes text as a TOML string (a JSON string is one).
func tomlText(text string) string {
	b, _ := json.Marshal(text)
	return string(b)
}

// reply is one [[reply]] of a script.
func reply(role string, turn int, text string) string {
	return "[[reply]]\nrole = \"" + role + "\"\nturn = " + strconv.Itoa(turn) + "\ntext = " + tomlText(text) + "\n\n"
}

const approved = "**Verdict:** APPROVED\n\n## Tier 1: blocking\n\n- None\n"

// TestCommitsTheDesignWithItsTrailAndNothingElse: an issue `azero issue`
// filed is designed for; the document and its trail (which names the
// issue's own trail) are committed in one commit holding exactly them,
// the user's staged and unstaged changes untouched; the document is one
// implement accepts.
func TestCommitsTheDesignWithItsTrailAndNothingElse(t *testing.T) {
	t.Parallel()
	w := newWorld(t, project, reply("drafter", 1, goodLLD)+reply("reviewer", 1, approved))
	// The issue as `azero issue` filed it: its marker in the body, its
	// trail in done/.
	n := w.fileIssue("Multiply returns 0", "calc.Multiply(2, 3) returns 0; it must return 6.\n\n"+tracker.Marker("260101-filer1")+"\n")
	filed, _ := json.Marshal(map[string]any{"number": n, "tracker": w.local().Name(), "run_id": "260101-filer1", "title": "Multiply returns 0"})
	testenv.WriteFiles(t, w.root, map[string]string{"docs/audit/done/1-multiply/001-brief.md": "multiply is broken\n", "docs/audit/done/1-multiply/002-filed.json": string(filed)})
	w.git("add", "docs/audit")
	w.git("commit", "-q", "-m", "issue trail")
	// The user's own changes, staged and not: neither may be committed.
	testenv.WriteFiles(t, w.root, map[string]string{"staged.txt": "mine\n", "README.md": "calc, edited\n"})
	w.git("add", "staged.txt")
	before := w.git("rev-list", "--count", "HEAD")

	s := w.prepare(n, nil)
	if s.LLDPath != "docs/lld/001-multiply-returns-0.md" || s.Issue.Trail != "docs/audit/done/1-multiply" || s.Issue.FiledBy != "260101-filer1" {
		t.Fatalf("prepared %+v, issue %+v", s, s.Issue)
	}
	h := &person{steps: []step{{gate: NodeEditDraft, key: AnswerSend}, {gate: NodeEditVerdict, key: AnswerApprove}}}
	runID, final, err := w.start(s, h)
	if err != nil {
		t.Fatal(err)
	}
	c := final.Committed
	if c == nil || c.Path != s.LLDPath || c.Dir != "docs/audit/done/design-001-multiply-returns-0" || final.Next != "azero implement --lld docs/lld/001-multiply-returns-0.md" {
		t.Fatalf("committed %+v, next %q", c, final.Next)
	}
	if got := w.read(s.LLDPath); got != goodLLD {
		t.Errorf("the committed document is not the approved draft:\n%s", got)
	}
	trail := w.names(c.Dir)
	if !slices.Equal(trail, []string{"001-issue.md", "002-draft.md", "003-verdict.md", "004-designed.json"}) {
		t.Errorf("trail = %v", trail)
	}
	if in := w.read(c.Dir + "/001-issue.md"); !strings.Contains(in, "Issue #1") || !strings.Contains(in, "docs/audit/done/1-multiply/") || strings.Contains(in, "azero:run") {
		t.Errorf("the trail's issue = %q", in)
	}
	var rec Record
	if err := json.Unmarshal([]byte(w.read(c.Dir+"/004-designed.json")), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Path != s.LLDPath || rec.RunID != runID || rec.Issue == nil || rec.Issue.Trail != "docs/audit/done/1-multiply" || rec.Verdict != "APPROVED" || rec.At.IsZero() {
		t.Errorf("record = %+v", rec)
	}
	want := []string{s.LLDPath}
	for _, f := range trail {
		want = append(want, c.Dir+"/"+f)
	}
	slices.Sort(want)
	if got := w.committed(c.Commit); !slices.Equal(got, want) {
		t.Errorf("the commit holds %v, want exactly %v", got, want)
	}
	if got := w.git("rev-list", "--count", "HEAD"); got != "4" || before != "3" {
		t.Errorf("commits: %s before, %s after; want one more", before, got)
	}
	if msg := w.git("log", "-1", "--format=%B"); !strings.Contains(msg, "issue #1") || !strings.Contains(msg, "Issue trail: docs/audit/done/1-multiply") {
		t.Errorf("commit message = %q", msg)
	}
	if st := w.git("status", "--porcelain"); !strings.Contains(st, "A  staged.txt") || !strings.Contains(st, "M README.md") || strings.Contains(st, "docs/") {
		t.Errorf("the user's changes were touched, or the run left files: %q", st)
	}
	if _, err := os.Stat(filepath.Join(w.root, s.ActiveDir())); !os.IsNotExist(err) {
		t.Errorf("active trail still there: %v", err)
	}
	if w.calls(runID, "drafter") != 1 || w.calls(runID, "reviewer") != 1 {
		t.Errorf("calls: drafter %d, reviewer %d", w.calls(runID, "drafter"), w.calls(runID, "reviewer"))
	}
	if err := w.implementAccepts(s.LLDPath); err != nil {
		t.Errorf("implement refuses the committed design: %v", err)
	}
	if recs := w.auditEvents("design_review"); len(recs) != 1 || recs[0]["review_prompt_sha256"] != ReviewPromptSHA256() {
		t.Errorf("review audit = %v", recs)
	}
}

// TestInventedPathGoesBackToTheDrafterWithoutAHuman: a draft naming an
// invented src/ directory is sent back by the checker with its findings;
// no human and no reviewer sees it; the drafter's fix is what they see.
func TestInventedPathGoesBackToTheDrafterWithoutAHuman(t *testing.T) {
	t.Parallel()
	invented := strings.Replace(inventedLLD, "Test Multiply", "Test Multiply INVENTED-DRAFT-ONLY", 1)
	w := newWorld(t, project, reply("drafter", 1, invented)+reply("drafter", 2, goodLLD)+reply("reviewer", 1, approved))
	s := w.prepare(w.fileIssue("Multiply returns 0", "It must multiply."), nil)
	h := &person{steps: []step{{gate: NodeEditDraft, key: AnswerSend}, {gate: NodeEditVerdict, key: AnswerApprove}}}
	runID, final, err := w.start(s, h)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.names(final.Committed.Dir); !slices.Equal(got, []string{"001-issue.md", "002-draft.md", "003-check.txt", "004-draft.md", "005-verdict.md", "006-designed.json"}) {
		t.Errorf("trail = %v", got)
	}
	if check := w.read(final.Committed.Dir + "/003-check.txt"); !strings.Contains(check, "src/calc.go") || !strings.Contains(check, "no-placeholder-prefix") {
		t.Errorf("the check's record = %q", check)
	}
	drafts := w.prompts(runID, "design")
	if len(drafts) != 2 || !strings.Contains(drafts[1], "<check>\n- line") || !strings.Contains(drafts[1], "`src/calc.go`") || strings.Contains(drafts[0], "<check>\n-") {
		t.Errorf("the drafter's prompts: %d; the second must carry the findings:\n%s", len(drafts), drafts[len(drafts)-1])
	}
	if q := h.questions(NodeEditDraft); len(q) != 1 || strings.Contains(q[0].Report, "INVENTED") || strings.Contains(q[0].Report, "fails") || q[0].Facts["check"] != "passed" {
		t.Errorf("the human saw %d draft questions: %+v", len(q), q)
	}
	for _, f := range h.questions(NodeEditDraft)[0].Files {
		if strings.Contains(f.Content, "INVENTED-DRAFT-ONLY") {
			t.Error("the human was shown the draft the check sent back")
		}
	}
	reviews := w.prompts(runID, "design-review")
	if len(reviews) != 1 || strings.Contains(reviews[0], "INVENTED-DRAFT-ONLY") || strings.Contains(reviews[0], "src/calc.go") {
		t.Errorf("the reviewer saw the draft the check sent back: %v", reviews)
	}
	if recs := w.auditEvents("design_check"); len(recs) != 2 || recs[0]["passed"] != false || recs[0]["sent_back"] != true || recs[1]["passed"] != true {
		t.Errorf("check audit = %v", recs)
	}
}

// TestAfterThreeReturnsTheHumanDecides: a drafter that keeps inventing
// paths is sent back three times, then the human sees the draft with the
// findings and fixes the table in the editor.
func TestAfterThreeReturnsTheHumanDecides(t *testing.T) {
	t.Parallel()
	script := reply("reviewer", 1, approved)
	for turn := 1; turn <= MaxCheckReturns+1; turn++ {
		script += reply("drafter", turn, inventedLLD)
	}
	w := newWorld(t, project, script)
	s := w.prepare(w.fileIssue("Multiply returns 0", "It must multiply."), nil)
	h := &person{steps: []step{
		{gate: NodeEditDraft, key: AnswerSend, edit: replace("draft.md", "`src/calc.go`", "`calc.go`")},
		{gate: NodeEditVerdict, key: AnswerApprove},
	}}
	runID, final, err := w.start(s, h)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.calls(runID, "drafter"); got != MaxCheckReturns+1 {
		t.Errorf("drafter calls = %d, want %d", got, MaxCheckReturns+1)
	}
	q := h.questions(NodeEditDraft)
	if len(q) != 1 || !strings.Contains(q[0].Report, "fails azero's mechanical check") || !strings.Contains(q[0].Report, "`src/calc.go`") ||
		!strings.Contains(q[0].Report, "after 3 returns") {
		t.Errorf("the draft gate's report = %q", q[0].Report)
	}
	if review := w.prompts(runID, "design-review"); len(review) != 1 || !strings.Contains(review[0], "The Files Changed table passed") {
		t.Errorf("the reviewer's check part: %v", review)
	}
	if doc := w.read(final.LLDPath); !strings.Contains(doc, "| `calc.go` | Modify |") || strings.Contains(doc, "src/") {
		t.Errorf("committed document = %s", doc)
	}
	checks := 0
	for _, n := range w.names(final.Committed.Dir) {
		if strings.HasSuffix(n, "-check.txt") {
			checks++
		}
	}
	if checks != MaxCheckReturns+1 {
		t.Errorf("%d check records in the trail, want %d", checks, MaxCheckReturns+1)
	}
}

// TestReviewerSeesOnlyWhatTheHumanPassed: the prose around a draft and a
// line the human deleted never reach the reviewer; a line the human wrote
// does, in the draft and as theirs. A BLOCK is then approved with the
// word override.
func TestReviewerSeesOnlyWhatTheHumanPassed(t *testing.T) {
	t.Parallel()
	withLine := strings.Replace(goodLLD, "1. Multiply(2, 3) is 6.\n", "1. Multiply(2, 3) is 6.\n2. DRAFTER-LINE-DELETED\n", 1)
	replyText := "Here is the design. PROSE-NEVER-SHOWN\n\n```markdown\n" + withLine + "```\n"
	blocked := "**Verdict:** BLOCK\n\n## Tier 1: blocking\n\n- the scenarios are thin\n"
	w := newWorld(t, project, reply("drafter", 1, replyText)+reply("reviewer", 1, blocked))
	s := w.prepare(w.fileIssue("Multiply returns 0", "It must multiply."), nil)
	h := &person{steps: []step{
		{gate: NodeEditDraft, key: AnswerSend, edit: replace("draft.md", "2. DRAFTER-LINE-DELETED\n", "2. HUMAN-ADDED-LINE: negative numbers too.\n")},
		{gate: NodeEditVerdict, key: AnswerApprove, confirm: OverrideWord},
	}}
	runID, final, err := w.start(s, h)
	if err != nil {
		t.Fatal(err)
	}
	review := w.prompts(runID, "design-review")
	if len(review) != 1 {
		t.Fatalf("review prompts = %d", len(review))
	}
	for _, never := range []string{"PROSE-NEVER-SHOWN", "DRAFTER-LINE-DELETED"} {
		if strings.Contains(review[0], never) {
			t.Errorf("the reviewer was sent %s, which no human passed", never)
		}
	}
	if !strings.Contains(review[0], "<human>") || !strings.Contains(review[0], "+2. HUMAN-ADDED-LINE") || !strings.Contains(review[0], "<draft>") {
		t.Errorf("the reviewer was not told the human's line as theirs:\n%s", review[0])
	}
	if q := h.questions(NodeEditVerdict); len(q) != 1 || func() string { o, _ := q[0].Option(AnswerApprove); return o.Confirm }() != OverrideWord {
		t.Errorf("approving over the BLOCK did not ask for %q", OverrideWord)
	}
	if !final.Override || !strings.Contains(w.read(final.LLDPath), "HUMAN-ADDED-LINE") {
		t.Errorf("override %v; committed %q", final.Override, w.read(final.LLDPath))
	}
	if recs := w.auditEvents("design_override"); len(recs) != 1 || recs[0]["verdict"] != "BLOCK" {
		t.Errorf("override audit = %v", recs)
	}
	var rec Record
	if err := json.Unmarshal([]byte(w.read(final.Committed.Dir+"/005-designed.json")), &rec); err != nil || !rec.Override || rec.Verdict != "BLOCK" {
		t.Errorf("record = %+v, %v", rec, err)
	}
}

// TestApprovedDesignFailingTheCheckComesBack: the human breaks the table
// while approving; nothing is committed, the verdict gate asks again with
// the findings; fixed, it is committed.
func TestApprovedDesignFailingTheCheckComesBack(t *testing.T) {
	t.Parallel()
	w := newWorld(t, project, reply("drafter", 1, goodLLD)+reply("reviewer", 1, approved))
	s := w.prepare(w.fileIssue("Multiply returns 0", "It must multiply."), nil)
	h := &person{steps: []step{
		{gate: NodeEditDraft, key: AnswerSend},
		{gate: NodeEditVerdict, key: AnswerApprove, edit: replace("draft.md", "| `calc.go` | Modify |", "| `lib/calc.go` | Modify |")},
		{gate: NodeEditVerdict, key: AnswerApprove, edit: replace("draft.md", "| `lib/calc.go` | Modify |", "| `calc.go` | Modify |")},
	}}
	_, final, err := w.start(s, h)
	if err != nil {
		t.Fatal(err)
	}
	q := h.questions(NodeEditVerdict)
	if len(q) != 2 || strings.Contains(q[0].Report, "fails") || !strings.Contains(q[1].Report, "`lib/calc.go`") || q[1].Facts["check"] != "failed" {
		t.Fatalf("verdict questions: %d; second report %q", len(q), q[len(q)-1].Report)
	}
	got := w.names(final.Committed.Dir)
	if !slices.Equal(got, []string{"001-issue.md", "002-draft.md", "003-verdict.md", "004-draft-edited.md", "005-check.txt", "006-draft-edited.md", "007-designed.json"}) {
		t.Errorf("trail = %v", got)
	}
	if doc := w.read(final.LLDPath); strings.Contains(doc, "lib/") {
		t.Errorf("a failing design was committed:\n%s", doc)
	}
}

// TestWaitsWithoutAnyoneAndResumesAfterAKill: with nobody to ask the run
// waits at the draft gate; answered later it goes on; killed while the
// reviewer works, and again while it commits, it resumes where it stood,
// calls no model twice for one step and commits once.
func TestWaitsWithoutAnyoneAndResumesAfterAKill(t *testing.T) {
	t.Parallel()
	w := newWorld(t, project, reply("drafter", 1, goodLLD)+reply("reviewer", 1, approved))
	s := w.prepare(w.fileIssue("Multiply returns 0", "It must multiply."), nil)
	runID, _, err := w.start(s, &person{})
	var we *flow.WaitingError
	if !errors.As(err, &we) || we.Node != NodeEditDraft {
		t.Fatalf("err = %v, want waiting at the draft gate", err)
	}
	// Killed (here: interrupted) when the review starts.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	w.eng.Watch = func(ev event.Event) {
		if ev.Kind == event.NodeStarted && (ev.Node == NodeReview || ev.Node == NodeCommit) {
			cancel()
		}
	}
	h := &person{steps: []step{{gate: NodeEditDraft, key: AnswerSend}}}
	if _, err := w.resume(ctx, runID, h); !errors.Is(err, flow.ErrInterrupted) {
		t.Fatalf("err = %v, want interrupted at the review", err)
	}
	r, _ := w.st.GetRun(t.Context(), runID)
	if r.Node != NodeReview || r.Status != store.StatusInterrupted {
		t.Fatalf("run stands %s at %s", r.Status, r.Node)
	}
	// Resumed, it reviews, asks, and is killed when it commits.
	ctx, cancel = context.WithCancel(t.Context())
	defer cancel()
	h = &person{steps: []step{{gate: NodeEditVerdict, key: AnswerApprove}}}
	w.eng.Watch = func(ev event.Event) {
		if ev.Kind == event.NodeStarted && ev.Node == NodeCommit {
			cancel()
		}
	}
	if _, err := w.resume(ctx, runID, h); !errors.Is(err, flow.ErrInterrupted) {
		t.Fatalf("err = %v, want interrupted at the commit", err)
	}
	if r, _ = w.st.GetRun(t.Context(), runID); r.Node != NodeCommit {
		t.Fatalf("run stands at %s", r.Node)
	}
	// The killed process had got as far as committing: the commit step's
	// work done, its checkpoint not written.
	var stored State
	if err := json.Unmarshal(r.State, &stored); err != nil {
		t.Fatal(err)
	}
	commit, _ := New(w.deps(runID, &person{})).Step(NodeCommit)
	if _, err := commit.Run(flow.WithRun(t.Context(), runID, NodeCommit), &stored); err != nil {
		t.Fatal(err)
	}
	w.eng.Watch = nil
	final, err := w.resume(t.Context(), runID, &person{})
	if err != nil {
		t.Fatal(err)
	}
	if final.Committed == nil || final.Committed.Commit != stored.Committed.Commit {
		t.Errorf("committed %+v, the killed attempt %+v", final.Committed, stored.Committed)
	}
	if got := w.git("log", "--format=%s", "--", final.LLDPath); strings.Count(got, "\n") != 0 {
		t.Errorf("the design was committed more than once:\n%s", got)
	}
	if w.calls(runID, "drafter") != 1 || w.calls(runID, "reviewer") != 1 {
		t.Errorf("calls: drafter %d, reviewer %d; want one each", w.calls(runID, "drafter"), w.calls(runID, "reviewer"))
	}
	if got := w.names(final.Committed.Dir); !slices.Equal(got, []string{"001-issue.md", "002-draft.md", "003-verdict.md", "004-designed.json"}) {
		t.Errorf("trail = %v", got)
	}
}

// TestOfflineRepliesMakeAValidDesign: with the scripted model and no
// script, the built-in drafter designs for the repository it is shown,
// and the design passes the check at once and is one implement accepts.
func TestOfflineRepliesMakeAValidDesign(t *testing.T) {
	t.Parallel()
	for name, files := range map[string]map[string]string{
		"go":     project,
		"python": {"calc.py": "def add(a, b):\n    return a + b\n", "tests/test_other.py": "def test_x():\n    assert True\n", "pyproject.toml": "[project]\nname = \"calc\"\n"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, files, "")
			s := w.prepare(w.fileIssue("Add a power function", "calc needs power(a, b)."), nil)
			h := &person{steps: []step{{gate: NodeEditDraft, key: AnswerSend}, {gate: NodeEditVerdict, key: AnswerApprove}}}
			runID, final, err := w.start(s, h)
			if err != nil {
				t.Fatal(err)
			}
			if w.calls(runID, "drafter") != 1 {
				t.Errorf("the built-in design was sent back %d times", w.calls(runID, "drafter")-1)
			}
			if err := w.implementAccepts(final.LLDPath); err != nil {
				t.Errorf("implement refuses the built-in design: %v\n%s", err, w.read(final.LLDPath))
			}
			if !strings.Contains(w.read(final.LLDPath), "Add a power function") {
				t.Errorf("the design does not carry the issue's title:\n%s", w.read(final.LLDPath))
			}
		})
	}
}

// TestManualStopKeepsTheTrailInActive: the human takes over at the draft
// gate: nothing is committed, the trail stays for them.
func TestManualStopKeepsTheTrailInActive(t *testing.T) {
	t.Parallel()
	w := newWorld(t, project, reply("drafter", 1, goodLLD))
	s := w.prepare(w.fileIssue("Multiply returns 0", "It must multiply."), nil)
	head := w.git("rev-parse", "HEAD")
	_, _, err := w.start(s, &person{steps: []step{{gate: NodeEditDraft, key: AnswerManual}}})
	var me *ManualError
	if !errors.As(err, &me) || !errors.Is(err, flow.ErrAborted) || me.Gate != NodeEditDraft {
		t.Fatalf("err = %v, want a manual stop", err)
	}
	if got := w.names(s.ActiveDir()); !slices.Equal(got, []string{"001-issue.md", "002-draft.md"}) || w.git("rev-parse", "HEAD") != head {
		t.Errorf("trail %v; HEAD moved: %v", got, w.git("rev-parse", "HEAD") != head)
	}
	if _, err := os.Stat(filepath.Join(w.root, s.LLDPath)); !os.IsNotExist(err) {
		t.Errorf("a design was written: %v", err)
	}
	// A second design for the issue is refused while the trail is there.
	if _, err := Prepare(t.Context(), Inputs{Dir: w.root, Issue: 1, Reader: w.local(), TrackerName: w.local().Name()}); err == nil || !strings.Contains(err.Error(), "unfinished design run") {
		t.Errorf("Prepare with an unfinished trail: %v", err)
	}
}
