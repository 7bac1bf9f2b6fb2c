package notify_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/notify"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
)

func waitingMessage() notify.Message {
	return notify.Message{Event: notify.Waiting, RunID: "261122-k3x9qa", Workflow: "implement", Key: "azero/42-slug",
		Status: "waiting", Node: "human_review", Gate: "human_review", Title: "Review", Prompt: "Merge this change?",
		Answers: []string{"approve", "revise", "abort"}, Resume: "azero resume 261122-k3x9qa",
		At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func TestFromEvent(t *testing.T) {
	t.Parallel()
	q := human.Question{Gate: "human_review", Kind: human.Word, Title: "Review", Prompt: "Merge this change?",
		Options: []human.Option{{Key: "approve", Decision: "APPROVED"}, {Key: "abort", Decision: "ABORTED"}}}
	raw, _ := json.Marshal(q)
	run := store.Run{ID: "r1", Workflow: "implement", Key: "azero/1-x", Status: store.StatusWaiting, Question: raw}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name string
		ev   event.Event
		want *notify.Message
	}{
		{"waiting names the gate and its answers",
			event.Event{RunID: "r1", Node: "human_review", Kind: event.Waiting, Text: "no terminal", At: at},
			&notify.Message{Event: notify.Waiting, RunID: "r1", Workflow: "implement", Key: "azero/1-x", Status: "waiting",
				Node: "human_review", Gate: "human_review", Title: "Review", Prompt: "Merge this change?",
				Answers: []string{"approve", "abort"}, Resume: "azero resume r1", At: at}},
		{"finished carries the status",
			event.Event{RunID: "r1", Node: "end", Kind: event.Finished, At: at}.WithData(event.FinishedData{Status: "aborted", Error: "aborted by a human"}),
			&notify.Message{Event: notify.Finished, RunID: "r1", Workflow: "implement", Key: "azero/1-x", Status: "aborted",
				Node: "end", Error: "aborted by a human", At: at}},
		{"failed carries the error",
			event.Event{RunID: "r1", Node: "green", Kind: event.Failed, Text: "go: not found", At: at},
			&notify.Message{Event: notify.Failed, RunID: "r1", Workflow: "implement", Key: "azero/1-x", Status: "failed",
				Node: "green", Error: "go: not found", Resume: "azero resume r1", At: at}},
		{"a step is not notified", event.Event{RunID: "r1", Kind: event.NodeDone, At: at}, nil},
		{"a question asked at a terminal is not notified", event.Event{RunID: "r1", Kind: event.Question, At: at}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := notify.FromEvent(tt.ev, run)
			if ok != (tt.want != nil) {
				t.Fatalf("FromEvent ok = %v, want %v", ok, tt.want != nil)
			}
			if tt.want == nil {
				return
			}
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(tt.want)
			if string(g) != string(w) {
				t.Errorf("message\n got %s\nwant %s", g, w)
			}
		})
	}
}

func TestText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		m    notify.Message
		want []string
	}{
		{"waiting", waitingMessage(), []string{"run 261122-k3x9qa (implement) is waiting at human_review", "Merge this change?", "approve, revise, abort", "azero resume 261122-k3x9qa", "azero serve"}},
		{"done", notify.Message{Event: notify.Finished, RunID: "r", Status: "done"}, []string{"run r ended: done"}},
		{"failed keeps the first line", notify.Message{Event: notify.Failed, RunID: "r", Node: "green", Error: "boom\nstack", Resume: "azero resume r"},
			[]string{"failed at green: boom;", "azero resume r"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			text := tt.m.Text()
			if strings.Contains(text, "\n") {
				t.Errorf("text %q has more than one line", text)
			}
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("text %q lacks %q", text, w)
				}
			}
		})
	}
}

func TestCommandReadsTheEventOnStdin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	n := &notify.Notifier{Command: `cat > got.json && printf '%s %s' "$AZERO_NOTIFY_EVENT" "$AZERO_RUN_ID" > env.txt`, Dir: dir}
	m := waitingMessage()
	if err := n.Send(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "got.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got notify.Message
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("stdin was not the event as JSON: %v\n%s", err, raw)
	}
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(m)
	if string(g) != string(w) {
		t.Errorf("stdin\n got %s\nwant %s", g, w)
	}
	if env, _ := os.ReadFile(filepath.Join(dir, "env.txt")); string(env) != "waiting 261122-k3x9qa" {
		t.Errorf("environment gave %q", env)
	}
}

