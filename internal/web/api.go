package web

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/rundoc"
	"github.com/azero-dev/azero/internal/store"
)

// writeJSON answers with one JSON document, laid out as the command line
// prints it.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// apiError is the document of every API error.
type apiError struct {
	Error string `json:"error"`
}

// fail answers a refused or failed request: JSON under /api/, a page
// elsewhere.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, status int, msg string) {
	if strings.HasPrefix(r.URL.Path, "/api/") {
		writeJSON(w, status, apiError{Error: msg})
		return
	}
	s.render(w, r, status, "error", errorPage{Status: status, Title: http.StatusText(status), Message: msg})
}

// failErr answers with err's status and message.
func (s *Server) failErr(w http.ResponseWriter, r *http.Request, err error) {
	status := statusOf(err)
	msg := err.Error()
	if status == http.StatusInternalServerError {
		s.logf("%s %s: %v", r.Method, r.URL.Path, err)
	}
	s.fail(w, r, status, msg)
}

// runsDoc is the document of GET /api/runs: the runs of `azero runs
// --json`, one page of them, with how many the filter selects in all.
type runsDoc struct {
	Runs   []rundoc.View `json:"runs"`
	Total  int           `json:"total"`
	Offset int           `json:"offset"`
	Limit  int           `json:"limit"`
	// Next is the address of the next page; none on the last.
	Next string `json:"next,omitempty"`
}

// apiRuns is GET /api/runs[?status=S&workflow=W&limit=N&offset=K].
func (s *Server) apiRuns(w http.ResponseWriter, r *http.Request) {
	lq, err := queryOf(r)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	l, err := s.list(r.Context(), lq)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	doc := runsDoc{Runs: s.views(l.Heads, s.opts.Now()), Total: l.Total, Offset: lq.Offset, Limit: lq.Limit}
	if next := lq.Offset + len(l.Heads); lq.Limit > 0 && next < l.Total {
		doc.Next = "/api/runs?" + lq.at(next)
	}
	writeJSON(w, http.StatusOK, doc)
}

// detail builds the document of `azero runs show RUN --json`.
func (s *Server) detail(r *http.Request, withEvents bool) (rundoc.Detail, store.Run, error) {
	ctx := r.Context()
	run, err := s.src.FindRun(ctx, r.PathValue("id"))
	if err != nil {
		return rundoc.Detail{}, run, err
	}
	var evs []event.Event
	if withEvents {
		// The events are read before the run: the run is then at least as
		// new as the last of them, and a page that follows the events after
		// that one sees every change the run makes later. Read the other way
		// round, a run that ended in between was shown running with its end
		// among the events, and its page waited for a change already shown.
		if evs, err = s.src.Events(ctx, run.ID, 0, 0); err != nil {
			return rundoc.Detail{}, run, err
		}
		if run, err = s.src.GetRun(ctx, run.ID); err != nil {
			return rundoc.Detail{}, run, err
		}
	}
	d, err := rundoc.DetailOf(ctx, s.src, run, s.opts.Now(), s.lineageDir(run.ID), false)
	d.Events = evs
	return d, run, err
}

// apiRun is GET /api/runs/RUN (?events=1 adds the events): the document
// of `azero runs show RUN --json`.
func (s *Server) apiRun(w http.ResponseWriter, r *http.Request) {
	withEvents, _ := strconv.ParseBool(r.URL.Query().Get("events"))
	d, _, err := s.detail(r, withEvents)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

// apiEvents is GET /api/runs/RUN/events?after=SEQ: the run's events after
// a sequence number, for scripts that follow a run by polling.
func (s *Server) apiEvents(w http.ResponseWriter, r *http.Request) {
	run, err := s.src.FindRun(r.Context(), r.PathValue("id"))
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	after, _ := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	evs, err := s.src.Events(r.Context(), run.ID, after, 1000)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	if evs == nil {
		evs = []event.Event{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"run_id": run.ID, "events": evs})
}

// waitingGate is one gate waiting for a human, as GET /api/gates lists it.
type waitingGate struct {
	Run      rundoc.View     `json:"run"`
	Question *human.Question `json:"question"`
	// Answered is set when an answer was posted and the run has not
	// taken it yet.
	Answered bool `json:"answered,omitempty"`
	issue    string
}

// gates lists the runs asking a question now, newest first.
func (s *Server) gates(r *http.Request) ([]waitingGate, error) {
	runs, err := s.src.ListRuns(r.Context(), gatesFilter)
	if err != nil {
		return nil, err
	}
	now := s.opts.Now()
	out := []waitingGate{}
	for _, run := range runs {
		if len(run.Question) == 0 || run.Status.Finished() {
			continue
		}
		q, err := rundoc.Question(run)
		if err != nil {
			return nil, err
		}
		_, answered, _ := s.src.PostedAnswer(run)
		out = append(out, waitingGate{Run: rundoc.ViewOf(s.src, run, now), Question: q, Answered: answered, issue: issueOf(run)})
	}
	return out, nil
}

// apiGates is GET /api/gates: every gate waiting for a human.
func (s *Server) apiGates(w http.ResponseWriter, r *http.Request) {
	gs, err := s.gates(r)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"gates": gs})
}

// apiAnswer is POST /api/runs/RUN/answer with an AnswerRequest.
func (s *Server) apiAnswer(w http.ResponseWriter, r *http.Request) {
	var req AnswerRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			s.fail(w, r, http.StatusRequestEntityTooLarge, "the answer is larger than "+strconv.Itoa(MaxBody)+" bytes")
			return
		}
		s.fail(w, r, http.StatusBadRequest, "the body must be one JSON object {\"gate\": NAME, \"answer\": TEXT, \"feedback\": TEXT}: "+err.Error())
		return
	}
	if dec.More() {
		s.fail(w, r, http.StatusBadRequest, "the body must be one JSON object")
		return
	}
	res, err := s.answer(r.Context(), r.PathValue("id"), req, clientOf(r, human.ChannelAPI))
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}
