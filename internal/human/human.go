// Package human is the contract between azero and the person it answers to:
// what a gate asks (Question), what a human answered (Answer), who may
// answer (Answerer), and the errors that mean "a human must decide first".
//
// It is a leaf: it imports nothing of azero, so capabilities (safewrite,
// review), infrastructure (prompt, flow) and every answer channel (the
// terminal, the web page of `azero serve`, a Temporal Update) share one
// vocabulary without depending on each other.
//
// Invariants:
//   - Nothing here turns silence into consent. An Answer is valid only when
//     Validate accepts it for its Question: a typed-word option must be
//     typed in full, a menu answer must be one of the menu's keys, an option
//     that needs text must carry it, a confirmation must be the exact word.
//   - The only answer a gate can get without a human is its Unattended
//     option, which no human channel can choose, and which gates set only
//     when nothing needs a human (a diff review with nothing flagged).
package human

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
)

// ErrAborted is matched by the error of a run or command a human rejected
// or aborted at a gate (exit code 4).
var ErrAborted = errors.New("aborted by a human")

// needsHuman is implemented by errors meaning "a human must answer first".
type needsHuman interface{ NeedsHuman() bool }

// Needed reports whether err means a human answer is needed and nobody
// could give it: a workflow then waits at its gate, a command exits 3.
func Needed(err error) bool {
	var nh needsHuman
	return errors.As(err, &nh) && nh.NeedsHuman()
}

// NobodyError reports that an answer is needed and nobody can give it here.
type NobodyError struct{ Reason string }

func (e *NobodyError) Error() string { return e.Reason }

// NeedsHuman marks the error as "ask again later", not a failure.
func (e *NobodyError) NeedsHuman() bool { return true }

var (
	// ErrNoTerminal: stdin or stderr is not a terminal.
	ErrNoTerminal error = &NobodyError{"a human answer is needed but stdin/stderr is not a terminal"}
	// ErrNoAnswer: input ended before an answer was typed.
	ErrNoAnswer error = &NobodyError{"input ended before an answer was typed"}
)

// Kind says how a question is answered.
type Kind string

// Question kinds.
const (
	// Word: type one of the options' keys in full ("approve", "reject").
	Word Kind = "word"
	// Menu: choose one option by its key ("S") or label ("Send").
	Menu Kind = "menu"
	// Text: type a line of text (Answer.Text).
	Text Kind = "text"
	// Editor: edit the question's files and save (Answer.Files).
	Editor Kind = "editor"
)

// Channels an answer can come from.
const (
	ChannelTerminal = "terminal"
	// ChannelWeb is the form on the page of `azero serve`.
	ChannelWeb = "web"
	// ChannelAPI is the JSON API of `azero serve` (a script, another tool).
	ChannelAPI        = "api"
	ChannelTemporal   = "temporal"
	ChannelUnattended = "unattended" // the gate's Unattended option: no human was asked
)

// Option is one answer a question allows.
type Option struct {
	// Key is what the human gives: the word to type in full for a Word
	// question, the letter for a Menu.
	Key string `json:"key"`
	// Label names the option in a menu ("Send" for key "S").
	Label string `json:"label,omitempty"`
	// Decision is how the audit log records this answer (APPROVED, send).
	Decision string `json:"decision"`
	// Text, when set, is the request for text this option needs (the
	// feedback for a revision); the answer must carry non-blank text.
	Text string `json:"text,omitempty"`
	// OneLine says the text is a single line (a name), not paragraphs.
	OneLine bool `json:"one_line,omitempty"`
	// Confirm, when set, is a word the human must also type in full to
	// choose this option (approving over a reviewer's BLOCK); ConfirmWhy
	// says why.
	Confirm    string `json:"confirm,omitempty"`
	ConfirmWhy string `json:"confirm_why,omitempty"`
}

// MenuLabel renders the option as a menu shows it: "[S]end" for key S,
// label Send; "[X] Label" when the label does not start with the key.
func (o Option) MenuLabel() string {
	if rest, ok := strings.CutPrefix(strings.ToLower(o.Label), strings.ToLower(o.Key)); ok && o.Label != "" {
		return "[" + o.Key + "]" + o.Label[len(o.Label)-len(rest):]
	}
	return "[" + o.Key + "] " + o.Label
}

