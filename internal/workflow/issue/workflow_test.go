package issue

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/human"

	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/prompt"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
	"github.com/azero-dev/azero/internal/tracker"
	"github.com/azero-dev/azero/internal/tracker/trackertest"
	"github.com/azero-dev/azero/internal/workflow/governance"
	"github.com/azero-dev/azero/internal/workflow/roles"
)

const twoDrafts = `
[[reply]]
role = "drafter"
turn = 1
text = '''
# Add a budget flag

**Labels:** enhancement, governance

## Summary

Stop runs that cost too much.

## Acceptance Criteria

- [ ] A run over budget stops.
'''

[[reply]]
role = "drafter"
turn = 2
text = '''
# Add a budget flag (revised)

**Labels:** enhancement

## Summary

Shorter.
'''

[[reply]]
role = "reviewer"
turn = 1
text = '''
**Verdict:** BLOCK

## Tier 1: blocking

- SECRET-INTERNAL-NOTE the criteria are vague.
'''

[[reply]]
role = "reviewer"
turn = 2
text = '''
**Verdict:** APPROVED
'''
`

func localTracker(w *world) func(string) tracker.Tracker {
	return func(id string) tracker.Tracker { return w.local(id) }
}

func TestHappyPathFilesLocallyMovesAndCommitsOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t, twoDrafts)
	// A change of the user's, staged, and one unstaged: neither may be committed.
	testenv.WriteFiles(t, w.root, map[string]string{"staged.txt": "mine\n", "README.md": "project, edited\n"})
	w.git("add", "staged.txt")
	h := &person{choices: []string{"S", "A"}, confirms: []string{"override"}}
	runID, final, err := w.start(w.state("budget-flag", "add a budget"), h, localTracker(w))
	if err != nil {
		t.Fatal(err)
	}
	f := final.Filed
	if f == nil || f.Number != 1 || f.Dir != "docs/audit/done/1-budget-flag" || f.Commit == "" {
		t.Fatalf("filed = %+v", f)
	}
	if got := w.names(f.Dir); !slices.Equal(got, []string{"001-brief.md", "002-draft.md", "003-verdict.md", "004-filed.json"}) {
		t.Errorf("trail = %v", got)
	}
	if _, err := os.Stat(filepath.Join(w.root, "docs/audit/active/budget-flag")); !os.IsNotExist(err) {
		t.Errorf("active dir still there: %v", err)
	}
	var rec Filed
	if err := json.Unmarshal([]byte(w.read(f.Dir+"/004-filed.json")), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Number != 1 || rec.Title != "Add a budget flag" || !slices.Equal(rec.Labels, []string{"enhancement", "governance"}) ||
		rec.RunID != runID || rec.At.IsZero() || rec.URL != f.URL {
		t.Errorf("filed.json = %+v", rec)
	}
	issueFile := w.read(f.URL)
	if !strings.Contains(issueFile, tracker.Marker(runID)) || !strings.Contains(issueFile, "Stop runs that cost too much.") {
		t.Errorf("local issue = %q", issueFile)
	}
	// The title and labels lines are the issue's own, written once.
	if !strings.HasPrefix(issueFile, "# Add a budget flag\n\n**Labels:** enhancement, governance\n\n## Summary\n") ||
		strings.Count(issueFile, "# Add a budget flag") != 1 || strings.Count(issueFile, "**Labels:**") != 1 {
		t.Errorf("local issue = %q; want its title and labels lines once, at the top", issueFile)
	}
	if got := w.git("rev-list", "--count", "HEAD"); got != "2" {
		t.Errorf("commits = %s, want 2 (init + the trail)", got)
	}
	files := strings.Fields(w.git("show", "--name-only", "--format=", "HEAD"))
	want := []string{f.URL, f.Dir + "/001-brief.md", f.Dir + "/002-draft.md", f.Dir + "/003-verdict.md", f.Dir + "/004-filed.json"}
	slices.Sort(files)
	slices.Sort(want)
	if !slices.Equal(files, want) {
		t.Errorf("commit holds %v, want %v", files, want)
	}
	if msg := w.git("log", "-1", "--format=%s"); !strings.Contains(msg, "#1") {
		t.Errorf("commit message %q does not name the issue", msg)
	}
	if st := w.git("status", "--porcelain"); !strings.Contains(st, "A  staged.txt") || !strings.Contains(st, "M README.md") {
		t.Errorf("the user's changes were touched: %q", st)
	}
	if w.calls(runID, "drafter") != 1 || w.calls(runID, "reviewer") != 1 {
		t.Errorf("calls: drafter %d, reviewer %d", w.calls(runID, "drafter"), w.calls(runID, "reviewer"))
	}
	if final.Iteration != 1 || final.Drafts != 1 || final.Verdicts != 1 {
		t.Errorf("counts = %d/%d/%d", final.Iteration, final.Drafts, final.Verdicts)
	}
}

