package runs

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
)

func watchedStore(t *testing.T, ids ...string) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), store.FileName), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for _, id := range ids {
		if err := st.CreateRun(t.Context(), store.Run{ID: id, Workflow: "w", Node: "n", State: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// woken waits for sub to be woken (a change the watcher finds at its next
// look), or fails.
func woken(t *testing.T, sub *Subscription, what string) {
	t.Helper()
	select {
	case <-sub.C():
	case <-time.After(testenv.Patience):
		t.Fatalf("%s: not woken", what)
	}
}

// quiet says sub was not woken (by the look that woke another).
func quiet(t *testing.T, sub *Subscription, what string) {
	t.Helper()
	select {
	case <-sub.C():
		t.Errorf("%s: woken", what)
	default:
	}
}

// A run's new event wakes its subscribers and the lists', not another
// run's; a write of a run's row wakes the lists; with no subscriber left,
// the watcher stops looking.
func TestWatcherFansOutChanges(t *testing.T) {
	t.Parallel()
	st := watchedStore(t, "a", "b")
	w := NewWatcher(st, 5*time.Millisecond)
	defer w.Close()
	ctx := t.Context()
	subA, subB, list := w.Run("a"), w.Run("b"), w.List()
	gen := w.Gen()
	if _, err := st.AppendEvent(ctx, event.Event{RunID: "a", Kind: event.NodeStarted, Node: "n"}); err != nil {
		t.Fatal(err)
	}
	woken(t, subA, "a's stream after a's event")
	woken(t, list, "the list after a's event")
	quiet(t, subB, "b's stream after a's event") // the same look woke a and the list
	if w.Gen() <= gen {
		t.Errorf("generation %d after a change, was %d", w.Gen(), gen)
	}
	if err := st.UpdateMeta(ctx, "b", map[string]string{"x": "y"}); err != nil {
		t.Fatal(err)
	}
	woken(t, list, "the list after b's row was written")
	woken(t, subB, "b's stream after b's row was written")
	quiet(t, subA, "a's stream after b's row was written")
	if err := st.CreateRun(ctx, store.Run{ID: "c", Workflow: "w", Node: "n", State: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	woken(t, list, "the list after a new run")
	for _, s := range []*Subscription{subA, subB, list} {
		s.Close()
	}
	w.mu.Lock()
	idle := w.stop == nil
	w.mu.Unlock()
	if !idle {
		t.Error("the watcher still looks with no subscriber")
	}
	// Subscribing again starts from now: what changed while nobody
	// watched is not news.
	if _, err := st.AppendEvent(ctx, event.Event{RunID: "a", Kind: event.NodeStarted, Node: "n"}); err != nil {
		t.Fatal(err)
	}
	again, other := w.Run("a"), w.List()
	defer again.Close()
	defer other.Close()
	if _, err := st.AppendEvent(context.WithoutCancel(ctx), event.Event{RunID: "b", Kind: event.NodeStarted, Node: "n"}); err != nil {
		t.Fatal(err)
	}
	woken(t, other, "the list after b's event")
	quiet(t, again, "a's stream after b's event, a's older one taken before it subscribed")
}

// A running run whose process dies changes what a list shows (running to
// interrupted) without a write of its row: the watcher wakes the lists.
func TestWatcherSeesALeaseDie(t *testing.T) {
	t.Parallel()
	st := watchedStore(t, "a")
	if err := st.Acquire(t.Context(), "a", store.Lease{Token: "t", PID: 1 << 30}, time.Hour); err != nil {
		t.Fatal(err)
	}
	alive := true
	src := leaseSource{Store: st, alive: func() bool { return alive }}
	w := NewWatcher(src, time.Hour) // looks only when told, below
	defer w.Close()
	list := w.List()
	defer list.Close()
	ch := Changer(src)
	w.mu.Lock()
	c, err := ch.Changes(t.Context(), w.mark)
	if err != nil {
		t.Fatal(err)
	}
	if _, changed := w.absorb(ch, c); changed {
		t.Error("a look that found nothing new reports a change")
	}
	alive = false
	c, err = ch.Changes(t.Context(), w.mark)
	if err != nil {
		t.Fatal(err)
	}
	runs, changed := w.absorb(ch, c)
	w.mu.Unlock()
	if !changed || !runs["a"] {
		t.Errorf("a dead lease: changed %v, runs %v; want a", changed, runs)
	}
}

// leaseSource is a store whose leases live while alive says so.
type leaseSource struct {
	*store.Store
	alive func() bool
}

func (s leaseSource) LeaseLive(r store.Run) bool { return r.Lease.Token != "" && s.alive() }
