package store_test

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/store"
)

// TestEventsReplay: a run's events come back in order, with their data,
// from any point (a viewer following a run asks for what is new), and
// from a store opened again (another process replays them).
func TestEventsReplay(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "azero.db")
	st := open(t, path)
	for _, id := range []string{"r1", "r2"} {
		if err := st.CreateRun(t.Context(), store.Run{ID: id, Workflow: "w", Node: "a", State: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	var seqs []int64
	for i, ev := range []event.Event{
		{RunID: "r1", Node: "red", Kind: event.TestResult, Tone: event.Bad, Text: "red: 1 failed", At: at},
		{RunID: "r2", Node: "draft", Kind: event.Info, Text: "another run's", At: at},
		event.New(event.ModelCall, event.Plain, "coder").WithData(event.ModelCallData{Role: "coder", InputTokens: 7}),
		{RunID: "r1", Node: "diff_review", Kind: event.Warning, Tone: event.Warn, Text: "flagged", At: at.Add(time.Second)},
	} {
		if ev.RunID == "" {
			ev.RunID, ev.Node, ev.At = "r1", "scaffold", at
		}
		seq, err := st.AppendEvent(t.Context(), ev)
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if ev.RunID == "r1" {
			seqs = append(seqs, seq)
		}
	}
	st.Close()
	st = open(t, path)
	all, err := st.Events(t.Context(), "r1", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 || all[0].Kind != event.TestResult || all[0].Tone != event.Bad || all[0].Node != "red" || !all[0].At.Equal(at) ||
		all[1].Kind != event.ModelCall || all[2].Text != "flagged" || all[0].Seq != seqs[0] || all[2].Seq != seqs[2] {
		t.Fatalf("events = %+v", all)
	}
	var d event.ModelCallData
	if err := all[1].Decode(&d); err != nil || d.InputTokens != 7 {
		t.Errorf("data = %+v, %v", d, err)
	}
	after, err := st.Events(t.Context(), "r1", seqs[0], 1)
	if err != nil || len(after) != 1 || after[0].Seq != seqs[1] {
		t.Errorf("after %d, limit 1: %+v, %v", seqs[0], after, err)
	}
}