func TestReviseAtDraftGateNeverCallsTheReviewer(t *testing.T) {
	t.Parallel()
	w := newWorld(t, twoDrafts)
	// R with feedback, then nobody answers at the second draft: the run waits.
	h := &person{choices: []string{"R"}, paragraphs: []string{"make it shorter"}}
	runID, final, err := w.start(w.state("shorter", "add a budget"), h, localTracker(w))
	if !errors.Is(err, flow.ErrWaiting) {
		t.Fatalf("err = %v, want waiting", err)
	}
	if got := w.names("docs/audit/active/shorter"); !slices.Equal(got, []string{"001-brief.md", "002-draft.md", "003-feedback.txt", "004-draft.md"}) {
		t.Errorf("trail = %v", got)
	}
	if w.calls(runID, "drafter") != 2 || w.calls(runID, "reviewer") != 0 {
		t.Errorf("calls: drafter %d, reviewer %d; want 2 and 0", w.calls(runID, "drafter"), w.calls(runID, "reviewer"))
	}
	if final.Verdicts != 0 || final.Drafts != 2 {
		t.Errorf("verdicts %d drafts %d", final.Verdicts, final.Drafts)
	}
}

func TestSanitisedVerdictAndEditedDraftReachTheDrafter(t *testing.T) {
	t.Parallel()
	w := newWorld(t, twoDrafts)
	h := &person{
		choices:    []string{"S", "R"},
		paragraphs: []string{"tighten the criteria"},
		edits: []func(*testing.T, []string){
			appendTo(0, "\nA line the human added.\n"),
			replaceFile(1, "**Verdict:** BLOCK\n\nclean text only\n"),
		},
	}
	runID, _, err := w.start(w.state("sanitise", "add a budget"), h, localTracker(w))
	if !errors.Is(err, flow.ErrWaiting) {
		t.Fatalf("err = %v, want waiting at the second draft gate", err)
	}
	want := []string{"001-brief.md", "002-draft.md", "003-draft-edited.md", "004-verdict.md", "005-verdict-edited.md", "006-feedback.txt", "007-draft.md"}
	if got := w.names("docs/audit/active/sanitise"); !slices.Equal(got, want) {
		t.Fatalf("trail = %v, want %v", got, want)
	}
	if v := w.read("docs/audit/active/sanitise/004-verdict.md"); !strings.Contains(v, "SECRET-INTERNAL-NOTE") {
		t.Errorf("the raw verdict must be kept as the model wrote it: %q", v)
	}
	// What each model was sent, from the run's lineage.
	lineage := roles.LineageDir(w.stateDir, runID)
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(lineage, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	review := read("003-prompt-review.md")
	if !strings.Contains(review, "A line the human added.") {
		t.Errorf("the reviewer did not get the edited draft:\n%s", review)
	}
	revision := read("005-prompt-draft.md")
	for _, want := range []string{"clean text only", "tighten the criteria", "A line the human added.", "# <Title"} {
		if !strings.Contains(revision, want) {
			t.Errorf("the revision prompt lacks %q", want)
		}
	}
	if strings.Contains(revision, "SECRET-INTERNAL-NOTE") {
		t.Error("text the human removed from the verdict reached the drafter")
	}
	if len(h.opened) != 3 || len(h.opened[1]) != 2 {
		t.Errorf("editor openings = %v; want draft, draft+verdict, draft", h.opened)
	}
}

func TestRepeatedDraftNodeUsesTheSavedDraft(t *testing.T) {
	t.Parallel()
	// No drafter reply in the script: a call would fail the run.
	w := newWorld(t, "[[reply]]\nrole = \"reviewer\"\nturn = 1\ntext = \"**Verdict:** APPROVED\"\n")
	runID, _, err := w.start(w.state("again", "add a budget"), &person{}, localTracker(w))
	var ne *flow.NodeError
	if !errors.As(err, &ne) || ne.Node != NodeDraft {
		t.Fatalf("err = %v, want the draft node to fail without a scripted reply", err)
	}
	// An earlier attempt of the draft node saved the reply, then died.
	testenv.WriteFiles(t, w.root, map[string]string{"docs/audit/active/again/002-draft.md": "# Saved draft\n\n**Labels:** bug\n"})
	calls := w.calls(runID, "drafter")
	h := &person{choices: []string{"S", "A"}}
	final, err := w.resume(runID, h, w.local(runID))
	if err != nil {
		t.Fatal(err)
	}
	if w.calls(runID, "drafter") != calls || final.Filed == nil || final.Filed.Title != "Saved draft" {
		t.Errorf("drafter calls %d, filed %+v", w.calls(runID, "drafter"), final.Filed)
	}
	if got := w.names(final.Filed.Dir); !slices.Equal(got, []string{"001-brief.md", "002-draft.md", "003-verdict.md", "004-filed.json"}) {
		t.Errorf("trail = %v", got)
	}
}

// lossyTracker loses the answer to its first Create: the issue is filed,
// but the caller sees an error, as when the process dies right after.
type lossyTracker struct {
	tracker.Tracker
	lost bool
}

func (l *lossyTracker) Create(ctx context.Context, is tracker.Issue) (tracker.Issue, error) {
	got, err := l.Tracker.Create(ctx, is)
	if err == nil && !l.lost {
		l.lost = true
		return tracker.Issue{}, errors.New("connection reset by peer")
	}
	return got, err
}

func TestFilingAfterALostAnswerFindsTheIssue(t *testing.T) {
	t.Parallel()
	w := newWorld(t, twoDrafts)
	fake := trackertest.NewGitHub(t, "acme", "widgets", "tok", "enhancement")
	gh, err := tracker.NewGitHub(tracker.GitHubOptions{Repo: "acme/widgets", Token: "tok", APIURL: fake.URL})
	if err != nil {
		t.Fatal(err)
	}
	lossy := &lossyTracker{Tracker: gh}
	h := &person{choices: []string{"S", "A", "A"}, confirms: []string{"override"}} // send, approve over BLOCK, abort after the error
	runID, _, err := w.start(w.state("lost", "add a budget"), h, func(string) tracker.Tracker { return lossy })
	if err == nil || !strings.Contains(err.Error(), "filing aborted") || !strings.Contains(err.Error(), "connection reset") {
		t.Fatalf("err = %v", err)
	}
	if got := w.names("docs/audit/active/lost"); len(got) != 3 {
		t.Errorf("active trail after abort = %v", got)
	}
	r, _ := w.st.GetRun(t.Context(), runID)
	if r.Status != store.StatusFailed || r.Node != NodeFilingFailed {
		t.Errorf("run %s at %s, want failed at filing_failed (resumable)", r.Status, r.Node)
	}
	// Resume and retry: the issue is found by its marker, not filed again.
	final, err := w.resume(runID, &person{choices: []string{"R"}}, lossy)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(fake.Issues()); n != 1 {
		t.Fatalf("%d issues filed, want exactly 1", n)
	}
	if !final.Filed.Found || final.Filed.Number != 1 || !slices.Equal(final.Filed.Labels, []string{"enhancement", "governance"}) {
		t.Errorf("filed = %+v", final.Filed)
	}
	if !slices.Contains(fake.Labels(), "governance") {
		t.Errorf("labels = %v; the missing label was not created", fake.Labels())
	}
}

func TestCommitFailureIsResumedWithoutFilingAgain(t *testing.T) {
	t.Parallel()
	w := newWorld(t, twoDrafts)
	// A pre-commit hook that refuses once.
	hook := filepath.Join(w.root, ".git", "hooks", "pre-commit")
	flag := filepath.Join(t.TempDir(), "refused")
	script := "#!/bin/sh\nif [ ! -e " + flag + " ]; then touch " + flag + "; echo 'hook says no' >&2; exit 1; fi\nexit 0\n"
	if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	runID, _, err := w.start(w.state("hooked", "add a budget"), &person{choices: []string{"S", "A"}, confirms: []string{"override"}}, localTracker(w))
	if err == nil || !strings.Contains(err.Error(), "issue #1 is filed") || !strings.Contains(err.Error(), "hook says no") {
		t.Fatalf("err = %v", err)
	}
	if got := w.names("docs/audit/done/1-hooked"); len(got) != 4 {
		t.Fatalf("done trail = %v (the move happens before the commit)", got)
	}
	final, err := w.resume(runID, &person{}, w.local(runID))
	if err != nil {
		t.Fatal(err)
	}
	issues, _ := os.ReadDir(filepath.Join(w.root, "docs/issues"))
	if len(issues) != 1 || !final.Filed.Found {
		t.Errorf("issues = %d, found = %v; want one issue, found again", len(issues), final.Filed.Found)
	}
	if got := w.git("rev-list", "--count", "HEAD"); got != "2" {
		t.Errorf("commits = %s, want 2", got)
	}
	// Committing again finds the commit instead of making another.
	id, err := governance.Commit(t.Context(), w.root, []string{"docs/audit/done/1-hooked", "docs/audit/active/hooked"}, "again")
	if err != nil || id != final.Filed.Commit {
		t.Errorf("commit again = %s, %v; want %s", id, err, final.Filed.Commit)
	}
}

func TestManualStopsWithFilesInActive(t *testing.T) {
	t.Parallel()
	w := newWorld(t, twoDrafts)
	runID, _, err := w.start(w.state("manual", "add a budget"), &person{choices: []string{"S", "M"}}, localTracker(w))
	var me *ManualError
	if !errors.Is(err, flow.ErrAborted) || !errors.As(err, &me) || me.Gate != NodeEditVerdict || !strings.Contains(err.Error(), "docs/audit/active/manual/") {
		t.Fatalf("err = %v", err)
	}
	r, _ := w.st.GetRun(t.Context(), runID)
	if r.Status != store.StatusAborted {
		t.Errorf("status = %s", r.Status)
	}
	if got := w.names("docs/audit/active/manual"); len(got) != 3 {
		t.Errorf("trail = %v", got)
	}
	if _, err := os.Stat(filepath.Join(w.root, "docs/issues")); !os.IsNotExist(err) {
		t.Error("something was filed")
	}
}

func TestTruncatedRepliesAreAskedAgainNeverPassedOn(t *testing.T) {
	t.Parallel()
	cut := "[[reply]]\nrole = \"drafter\"\nturn = %d\nstop = \"max_tokens\"\ntext = \"# Cut off mid\"\n"
	tests := []struct {
		name      string
		script    string
		maxOutput int
		wantErr   bool
		wantCalls int
	}{
		{"once, then complete", strings.Join([]string{
			strings.Replace(cut, "%d", "1", 1),
			"[[reply]]\nrole = \"drafter\"\nturn = 2\ntext = \"# Complete draft\"\n",
		}, "\n"), 0, false, 2},
		{"every time", strings.Join([]string{
			strings.Replace(cut, "%d", "1", 1), strings.Replace(cut, "%d", "2", 1), strings.Replace(cut, "%d", "3", 1),
		}, "\n"), 0, true, 3},
		// At the model's maximum the same call is not made again.
		{"at the maximum already", strings.Join([]string{
			strings.Replace(cut, "%d", "1", 1), strings.Replace(cut, "%d", "2", 1),
		}, "\n"), 4096, true, 1},
		{"room up to the maximum, then stop", strings.Join([]string{
			strings.Replace(cut, "%d", "1", 1), strings.Replace(cut, "%d", "2", 1), strings.Replace(cut, "%d", "3", 1),
		}, "\n"), 6000, true, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, tt.script)
			w.maxOutput = tt.maxOutput
			runID, _, err := w.start(w.state("cut", "brief"), &person{}, localTracker(w))
			var te *TruncatedError
			if tt.wantErr != errors.As(err, &te) {
				t.Fatalf("err = %v", err)
			}
			names := w.names("docs/audit/active/cut")
			if tt.wantErr && len(names) != 1 {
				t.Errorf("a truncated reply was saved: %v", names)
			}
			if !tt.wantErr {
				if len(names) != 2 || !strings.Contains(w.read("docs/audit/active/cut/002-draft.md"), "Complete draft") {
					t.Errorf("trail = %v", names)
				}
			}
			if got := w.calls(runID, "drafter"); got != tt.wantCalls {
				t.Errorf("drafter calls = %d, want %d", got, tt.wantCalls)
			}
			// Each retry is shown, with the limit it was cut off at and the
			// room it is asked with.
			events, err := w.st.Events(t.Context(), runID, 0, 100)
			if err != nil {
				t.Fatal(err)
			}
			shown := 0
			for _, e := range events {
				if strings.Contains(e.Text, "drafter: reply cut off at 4096 tokens; asking again with ") {
					shown++
				}
			}
			if want := min(1, tt.wantCalls-1); shown != want {
				t.Errorf("%d retries shown, want %d", shown, want)
			}
		})
	}
}