// Wording returns what follows each option's key where a word is asked
// for ("Type approve to proceed or reject to stop"), as every channel
// says it: the option's Label, or, for a question of two options without
// labels (approve or reject), "to proceed" and "to stop".
func (q Question) Wording() []string {
	out := make([]string, len(q.Options))
	if len(q.Options) == 2 && q.Options[0].Label == "" && q.Options[1].Label == "" {
		out[0], out[1] = "to proceed", "to stop"
		return out
	}
	for i, o := range q.Options {
		out[i] = o.Label
	}
	return out
}

// File is a file an Editor question asks the human to edit.
type File struct {
	Name    string `json:"name"`           // what the human sees ("draft.md"); the key of Answer.Files
	Path    string `json:"path,omitempty"` // the working copy on the machine that asked, for a local editor
	Content string `json:"content"`        // the content before editing
}

// Question is what a gate asks. Everything a channel shows is in it, so a
// question stored with a waiting run can be answered from anywhere.
type Question struct {
	// ID identifies the question by its content (Fingerprint): an answer
	// given for it applies to a question asked again only when nothing in
	// it changed.
	ID     string `json:"id,omitempty"`
	Gate   string `json:"gate"`
	Kind   Kind   `json:"kind"`
	Title  string `json:"title,omitempty"`  // headline: why the human is asked
	Report string `json:"report,omitempty"` // what to read before answering (plain text)
	// Format names how Report is laid out ("diff-report" for the diff
	// review's report), so a channel can colour it; "" is plain text.
	Format  string   `json:"format,omitempty"`
	Prompt  string   `json:"prompt"` // the question itself
	Options []Option `json:"options,omitempty"`
	Files   []File   `json:"files,omitempty"`
	// Unattended is the answer taken when nobody can be asked, if any. No
	// channel offers it to a human. Gates set it only when nothing needs a
	// human (a diff with nothing flagged).
	Unattended *Option `json:"unattended,omitempty"`
	// Facts are recorded with the decision in the audit log (the flagged
	// files of a diff review, the verdict of an issue review).
	Facts   map[string]any `json:"facts,omitempty"`
	AskedAt time.Time      `json:"asked_at,omitzero"`
	// Nonce is drawn at random each time an engine asks the question, and
	// kept while the question stays asked. An answer is sealed for it
	// (Answer.MAC), so an answer given to an earlier asking of the same
	// question does not count for this one. It is not part of the
	// question's content (Fingerprint).
	Nonce string `json:"nonce,omitempty"`
}

// Answer is a human's answer to a question.
type Answer struct {
	Gate string `json:"gate"`
	// QuestionID is the ID of the question answered, when the channel
	// answered a stored question (the web page): the answer is refused if
	// the question asked now differs.
	QuestionID string            `json:"question_id,omitempty"`
	Key        string            `json:"key,omitempty"`     // the option chosen
	Text       string            `json:"text,omitempty"`    // text the option or a Text question needs
	Confirm    string            `json:"confirm,omitempty"` // the confirmation word, when the option needs one
	Files      map[string]string `json:"files,omitempty"`   // an Editor question's files as saved
	Channel    string            `json:"channel"`
	By         string            `json:"by,omitempty"` // where it came from: a remote address and user agent, a worker
	// RemoteAddr and UserAgent name the client of a web answer.
	RemoteAddr string    `json:"remote_addr,omitempty"`
	UserAgent  string    `json:"user_agent,omitempty"`
	At         time.Time `json:"answered_at,omitzero"`
	// ClaimedChannel is the channel an answer claimed and could not prove
	// (a Temporal Update naming "web" from a plain client); Channel then
	// names the channel it really came through.
	ClaimedChannel string `json:"claimed_channel,omitempty"`
	// MAC is the seal azero's own channels put on an answer (package
	// answerkey): an answer without a valid one was not made by azero.
	MAC string `json:"mac,omitempty"`
}

