package governance

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/safewrite"
)

var routes = Routes{Pass: "next", Revise: "draft", Manual: "manual"}

// TestDecideLeavesRecordsForTheNextNode: a gate's decision only routes
// and leaves what the human wrote for Flush; Flush writes it once, in
// order, and keeps the human's own words for the reviewer.
func TestDecideLeavesRecordsForTheNextNode(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	tr := Trail{Root: root, Dir: "audit/active/x", Writer: &safewrite.Writer{}, Actor: "azero test"}
	ctx := flow.WithRun(t.Context(), "run1", GateDraft)
	if _, err := tr.Record(ctx, KindBrief, []byte("the brief")); err != nil {
		t.Fatal(err)
	}
	e, err := tr.Record(ctx, KindDraft, []byte("# Draft\n\nmodel line\n"))
	if err != nil {
		t.Fatal(err)
	}
	l := &Loop{Draft: "# Draft\n\nmodel line\n", ModelDraft: "# Draft\n\nmodel line\n", DraftFile: e.Name, Drafts: 1}
	q := human.Question{Gate: GateDraft, Facts: map[string]any{"trail_last": 2.0}}
	a := human.Answer{Gate: GateDraft, Key: AnswerRevise, Text: " shorter ",
		Files: map[string]string{FileDraft: "# Draft\n\nmodel line\nhuman line\n"}}
	next, err := DecideDraft(l, q, a, routes)
	if err != nil || next != "draft" || l.Iteration != 1 || l.Feedback != "shorter" {
		t.Fatalf("decide = %q, %v, loop %+v", next, err, l)
	}
	if len(l.Pending) != 2 || l.Draft != "# Draft\n\nmodel line\n" || len(l.HumanWords) != 0 {
		t.Fatalf("decide did more than route and leave records: %+v", l)
	}
	c := &Clerk{Writer: &safewrite.Writer{}}
	pending := slices.Clone(l.Pending)
	if err := c.Flush(ctx, tr, l); err != nil {
		t.Fatal(err)
	}
	entries, _ := tr.Entries()
	var names []string
	for _, e := range entries {
		names = append(names, e.Name)
	}
	if !slices.Equal(names, []string{"001-brief.md", "002-draft.md", "003-draft-edited.md", "004-feedback.txt"}) {
		t.Errorf("trail = %v", names)
	}
	if !strings.Contains(l.Draft, "human line") || l.DraftFile != "003-draft-edited.md" || len(l.Pending) != 0 {
		t.Errorf("loop after flush = %+v", l)
	}
	want := []HumanWords{{Gate: GateDraft, Kind: WordsEdits, Draft: 1, Text: "+human line"}, {Gate: GateDraft, Kind: WordsFeedback, Draft: 1, Text: "shorter"}}
	if !slices.Equal(l.HumanWords, want) {
		t.Errorf("human words = %+v, want %+v", l.HumanWords, want)
	}
	// The node ran again after a kill: the records are not written twice.
	l.Pending = pending
	if err := c.Flush(ctx, tr, l); err != nil {
		t.Fatal(err)
	}
	if again, _ := tr.Entries(); len(again) != 4 {
		t.Errorf("a repeated flush wrote again: %v", again)
	}
}

func TestVerdictGateAsksOverrideOnlyOverABlock(t *testing.T) {
	t.Parallel()
	for verdict, override := range map[string]bool{"**Verdict:** BLOCK\n": true, "**Verdict:** APPROVED\n": false, "no word\n": false} {
		c := &Clerk{Writer: &safewrite.Writer{}, StateDir: t.TempDir()}
		tr := Trail{Root: t.TempDir(), Dir: "a", Writer: &safewrite.Writer{}}
		l := &Loop{Draft: "# D\n", Verdict: verdict, DraftFile: "002-draft.md", VerdictFile: "003-verdict.md", Verdicts: 1}
		q, err := c.AskVerdict(flow.WithRun(context.Background(), "r", GateVerdict), tr, l,
			View{Workflow: "w", Approve: "Commit it", Overriding: "committing anyway", Notes: []string{"a note\n"}})
		if err != nil {
			t.Fatal(err)
		}
		o, _ := q.Option(AnswerApprove)
		if (o.Confirm == OverrideWord) != override || (override && !strings.Contains(o.ConfirmWhy, "committing anyway overrides it")) {
			t.Errorf("verdict %q: approve = %+v", verdict, o)
		}
		if !strings.HasPrefix(q.Prompt, "Commit it, ask the drafter") || !strings.HasSuffix(q.Report, "a note\n") || len(q.Files) != 2 {
			t.Errorf("question = %+v", q)
		}
		s := *l
		next, err := DecideVerdict(&s, q, human.Answer{Key: AnswerApprove, Confirm: o.Confirm}, routes)
		if err != nil || next != "next" || s.Override != override {
			t.Errorf("verdict %q: decide = %q, %v, override %v", verdict, next, err, s.Override)
		}
	}
}
