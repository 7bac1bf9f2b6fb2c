package store_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/store"
)

// headsStore holds six runs, newest last created: r0..r5. r1 and r4 wait
// with a question, r3's question is not JSON (a row changed by hand: its
// seal no longer verifies, so it is listed only as not verified), r2
// and r4 made model calls, r0 names an issue, r1 a slug, r4 a filed issue.
func headsStore(t *testing.T) (*store.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), store.FileName)
	st := open(t, path)
	ctx := t.Context()
	states := []string{`{"issue":"42"}`, `{"slug":"fast-search"}`, `{}`, `not json`, `{"filed":{"number":7},"slug":"x"}`, `{"issue":12}`}
	for i, state := range states {
		id := fmt.Sprintf("r%d", i)
		wf := "implement"
		if i%2 == 1 {
			wf = "issue"
		}
		if err := st.CreateRun(ctx, store.Run{ID: id, Workflow: wf, Node: "start", State: json.RawMessage(state)}); err != nil {
			t.Fatal(err)
		}
	}
	question := func(id, gate string, flagged []string) {
		q, _ := json.Marshal(map[string]any{"id": "q-" + id, "gate": gate, "kind": "word", "title": "Diff review", "report": "a long report",
			"prompt": "!! flagged above. Commit?", "options": []map[string]string{{"key": "approve"}}, "facts": map[string]any{"flagged_files": flagged}})
		tok := "t-" + id
		if err := st.Acquire(ctx, id, store.Lease{Token: tok, PID: -1}, time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := st.Checkpoint(ctx, store.Checkpoint{RunID: id, Token: tok, Node: "start", Next: gate, Status: store.StatusWaiting,
			Question: q, Outcome: "waiting"}); err != nil {
			t.Fatal(err)
		}
		if err := st.Release(ctx, id, tok); err != nil {
			t.Fatal(err)
		}
	}
	question("r1", "review", []string{"a.go", "b.go"})
	question("r4", "diff_review", nil)
	for _, c := range []store.Call{{RunID: "r2", CostUSD: 0.25}, {RunID: "r2", CostUSD: 0.5}, {RunID: "r4", CostUSD: 1}} {
		if err := st.RecordCall(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	// A question that is not JSON, and an answer posted by hand, with the
	// question's digest and the summary a list shows made to match.
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sum := sha256.Sum256([]byte("{not json"))
	if _, err := db.ExecContext(ctx, `UPDATE runs SET question = '{not json', question_digest = ?, summary = '{"asks":true,"title":"Approve me"}',
		answer = 'x' WHERE id = 'r3'`, hex.EncodeToString(sum[:])); err != nil {
		t.Fatal(err)
	}
	return st, path
}

func TestListHeads(t *testing.T) {
	t.Parallel()
	st, _ := headsStore(t)
	ctx := t.Context()
	heads, err := st.ListHeads(ctx, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	byID := map[string]store.Head{}
	for _, h := range heads {
		ids = append(ids, h.ID)
		byID[h.ID] = h
		if h.State != nil || h.Question != nil || h.Answer != nil {
			t.Errorf("%s: a head carries the state, question or answer", h.ID)
		}
	}
	if !slices.Equal(ids, []string{"r5", "r4", "r3", "r2", "r1", "r0"}) {
		t.Fatalf("heads %v, want newest first", ids)
	}
	tests := []struct {
		id           string
		asks         *store.Asking
		answered     bool
		cost         float64
		issue, slug  string
		filed        int
		status, node string
	}{
		{"r0", nil, false, 0, "42", "", 0, "running", "start"},
		{"r1", &store.Asking{Gate: "review", Title: "Diff review", Prompt: "!! flagged above. Commit?", Flagged: []string{"a.go", "b.go"}}, false, 0, "", "fast-search", 0, "waiting", "review"},
		{"r2", nil, false, 0.75, "", "", 0, "running", "start"},
		// Changed by hand: nothing of its summary is shown; its answer,
		// which has a seal of its own, is said to be there.
		{"r3", nil, true, 0, "", "", 0, "running", "start"},
		{"r4", &store.Asking{Gate: "diff_review", Title: "Diff review", Prompt: "!! flagged above. Commit?"}, false, 1, "", "x", 7, "waiting", "diff_review"},
		{"r5", nil, false, 0, "12", "", 0, "running", "start"},
	}
	for _, tt := range tests {
		h := byID[tt.id]
		if !reflect.DeepEqual(h.Asks, tt.asks) || h.Answered != tt.answered || h.CostUSD != tt.cost || h.Issue != tt.issue || h.Slug != tt.slug ||
			h.Filed != tt.filed || string(h.Status) != tt.status || h.Node != tt.node {
			t.Errorf("%s: head %+v asks %+v; want asks %+v answered %v cost %v issue %q slug %q filed %d, %s at %s",
				tt.id, h, h.Asks, tt.asks, tt.answered, tt.cost, tt.issue, tt.slug, tt.filed, tt.status, tt.node)
		}
	}
	if !errors.Is(byID["r3"].Unverified, store.ErrRunForged) || byID["r5"].Unverified != nil {
		t.Errorf("r3 (changed by hand) unverified: %v, r5: %v; want only r3 marked", byID["r3"].Unverified, byID["r5"].Unverified)
	}
	if _, err := st.GetRun(ctx, "r3"); !errors.Is(err, store.ErrRunForged) {
		t.Errorf("GetRun(r3), changed by hand = %v, want ErrRunForged", err)
	}
	// The rest of a head is the run as a brief ListRuns reads it.
	runs, err := st.ListRuns(ctx, store.Filter{Unverified: true, Brief: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		r.State, r.Question, r.Answer = nil, nil, nil
		if h := byID[r.ID]; !reflect.DeepEqual(h.Run, r) {
			t.Errorf("%s: head %+v, run %+v", r.ID, h.Run, r)
		}
	}
}

func TestFiltersPagesAndCounts(t *testing.T) {
	t.Parallel()
	st, _ := headsStore(t)
	tests := []struct {
		name string
		f    store.Filter
		want []string
		all  int
	}{
		{"everything", store.Filter{}, []string{"r5", "r4", "r3", "r2", "r1", "r0"}, 6},
		{"a page", store.Filter{Limit: 2}, []string{"r5", "r4"}, 6},
		{"the next page", store.Filter{Limit: 2, Offset: 2}, []string{"r3", "r2"}, 6},
		{"the last page", store.Filter{Limit: 4, Offset: 4}, []string{"r1", "r0"}, 6},
		{"past the end", store.Filter{Limit: 2, Offset: 6}, nil, 6},
		{"an offset without a limit", store.Filter{Offset: 5}, []string{"r0"}, 6},
		{"a workflow", store.Filter{Workflow: "issue", Limit: 2}, []string{"r5", "r3"}, 3},
		{"a status", store.Filter{Status: store.StatusWaiting}, []string{"r4", "r1"}, 2},
		{"asking", store.Filter{Asking: true}, []string{"r4", "r3", "r1"}, 3},
		{"asking, a page", store.Filter{Asking: true, Limit: 1, Offset: 1}, []string{"r3"}, 3},
	}
	ctx := t.Context()
	if runs, err := st.ListRuns(ctx, store.Filter{Asking: true}); err != nil || len(runs) != 2 || runs[0].ID != "r4" || runs[1].ID != "r1" {
		t.Errorf("ListRuns(asking) without the unverified = %+v, %v; want r4 and r1, not r3 (changed by hand)", runs, err)
	}
	for _, tt := range tests {
		// r3 was changed by hand: it is selected only with the runs that
		// do not verify.
		tt.f.Unverified = true
		t.Run(tt.name, func(t *testing.T) {
			ids := func(rs []store.Run) []string {
				var out []string
				for _, r := range rs {
					out = append(out, r.ID)
				}
				return out
			}
			runs, err := st.ListRuns(ctx, tt.f)
			if err != nil || !slices.Equal(ids(runs), tt.want) {
				t.Errorf("ListRuns = %v, %v; want %v", ids(runs), err, tt.want)
			}
			brief := tt.f
			brief.Brief = true
			briefs, err := st.ListRuns(ctx, brief)
			if err != nil || !slices.Equal(ids(briefs), tt.want) {
				t.Errorf("ListRuns brief = %v, %v; want %v", ids(briefs), err, tt.want)
			}
			for _, r := range briefs {
				if r.State != nil || r.Question != nil || r.Answer != nil {
					t.Errorf("a brief run carries its state, question or answer: %+v", r)
				}
			}
			heads, err := st.ListHeads(ctx, tt.f)
			var hids []string
			for _, h := range heads {
				hids = append(hids, h.ID)
			}
			if err != nil || !slices.Equal(hids, tt.want) {
				t.Errorf("ListHeads = %v, %v; want %v", hids, err, tt.want)
			}
			if n, err := st.CountRuns(ctx, tt.f); err != nil || n != tt.all {
				t.Errorf("CountRuns = %d, %v; want %d", n, err, tt.all)
			}
		})
	}
}

// A page of heads costs the same whatever the number of runs (measured
// per run listed).
func BenchmarkListHeads(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			st, err := store.Open(context.Background(), filepath.Join(b.TempDir(), store.FileName), store.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			for i := range n {
				if err := st.CreateRun(context.Background(), store.Run{ID: fmt.Sprintf("r%05d", i), Workflow: "w", Node: "a",
					State: json.RawMessage(`{"issue":"1"}`)}); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				if _, err := st.ListHeads(context.Background(), store.Filter{Limit: 50}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
