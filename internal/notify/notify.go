// Package notify tells people that a run needs them or has ended: when a
// run waits at a gate, finishes or fails, it runs the user's command with
// the event as JSON on stdin, and POSTs the same JSON with a "text" field
// to a webhook (a Slack or Mattermost incoming webhook shows the text).
//
// Invariants:
//   - A notifier never stops or slows a run: a Dispatcher queues messages
//     and sends them from its own goroutine, each send bounded by a
//     timeout, and a failure is reported, never returned to the run.
//   - A webhook's URL is a credential: errors name its host, never the URL.
//   - Nothing here answers a gate: a notification says where to answer.
package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/store"
)

// What a message reports.
const (
	Waiting  = "waiting"  // a gate needs a human and nobody could be asked
	Finished = "finished" // the run ended: done, aborted, or failed by its verdict
	Failed   = "failed"   // a step failed; the run can be resumed after fixing the cause
)

// Message is one notification, the JSON a command reads on stdin.
type Message struct {
	Event    string `json:"event"` // Waiting, Finished or Failed
	RunID    string `json:"run_id"`
	Workflow string `json:"workflow,omitempty"`
	Key      string `json:"key,omitempty"`    // the branch or slug the run works on
	Status   string `json:"status"`           // waiting, done, aborted or failed
	Node     string `json:"node,omitempty"`   // where the run stands
	Gate     string `json:"gate,omitempty"`   // the gate waiting for an answer
	Title    string `json:"title,omitempty"`  // the question's headline
	Prompt   string `json:"prompt,omitempty"` // the question itself
	// Answers are the answers the gate allows (the words to type).
	Answers []string `json:"answers,omitempty"`
	Error   string   `json:"error,omitempty"`
	// Resume is the command that continues the run from a terminal.
	Resume string    `json:"resume,omitempty"`
	At     time.Time `json:"occurred_at"`
}

// FromEvent makes the message for ev, an event of run r, and reports
// whether ev is one that is notified (a run waiting, finishing or failing).
func FromEvent(ev event.Event, r store.Run) (Message, bool) {
	m := Message{RunID: ev.RunID, Workflow: r.Workflow, Key: r.Key, Node: ev.Node, At: ev.At.UTC()}
	if m.RunID == "" {
		m.RunID = r.ID
	}
	switch ev.Kind {
	case event.Waiting:
		m.Event, m.Status = Waiting, string(store.StatusWaiting)
		m.Resume = "azero resume " + m.RunID
		var q human.Question
		if len(r.Question) > 0 && json.Unmarshal(r.Question, &q) == nil {
			m.Gate, m.Title, m.Prompt, m.Answers = q.Gate, q.Title, q.Prompt, q.Keys()
		} else {
			m.Gate, m.Prompt = ev.Node, ev.Text
		}
	case event.Finished:
		var d event.FinishedData
		_ = ev.Decode(&d)
		m.Event, m.Status, m.Error = Finished, d.Status, d.Error
		if m.Status == "" {
			m.Status = string(r.Status)
		}
	case event.Failed:
		m.Event, m.Status, m.Error = Failed, string(store.StatusFailed), ev.Text
		m.Resume = "azero resume " + m.RunID
	default:
		return Message{}, false
	}
	return m, true
}

// Text is the message in one line for a person.
func (m Message) Text() string {
	run := "run " + m.RunID
	if m.Workflow != "" {
		run += " (" + m.Workflow + ")"
	}
	var b strings.Builder
	b.WriteString("azero: ")
	switch m.Event {
	case Waiting:
		fmt.Fprintf(&b, "%s is waiting at %s", run, m.Gate)
		if q := firstNonEmpty(m.Prompt, m.Title); q != "" {
			fmt.Fprintf(&b, ": %s", oneLine(q))
		}
		if len(m.Answers) > 0 {
			fmt.Fprintf(&b, " (answers: %s)", strings.Join(m.Answers, ", "))
		}
		fmt.Fprintf(&b, "; answer it with `%s` or on the page of `azero serve`", m.Resume)
	case Finished:
		fmt.Fprintf(&b, "%s ended: %s", run, m.Status)
		if m.Error != "" {
			fmt.Fprintf(&b, " (%s)", oneLine(m.Error))
		}
	case Failed:
		fmt.Fprintf(&b, "%s failed at %s: %s; after fixing the cause, `%s`", run, m.Node, oneLine(m.Error), m.Resume)
	default:
		fmt.Fprintf(&b, "%s: %s", run, m.Event)
	}
	return b.String()
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if strings.TrimSpace(x) != "" {
			return x
		}
	}
	return ""
}

