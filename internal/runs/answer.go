package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/rundoc"
	"github.com/azero-dev/azero/internal/store"
)

// Reply is an answer as a door takes it from a person: what they typed
// or chose for the question a run waits at, and where they did it.
type Reply struct {
	// Gate names the gate answered: it must be the one waiting.
	Gate string
	// Answer, Feedback and Confirm are what was typed: a word in full, a
	// menu's key or label, a text question's text; the text an option
	// needs; the confirmation word an option needs.
	Answer, Feedback, Confirm string
	// QuestionID, when given, must be the id of the question asked now:
	// an answer to a question since replaced is refused.
	QuestionID string
	// Files are an editor question's files as edited; a file left out is
	// taken unchanged.
	Files map[string]string
	// Parsed, when set, is the answer as a terminal's prompter took it
	// (its key, text and files): the typed fields above are not read.
	Parsed *human.Answer
	// Channel (human.ChannelWeb, ChannelAPI, ChannelTerminal) and who
	// answered through it, as the door knows them: a person cannot name
	// them.
	Channel, By, RemoteAddr, UserAgent string
}

// Accepted is an answer taken.
type Accepted struct {
	RunID    string
	Gate     string
	Answer   string // the key chosen, or a text question's text
	Decision string
	// Continued says the service continues the run itself; false when
	// another process drives it (a terminal, Temporal's workers), which
	// takes the answer.
	Continued bool
}

// refusal is an answer refused: why, in words, and which of
// ErrNotWaiting and ErrInvalidAnswer it is.
type refusal struct {
	kind error
	msg  string
}

func (r *refusal) Error() string        { return r.msg }
func (r *refusal) Is(target error) bool { return target == r.kind }

