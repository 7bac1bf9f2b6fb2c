package store_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/store"
)

// Changes reports the runs with new events, the runs written since the
// mark and the running runs' leases; from its own mark, a store where
// nothing happened reports no event and no run written later.
func TestChanges(t *testing.T) {
	t.Parallel()
	st := open(t, filepath.Join(t.TempDir(), store.FileName))
	ctx := t.Context()
	for _, id := range []string{"a", "b"} {
		if err := st.CreateRun(ctx, store.Run{ID: id, Workflow: "w", Node: "n", State: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	c, err := st.Changes(ctx, store.Mark{})
	if err != nil || len(c.Updated) != 2 || len(c.Events) != 0 || len(c.Running) != 2 || c.Mark.Updated == 0 {
		t.Fatalf("Changes from the start = %+v, %v", c, err)
	}
	for _, r := range c.Running {
		if st.LeaseLive(r) {
			t.Errorf("run %s, held by nobody, is live", r.ID)
		}
	}
	mark := c.Mark
	seq, err := st.AppendEvent(ctx, event.Event{RunID: "b", Kind: event.NodeStarted, Text: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Acquire(ctx, "a", store.Lease{Token: "t", PID: os.Getpid()}, time.Minute); err != nil {
		t.Fatal(err)
	}
	c, err = st.Changes(ctx, mark)
	if err != nil || len(c.Events) != 1 || c.Events["b"] != seq || c.Mark.Event != seq {
		t.Fatalf("Changes after an event = %+v, %v; want b's event %d", c, err, seq)
	}
	live := map[string]bool{}
	for _, r := range c.Running {
		live[r.ID] = st.LeaseLive(r)
	}
	if !live["a"] || live["b"] {
		t.Errorf("leases live: %v, want a's only", live)
	}
	// Written before the mark: reported again within the slack, with the
	// time the caller saw already.
	for id, at := range c.Updated {
		if at > mark.Updated {
			t.Errorf("run %s written at %d after the mark %d, though nothing wrote it", id, at, mark.Updated)
		}
	}
	if err := st.UpdateMeta(ctx, "b", map[string]string{"x": "y"}); err != nil {
		t.Fatal(err)
	}
	c2, err := st.Changes(ctx, c.Mark)
	if err != nil || c2.Updated["b"] <= mark.Updated || len(c2.Events) != 0 {
		t.Errorf("Changes after a write of b = %+v, %v", c2, err)
	}
}