// oneLine keeps the first line of s, at most 300 characters.
func oneLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > 300 {
		s = string(r[:297]) + "..."
	}
	return s
}

// Notifier sends messages to the user's command and webhook.
type Notifier struct {
	// Command is run with `sh -c` and the message as JSON on stdin.
	Command string
	// Webhook receives a POST of the message as JSON with a "text" field.
	Webhook string
	// Env is the command's environment (nil: the process's), to which
	// AZERO_NOTIFY_EVENT and AZERO_RUN_ID are added.
	Env []string
	// Dir is the command's working directory ("": the process's).
	Dir string
	// Client posts to the webhook; nil: a client with Timeout.
	Client *http.Client
	// Timeout bounds each send; default 20 s.
	Timeout time.Duration
}

// Enabled reports whether n sends anything.
func (n *Notifier) Enabled() bool {
	return n != nil && (strings.TrimSpace(n.Command) != "" || n.Webhook != "")
}

func (n *Notifier) timeout() time.Duration {
	if n.Timeout > 0 {
		return n.Timeout
	}
	return 20 * time.Second
}

// Send delivers m to the command and the webhook, each bounded by the
// timeout, and returns their failures joined.
func (n *Notifier) Send(ctx context.Context, m Message) error {
	var errs []error
	if strings.TrimSpace(n.Command) != "" {
		errs = append(errs, n.run(ctx, m))
	}
	if n.Webhook != "" {
		errs = append(errs, n.post(ctx, m))
	}
	return errors.Join(errs...)
}

// maxOutput is how much of a failing command's output an error repeats.
const maxOutput = 2000

func (n *Notifier) run(ctx context.Context, m Message) error {
	body, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("notify command: encode the event: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, n.timeout())
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", n.Command)
	cmd.Dir = n.Dir
	cmd.Env = append(append([]string(nil), n.Env...), "AZERO_NOTIFY_EVENT="+m.Event, "AZERO_RUN_ID="+m.RunID)
	if n.Env == nil {
		cmd.Env = append(cmd.Environ(), "AZERO_NOTIFY_EVENT="+m.Event, "AZERO_RUN_ID="+m.RunID)
	}
	cmd.Stdin = bytes.NewReader(body)
	var out limitedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// The command's children (a shell pipeline) go with it on timeout.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("notify command %q did not finish within %s and was stopped", n.Command, n.timeout())
	}
	msg := strings.TrimSpace(out.String())
	if msg != "" {
		msg = ": " + msg
	}
	return fmt.Errorf("notify command %q failed (%v)%s", n.Command, err, msg)
}

func (n *Notifier) post(ctx context.Context, m Message) error {
	u, err := url.Parse(n.Webhook)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("notify webhook: not an http:// or https:// URL")
	}
	where := "notify webhook at " + u.Host
	payload := struct {
		Message
		Text string `json:"text"`
	}{m, m.Text()}
	body, err := json.Marshal(payload)
	if err != nil {
		return fmt.Errorf("%s: encode the event: %w", where, err)
	}
	ctx, cancel := context.WithTimeout(ctx, n.timeout())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.Webhook, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s: %w", where, stripURL(err))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "azero-notify")
	client := n.Client
	if client == nil {
		client = &http.Client{Timeout: n.timeout()}
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", where, stripURL(err))
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 500))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s answered %s: %s", where, resp.Status, strings.TrimSpace(string(snippet)))
	}
	return nil
}

// stripURL drops the URL (which may hold the webhook's token) from an
// HTTP client error.
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// limitedBuffer keeps the first maxOutput bytes written to it.
type limitedBuffer struct{ bytes.Buffer }

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := maxOutput - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
