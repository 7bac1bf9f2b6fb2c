package runs

import (
	"context"
	"sync"
	"time"

	"github.com/azero-dev/azero/internal/store"
)

// Changer is a source of runs that says what changed since a mark
// (*store.Store is one).
type Changer interface {
	Changes(ctx context.Context, m store.Mark) (store.Changes, error)
	LeaseLive(r store.Run) bool
}

// Watcher watches one source of runs for every live view of it: it looks
// for changes once per poll, in one query (Changer), and wakes the
// subscribers a change concerns: a run's subscribers when the run has new
// events or its row was written, a list's subscribers when any run
// changed or a running run's lease lived or died. No subscriber reads the
// source on a timer of its own; with no subscriber, the watcher does not
// look at all. A source that cannot say what changed (no Changer) wakes
// every subscriber at every poll.
type Watcher struct {
	src  Source
	poll time.Duration

	mu     sync.Mutex
	subs   map[*Subscription]struct{}
	stop   context.CancelFunc // ends the looking goroutine; nil while idle
	done   chan struct{}      // closed when that goroutine has returned
	gen    uint64
	mark   store.Mark
	seen   map[string]int64 // the updated_at of the runs written within the slack
	live   map[string]bool  // the running runs whose lease lives
	closed bool
}

// NewWatcher returns a watcher of src that looks every poll while anyone
// subscribes.
func NewWatcher(src Source, poll time.Duration) *Watcher {
	if poll <= 0 {
		poll = 500 * time.Millisecond
	}
	return &Watcher{src: src, poll: poll, subs: map[*Subscription]struct{}{}}
}

// Subscription is one live view's share of a Watcher.
type Subscription struct {
	w   *Watcher
	run string // "": a list, woken by any change
	c   chan struct{}
}

// C receives a value when something the subscription follows changed
// since it last received one (changes that come faster are merged).
func (s *Subscription) C() <-chan struct{} { return s.c }

// Close ends the subscription; the watcher stops looking when it was the
// last.
func (s *Subscription) Close() { s.w.unsubscribe(s) }

// Run subscribes to the changes of the run with this id. Changes after
// it returns are delivered; the caller reads what it shows after
// subscribing, so that nothing falls between.
func (w *Watcher) Run(id string) *Subscription { return w.subscribe(id) }

// List subscribes to every change of the source's runs.
func (w *Watcher) List() *Subscription { return w.subscribe("") }

// Gen numbers the changes seen: it grows by one with each look that finds
// any. Views of a list that read the same list after the same change can
// share what they read.
func (w *Watcher) Gen() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.gen
}

// Close stops the watcher; subscriptions made after it are never woken.
func (w *Watcher) Close() {
	w.mu.Lock()
	w.closed = true
	stop, done := w.stop, w.done
	w.stop = nil
	w.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

func (w *Watcher) subscribe(run string) *Subscription {
	s := &Subscription{w: w, run: run, c: make(chan struct{}, 1)}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.subs[s] = struct{}{}
	if w.stop == nil && !w.closed {
		// A first look, before the caller reads, marks where changes
		// start; what changed while nobody watched is not news to a view
		// that reads it now.
		ch, _ := w.src.(Changer)
		if ch != nil {
			if c, err := ch.Changes(context.Background(), w.mark); err == nil {
				w.absorb(ch, c)
			}
		}
		ctx, stop := context.WithCancel(context.Background())
		w.stop, w.done = stop, make(chan struct{})
		go w.loop(ctx, ch, w.done)
	}
	return s
}

func (w *Watcher) unsubscribe(s *Subscription) {
	w.mu.Lock()
	delete(w.subs, s)
	var (
		stop context.CancelFunc
		done chan struct{}
	)
	if len(w.subs) == 0 && w.stop != nil {
		stop, done = w.stop, w.done
		w.stop = nil
	}
	w.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// loop looks every poll until ctx ends.
func (w *Watcher) loop(ctx context.Context, ch Changer, done chan struct{}) {
	defer close(done)
	tick := time.NewTicker(w.poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if ch == nil {
			w.mu.Lock()
			w.gen++
			for s := range w.subs {
				s.wake()
			}
			w.mu.Unlock()
			continue
		}
		w.mu.Lock()
		mark := w.mark
		w.mu.Unlock()
		c, err := ch.Changes(ctx, mark)
		if err != nil {
			continue // looked again at the next poll
		}
		w.mu.Lock()
		runs, list := w.absorb(ch, c)
		if list {
			w.gen++
			for s := range w.subs {
				if s.run == "" || runs[s.run] {
					s.wake()
				}
			}
		}
		w.mu.Unlock()
	}
}

// absorb takes c in (w.mu held): the runs it finds changed, and whether
// anything a list shows changed.
func (w *Watcher) absorb(ch Changer, c store.Changes) (runs map[string]bool, list bool) {
	runs = map[string]bool{}
	for id := range c.Events {
		runs[id] = true
	}
	first := w.seen == nil
	seen := make(map[string]int64, len(c.Updated))
	from := c.Mark.Updated - int64(store.ChangeSlack)
	for id, at := range c.Updated {
		if w.seen[id] != at {
			runs[id] = true
		}
		if at >= from {
			seen[id] = at
		}
	}
	w.seen = seen
	live := make(map[string]bool, len(c.Running))
	for _, r := range c.Running {
		if ch.LeaseLive(r) {
			live[r.ID] = true
		}
	}
	if len(live) != len(w.live) {
		list = true
	}
	for id := range live {
		if !w.live[id] {
			runs[id], list = true, true
		}
	}
	for id := range w.live {
		if !live[id] {
			runs[id], list = true, true
		}
	}
	w.live, w.mark = live, c.Mark
	if first {
		return nil, false
	}
	return runs, list || len(runs) > 0
}

func (s *Subscription) wake() {
	select {
	case s.c <- struct{}{}:
	default:
	}
}
