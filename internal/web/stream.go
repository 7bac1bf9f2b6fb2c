package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/azero-dev/azero/internal/rundoc"
	"github.com/azero-dev/azero/internal/store"
)

// heartbeat keeps idle streams open through proxies and lets a stream
// notice a client that left.
const heartbeat = 15 * time.Second

// sse prepares w for server-sent events.
func sse(w http.ResponseWriter) (*http.ResponseController, bool) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// A stream lasts as long as the page is open.
	_ = rc.SetWriteDeadline(time.Time{})
	if err := rc.Flush(); err != nil {
		return nil, false
	}
	return rc, true
}

// streamEvent is the data of a run stream's message.
type streamEvent struct {
	Seq  int64  `json:"seq"`
	Kind string `json:"kind"`
	HTML string `json:"html"`
	// Reload says the run's state changed (a question, an answer, the end):
	// the page shows it anew.
	Reload bool `json:"reload,omitempty"`
}

// runStream is GET /runs/RUN/events?after=SEQ: the run's events as they
// are stored, each with its line of HTML, as server-sent events.
func (s *Server) runStream(w http.ResponseWriter, r *http.Request) {
	run, err := s.opts.Store.FindRun(r.Context(), r.PathValue("id"))
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	after, _ := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	// A reconnecting EventSource says where it stopped.
	if id, err := strconv.ParseInt(r.Header.Get("Last-Event-ID"), 10, 64); err == nil && id > after {
		after = id
	}
	rc, ok := sse(w)
	if !ok {
		return
	}
	s.follow(r.Context(), func() bool {
		evs, err := s.opts.Store.Events(r.Context(), run.ID, after, 200)
		if err != nil {
			return false
		}
		for _, ev := range evs {
			var line bytes.Buffer
			if err := s.pages.ExecuteTemplate(&line, "event", viewEvent(ev)); err != nil {
				s.logf("render event: %v", err)
			}
			data, _ := json.Marshal(streamEvent{Seq: ev.Seq, Kind: string(ev.Kind), HTML: line.String(), Reload: reloads[ev.Kind]})
			if _, err := fmt.Fprintf(w, "id: %d\nevent: run\ndata: %s\n\n", ev.Seq, data); err != nil {
				return false
			}
			after = ev.Seq
		}
		return rc.Flush() == nil
	}, rc, w)
}

// follow calls poll at once and then every Poll until it fails, the
// client leaves or the server stops, sending a comment line now and then.
func (s *Server) follow(ctx context.Context, poll func() bool, rc *http.ResponseController, w http.ResponseWriter) {
	if !poll() {
		return
	}
	tick := time.NewTicker(s.opts.Poll)
	defer tick.Stop()
	beat := time.NewTicker(heartbeat)
	defer beat.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.ctx.Done():
			return
		case <-beat.C:
			if _, err := fmt.Fprint(w, ": azero\n\n"); err != nil || rc.Flush() != nil {
				return
			}
		case <-tick.C:
			if !poll() {
				return
			}
		}
	}
}

// fingerprint summarises what the lists show (each run's status, node,
// question and answer): it changes when they should be shown anew.
func (s *Server) fingerprint(ctx context.Context) string {
	runs, err := s.opts.Store.ListRuns(ctx, store.Filter{Limit: 500})
	if err != nil {
		return ""
	}
	h := sha256.New()
	for _, r := range runs {
		fmt.Fprintf(h, "%s|%s|%s|%d|%d|%d\n", r.ID, rundoc.Status(s.opts.Store, r), r.Node, r.Steps, len(r.Question), len(r.Answer))
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// listStream is GET /events?since=FINGERPRINT: a "changed" event whenever
// the runs or their gates change, for the lists to show them anew.
func (s *Server) listStream(w http.ResponseWriter, r *http.Request) {
	since := r.URL.Query().Get("since")
	rc, ok := sse(w)
	if !ok {
		return
	}
	s.follow(r.Context(), func() bool {
		fp := s.fingerprint(r.Context())
		if fp == "" || fp == since {
			return true
		}
		since = fp
		if _, err := fmt.Fprintf(w, "event: changed\ndata: %s\n\n", fp); err != nil {
			return false
		}
		return rc.Flush() == nil
	}, rc, w)
}