func refuse(kind error, format string, args ...any) error {
	return &refusal{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// take is the one answer path: it checks r against the question run ref
// asks now (the gate, the question's id, an answer already posted, the
// words: human.Parse, then human.Validate), stamps it with its channel
// and a time never before the question was asked, posts it (sealed for
// the question; the first answer from any channel wins) and audits the
// attempt, taken or refused, once. by names the door in the audit log's
// records of a forged row.
func take(ctx context.Context, env *Env, src poster, ref string, r Reply) (Accepted, error) {
	res, a, asked, err := post(ctx, env, src, ref, r)
	logger, _ := env.Audit()
	name := answerRecord(r.Channel)
	attrs := []slog.Attr{slog.String("gate", r.Gate), slog.String("channel", r.Channel),
		slog.String("remote_addr", r.RemoteAddr), slog.String("user_agent", r.UserAgent)}
	runID := res.RunID
	if err != nil {
		if runID == "" {
			runID = ref
		}
		attrs = append(attrs, slog.String("reason", err.Error()))
		_ = logger.Event(context.WithoutCancel(ctx), name+"_refused", runID, attrs...)
		if st, ok := src.(*store.Store); ok {
			_ = env.reportForged(ctx, st, doorOf(r.Channel), err)
		}
		return res, err
	}
	attrs = append(attrs, slog.String("answer", res.Answer), slog.String("decision", res.Decision),
		slog.Time("asked_at", asked), slog.Time("answered_at", a.At))
	_ = logger.Event(context.WithoutCancel(ctx), name, runID, attrs...)
	return res, nil
}

// answerRecord names the audit log's record of an answer a door took:
// web_answer for those through azero serve (the web and api channels),
// as it always was, else CHANNEL_answer.
func answerRecord(channel string) string {
	switch channel {
	case human.ChannelWeb, human.ChannelAPI, "":
		return "web_answer"
	}
	return channel + "_answer"
}

// doorOf names the door of a channel where the audit log says who found
// a forged row.
func doorOf(channel string) string {
	switch channel {
	case human.ChannelWeb, human.ChannelAPI, "":
		return "serve"
	}
	return channel
}

// post checks r against the question run ref asks and posts it: it
// returns the answer posted and when its question was asked.
func post(ctx context.Context, env *Env, src poster, ref string, r Reply) (Accepted, human.Answer, time.Time, error) {
	var none human.Answer
	run, err := src.FindRun(ctx, ref)
	if err != nil {
		return Accepted{}, none, time.Time{}, err
	}
	res := Accepted{RunID: run.ID, Gate: r.Gate}
	q, err := rundoc.Question(run)
	if err != nil {
		return res, none, time.Time{}, err
	}
	if q == nil {
		return res, none, time.Time{}, refuse(ErrNotWaiting, "run %s is not waiting for an answer (it is %s at %s)%s", run.ID, rundoc.Status(src, run), run.Node,
			answeredBefore(ctx, src, run.ID, r.Gate))
	}
	if strings.TrimSpace(r.Gate) == "" {
		return res, none, time.Time{}, refuse(ErrInvalidAnswer, "name the gate you answer: run %s waits at %s", run.ID, q.Gate)
	}
	if r.Gate != q.Gate {
		return res, none, time.Time{}, refuse(ErrNotWaiting, "gate %s is not waiting: run %s waits at %s%s", r.Gate, run.ID, q.Gate,
			answeredBefore(ctx, src, run.ID, r.Gate))
	}
	if r.QuestionID != "" && r.QuestionID != q.ID {
		return res, none, time.Time{}, refuse(ErrNotWaiting, "the question at %s changed since you read it: look at it again%s", q.Gate,
			answeredBefore(ctx, src, run.ID, r.Gate))
	}
	// A forged answer is not an answer: this one is posted over it, and
	// the forgery recorded once that is done.
	var forged error
	switch prior, ok, err := src.PostedAnswer(run); {
	case errors.Is(err, store.ErrForged):
		forged = err
	case err != nil:
		return res, none, time.Time{}, err
	case ok:
		return res, none, time.Time{}, refuse(ErrNotWaiting, "%s was already answered%s; the run continues with that answer", q.Gate, answeredOn(prior))
	}
	var a human.Answer
	if r.Parsed != nil {
		a = *r.Parsed
	} else {
		asked := *q
		if asked.Kind == human.Editor && len(asked.Options) > 0 {
			// After editing, the options are a menu (as at the terminal).
			asked.Kind = human.Menu
		}
		if a, err = human.Parse(asked, r.Answer, r.Feedback, r.Confirm); err != nil {
			return res, none, time.Time{}, refuse(ErrInvalidAnswer, "%v", err)
		}
		if q.Kind == human.Editor {
			a.Files = map[string]string{}
			for _, f := range q.Files {
				a.Files[f.Name] = f.Content
			}
			for name, content := range r.Files {
				a.Files[name] = content
			}
		}
	}
	a.Gate, a.QuestionID, a.Channel, a.By, a.At = q.Gate, q.ID, r.Channel, r.By, answeredAt(env, *q)
	a.RemoteAddr, a.UserAgent = r.RemoteAddr, r.UserAgent
	opt, err := human.Validate(*q, a)
	if err != nil {
		return res, none, time.Time{}, refuse(ErrInvalidAnswer, "%v", err)
	}
	raw, err := json.Marshal(a)
	if err != nil {
		return res, none, time.Time{}, err
	}
	switch err := src.PostAnswer(ctx, run.ID, q.ID, raw); {
	case errors.Is(err, store.ErrAnswered):
		on := ""
		if again, gerr := src.GetRun(ctx, run.ID); gerr == nil {
			if prior, ok, _ := src.PostedAnswer(again); ok {
				on = answeredOn(prior)
			}
		}
		return res, none, time.Time{}, refuse(ErrNotWaiting, "%s was answered first%s; your answer was not used", q.Gate, on)
	case errors.Is(err, store.ErrNotAsked):
		return res, none, time.Time{}, refuse(ErrNotWaiting, "run %s no longer asks that question: look at it again", run.ID)
	case err != nil:
		return res, none, time.Time{}, err
	}
	if forged != nil {
		recordForged(ctx, env, run.ID, q.Gate, forged)
	}
	res.Answer, res.Decision = a.Key, opt.Decision
	if q.Kind == human.Text {
		res.Answer = a.Text
	}
	return res, a, q.AskedAt, nil
}

// answeredAt is when an answer to q is taken: now, by this process's
// clock, and never before q was asked (by the clock of whatever asked it,
// which may run ahead of this one). The answer is sealed with it.
func answeredAt(env *Env, q human.Question) time.Time {
	now := env.now().UTC()
	if now.Before(q.AskedAt) {
		return q.AskedAt.UTC()
	}
	return now
}

// answeredBefore tells someone whose answer came too late how the gate
// was last answered: "; review was answered APPROVED on the terminal
// channel at 10:04:05 UTC", or "" when it never was.
func answeredBefore(ctx context.Context, src Source, runID, gate string) string {
	if strings.TrimSpace(gate) == "" {
		return ""
	}
	evs, err := src.Events(ctx, runID, 0, 0)
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

// recordForged records an answer found in the store that azero did not
// make (err is a *store.ForgedError), as the engine does when it finds
// one.
func recordForged(ctx context.Context, env *Env, runID, gate string, err error) {
	attrs := []slog.Attr{slog.String("gate", gate), slog.String("reason", err.Error()), slog.String("found_by", "azero serve")}
	var f *store.ForgedError
	if errors.As(err, &f) {
		attrs = append(attrs, slog.String("claimed_channel", f.Claimed.Channel))
		if f.Claimed.By != "" {
			attrs = append(attrs, slog.String("claimed_by", f.Claimed.By))
		}
	}
	var logger *audit.Logger
	logger, _ = env.Audit()
	_ = logger.Event(context.WithoutCancel(ctx), "answer_forged", runID, attrs...)
}

// answerer names who answers from this machine's terminal, for the audit
// log: "terminal of USER@HOST".
func answerer() string {
	name := "someone"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	host, _ := os.Hostname()
	return "terminal of " + name + "@" + host
}

// answeredBy says where the last answer to gate came from ("on the web
// channel"), from a run's events.
func answeredBy(evs []event.Event, gate string) string {
	for i := len(evs) - 1; i >= 0; i-- {
		ev := evs[i]
		if ev.Kind != event.Answer || ev.Node != gate {
			continue
		}
		var a human.Answer
		if ev.Decode(&a) == nil && a.Channel != "" {
			return "on the " + a.Channel + " channel"
		}
	}
	return "elsewhere"
}
