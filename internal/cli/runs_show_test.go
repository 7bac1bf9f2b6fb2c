package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/testenv"
)

// TestRunsShowTheQuestionInFull: a run waiting at a gate shows, in
// `azero runs show RUN` and its --json, everything the question asks:
// the report to read, the prompt and the answers allowed, and how to
// answer it; its events (model calls included) replay with --events.
func TestRunsShowTheQuestionInFull(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "go")
	state, base := t.TempDir(), t.TempDir()
	demo := runAzeroIn(t, state, base, nil, "demo", "--dir", base, "--json")
	if demo.code != ExitNeedsHuman {
		t.Fatalf("demo: exit %d, want %d\n%s", demo.code, ExitNeedsHuman, demo.stderr)
	}
	var out struct {
		RunID string `json:"run_id"`
		Node  string `json:"node"`
	}
	if err := json.Unmarshal([]byte(demo.stdout), &out); err != nil || out.RunID == "" {
		t.Fatalf("demo: %v\n%s", err, demo.stdout)
	}

	show := runAzeroIn(t, state, base, nil, "runs", "show", out.RunID, "--json", "--events")
	if show.code != 0 {
		t.Fatalf("runs show --json: exit %d\n%s", show.code, show.stderr)
	}
	var d struct {
		Question *human.Question `json:"question"`
		Events   []event.Event   `json:"events"`
	}
	if err := json.Unmarshal([]byte(show.stdout), &d); err != nil {
		t.Fatal(err)
	}
	q := d.Question
	if q == nil {
		t.Fatalf("the waiting run's document has no question:\n%s", show.stdout)
	}
	if q.Gate != out.Node || q.ID == "" || q.AskedAt.IsZero() || q.Prompt == "" || q.Report == "" || len(q.Options) == 0 {
		t.Fatalf("question = %+v, want the gate %s's question in full", q, out.Node)
	}
	if err := q.Check(); err != nil {
		t.Fatal(err)
	}
	calls := 0
	for _, ev := range d.Events {
		if ev.Kind == event.ModelCall {
			calls++
		}
	}
	if calls == 0 {
		t.Errorf("no model_call event among the run's %d events", len(d.Events))
	}

	text := runAzeroIn(t, state, base, nil, "runs", "show", out.RunID)
	if text.code != 0 {
		t.Fatalf("runs show: exit %d\n%s", text.code, text.stderr)
	}
	want := []string{"Waiting at " + q.Gate + " for an answer", q.Prompt, "answers: " + answerList(*q), selfCommand(t) + " resume " + out.RunID}
	for _, o := range q.Options {
		if !strings.Contains(answerList(*q), o.Key) {
			t.Errorf("the answers %q do not name %s", answerList(*q), o.Key)
		}
	}
	for line := range strings.Lines(strings.TrimSpace(q.Report)) {
		want = append(want, strings.TrimRight(line, "\n"))
	}
	for _, w := range want {
		if !strings.Contains(text.stdout, w) {
			t.Errorf("runs show lacks %q:\n%s", w, text.stdout)
		}
	}
}
