package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/rundoc"
	"github.com/azero-dev/azero/internal/store"
)

// AnswerRequest is the body of POST /api/runs/RUN/answer, and what the
// page's form sends.
type AnswerRequest struct {
	// Gate names the gate answered: it must be the one waiting.
	Gate string `json:"gate"`
	// Answer is what the human typed: a word in full, a menu's key or
	// label, or a text question's text.
	Answer string `json:"answer"`
	// Feedback is the text an option needs (revise: what to change).
	Feedback string `json:"feedback,omitempty"`
	// Confirm is the confirmation word an option needs (override).
	Confirm string `json:"confirm,omitempty"`
	// QuestionID, when given, must be the id of the question asked now:
	// an answer to a question since replaced is refused.
	QuestionID string `json:"question_id,omitempty"`
	// Files are an editor question's files as edited; a file left out is
	// taken unchanged.
	Files map[string]string `json:"files,omitempty"`
}

// AnswerResult is the API's reply to an accepted answer.
type AnswerResult struct {
	RunID    string `json:"run_id"`
	Gate     string `json:"gate"`
	Answer   string `json:"answer"`
	Decision string `json:"decision"`
	// Continued says azero serve continues the run itself; false when
	// another process drives it (a terminal), which takes the answer.
	Continued bool `json:"continued"`
}

// answerError is an answer refused, with the HTTP status that says why.
type answerError struct {
	status int
	msg    string
}

func (e *answerError) Error() string { return e.msg }

func refuse(status int, format string, args ...any) error {
	return &answerError{status: status, msg: fmt.Sprintf(format, args...)}
}

// statusOf is the HTTP status for an error of answer.
func statusOf(err error) int {
	var ae *answerError
	if errors.As(err, &ae) {
		return ae.status
	}
	if errors.Is(err, store.ErrNotFound) {
		return http.StatusNotFound
	}
	if errors.Is(err, store.ErrRunForged) {
		// Not the server's fault: the run's row was changed outside azero.
		return http.StatusConflict
	}
	return http.StatusInternalServerError
}

// client names who sent a request and through which channel, for the
// audit log.
type client struct {
	addr, agent string
	// channel is human.ChannelWeb for the page's form, human.ChannelAPI
	// for the JSON API.
	channel string
}

func clientOf(r *http.Request, channel string) client {
	ua := r.UserAgent()
	if len(ua) > 300 {
		ua = ua[:300]
	}
	return client{addr: r.RemoteAddr, agent: ua, channel: channel}
}

// by is how Answer.By names the client: its address and user agent.
func (c client) by() string {
	if c.agent == "" {
		return c.addr
	}
	return c.addr + " (" + c.agent + ")"
}

// answer posts what a human typed for run ref's waiting gate, after
// checking it as every channel does, and continues the run when nobody
// drives it. Every attempt, accepted or refused, is audited.
func (s *Server) answer(ctx context.Context, ref string, req AnswerRequest, c client) (AnswerResult, error) {
	res, a, asked, err := s.post(ctx, ref, req, c)
	attrs := []slog.Attr{slog.String("gate", req.Gate), slog.String("channel", c.channel),
		slog.String("remote_addr", c.addr), slog.String("user_agent", c.agent)}
	runID := res.RunID
	if err != nil {
		if runID == "" {
			runID = ref
		}
		attrs = append(attrs, slog.String("reason", err.Error()))
		_ = s.opts.Audit.Event(context.WithoutCancel(ctx), "web_answer_refused", runID, attrs...)
		s.reportForged(ctx, err)
		return res, err
	}
	attrs = append(attrs, slog.String("answer", res.Answer), slog.String("decision", res.Decision),
		slog.Time("asked_at", asked), slog.Time("answered_at", a.At))
	_ = s.opts.Audit.Event(context.WithoutCancel(ctx), "web_answer", runID, attrs...)
	res.Continued = s.continueIfIdle(runID)
	return res, nil
}

// reportForged records err as run_forged, once for each forged row, when
// it says a run's stored row was changed outside azero and the source
// can tell one forgery from another (the store).
func (s *Server) reportForged(ctx context.Context, err error) {
	reporter, ok := s.opts.Store.(interface {
		ReportForged(ctx context.Context, rec store.Recorder, by string, err error) bool
	})
	if ok && s.opts.Audit != nil {
		reporter.ReportForged(ctx, s.opts.Audit, "serve", err)
	}
}

