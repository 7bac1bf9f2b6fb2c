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
func (s *Server) sse(w http.ResponseWriter) (*http.ResponseController, bool) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// A stream lasts as long as the page is open (the server lifts the
	// read bound of a request without a body once it is read): each
	// message has the time to write that a reply has.
	s.extend(rc)
	if err := rc.Flush(); err != nil {
		return nil, false
	}
	return rc, true
}

// extend gives a stream the time to write its next message.
func (s *Server) extend(rc *http.ResponseController) {
	_ = rc.SetWriteDeadline(time.Now().Add(s.opts.Timeouts.Write))
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
	run, err := s.src.FindRun(r.Context(), r.PathValue("id"))
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	after, _ := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	// A reconnecting EventSource says where it stopped.
	if id, err := strconv.ParseInt(r.Header.Get("Last-Event-ID"), 10, 64); err == nil && id > after {
		after = id
	}
	rc, ok := s.sse(w)
	if !ok {
		return
	}
	s.follow(r.Context(), func() bool {
		evs, err := s.src.Events(r.Context(), run.ID, after, 200)
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
			s.extend(rc)
			if _, err := fmt.Fprint(w, ": azero\n\n"); err != nil || rc.Flush() != nil {
				return
			}
		case <-tick.C:
			s.extend(rc)
			if !poll() {
				return
			}
		}
	}
}

// fingerprint summarises what a list shows: the runs of its page (each
// one's status, node, key and when it last changed, which a question
// asked or answered changes too), how many runs its filter selects, and
// how many wait for a human (every page's navigation says it). It
// changes when the list should be shown anew, and reads no run's state,
// question or answer.
func (s *Server) fingerprint(ctx context.Context, page store.Filter) string {
	page.Brief = true
	runs, err := s.runsAt(ctx, page)
	if err != nil {
		return ""
	}
	all := page
	all.Limit, all.Offset = 0, 0
	total, err := s.count(ctx, all)
	if err != nil {
		return ""
	}
	h := sha256.New()
	fmt.Fprintf(h, "%d|%d\n", total, s.countWaiting(ctx))
	for _, r := range runs {
		fmt.Fprintf(h, "%s|%s|%s|%d|%d|%s\n", r.ID, rundoc.Status(s.src, r), r.Node, r.Steps, r.UpdatedAt.UnixNano(), r.Key)
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// listStream is GET /events?since=FINGERPRINT&(the list's query): a
// "changed" event whenever what the list shows changes, for it to be
// shown anew. The query is the runs page's (status, workflow, limit,
// offset), or gates=1 for the waiting gates.
func (s *Server) listStream(w http.ResponseWriter, r *http.Request) {
	page, err := s.pageFilter(r)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	since := r.URL.Query().Get("since")
	rc, ok := s.sse(w)
	if !ok {
		return
	}
	s.follow(r.Context(), func() bool {
		fp := s.fingerprint(r.Context(), page)
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

// pageFilter is the filter of the runs the list a request names shows
// (see listStream).
func (s *Server) pageFilter(r *http.Request) (store.Filter, error) {
	if r.URL.Query().Get("gates") != "" {
		return gatesFilter, nil
	}
	lq, err := queryOf(r)
	if err != nil {
		return store.Filter{}, err
	}
	return lq.page(), nil
}

// gatesFilter selects the runs of the waiting gates' page.
var gatesFilter = store.Filter{Asking: true}

// listStreamURL is the address of the stream of a list shown at
// fingerprint fp with query (as listQuery.at makes it).
func listStreamURL(fp, query string) string {
	u := "/events?since=" + fp
	if query != "" {
		u += "&" + query
	}
	return u
}