func TestFailingCommandIsReported(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		command string
		timeout time.Duration
		want    []string
	}{
		{"exit status and output", "echo 'no display' >&2; exit 3", 0, []string{"exit status 3", "no display", "notify command"}},
		{"not found", "/nonexistent/notifier", 0, []string{"exit status 127"}},
		{"hangs with a child", "sleep 600 & sleep 600", 300 * time.Millisecond, []string{"did not finish", "stopped"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			n := &notify.Notifier{Command: tt.command, Timeout: tt.timeout}
			err := n.Send(t.Context(), waitingMessage())
			if err == nil {
				t.Fatal("Send succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestWebhookPostsJSONWithText(t *testing.T) {
	t.Parallel()
	var (
		mu   sync.Mutex
		got  map[string]any
		ct   string
		meth string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		meth, ct = r.Method, r.Header.Get("Content-Type")
		if err := json.Unmarshal(body, &got); err != nil {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	n := &notify.Notifier{Webhook: srv.URL + "/hooks/T0/B0/secret"}
	if err := n.Send(t.Context(), waitingMessage()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if meth != http.MethodPost || ct != "application/json" {
		t.Errorf("request %s with Content-Type %q", meth, ct)
	}
	text, _ := got["text"].(string)
	if !strings.Contains(text, "is waiting at human_review") {
		t.Errorf("text = %q", text)
	}
	if got["event"] != "waiting" || got["run_id"] != "261122-k3x9qa" || got["gate"] != "human_review" {
		t.Errorf("payload = %v", got)
	}
}

func TestWebhookFailuresNeverShowTheURL(t *testing.T) {
	t.Parallel()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "channel_not_found", http.StatusNotFound)
	}))
	t.Cleanup(failing.Close)
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	tests := []struct {
		name, url string
		want      string
	}{
		{"an error status", failing.URL + "/services/T0/B0/secret-token", "404 Not Found: channel_not_found"},
		{"nobody listening", gone.URL + "/services/T0/B0/secret-token", "notify webhook at 127.0.0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := (&notify.Notifier{Webhook: tt.url}).Send(t.Context(), waitingMessage())
			if err == nil {
				t.Fatal("Send succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "secret-token") {
				t.Errorf("error %q: want %q in it and no URL path", err, tt.want)
			}
		})
	}
}

// The dispatcher returns at once, sends in order, and reports failures
// without returning them to anyone.
func TestDispatcherNeverHoldsTheRunUp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gate := filepath.Join(dir, "go")
	// The first notification waits until the test lets it go: Notify
	// returning before that proves it does not wait for the command.
	cmd := `while [ ! -f "` + gate + `" ]; do sleep 0.02; done; ev=$(cat); case "$ev" in *'"run_id":"bad"'*) echo refused >&2; exit 1;; esac; echo "$AZERO_RUN_ID" >> order.txt`
	var (
		mu       sync.Mutex
		failures []string
	)
	d := notify.NewDispatcher(&notify.Notifier{Command: cmd, Dir: dir}, func(m notify.Message, err error) {
		mu.Lock()
		defer mu.Unlock()
		failures = append(failures, m.RunID+": "+err.Error())
	})
	for _, id := range []string{"one", "bad", "two", "three"} {
		m := waitingMessage()
		m.RunID = id
		d.Notify(m)
	}
	if _, err := os.Stat(filepath.Join(dir, "order.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a notification was sent before the command could run: %v", err)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if !d.Close(testenv.Patience) {
		t.Fatal("Close gave up waiting")
	}
	order, _ := os.ReadFile(filepath.Join(dir, "order.txt"))
	if string(order) != "one\ntwo\nthree\n" {
		t.Errorf("sent in order %q", order)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(failures) != 1 || !strings.HasPrefix(failures[0], "bad: ") || !strings.Contains(failures[0], "refused") {
		t.Errorf("failures reported: %q", failures)
	}
	d.Notify(waitingMessage()) // after Close: dropped, no panic
}

func TestDisabledDispatcherSendsNothing(t *testing.T) {
	t.Parallel()
	d := notify.NewDispatcher(&notify.Notifier{}, func(notify.Message, error) { t.Error("reported a failure") })
	d.Notify(waitingMessage())
	if !d.Close(time.Second) {
		t.Error("Close of an idle dispatcher gave up")
	}
	var nilD *notify.Dispatcher
	nilD.Notify(waitingMessage())
	nilD.Close(0)
}