func TestNoTerminalWaitsAtTheFirstGateAfterTheDraft(t *testing.T) {
	t.Parallel()
	w := newWorld(t, twoDrafts)
	h := &person{}
	runID := store.NewID(timeForTest())
	d := w.deps(runID, h, w.local(runID))
	w.eng.Answerer = noTerminal{}
	g := New(d)
	s := w.state("waits", "brief")
	if _, err := flow.Create(t.Context(), w.eng, g, s, flow.CreateOptions{ID: runID, Key: "waits"}); err != nil {
		t.Fatal(err)
	}
	_, err := flow.Drive(t.Context(), w.eng, g, runID)
	var we *flow.WaitingError
	if !errors.As(err, &we) || we.Node != NodeEditDraft {
		t.Fatalf("err = %v, want waiting at edit_draft", err)
	}
	if len(h.opened) != 0 {
		t.Error("an editor was started without a terminal")
	}
	if got := w.names("docs/audit/active/waits"); len(got) != 2 {
		t.Errorf("trail = %v", got)
	}
}

// noTerminal answers nothing, like a run started from a script.
type noTerminal struct{}

func (noTerminal) Answer(context.Context, human.Question) (human.Answer, error) {
	return human.Answer{}, prompt.ErrNoTerminal
}

func TestPreflightRefusesBeforeAnyModelCall(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(t *testing.T, w *world, p *Preflight)
		want  string
	}{
		{"editor missing", func(t *testing.T, w *world, p *Preflight) {
			p.Editor = func() (string, error) { return "", errors.New(`editor "nope" not found in PATH`) }
		}, `editor "nope" not found`},
		{"bad token", func(t *testing.T, w *world, p *Preflight) {
			fake := trackertest.NewGitHub(t, "acme", "widgets", "good")
			gh, err := tracker.NewGitHub(tracker.GitHubOptions{Repo: "acme/widgets", Token: "bad", APIURL: fake.URL})
			if err != nil {
				t.Fatal(err)
			}
			p.Tracker = gh
		}, "token was rejected"},
		{"unknown repository", func(t *testing.T, w *world, p *Preflight) {
			fake := trackertest.NewGitHub(t, "acme", "widgets", "good")
			gh, err := tracker.NewGitHub(tracker.GitHubOptions{Repo: "acme/nothing", Token: "good", APIURL: fake.URL})
			if err != nil {
				t.Fatal(err)
			}
			p.Tracker = gh
		}, "not found"},
		{"not a repository", func(t *testing.T, w *world, p *Preflight) {
			p.Root = t.TempDir()
			p.Tracker = &tracker.Local{Root: p.Root, Dir: "docs/issues"}
		}, "not a git repository"},
		{"no commits", func(t *testing.T, w *world, p *Preflight) {
			p.Root = t.TempDir()
			testenv.Git(t, p.Root, "init", "-q")
			p.Tracker = &tracker.Local{Root: p.Root, Dir: "docs/issues"}
		}, "no commits yet"},
		{"audit dir ignored", func(t *testing.T, w *world, p *Preflight) {
			testenv.WriteFiles(t, w.root, map[string]string{".gitignore": "docs/\n"})
		}, "ignored by git"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, twoDrafts)
			runID := store.NewID(timeForTest())
			d := w.deps(runID, &person{}, w.local(runID))
			tt.setup(t, w, d.Checks)
			g := New(d)
			if _, err := flow.Create(t.Context(), w.eng, g, w.state("pf", "brief"), flow.CreateOptions{ID: runID}); err != nil {
				t.Fatal(err)
			}
			_, err := flow.Drive(t.Context(), w.eng, g, runID)
			var pe *PreflightError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want a pre-flight error containing %q", err, tt.want)
			}
			if n := w.calls(runID, "drafter") + w.calls(runID, "reviewer"); n != 0 {
				t.Errorf("%d model calls before the checks passed", n)
			}
		})
	}
}

