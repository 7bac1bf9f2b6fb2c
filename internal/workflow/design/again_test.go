package design

import (
	"strings"
	"testing"
)

// TestDesigningAgainNeedsTheOldTrailMovedToo: a design committed before
// and then moved away (as the refusal of an existing design suggests)
// leaves its trail in done/. Designing for the same issue again would
// draft, review and ask the human, then fail at the commit, the old and
// the new trail in each other's way; it is refused before anything is
// written, naming the old trail.
func TestDesigningAgainNeedsTheOldTrailMovedToo(t *testing.T) {
	t.Parallel()
	w := newWorld(t, map[string]string{"calc.go": "package calc\n", "calc_test.go": "package calc\n"}, reply("drafter", 1, goodLLD)+reply("reviewer", 1, approved))
	n := w.fileIssue("Multiply multiplies", "calc.Multiply(2, 3) must be 6.")
	s := w.prepare(n, nil)
	h := &person{steps: []step{{gate: NodeEditDraft, key: AnswerSend}, {gate: NodeEditVerdict, key: AnswerApprove}}}
	if _, final, err := w.start(s, h); err != nil || final.Committed == nil {
		t.Fatalf("the first design: %v", err)
	}
	w.git("rm", "-q", s.LLDPath)
	w.git("commit", "-q", "-m", "drop the design")
	head := w.git("rev-parse", "HEAD")

	_, err := Prepare(t.Context(), Inputs{Dir: w.root, Issue: n, Reader: w.local(), TrackerName: w.local().Name(),
		Drafter: "mock:scripted", Reviewer: "mock:scripted"})
	if err == nil || !strings.Contains(err.Error(), s.DoneDir()) {
		t.Fatalf("designing again with the old trail in %s: err = %v, want a refusal naming it", s.DoneDir(), err)
	}
	if got := w.git("rev-parse", "HEAD"); got != head {
		t.Errorf("HEAD moved: %s", got)
	}
	if st := w.git("status", "--porcelain"); st != "" {
		t.Errorf("the refusal changed the checkout: %q", st)
	}
}
