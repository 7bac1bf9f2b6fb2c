package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/store"
)

func open(t *testing.T, path string) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestOpenOddPathAndReopen(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state dir ?#%", "azero.db")
	st := open(t, path)
	if err := st.CreateRun(t.Context(), store.Run{ID: "r1", Workflow: "w", Node: "a", State: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	again := open(t, path) // migrations must not re-run
	r, err := again.GetRun(t.Context(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Workflow != "w" || r.Status != store.StatusRunning {
		t.Errorf("run = %+v", r)
	}
}

func TestFindRunByPrefix(t *testing.T) {
	t.Parallel()
	st := open(t, filepath.Join(t.TempDir(), "azero.db"))
	for _, id := range []string{"261122-aaaaaa", "261122-aabbbb", "261122-cccccc"} {
		if err := st.CreateRun(t.Context(), store.Run{ID: id, Workflow: "w", Node: "a", State: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		ref, want, err string
	}{
		{"261122-cccccc", "261122-cccccc", ""},
		{"261122-c", "261122-cccccc", ""},
		{"261122-aab", "261122-aabbbb", ""},
		{"261122-a", "", "ambiguous"},
		{"nope", "", "run not found"},
		{"", "", "run not found"},
	}
	for _, tt := range tests {
		r, err := st.FindRun(t.Context(), tt.ref)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("FindRun(%q) err = %v, want %q", tt.ref, err, tt.err)
			}
			continue
		}
		if err != nil || r.ID != tt.want {
			t.Errorf("FindRun(%q) = %s, %v; want %s", tt.ref, r.ID, err, tt.want)
		}
	}
	if _, err := st.GetRun(t.Context(), "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetRun(nope) = %v, want ErrNotFound", err)
	}
}

func TestCheckpointNeedsLease(t *testing.T) {
	t.Parallel()
	st := open(t, filepath.Join(t.TempDir(), "azero.db"))
	ctx := t.Context()
	if err := st.CreateRun(ctx, store.Run{ID: "r", Workflow: "w", Node: "a", State: json.RawMessage(`{"n":1}`)}); err != nil {
		t.Fatal(err)
	}
	cp := store.Checkpoint{RunID: "r", Token: "t1", Node: "a", Next: "b", Status: store.StatusRunning,
		State: json.RawMessage(`{"n":2}`), Steps: 1, Outcome: "ok", Started: time.Now(), Finished: time.Now()}
	if err := st.Checkpoint(ctx, cp); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("checkpoint without lease: %v, want ErrLeaseLost", err)
	}
	if err := st.Acquire(ctx, "r", store.Lease{Token: "t1", PID: 1}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := st.Checkpoint(ctx, cp); err != nil {
		t.Fatal(err)
	}
	r, _ := st.GetRun(ctx, "r")
	if r.Node != "b" || string(r.State) != `{"n":2}` || r.Steps != 1 {
		t.Errorf("run after checkpoint = node %s state %s steps %d", r.Node, r.State, r.Steps)
	}
	hist, _ := st.History(ctx, "r")
	if len(hist) != 1 || hist[0].Node != "a" || hist[0].Next != "b" {
		t.Errorf("history = %+v", hist)
	}
	// A stale token cannot write after the lease changes hands.
	if err := st.Release(ctx, "r", "t1"); err != nil {
		t.Fatal(err)
	}
	if err := st.Acquire(ctx, "r", store.Lease{Token: "t2", PID: 1}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := st.Renew(ctx, "r", "t1", time.Minute); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("renew with old token: %v, want ErrLeaseLost", err)
	}
}

func TestCallsAndSpent(t *testing.T) {
	t.Parallel()
	st := open(t, filepath.Join(t.TempDir(), "azero.db"))
	ctx := context.Background()
	if err := st.CreateRun(ctx, store.Run{ID: "r", Workflow: "w", Node: "a", State: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	calls := []store.Call{
		{RunID: "r", Node: "draft", Role: "drafter", Model: "mock:scripted", InputTokens: 10, OutputTokens: 5, CostUSD: 0.25},
		{RunID: "r", Node: "draft", Role: "drafter", Model: "mock:scripted", CostUSD: 0.5, Error: "429"},
		{RunID: "r", Node: "review", Role: "reviewer", Model: "mock:scripted", CostUSD: 1},
	}
	for _, c := range calls {
		if err := st.RecordCall(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	spent, err := st.Spent(ctx, "r")
	if err != nil || spent != 1.75 {
		t.Errorf("Spent = %v, %v; want 1.75", spent, err)
	}
	n, err := st.CallCount(ctx, "r", "drafter")
	if err != nil || n != 1 {
		t.Errorf("CallCount(drafter) = %d, %v; want 1 (failed calls do not count)", n, err)
	}
	got, _ := st.Calls(ctx, "r")
	if len(got) != 3 || got[2].Role != "reviewer" {
		t.Errorf("Calls = %+v", got)
	}
}

func TestManyProcessesOpenAFreshStore(t *testing.T) {
	t.Parallel()
	for round := range 5 {
		path := filepath.Join(t.TempDir(), "azero.db")
		errs := make(chan error, 16)
		for range 16 {
			go func() {
				st, err := store.Open(context.Background(), path, store.Options{})
				if err == nil {
					err = st.CreateRun(context.Background(), store.Run{ID: store.NewID(time.Now()), Workflow: "w", Node: "a", State: json.RawMessage(`{}`)})
					st.Close()
				}
				errs <- err
			}()
		}
		for range 16 {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
}
