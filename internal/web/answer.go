package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/runs"
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
	// Continued says the service continues the run in azero serve's
	// process; false when another process drives it (a terminal,
	// Temporal's workers), which takes the answer.
	Continued bool `json:"continued"`
}

// answerError is an answer refused by the page itself, with the HTTP
// status that says why.
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
	switch {
	case errors.As(err, &ae):
		return ae.status
	case errors.Is(err, runs.ErrInvalidAnswer):
		return http.StatusUnprocessableEntity
	case errors.Is(err, runs.ErrNotWaiting):
		return http.StatusConflict
	case errors.Is(err, store.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, store.ErrRunForged):
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

// answer posts what a human typed for run ref's waiting gate through the
// service's one answer path, which checks it as every channel does,
// audits it and continues the run when nobody drives it.
func (s *Server) answer(ctx context.Context, ref string, req AnswerRequest, c client) (AnswerResult, error) {
	acc, err := s.opts.Runs.Answer(ctx, ref, runs.Reply{Gate: req.Gate, Answer: req.Answer, Feedback: req.Feedback,
		Confirm: req.Confirm, QuestionID: req.QuestionID, Files: req.Files,
		Channel: c.channel, By: c.by(), RemoteAddr: c.addr, UserAgent: c.agent})
	return AnswerResult{RunID: acc.RunID, Gate: acc.Gate, Answer: acc.Answer, Decision: acc.Decision, Continued: acc.Continued}, err
}

// answeredOn says where a posted answer came from: " on the terminal
// channel".
func answeredOn(a human.Answer) string {
	if a.Channel == "" {
		return ""
	}
	return " on the " + a.Channel + " channel"
}
