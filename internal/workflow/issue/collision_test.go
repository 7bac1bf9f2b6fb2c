package issue

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/store"
)

// heldBy is the store's answer about slugs for the tests: other holds
// every slug in held.
type heldBy struct {
	other   string
	held    []string
	claimed []string
}

func (r *heldBy) Holder(_ context.Context, slug, self string) (Holder, bool, error) {
	if slices.Contains(r.held, slug) && self != r.other {
		return Holder{RunID: r.other, Status: "waiting", Node: NodeEditDraft}, true, nil
	}
	return Holder{}, false, nil
}

func (r *heldBy) Claim(_ context.Context, runID, slug string) error {
	r.claimed = append(r.claimed, slug)
	return nil
}

// TestSlugCollisionIsAGateOfTheGraph drives the collision of `azero
// issue` in process: it is the graph's slug_collision gate, so its
// question is stored with the run like any other, every answer is
// audited and routed by the engine, and nothing is created before the run
// holds a free slug.
func TestSlugCollisionIsAGateOfTheGraph(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		held     bool // another run holds the slug (else only its directory exists)
		h        *person
		wantErr  func(error) bool
		wantSlug string
		waitAt   string
	}{
		{name: "a new name, after one with no letter", h: &person{choices: []string{AnswerNewName, AnswerNewName}, paragraphs: []string{"!!!", "Budget Flag Two"}},
			wantSlug: "budget-flag-two", waitAt: NodeEditDraft},
		{name: "abort", h: &person{choices: []string{AnswerAbort}},
			wantErr: func(err error) bool {
				var c *CancelledError
				return errors.As(err, &c) && errors.Is(err, flow.ErrAborted)
			}},
		{name: "resume the run holding it", held: true, h: &person{choices: []string{AnswerResume}},
			wantErr: func(err error) bool {
				var h *HandOverError
				return errors.As(err, &h) && h.RunID == "other-run" && errors.Is(err, flow.ErrAborted)
			}},
		{name: "nobody to answer", h: &person{}, wantErr: func(err error) bool { return errors.Is(err, flow.ErrWaiting) }, waitAt: NodeSlugCollision},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, twoDrafts)
			runs := &heldBy{other: "other-run"}
			if tt.held {
				runs.held = []string{"budget-flag"}
			} else {
				leaveTrail(t, filepath.Join(w.root, "docs/audit/active/budget-flag"))
			}
			runID := store.NewID(timeForTest())
			d := w.deps(runID, tt.h, w.local(runID))
			d.Runs = runs
			g := New(d)
			if _, err := flow.Create(t.Context(), w.eng, g, w.state("budget-flag", "add a budget"), flow.CreateOptions{ID: runID}); err != nil {
				t.Fatal(err)
			}
			final, err := flow.Drive(t.Context(), w.eng, g, runID)
			switch {
			case tt.wantErr != nil && !tt.wantErr(err):
				t.Fatalf("err = %v", err)
			case tt.wantErr == nil && !errors.Is(err, flow.ErrWaiting):
				t.Fatalf("err = %v, want the run waiting at %s", err, tt.waitAt)
			}
			r, err := w.st.GetRun(t.Context(), runID)
			if err != nil {
				t.Fatal(err)
			}
			if tt.waitAt != "" {
				if r.Node != tt.waitAt || r.Status != store.StatusWaiting {
					t.Fatalf("run %s at %s, want waiting at %s", r.Status, r.Node, tt.waitAt)
				}
			}
			if tt.waitAt == NodeSlugCollision {
				// The question is stored with the run: anyone can see what
				// it waits for, and nothing was created.
				q := storedQuestion(t, r)
				if q.Gate != NodeSlugCollision || q.Kind != human.Menu || q.Title == "" || !slices.Contains(q.Keys(), AnswerNewName) {
					t.Errorf("stored question = %+v", q)
				}
				if _, err := os.Stat(filepath.Join(w.root, "docs/audit/active/budget-flag/001-brief.md")); !os.IsNotExist(err) {
					t.Errorf("the brief was copied into a taken slug: %v", err)
				}
			}
			if tt.wantSlug != "" {
				if final.Slug != tt.wantSlug || !slices.Equal(runs.claimed, []string{tt.wantSlug}) {
					t.Errorf("slug %q, claimed %v; want %s", final.Slug, runs.claimed, tt.wantSlug)
				}
				if got := w.names("docs/audit/active/" + tt.wantSlug); len(got) == 0 || got[0] != "001-brief.md" {
					t.Errorf("trail under the new name = %v", got)
				}
				// claim -> collision -> claim -> collision (no letter) -> claim -> load_brief
				hist, err := w.st.History(t.Context(), runID)
				if err != nil {
					t.Fatal(err)
				}
				var path []string
				for _, h := range hist {
					if h.Outcome == "ok" {
						path = append(path, h.Node)
					}
				}
				want := []string{NodeClaimSlug, NodeSlugCollision, NodeClaimSlug, NodeSlugCollision, NodeClaimSlug, NodeLoadBrief}
				if len(path) < len(want) || !slices.Equal(path[:len(want)], want) {
					t.Errorf("steps %v, want them to begin with %v", path, want)
				}
			}
			if tt.wantSlug == "" && len(runs.claimed) != 0 {
				t.Errorf("claimed %v without a free slug", runs.claimed)
			}
		})
	}
}

func storedQuestion(t *testing.T, r store.Run) human.Question {
	t.Helper()
	var q human.Question
	if err := json.Unmarshal(r.Question, &q); err != nil {
		t.Fatalf("the run has no stored question: %v (%q)", err, r.Question)
	}
	return q
}

// leaveTrail leaves dir behind, as a run stopped for manual handling does.
func leaveTrail(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.md"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}
