package notify

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// queueSize bounds the messages waiting to be sent; past it the newest are
// dropped (and reported), so a stuck notifier cannot grow memory.
const queueSize = 64

// Dispatcher sends messages in the background, in the order given, so
// that notifying never holds up the run that caused it.
type Dispatcher struct {
	n      *Notifier
	report func(Message, error)

	mu     sync.Mutex
	queue  chan Message
	done   chan struct{}
	closed bool
}

// NewDispatcher returns a Dispatcher sending through n and handing every
// failure to report (called from the dispatcher's goroutine).
func NewDispatcher(n *Notifier, report func(Message, error)) *Dispatcher {
	if report == nil {
		report = func(Message, error) {}
	}
	return &Dispatcher{n: n, report: report}
}

// Notify queues m and returns at once. It does nothing when the notifier
// has nothing to send to or the dispatcher is closed.
func (d *Dispatcher) Notify(m Message) {
	if d == nil || !d.n.Enabled() {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	if d.queue == nil {
		d.queue, d.done = make(chan Message, queueSize), make(chan struct{})
		go d.loop(d.queue, d.done)
	}
	select {
	case d.queue <- m:
	default:
		go d.report(m, fmt.Errorf("notification for run %s dropped: %d notifications are still waiting to be sent", m.RunID, queueSize))
	}
}

func (d *Dispatcher) loop(queue <-chan Message, done chan<- struct{}) {
	defer close(done)
	for m := range queue {
		if err := d.n.Send(context.Background(), m); err != nil {
			d.report(m, err)
		}
	}
}

// Close stops taking messages and waits up to wait for the queued ones to
// be sent. It reports whether they all were.
func (d *Dispatcher) Close(wait time.Duration) bool {
	if d == nil {
		return true
	}
	d.mu.Lock()
	if d.closed || d.queue == nil {
		d.closed = true
		d.mu.Unlock()
		return true
	}
	d.closed = true
	close(d.queue)
	done := d.done
	d.mu.Unlock()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}