func TestTrailRecordNumbersAndNeverOverwrites(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "")
	tr := Trail{Root: w.root, Dir: "docs/audit/active/x", Writer: w.writer}
	ctx := t.Context()
	for i, step := range []struct{ kind, content, want string }{
		{KindBrief, "brief", "001-brief.md"},
		{KindDraft, "d1", "002-draft.md"},
		{KindDraft, "d1\n\n", "002-draft.md"}, // the same again: a repeated node
		{KindFeedback, "fb", "003-feedback.txt"},
		{KindDraft, "d1", "004-draft.md"}, // same text, but not the last entry
	} {
		e, err := tr.Record(ctx, step.kind, []byte(step.content))
		if err != nil || e.Name != step.want {
			t.Fatalf("step %d: Record = %+v, %v; want %s", i, e, err, step.want)
		}
	}
	// A stray file with a higher number moves the count on; one with a
	// taken number makes the order ambiguous and is refused.
	testenv.WriteFiles(t, w.root, map[string]string{"docs/audit/active/x/009-feedback.txt": "x\n", "docs/audit/active/x/notes.md": "mine\n"})
	if e, err := tr.Record(ctx, KindDraft, []byte("d2")); err != nil || e.Name != "010-draft.md" {
		t.Fatalf("after a gap: %+v, %v", e, err)
	}
	testenv.WriteFiles(t, w.root, map[string]string{"docs/audit/active/x/010-verdict.md": "x\n"})
	if _, err := tr.Record(ctx, KindDraft, []byte("d3")); err == nil || !strings.Contains(err.Error(), "share number 10") {
		t.Fatalf("duplicate number: err = %v", err)
	}
	if _, err := tr.Record(ctx, "notes", []byte("x")); err == nil {
		t.Fatal("unknown kind accepted")
	}
}