// DecisionRecord is the audit record of the answer a to q, which chose
// opt: the gate, the decision and the answer, the channel (the one the
// engine verified; a channel claimed and not proven as claimed_channel)
// and who answered through it, when it was asked and answered, the text and the
// override, the files edited, and the question's facts. Every engine
// writes it as its gate_decision, before acting on the decision.
func DecisionRecord(q Question, a Answer, opt Option) []slog.Attr {
	attrs := []slog.Attr{
		slog.String("gate", q.Gate), slog.String("decision", opt.Decision), slog.String("answer", a.Key),
		slog.String("channel", a.Channel), slog.Time("asked_at", q.AskedAt), slog.Time("answered_at", a.At),
	}
	if a.ClaimedChannel != "" {
		attrs = append(attrs, slog.String("claimed_channel", a.ClaimedChannel))
	}
	if a.By != "" {
		attrs = append(attrs, slog.String("by", a.By))
	}
	if a.RemoteAddr != "" {
		attrs = append(attrs, slog.String("remote_addr", a.RemoteAddr))
	}
	if a.UserAgent != "" {
		attrs = append(attrs, slog.String("user_agent", a.UserAgent))
	}
	if opt.Text != "" || q.Kind == Text {
		attrs = append(attrs, slog.String("text", a.Text))
	}
	if opt.Confirm != "" {
		attrs = append(attrs, slog.Bool("override", true), slog.String("override_of", opt.ConfirmWhy))
	}
	var edited []string
	for _, f := range q.Files {
		if c, ok := a.Files[f.Name]; ok && c != f.Content {
			edited = append(edited, f.Name)
		}
	}
	if len(edited) > 0 {
		attrs = append(attrs, slog.Any("files_edited", edited))
	}
	keys := make([]string, 0, len(q.Facts))
	for k := range q.Facts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		attrs = append(attrs, slog.Any(k, q.Facts[k]))
	}
	return attrs
}