// post checks what a human typed for run ref against the question it
// asks, as every channel does, and posts it: it returns the answer posted
// and when its question was asked.
func (s *Server) post(ctx context.Context, ref string, req AnswerRequest, c client) (AnswerResult, human.Answer, time.Time, error) {
	var none human.Answer
	st := s.opts.Store
	r, err := st.FindRun(ctx, ref)
	if err != nil {
		return AnswerResult{}, none, time.Time{}, err
	}
	res := AnswerResult{RunID: r.ID, Gate: req.Gate}
	q, err := rundoc.Question(r)
	if err != nil {
		return res, none, time.Time{}, err
	}
	if q == nil {
		return res, none, time.Time{}, refuse(http.StatusConflict, "run %s is not waiting for an answer (it is %s at %s)%s", r.ID, rundoc.Status(st, r), r.Node,
			s.answeredBefore(ctx, r.ID, req.Gate))
	}
	if strings.TrimSpace(req.Gate) == "" {
		return res, none, time.Time{}, refuse(http.StatusUnprocessableEntity, "name the gate you answer: run %s waits at %s", r.ID, q.Gate)
	}
	if req.Gate != q.Gate {
		return res, none, time.Time{}, refuse(http.StatusConflict, "gate %s is not waiting: run %s waits at %s%s", req.Gate, r.ID, q.Gate,
			s.answeredBefore(ctx, r.ID, req.Gate))
	}
	if req.QuestionID != "" && req.QuestionID != q.ID {
		return res, none, time.Time{}, refuse(http.StatusConflict, "the question at %s changed since you read it: look at it again%s", q.Gate,
			s.answeredBefore(ctx, r.ID, req.Gate))
	}
	// A forged answer is not an answer: this one is posted over it, and
	// the forgery recorded once that is done.
	var forged error
	switch prior, ok, err := st.PostedAnswer(r); {
	case errors.Is(err, store.ErrForged):
		forged = err
	case err != nil:
		return res, none, time.Time{}, err
	case ok:
		return res, none, time.Time{}, refuse(http.StatusConflict, "%s was already answered%s; the run continues with that answer", q.Gate, answeredOn(prior))
	}
	asked := *q
	if asked.Kind == human.Editor && len(asked.Options) > 0 {
		// After editing, the options are a menu (as at the terminal).
		asked.Kind = human.Menu
	}
	a, err := human.Parse(asked, req.Answer, req.Feedback, req.Confirm)
	if err != nil {
		return res, none, time.Time{}, refuse(http.StatusUnprocessableEntity, "%v", err)
	}
	if q.Kind == human.Editor {
		a.Files = map[string]string{}
		for _, f := range q.Files {
			a.Files[f.Name] = f.Content
		}
		for name, content := range req.Files {
			a.Files[name] = content
		}
	}
	a.QuestionID, a.Channel, a.By, a.At = q.ID, c.channel, c.by(), s.answeredAt(*q)
	a.RemoteAddr, a.UserAgent = c.addr, c.agent
	opt, err := human.Validate(*q, a)
	if err != nil {
		return res, none, time.Time{}, refuse(http.StatusUnprocessableEntity, "%v", err)
	}
	raw, err := json.Marshal(a)
	if err != nil {
		return res, none, time.Time{}, err
	}
	switch err := st.PostAnswer(ctx, r.ID, q.ID, raw); {
	case errors.Is(err, store.ErrAnswered):
		on := ""
		if again, gerr := st.GetRun(ctx, r.ID); gerr == nil {
			if prior, ok, _ := st.PostedAnswer(again); ok {
				on = answeredOn(prior)
			}
		}
		return res, none, time.Time{}, refuse(http.StatusConflict, "%s was answered first%s; your answer was not used", q.Gate, on)
	case errors.Is(err, store.ErrNotAsked):
		return res, none, time.Time{}, refuse(http.StatusConflict, "run %s no longer asks that question: look at it again", r.ID)
	case err != nil:
		return res, none, time.Time{}, err
	}
	if forged != nil {
		s.forged(ctx, r.ID, q.Gate, forged)
	}
	res.Answer, res.Decision = a.Key, opt.Decision
	if q.Kind == human.Text {
		res.Answer = a.Text
	}
	return res, a, q.AskedAt, nil
}

// answeredAt is when an answer to q is taken: now, by this server's
// clock, and never before q was asked (by the clock of whatever asked it,
// which may run ahead of this one). The answer is sealed with it.
func (s *Server) answeredAt(q human.Question) time.Time {
	now := s.opts.Now().UTC()
	if now.Before(q.AskedAt) {
		return q.AskedAt.UTC()
	}
	return now
}

// answeredBefore tells someone whose answer came too late how the gate
// was last answered: "; review was answered APPROVED on the terminal
// channel at 10:04:05 UTC", or "" when it never was.
func (s *Server) answeredBefore(ctx context.Context, runID, gate string) string {
	if strings.TrimSpace(gate) == "" {
		return ""
	}
	evs, err := s.opts.Store.Events(ctx, runID, 0, 0)
	if err != nil {
		return ""
	}
	for i := len(evs) - 1; i >= 0; i-- {
		ev := evs[i]
		if ev.Kind != event.Answer || ev.Node != gate {
			continue
		}
		var a human.Answer
		if ev.Decode(&a) != nil || a.Channel == "" {
			return ""
		}
		msg := fmt.Sprintf("; %s was answered %s on the %s channel", gate, ev.Text, a.Channel)
		if a.By != "" {
			msg += " by " + a.By
		}
		if !ev.At.IsZero() {
			msg += " at " + ev.At.UTC().Format("15:04:05 MST")
		}
		return msg
	}
	return ""
}

