package issue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/testenv"
	"github.com/azero-dev/azero/internal/tracker"
	"github.com/azero-dev/azero/internal/tracker/trackertest"
)

// humanWordsScript: three drafts and two verdicts. The first draft is cut
// from prose the human never sees; a line of the second is deleted by the
// human; the first verdict blocks, the second approves.
const humanWordsScript = `
[[reply]]
role = "drafter"
turn = 1
text = '''
Here is the issue. PROSE-NEVER-SHOWN

` + "```markdown" + `
# Add a budget flag

**Labels:** enhancement

## Summary

Stop runs that cost too much. DRAFT-ONE-ONLY
` + "```" + `
'''

[[reply]]
role = "drafter"
turn = 2
text = '''
# Add a budget flag to every workflow

**Labels:** enhancement, new: cost-control

## Summary

Every workflow stops at 5 USD by default.
DRAFTER-LINE-THE-HUMAN-DELETES

## Acceptance Criteria

- [ ] A run over 5 USD stops.
'''

[[reply]]
role = "drafter"
turn = 3
text = '''
# Add a budget flag to every workflow

**Labels:** enhancement, new: cost-control

## Summary

Every workflow stops at 5 USD by default; the limit is [implement] budget.

## Acceptance Criteria

- [ ] A run over 5 USD stops.
- [ ] [implement] budget sets the limit.
'''

[[reply]]
role = "reviewer"
turn = 1
text = '''
**Verdict:** BLOCK

## Tier 1: blocking

- REVIEWER-ONE: the 5 USD default is not in the brief.
'''

[[reply]]
role = "reviewer"
turn = 2
text = '''
**Verdict:** APPROVED
'''
`