func BenchmarkTrailEntries(b *testing.B) {
	dir := b.TempDir()
	for i := 1; i <= 300; i++ {
		if err := os.WriteFile(filepath.Join(dir, EntryName(i, KindDraft)), []byte("x\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	tr := Trail{Root: dir, Dir: "."}
	for b.Loop() {
		if es, err := tr.Entries(); err != nil || len(es) != 300 {
			b.Fatal(len(es), err)
		}
	}
}

// TestEveryGateAnswerIsADeclaredRoute asks each gate of the governance
// workflow in a state it can be reached in, and routes every answer the
// question allows: each lands on a declared next node.
func TestEveryGateAnswerIsADeclaredRoute(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "")
	g := New(w.deps("walk", &person{}, w.local("walk")))
	base := *w.state("walk", "add a budget")
	base.Draft, base.DraftFile, base.Drafts = "# T\n", "002-draft.md", 1
	base.Verdict, base.VerdictFile, base.Verdicts, base.ReviewerVerdict = "**Verdict:** BLOCK\n", "003-verdict.md", 1, "BLOCK"
	withCollision := base
	withCollision.Collision = &Collision{Slug: "walk", Why: "taken", Holder: &Holder{RunID: "other"}}
	failed := base
	failed.FilingError = "boom"
	states := map[string]State{NodeSlugCollision: withCollision, NodeEditDraft: base, NodeEditVerdict: base, NodeFilingFailed: failed}
	ctx := flow.WithRun(t.Context(), "walk", "")
	for _, gate := range g.Gates() {
		s, ok := states[gate]
		if !ok {
			t.Errorf("gate %s is not walked", gate)
			continue
		}
		q, err := g.Ask(ctx, gate, &s)
		if err != nil {
			t.Fatalf("%s: %v", gate, err)
		}
		for _, o := range q.Options {
			a := human.Answer{Gate: gate, Key: o.Key, Channel: human.ChannelTerminal, Text: "new-name", Confirm: o.Confirm}
			if q.Kind == human.Editor {
				a.Files = map[string]string{}
				for _, f := range q.Files {
					a.Files[f.Name] = f.Content
				}
			}
			s2 := s
			_, err := g.Decide(gate, &s2, q, a)
			if err != nil && !(gate == NodeFilingFailed && o.Key == AnswerAbort) {
				t.Errorf("%s answer %s: %v", gate, o.Key, err)
			}
		}
	}
	// Filing over the reviewer's BLOCK needs the word override.
	s := base
	q, err := g.Ask(ctx, NodeEditVerdict, &s)
	if err != nil {
		t.Fatal(err)
	}
	approve, _ := q.Option(AnswerApprove)
	if approve.Confirm != OverrideWord || !strings.Contains(approve.ConfirmWhy, "BLOCK") {
		t.Fatalf("approve over BLOCK = %+v, want a typed confirmation", approve)
	}
	files := map[string]string{"draft.md": s.Draft, "verdict.md": s.Verdict}
	for _, confirm := range []string{"", "over", "yes"} {
		if _, err := g.Decide(NodeEditVerdict, &s, q, human.Answer{Gate: NodeEditVerdict, Key: AnswerApprove, Confirm: confirm, Files: files, Channel: human.ChannelWeb}); err == nil {
			t.Errorf("approving over BLOCK with confirmation %q was accepted", confirm)
		}
	}
	next, err := g.Decide(NodeEditVerdict, &s, q, human.Answer{Gate: NodeEditVerdict, Key: AnswerApprove, Confirm: "OVERRIDE", Files: files, Channel: human.ChannelWeb})
	if err != nil || next != NodeFileIssue || !s.Override {
		t.Errorf("override: next %s, override %v, %v", next, s.Override, err)
	}
	// An approving verdict needs no confirmation.
	ok := base
	ok.Verdict, ok.ReviewerVerdict = "**Verdict:** APPROVED\n", "APPROVED"
	if q, _ := g.Ask(ctx, NodeEditVerdict, &ok); q.Options[0].Confirm != "" {
		t.Errorf("approve over APPROVED asks for a confirmation")
	}
}

// reportsSeen answers nothing, like a run without a terminal, and keeps
// the reports of the questions it was asked.
type reportsSeen struct{ reports []string }

func (r *reportsSeen) Answer(_ context.Context, q human.Question) (human.Answer, error) {
	r.reports = append(r.reports, q.Report)
	return human.Answer{}, prompt.ErrNoTerminal
}

// A draft a model wrote as prose around one fenced Markdown block is
// filed as the block; the whole reply, prose included, stays in the
// lineage. A reply that cannot be cut cleanly is kept whole, and the human
// is warned at the gate, also when the node runs again after a crash.
func TestDraftCutFromAModelsReply(t *testing.T) {
	t.Parallel()
	const issue = "# Add a budget flag\n\n**Labels:** enhancement\n\n## Summary\n\nStop runs that cost too much.\n"
	tests := []struct {
		name, reply, draft, warning string
	}{
		{"prose around one block", "Here is the issue you asked for:\n\n```markdown\n" + issue + "```\n\nLet me know if you want changes.\n", issue, ""},
		{"a block never closed", "Here is the issue:\n\n```markdown\n" + issue, "Here is the issue:\n\n```markdown\n" + issue, "never closed"},
		{"two candidate issues", "A:\n```md\n" + issue + "```\nB:\n```md\n" + issue + "```\n", "A:\n```md\n" + issue + "```\nB:\n```md\n" + issue + "```\n", "several Markdown blocks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			body, _ := json.Marshal(tt.reply) // a TOML basic string is a JSON string
			w := newWorld(t, "[[reply]]\nrole = \"drafter\"\nturn = 1\ntext = "+string(body)+"\n")
			runID := store.NewID(timeForTest())
			d := w.deps(runID, &person{}, w.local(runID))
			seen := &reportsSeen{}
			w.eng.Answerer = seen
			g := New(d)
			if _, err := flow.Create(t.Context(), w.eng, g, w.state("cut", "brief"), flow.CreateOptions{ID: runID, Key: "cut"}); err != nil {
				t.Fatal(err)
			}
			if _, err := flow.Drive(t.Context(), w.eng, g, runID); !errors.As(err, new(*flow.WaitingError)) {
				t.Fatalf("err = %v, want waiting at the draft gate", err)
			}
			if got := w.read("docs/audit/active/cut/002-draft.md"); strings.TrimSpace(got) != strings.TrimSpace(tt.draft) {
				t.Errorf("the draft saved is %q, want %q", got, tt.draft)
			}
			responses, _ := filepath.Glob(filepath.Join(w.stateDir, "runs", runID, "*-response-draft.md"))
			if len(responses) != 1 {
				t.Fatalf("responses in the lineage: %v", responses)
			}
			if got, _ := os.ReadFile(responses[0]); !strings.Contains(string(got), strings.TrimSpace(tt.reply)) {
				t.Errorf("the lineage does not keep the whole reply:\n%s", got)
			}
			warned := func(report string) bool { return strings.Contains(report, "WARNING") }
			if len(seen.reports) != 1 || warned(seen.reports[0]) != (tt.warning != "") || !strings.Contains(seen.reports[0], tt.warning) {
				t.Errorf("the gate's reports %q, want a warning %q", seen.reports, tt.warning)
			}
			// The draft node run again (the run was killed after it saved
			// the draft) uses the saved draft and warns the same way.
			s := w.state("cut", "brief")
			step, _ := g.Step(NodeDraft)
			if _, err := step.Run(flow.WithRun(t.Context(), runID, NodeDraft), s); err != nil {
				t.Fatal(err)
			}
			if w.calls(runID, "drafter") != 1 {
				t.Errorf("the repeated draft node asked the drafter again")
			}
			if (s.DraftWarning != "") != (tt.warning != "") {
				t.Errorf("a repeated draft node's warning is %q, want one with %q", s.DraftWarning, tt.warning)
			}
		})
	}
}

// TestFiledTrailFindsTheTrailOfAFiledIssue: the design workflow finds the
// trail of an issue an issue run filed, by number, tracker and run.
func TestFiledTrailFindsTheTrailOfAFiledIssue(t *testing.T) {
	t.Parallel()
	w := newWorld(t, twoDrafts)
	h := &person{choices: []string{"S", "A"}, confirms: []string{"override"}}
	runID, final, err := w.start(w.state("budget-flag", "add a budget"), h, localTracker(w))
	if err != nil {
		t.Fatal(err)
	}
	name := w.local(runID).Name()
	rec, ok, err := FiledTrail(w.root, DefaultAuditDir, final.Filed.Number, name, runID)
	if err != nil || !ok || rec.Dir != final.Filed.Dir || rec.RunID != runID || rec.Title != "Add a budget flag" {
		t.Fatalf("FiledTrail = %+v, %v, %v; want %s", rec, ok, err, final.Filed.Dir)
	}
	for _, miss := range []struct {
		n            int
		tracker, run string
	}{{final.Filed.Number + 1, name, ""}, {final.Filed.Number, "github acme/widgets", ""}, {final.Filed.Number, name, "other-run"}} {
		if _, ok, err := FiledTrail(w.root, DefaultAuditDir, miss.n, miss.tracker, miss.run); ok || err != nil {
			t.Errorf("FiledTrail(%+v) found a trail (%v)", miss, err)
		}
	}
	if _, ok, err := FiledTrail(t.TempDir(), DefaultAuditDir, 1, name, ""); ok || err != nil {
		t.Errorf("a repository without trails: %v, %v", ok, err)
	}
}
