package flow_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/store"
)

// rewrite changes the run's row with SQL straight through the database
// file, as code that reached azero's state directory would.
func rewrite(t *testing.T, e *flow.Engine, query string, args ...any) {
	t.Helper()
	db, err := sql.Open("sqlite", e.Store.Path()+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(query, args...); err != nil {
		t.Fatal(err)
	}
}

// counting answers approve and counts the questions it was asked.
type counting struct{ asked *atomic.Int32 }

func (c counting) Answer(_ context.Context, q human.Question) (human.Answer, error) {
	c.asked.Add(1)
	return human.Answer{Gate: q.Gate, Key: "approve", Channel: human.ChannelTerminal}, nil
}

// A run whose stored row was rewritten outside azero is not driven: Drive
// fails before any node runs or any question is asked, says why, and
// records run_forged once however often it is tried.
func TestDriveRefusesARowChangedOutsideAzero(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		answer string // the first drive's answer at the gate: none (it waits), or reject (it aborts)
		forge  string
	}{
		// Past the gate without a decision: the attack of issue 22.
		{"moved past its gate", "", `UPDATE runs SET node = 'after', status = 'interrupted', question = '',
			state = json_set(CAST(state AS TEXT), '$.answer', 'approve') WHERE id = ?`},
		// An aborted run made to wait again, to be asked and approved.
		{"status flipped from aborted to waiting", "reject", `UPDATE runs SET status = 'waiting' WHERE id = ?`},
		{"its seal removed", "", `UPDATE runs SET seal = NULL WHERE id = ?`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEngine(t)
			log := auditTo(t, e)
			e.Answerer = nobody
			if c.answer != "" {
				e.Answerer = typed(c.answer)
			}
			g := gateGraph(false)
			id, _ := flow.Create(t.Context(), e, g, &counter{}, flow.CreateOptions{})
			if _, err := flow.Drive(t.Context(), e, g, id); err == nil {
				t.Fatal("the run ended at once")
			}
			evs, _ := e.Store.Events(t.Context(), id, 0, 0)
			hist, _ := e.Store.History(t.Context(), id)
			decided := len(decisions(t, log))
			rewrite(t, e, c.forge, id)

			var asked atomic.Int32
			e.Answerer = counting{&asked}
			for range 2 {
				s, err := flow.Drive(t.Context(), e, g, id)
				var forged *store.RunForgedError
				if !errors.As(err, &forged) || forged.RunID != id || s != nil {
					t.Fatalf("Drive over a forged row = %+v, %v: want a *store.RunForgedError and no state", s, err)
				}
				if !strings.Contains(err.Error(), "was changed outside azero") || !strings.Contains(err.Error(), "azero will not act on it") {
					t.Errorf("the error does not say what happened: %v", err)
				}
			}
			if asked.Load() != 0 {
				t.Errorf("the forged run asked %d questions", asked.Load())
			}
			if now, _ := e.Store.Events(t.Context(), id, 0, 0); len(now) != len(evs) {
				t.Errorf("the forged run went on: %v", now[len(evs):])
			}
			if now, _ := e.Store.History(t.Context(), id); len(now) != len(hist) {
				t.Errorf("the forged run was checkpointed: %v", now[len(hist):])
			}
			recs := auditEvents(t, log, "run_forged")
			if len(recs) != 1 || recs[0]["run_id"] != id || recs[0]["by"] != "drive" {
				t.Errorf("run_forged records = %v, want one, by the drive", recs)
			}
			if recs := decisions(t, log); len(recs) != decided {
				t.Errorf("decisions after the forgery: %v", recs[decided:])
			}
		})
	}
}

// A row rewritten while its run is driven (by the code a node ran) fails
// the checkpoint after that node: the next node never runs, the forged
// row is left as it is (never sealed by azero), and run_forged is
// recorded.
func TestRowForgedWhileDrivenStopsTheRun(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	log := auditTo(t, e)
	var after atomic.Bool
	g := flow.New[counter]("forged-midway", "test").
		Node("test", func(ctx context.Context, s *counter) (string, error) {
			s.N = 1
			// The tests this node ran reached the store.
			rewrite(t, e, `UPDATE runs SET meta = '{"engine":"temporal"}' WHERE id = ?`, flow.RunID(ctx))
			return "merge", nil
		}, "merge").
		Node("merge", func(ctx context.Context, s *counter) (string, error) {
			after.Store(true)
			return flow.End, nil
		}, flow.End)
	id, _ := flow.Create(t.Context(), e, g, &counter{}, flow.CreateOptions{})
	_, err := flow.Drive(t.Context(), e, g, id)
	if !errors.Is(err, store.ErrRunForged) {
		t.Fatalf("Drive = %v, want ErrRunForged", err)
	}
	if after.Load() {
		t.Error("the node after the forgery ran")
	}
	r, perr := e.Store.Peek(t.Context(), id)
	if perr != nil || !errors.Is(r.Unverified, store.ErrRunForged) || r.Node != "test" || r.Meta["engine"] != "temporal" {
		t.Errorf("the forged row: %+v, %v: want it left as forged, at test", r, perr)
	}
	if recs := auditEvents(t, log, "run_forged"); len(recs) != 1 || recs[0]["claimed_node"] != "test" {
		t.Errorf("run_forged records = %v", recs)
	}
}
