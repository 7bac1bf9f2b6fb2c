package store_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/store"
)

// BenchmarkCheckpoint measures one Store.Checkpoint of a run with a
// kilobyte of state: the transaction that reads and verifies the run's
// row, writes its new position, state and seal, and adds a history row.
// Measured here (2 shared cores), the seal costs about 35 µs of CPU per
// checkpoint (61 µs without it, 97 µs with it: reading the row back and two
// HMACs), and flow's node cycle median went from 0.10 to 0.12 ms.
func BenchmarkCheckpoint(b *testing.B) {
	st, err := store.Open(b.Context(), filepath.Join(b.TempDir(), store.FileName), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ctx := b.Context()
	if err := st.CreateRun(ctx, store.Run{ID: "r", Workflow: "w", Node: "a", State: json.RawMessage(`{}`)}); err != nil {
		b.Fatal(err)
	}
	if err := st.Acquire(ctx, "r", store.Lease{Token: "t", PID: os.Getpid()}, time.Hour); err != nil {
		b.Fatal(err)
	}
	state, _ := json.Marshal(map[string]any{"trail": strings.Repeat("x", 1024)})
	visits := map[string]int{"a": 0}
	now := time.Now()
	for b.Loop() {
		visits["a"]++
		err := st.Checkpoint(ctx, store.Checkpoint{RunID: "r", Token: "t", Node: "a", Next: "a", Status: store.StatusRunning,
			State: state, Steps: visits["a"], Visits: visits, Outcome: "ok", Started: now, Finished: now})
		if err != nil {
			b.Fatal(err)
		}
	}
}
