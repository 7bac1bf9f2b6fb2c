package runs

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/azero-dev/azero/internal/config"
	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/notify"
)

// notifyWait bounds how long Close waits for the notifications still
// being sent.
const notifyWait = 30 * time.Second

// notifications are the user's [notify] settings at work, made on first
// use.
type notifications struct {
	mu   sync.Mutex
	made bool
	d    *notify.Dispatcher // nil: nothing to notify
}

// dispatcher returns the dispatcher of the user's notifications, or nil
// when there are none. They are read from the user's config only.
func (e *Env) dispatcher() *notify.Dispatcher {
	n := &e.notify
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.made {
		return n.d
	}
	n.made = true
	// A config that cannot be read stops the command elsewhere, with
	// its error; it notifies nobody.
	cfg, err := e.Config("")
	if err != nil || cfg.Notify == (config.Notify{}) {
		return nil
	}
	logger, _ := e.Audit()
	errOut := &lockedWriter{w: e.stderr()}
	n.d = notify.NewDispatcher(&notify.Notifier{Command: cfg.Notify.Command, Webhook: cfg.Notify.Webhook, Env: e.Environ()},
		func(m notify.Message, err error) {
			fmt.Fprintf(errOut, "azero: notification of run %s (%s) failed: %v\n", m.RunID, m.Event, err)
			_ = logger.Event(context.Background(), "notify_failed", m.RunID, slog.String("notify_event", m.Event), slog.String("error", err.Error()))
		})
	return n.d
}

// Watch returns a drive's watcher: render (nil: nothing is shown), then
// notify the user when a run waits, ends or fails. Notifying never holds
// the run up.
func (e *Env) Watch(render func(event.Event)) func(event.Event) {
	if render == nil {
		render = func(event.Event) {}
	}
	d := e.dispatcher()
	if d == nil {
		return render
	}
	return func(ev event.Event) {
		render(ev)
		switch ev.Kind {
		case event.Waiting, event.Finished, event.Failed:
		default:
			return
		}
		ctx := context.Background()
		st, err := e.Store(ctx)
		if err != nil {
			return
		}
		r, err := st.GetRun(ctx, ev.RunID)
		if err != nil {
			return
		}
		if m, ok := notify.FromEvent(ev, r); ok {
			if m.Resume != "" {
				// The command as the person who started azero types it.
				m.Resume = e.ResumeCommand(m.RunID, false)
			}
			d.Notify(m)
		}
	}
}

// closeNotifications waits, within bounds, for the notifications still
// being sent.
func (e *Env) closeNotifications() {
	n := &e.notify
	n.mu.Lock()
	d := n.d
	n.mu.Unlock()
	if d != nil && !d.Close(notifyWait) {
		fmt.Fprintf(e.stderr(), "azero: notifications still unsent after %s were given up\n", notifyWait)
	}
}

// lockedWriter serialises writes from the notifier's goroutine and
// whatever else writes to the same stream.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