// TestReviewerChecksAgainstTheHumansWords: a fact the human adds (in the
// editor and in their feedback) reaches the reviewer as the human's, with
// the built-in prompt saying their words are not inventions; no draft the
// human did not send, no prose around a draft and no line the human
// deleted reaches it. The reviewer approves and filing needs no override.
// On the way, the drafter is told the repository's labels, proposes one,
// and filing creates it, records it and files a body without the title
// and labels lines.
func TestReviewerChecksAgainstTheHumansWords(t *testing.T) {
	t.Parallel()
	w := newWorld(t, humanWordsScript)
	fake := trackertest.NewGitHub(t, "acme", "widgets", "tok", "bug", "enhancement")
	gh, err := tracker.NewGitHub(tracker.GitHubOptions{Repo: "acme/widgets", Token: "tok", APIURL: fake.URL})
	if err != nil {
		t.Fatal(err)
	}
	secondDraft := func(t *testing.T, files []string) {
		b, err := os.ReadFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		d := strings.Replace(string(b), "DRAFTER-LINE-THE-HUMAN-DELETES\n", "", 1)
		d += "\nThe limit is read from [implement] budget (HUMAN-EDIT-SECOND).\n"
		if err := os.WriteFile(files[0], []byte(d), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	h := &person{
		// Revise draft 1; send draft 2; revise after the BLOCK; send draft
		// 3; approve. No confirmation is given: an override would wait.
		choices:    []string{"R", "S", "R", "S", "A"},
		paragraphs: []string{"Every workflow gets the flag (HUMAN-FEEDBACK-DRAFT).", "The default is mine; name the config key (HUMAN-FEEDBACK-VERDICT)."},
		edits: []func(*testing.T, []string){
			appendTo(0, "\nRuns stop at 5 USD by default (HUMAN-EDIT-FACT).\n"),
			secondDraft,
		},
	}
	runID, final, err := w.start(w.state("words", "add a budget"), h, func(string) tracker.Tracker { return gh })
	if err != nil {
		t.Fatalf("err = %v; questions %q", err, h.questions)
	}
	if final.Filed == nil || final.Override {
		t.Fatalf("filed = %+v, override %v; want filed without an override", final.Filed, final.Override)
	}

	reviews := w.lineage(runID, "prompt-review.md")
	if len(reviews) != 2 {
		t.Fatalf("%d review prompts, want 2", len(reviews))
	}
	for i, p := range reviews {
		for _, want := range []string{
			"facts and decisions from the\nperson responsible for the issue", // review.md, built in
			"<human>", "HUMAN-EDIT-FACT", "HUMAN-FEEDBACK-DRAFT", "+The limit is read from [implement] budget (HUMAN-EDIT-SECOND).",
			"The human's feedback on draft #1, at the draft gate:",
		} {
			if !strings.Contains(p, want) {
				t.Errorf("review prompt %d lacks %q:\n%s", i+1, want, p)
			}
		}
		// Model output the human did not pass on: the prose around the
		// first draft (never shown), the first draft (revised, never
		// sent), a line the human deleted.
		for _, never := range []string{"PROSE-NEVER-SHOWN", "DRAFT-ONE-ONLY", "DRAFTER-LINE-THE-HUMAN-DELETES"} {
			if strings.Contains(p, never) {
				t.Errorf("review prompt %d holds %s, model output the human did not pass on:\n%s", i+1, never, p)
			}
		}
	}
	if p := reviews[1]; !strings.Contains(p, "HUMAN-FEEDBACK-VERDICT") || !strings.Contains(p, "at the verdict gate, after reading verdict #1") {
		t.Errorf("the second review prompt lacks the feedback given at the verdict gate:\n%s", p)
	}
	if strings.Contains(reviews[0], "HUMAN-FEEDBACK-VERDICT") {
		t.Error("the first review holds feedback given after it")
	}

	// The drafter was told the labels, every time.
	drafts := w.lineage(runID, "prompt-draft.md")
	if len(drafts) != 3 {
		t.Fatalf("%d draft prompts, want 3", len(drafts))
	}
	for i, p := range drafts {
		if !strings.Contains(p, "<labels>\nbug\nenhancement\n</labels>") || !strings.Contains(p, "new: NAME") {
			t.Errorf("draft prompt %d does not list the labels and how to propose one:\n%s", i+1, p)
		}
	}
	// The gates showing the second and third drafts said which label
	// filing would create.
	const proposed = "Labels new to github acme/widgets, created if this draft is filed: cost-control"
	if len(h.reports) != 5 || strings.Contains(h.reports[0], proposed) || !strings.Contains(h.reports[1], proposed) || !strings.Contains(h.reports[4], proposed) {
		t.Errorf("gate reports = %q; want the proposed label named from the second draft on", h.reports)
	}

	issues := fake.Issues()
	if len(issues) != 1 {
		t.Fatalf("%d issues filed", len(issues))
	}
	body := issues[0]["body"].(string)
	if issues[0]["title"] != "Add a budget flag to every workflow" || !strings.HasPrefix(body, "## Summary\n") ||
		strings.Contains(body, "# Add a budget") || strings.Contains(body, "**Labels:**") || !strings.HasSuffix(body, tracker.Marker(runID)+"\n") {
		t.Errorf("issue title %q, body %q; want the body without the title and labels lines, with the marker", issues[0]["title"], body)
	}
	if got := fmt.Sprint(issues[0]["labels"]); got != "[map[name:enhancement] map[name:cost-control]]" {
		t.Errorf("issue labels = %s", got)
	}
	if !slices.Equal(fake.Labels(), []string{"bug", "enhancement", "cost-control"}) {
		t.Errorf("repository labels = %v", fake.Labels())
	}
	var rec Filed
	if err := json.Unmarshal([]byte(w.read(final.Filed.Dir+"/"+lastName(w.names(final.Filed.Dir)))), &rec); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rec.Created, []string{"cost-control"}) || !slices.Equal(rec.Labels, []string{"enhancement", "cost-control"}) {
		t.Errorf("filed.json labels %v, created %v", rec.Labels, rec.Created)
	}
	if ev := w.auditEvents("issue_labels_created"); len(ev) != 1 || fmt.Sprint(ev[0]["labels"]) != "[cost-control]" || ev[0]["run_id"] != runID {
		t.Errorf("audit records of created labels = %v", ev)
	}
	// Filing again (the run resumed after a crash) finds the issue by its
	// marker, in the body without the title and labels lines.
	found, ok, err := gh.Find(t.Context(), tracker.Marker(runID))
	if err != nil || !ok || found.Number != 1 {
		t.Errorf("Find = %+v, %v, %v", found, ok, err)
	}
}

func lastName(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return names[len(names)-1]
}

// failingLabels is a tracker whose labels cannot be read.
type failingLabels struct{ tracker.Tracker }

func (failingLabels) Labels(context.Context) ([]string, error) {
	return nil, errors.New("labels endpoint unavailable")
}

// TestDrafterIsToldTheLabelsOrThatNoneAreKnown: the labels of a local
// tracker are those configured and those its issues name; a tracker
// without labels, or whose labels cannot be read, has the drafter told so,
// and the run goes on to the draft gate.
func TestDrafterIsToldTheLabelsOrThatNoneAreKnown(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		tracker func(w *world, runID string) tracker.Tracker
		want    string
		warned  bool
	}{
		{"local, configured and used", func(w *world, runID string) tracker.Tracker {
			testenv.WriteFiles(t, w.root, map[string]string{"docs/issues/0001-old.md": "# Old\n\n**Labels:** bug, Docs\n\nText.\n"})
			l := w.local(runID)
			l.KnownLabels = []string{"triage"}
			return l
		}, "<labels>\nbug\nDocs\ntriage\n</labels>", false},
		{"local, none yet", func(w *world, runID string) tracker.Tracker { return w.local(runID) },
			"No labels are known: the repository's tracker has none yet.", false},
		{"unreadable", func(w *world, runID string) tracker.Tracker { return failingLabels{w.local(runID)} },
			"No labels are known: the repository's labels could not be read from its tracker.", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, twoDrafts)
			runID, final, err := w.start(w.state("labels", "add a budget"), &person{}, func(id string) tracker.Tracker { return tt.tracker(w, id) })
			if !errors.Is(err, flow.ErrWaiting) {
				t.Fatalf("err = %v, want waiting at the draft gate", err)
			}
			if p := w.lineage(runID, "prompt-draft.md"); len(p) != 1 || !strings.Contains(p[0], tt.want) || !strings.Contains(p[0], "new: NAME") {
				t.Errorf("draft prompt = %q; want %q and how to propose a label", p, tt.want)
			}
			if !final.LabelsRead || (final.LabelsError != "") != tt.warned {
				t.Errorf("labels read %v, error %q", final.LabelsRead, final.LabelsError)
			}
			events, err := w.st.Events(t.Context(), runID, 0, 100)
			if err != nil {
				t.Fatal(err)
			}
			warned := slices.ContainsFunc(events, func(e event.Event) bool {
				return strings.Contains(e.Text, "Could not read the labels of local docs/issues: labels endpoint unavailable")
			})
			if warned != tt.warned {
				t.Errorf("warned %v, want %v: %v", warned, tt.warned, events)
			}
		})
	}
}