// answeredOn says where a posted answer came from: " on the terminal
// channel".
func answeredOn(a human.Answer) string {
	if a.Channel == "" {
		return ""
	}
	return " on the " + a.Channel + " channel"
}

// forged records an answer found in the store that azero did not make
// (err is a *store.ForgedError), as the engine does when it finds one.
func (s *Server) forged(ctx context.Context, runID, gate string, err error) {
	attrs := []slog.Attr{slog.String("gate", gate), slog.String("reason", err.Error()), slog.String("found_by", "azero serve")}
	var f *store.ForgedError
	if errors.As(err, &f) {
		attrs = append(attrs, slog.String("claimed_channel", f.Claimed.Channel))
		if f.Claimed.By != "" {
			attrs = append(attrs, slog.String("claimed_by", f.Claimed.By))
		}
	}
	_ = s.opts.Audit.Event(context.WithoutCancel(ctx), "answer_forged", runID, attrs...)
}

// continueIfIdle starts driving the run when no live process does (it
// waits, or its driver died while asking), and reports whether it did or
// already does. A run driven elsewhere takes the posted answer itself.
func (s *Server) continueIfIdle(runID string) bool {
	if s.opts.Continue == nil {
		return false
	}
	r, err := s.opts.Store.GetRun(s.ctx, runID)
	if err != nil || r.Status.Finished() || s.opts.Store.LeaseLive(r) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.driving[runID]
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.driving[runID] {
		return true
	}
	if s.ctx.Err() != nil {
		return false
	}
	s.driving[runID] = true
	s.runs.Add(1)
	go func() {
		defer s.runs.Done()
		// An answer posted while this server's drive was stopping at the
		// next gate is taken by driving again.
		for range maxContinues {
			err := s.opts.Continue(s.ctx, runID)
			s.logf("%s", s.outcome(runID, err))
			if !s.answeredIdle(runID) {
				break
			}
		}
		s.mu.Lock()
		delete(s.driving, runID)
		s.mu.Unlock()
		// An answer posted between the check above and now.
		if s.answeredIdle(runID) {
			s.continueIfIdle(runID)
		}
	}()
	return true
}

// Driving lists the runs this server continues now, by id.
func (s *Server) Driving() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, 0, len(s.driving))
	for id := range s.driving {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// maxContinues bounds the drives one answer can start in a row.
const maxContinues = 100

// answeredIdle reports whether the run has an answer posted for the
// question it waits at and no live process drives it. Any answer counts
// here: driving the run takes a real one, and refuses, records and
// removes a forged one.
func (s *Server) answeredIdle(runID string) bool {
	if s.ctx.Err() != nil {
		return false
	}
	r, err := s.opts.Store.GetRun(s.ctx, runID)
	return err == nil && !r.Status.Finished() && len(r.Question) > 0 && len(r.Answer) > 0 && !s.opts.Store.LeaseLive(r)
}

// outcome says in one line where a continued run stands.
func (s *Server) outcome(runID string, err error) string {
	r, gerr := s.opts.Store.GetRun(context.Background(), runID)
	if gerr != nil {
		return fmt.Sprintf("run %s continued: %v", runID, errors.Join(err, gerr))
	}
	switch st := rundoc.Status(s.opts.Store, r); st {
	case store.StatusInterrupted:
		return fmt.Sprintf("run %s is saved at %s: azero serve stopped while it continued it; it can be resumed", runID, r.Node)
	case store.StatusWaiting:
		return fmt.Sprintf("run %s continued after the answer and now waits at %s", runID, r.Node)
	case store.StatusDone, store.StatusAborted:
		return fmt.Sprintf("run %s continued after the answer and is %s", runID, st)
	default:
		msg := fmt.Sprintf("run %s continued after the answer and is %s at %s", runID, st, r.Node)
		if err != nil {
			msg += ": " + firstLine(err.Error())
		}
		return msg
	}
}

// resumeAnswered continues, at start, the runs that have an answer posted
// and nobody driving them (a server stopped before it could).
func (s *Server) resumeAnswered() {
	if s.opts.Continue == nil {
		return
	}
	runs, err := s.opts.Store.ListRuns(s.ctx, gatesFilter)
	if err != nil {
		s.logf("cannot list runs: %v", err)
		return
	}
	for _, r := range runs {
		if s.answeredIdle(r.ID) {
			s.logf("run %s has an answer nobody took: continuing it", r.ID)
			s.continueIfIdle(r.ID)
		}
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
