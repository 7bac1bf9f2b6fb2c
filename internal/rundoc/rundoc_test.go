package rundoc_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/rundoc"
	"github.com/azero-dev/azero/internal/store"
)

// open returns a store in which pid 4242 is dead and every other pid lives.
func open(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), store.FileName), store.Options{Alive: func(pid int) bool { return pid != 4242 }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func create(t *testing.T, st *store.Store, id, workflow string, status store.Status) {
	t.Helper()
	if err := st.CreateRun(t.Context(), store.Run{ID: id, Workflow: workflow, Node: "a", Status: status, State: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
}

// A run stored as running whose driver died is listed as interrupted; the
// filters select by the status a person sees.
func TestListSaysWhoRuns(t *testing.T) {
	t.Parallel()
	st := open(t)
	ctx := t.Context()
	create(t, st, "r-live", "implement", store.StatusRunning)
	create(t, st, "r-dead", "implement", store.StatusRunning)
	create(t, st, "r-wait", "issue", store.StatusWaiting)
	if err := st.Acquire(ctx, "r-live", store.Lease{Token: "a", PID: 1}, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := st.Acquire(ctx, "r-dead", store.Lease{Token: "b", PID: 4242}, time.Hour); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		filter rundoc.Filter
		want   map[string]store.Status
	}{
		{"all", rundoc.Filter{}, map[string]store.Status{"r-live": "running", "r-dead": "interrupted", "r-wait": "waiting"}},
		{"running", rundoc.Filter{Status: "running"}, map[string]store.Status{"r-live": "running"}},
		{"interrupted", rundoc.Filter{Status: "interrupted"}, map[string]store.Status{"r-dead": "interrupted"}},
		{"a workflow", rundoc.Filter{Workflow: "issue"}, map[string]store.Status{"r-wait": "waiting"}},
		{"limited", rundoc.Filter{Limit: 1, Workflow: "issue"}, map[string]store.Status{"r-wait": "waiting"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			views, err := rundoc.List(ctx, st, tt.filter, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]store.Status{}
			for _, v := range views {
				got[v.ID] = v.Status
			}
			if len(got) != len(tt.want) {
				t.Fatalf("listed %v, want %v", got, tt.want)
			}
			for id, s := range tt.want {
				if got[id] != s {
					t.Errorf("%s is %s, want %s", id, got[id], s)
				}
			}
		})
	}
	var bad *rundoc.ErrStatus
	if _, err := rundoc.List(ctx, st, rundoc.Filter{Status: "sleeping"}, time.Now()); !errors.As(err, &bad) {
		t.Errorf("an unknown status: %v", err)
	}
}

// The detail sums the cost per node, decodes the pending question, and
// names the lineage directory only when it exists.
func TestDetail(t *testing.T) {
	t.Parallel()
	st := open(t)
	ctx := t.Context()
	create(t, st, "r", "implement", store.StatusRunning)
	for _, c := range []store.Call{
		{RunID: "r", Node: "scaffold", Role: "coder", InputTokens: 100, OutputTokens: 10, CostUSD: 0.5},
		{RunID: "r", Node: "implement", Role: "coder", InputTokens: 200, OutputTokens: 20, CostUSD: 1},
		{RunID: "r", Node: "implement", Role: "coder", InputTokens: 300, OutputTokens: 30, CostUSD: 1.25},
	} {
		if err := st.RecordCall(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	q := human.Question{ID: "q1", Gate: "review", Kind: human.Word, Prompt: "Merge?", Options: []human.Option{{Key: "approve", Decision: "APPROVED"}}}
	raw, _ := json.Marshal(q)
	if err := st.Acquire(ctx, "r", store.Lease{Token: "t", PID: 1}, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := st.SetQuestion(ctx, "r", "t", q.ID, raw); err != nil {
		t.Fatal(err)
	}
	r, err := st.GetRun(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	lineage := filepath.Join(t.TempDir(), "runs", "r")
	d, err := rundoc.DetailOf(ctx, st, r, time.Now(), lineage, true)
	if err != nil {
		t.Fatal(err)
	}
	if d.TotalUSD != 2.75 || len(d.CostByNode) != 2 || d.CostByNode[0].Node != "implement" || d.CostByNode[0].Calls != 2 ||
		d.CostByNode[0].InputTokens != 500 || d.CostByNode[1].CostUSD != 0.5 {
		t.Errorf("cost: %+v, total %v", d.CostByNode, d.TotalUSD)
	}
	if d.Question == nil || d.Question.Gate != "review" || d.Question.Prompt != "Merge?" {
		t.Errorf("question %+v", d.Question)
	}
	if d.LineageDir != "" {
		t.Errorf("a lineage directory that does not exist is named: %s", d.LineageDir)
	}
	if err := os.MkdirAll(lineage, 0o700); err != nil {
		t.Fatal(err)
	}
	if d, _ = rundoc.DetailOf(ctx, st, r, time.Now(), lineage, false); d.LineageDir != lineage || d.Events != nil {
		t.Errorf("lineage %q, events %v", d.LineageDir, d.Events)
	}
}
