package cli

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/azero-dev/azero/internal/config"
	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/notify"
)

// notifyWait bounds how long a command waits, when it ends, for its
// notifications to be sent.
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
func (f *Factory) dispatcher() *notify.Dispatcher {
	n := &f.notify
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.made {
		return n.d
	}
	n.made = true
	// A config that cannot be read stops the command elsewhere, with
	// its error; it notifies nobody.
	cfg, err := f.Config("")
	if err != nil || cfg.Notify == (config.Notify{}) {
		return nil
	}
	logger, _ := f.Audit()
	errOut := &lockedWriter{w: f.IO.ErrOut}
	n.d = notify.NewDispatcher(&notify.Notifier{Command: cfg.Notify.Command, Webhook: cfg.Notify.Webhook, Env: f.Environ()},
		func(m notify.Message, err error) {
			fmt.Fprintf(errOut, "azero: notification of run %s (%s) failed: %v\n", m.RunID, m.Event, err)
			_ = logger.Event(context.Background(), "notify_failed", m.RunID, slog.String("notify_event", m.Event), slog.String("error", err.Error()))
		})
	return n.d
}

// watch returns the engine's watcher: render, then notify the user when
// a run waits, ends or fails. Notifying never holds the run up.
func (f *Factory) watch(render func(event.Event)) func(event.Event) {
	d := f.dispatcher()
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
		st, err := f.Store(ctx)
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
				m.Resume = f.resumeCommand(m.RunID, false)
			}
			d.Notify(m)
		}
	}
}

// closeNotifications waits, within bounds, for the notifications still
// being sent.
func (f *Factory) closeNotifications() {
	n := &f.notify
	n.mu.Lock()
	d := n.d
	n.mu.Unlock()
	if d != nil && !d.Close(notifyWait) {
		fmt.Fprintf(f.IO.ErrOut, "azero: notifications still unsent after %s were given up\n", notifyWait)
	}
}

// lockedWriter serialises writes from the notifier's goroutine.
type lockedWriter struct {
	mu sync.Mutex
	w  interface{ Write([]byte) (int, error) }
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