// Fingerprint identifies q by its content: the same gate, report,
// options, files and facts give the same id, whenever and wherever asked
// (its nonce and when it was asked are not content).
func Fingerprint(q Question) string {
	q.ID, q.AskedAt, q.Nonce = "", time.Time{}, ""
	b, err := json.Marshal(q)
	if err != nil {
		// Facts that cannot be encoded: the question cannot be matched.
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}

// Match resolves what a human typed to an option: for a Word question the
// key in full, for a Menu the key or the label; case does not matter. An
// empty or partial answer matches nothing.
func (q Question) Match(input string) (Option, bool) {
	input = strings.TrimSpace(input)
	if input == "" {
		return Option{}, false
	}
	for _, o := range q.Options {
		if strings.EqualFold(input, o.Key) || q.Kind == Menu && o.Label != "" && strings.EqualFold(input, o.Label) {
			return o, true
		}
	}
	return Option{}, false
}

// Option returns the option with key, including the Unattended one.
func (q Question) Option(key string) (Option, bool) {
	for _, o := range q.Options {
		if o.Key == key {
			return o, true
		}
	}
	if q.Unattended != nil && q.Unattended.Key == key {
		return *q.Unattended, true
	}
	return Option{}, false
}

// Keys lists the keys a human may answer with.
func (q Question) Keys() []string {
	keys := make([]string, len(q.Options))
	for i, o := range q.Options {
		keys[i] = o.Key
	}
	return keys
}

// InvalidError reports an answer its question does not allow. Channels
// show it to the human (the web page answers 422) and keep the question.
type InvalidError struct{ Reason string }

func (e *InvalidError) Error() string { return "invalid answer: " + e.Reason }

func invalid(format string, args ...any) error {
	return &InvalidError{Reason: fmt.Sprintf(format, args...)}
}

// Validate checks a against q and returns the option chosen (the zero
// Option for Text and Editor questions). Every channel's answer passes
// through it before a gate decides.
func Validate(q Question, a Answer) (Option, error) {
	if a.Gate != q.Gate {
		return Option{}, invalid("the answer is for gate %q, but the question is at %q", a.Gate, q.Gate)
	}
	if a.Channel == "" {
		return Option{}, invalid("the answer names no channel")
	}
	if a.QuestionID != "" && a.QuestionID != q.ID {
		return Option{}, invalid("the answer is for another version of the question at %s: look at it again", q.Gate)
	}
	if a.Channel == ChannelUnattended {
		if q.Unattended == nil || a.Key != q.Unattended.Key {
			return Option{}, invalid("gate %s needs a human: it cannot pass unattended", q.Gate)
		}
		return *q.Unattended, nil
	}
	switch q.Kind {
	case Text:
		if strings.TrimSpace(a.Text) == "" {
			return Option{}, invalid("gate %s needs text", q.Gate)
		}
		return Option{}, nil
	case Editor:
		for _, f := range q.Files {
			if _, ok := a.Files[f.Name]; !ok {
				return Option{}, invalid("gate %s: the edited %s is missing", q.Gate, f.Name)
			}
		}
		for name := range a.Files {
			if !slices.ContainsFunc(q.Files, func(f File) bool { return f.Name == name }) {
				return Option{}, invalid("gate %s has no file %q to edit", q.Gate, name)
			}
		}
		if len(q.Options) == 0 {
			return Option{}, nil
		}
	case Word, Menu:
	default:
		return Option{}, invalid("gate %s asks a question of unknown kind %q", q.Gate, q.Kind)
	}
	var opt Option
	found := false
	for _, o := range q.Options {
		if o.Key == a.Key {
			opt, found = o, true
			break
		}
	}
	if !found {
		return Option{}, invalid("%q is not one of the answers %s allows (%s)", a.Key, q.Gate, strings.Join(q.Keys(), ", "))
	}
	if opt.Text != "" && strings.TrimSpace(a.Text) == "" {
		return Option{}, invalid("%s at %s needs text: %s", opt.Key, q.Gate, opt.Text)
	}
	if opt.Confirm != "" && !strings.EqualFold(strings.TrimSpace(a.Confirm), opt.Confirm) {
		return Option{}, invalid("%s at %s must be confirmed by typing %q in full", opt.Key, q.Gate, opt.Confirm)
	}
	return opt, nil
}

// Parse turns what a human typed on a channel without a dialogue (a web
// form, an API call) into an answer: input must match an option in full;
// text and confirm are taken as given. It returns an InvalidError for a
// wrong or partial word.
func Parse(q Question, input, text, confirm string) (Answer, error) {
	a := Answer{Gate: q.Gate, Text: text, Confirm: confirm}
	switch q.Kind {
	case Word, Menu:
		o, ok := q.Match(input)
		if !ok {
			return a, invalid("%q is not one of the answers %s allows (%s); type one in full", input, q.Gate, strings.Join(q.Keys(), ", "))
		}
		a.Key = o.Key
	case Text:
		if a.Text == "" {
			a.Text = input
		}
	}
	return a, nil
}

// Answerer gets a human's answer to a question. Without anyone to ask it
// returns an error for which Needed reports true; interrupted, ctx's error.
type Answerer interface {
	Answer(ctx context.Context, q Question) (Answer, error)
}

// Check refuses a question no human could answer properly: a word or menu
// without options, an editor question without files, an unknown kind, or
// an unattended answer that is also offered to humans. Every engine checks
// a gate's question with it before asking.
func (q Question) Check() error {
	switch q.Kind {
	case Word, Menu:
		if len(q.Options) == 0 {
			return fmt.Errorf("gate %s asks a %s question without options", q.Gate, q.Kind)
		}
	case Editor:
		if len(q.Files) == 0 {
			return fmt.Errorf("gate %s asks to edit no file", q.Gate)
		}
	case Text:
	default:
		return fmt.Errorf("gate %s asks a question of unknown kind %q", q.Gate, q.Kind)
	}
	if q.Unattended != nil && slices.ContainsFunc(q.Options, func(o Option) bool { return o.Key == q.Unattended.Key }) {
		return fmt.Errorf("gate %s offers its unattended answer %q to humans", q.Gate, q.Unattended.Key)
	}
	return nil
}
