package store_test

import (
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/answerkey"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/store"
)

// asking returns a store in a fresh state directory whose run "r" (lease
// "t") asks a question, and the question.
func asking(t *testing.T) (*store.Store, string, human.Question) {
	t.Helper()
	dir := t.TempDir()
	st := open(t, filepath.Join(dir, store.FileName))
	ctx := t.Context()
	if err := st.CreateRun(ctx, store.Run{ID: "r", Workflow: "w", Node: "review", State: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if err := st.Acquire(ctx, "r", store.Lease{Token: "t", PID: os.Getpid()}, time.Minute); err != nil {
		t.Fatal(err)
	}
	q := human.Question{Gate: "review", Kind: human.Word, Prompt: "Merge?", Options: []human.Option{{Key: "approve", Decision: "APPROVED"}}}
	q.ID, q.Nonce = human.Fingerprint(q), answerkey.Nonce()
	raw, _ := json.Marshal(q)
	if err := st.SetQuestion(ctx, "r", "t", q.ID, raw); err != nil {
		t.Fatal(err)
	}
	return st, dir, q
}

func webAnswer(q human.Question) json.RawMessage {
	raw, _ := json.Marshal(human.Answer{Gate: q.Gate, QuestionID: q.ID, Key: "approve", Channel: human.ChannelWeb, By: "127.0.0.1:9 (curl)",
		At: time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)})
	return raw
}

// forge writes the run's answer column straight into the database file,
// as code that reached the store would, without azero.
func forge(t *testing.T, dir, runID, answer string) {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(dir, store.FileName)+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE runs SET answer = ? WHERE id = ?`, answer, runID); err != nil {
		t.Fatal(err)
	}
}

func TestPostAnswerSealsIt(t *testing.T) {
	t.Parallel()
	st, dir, q := asking(t)
	if err := st.PostAnswer(t.Context(), "r", q.ID, webAnswer(q)); err != nil {
		t.Fatal(err)
	}
	r, _ := st.GetRun(t.Context(), "r")
	var stored human.Answer
	if err := json.Unmarshal(r.Answer, &stored); err != nil || len(stored.MAC) != 64 || stored.QuestionID != q.ID {
		t.Fatalf("stored answer %s: want it sealed for the question (%v)", r.Answer, err)
	}
	// The key was made on first use, private, next to the store.
	if info, err := os.Stat(filepath.Join(dir, answerkey.FileName)); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("answer key: %v %v", info, err)
	}
	a, ok, err := st.PostedAnswer(r)
	if err != nil || !ok || a.Channel != human.ChannelWeb || a.Key != "approve" || a.MAC != "" {
		t.Fatalf("PostedAnswer = %+v, %v, %v: want the web answer, without its seal", a, ok, err)
	}
	if err := st.PostAnswer(t.Context(), "r", q.ID, webAnswer(q)); !errors.Is(err, store.ErrAnswered) {
		t.Errorf("a second answer: %v, want ErrAnswered", err)
	}
}

// An answer written into the store by anything but azero is not an
// answer: it is reported as forged (never shown), and a real answer is
// posted over it.
func TestForgedAnswersAreNotAnswers(t *testing.T) {
	t.Parallel()
	other, err := answerkey.Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		forged  func(t *testing.T, st *store.Store, q human.Question) string
		claimed string
	}{
		{"no seal", func(_ *testing.T, _ *store.Store, q human.Question) string { return string(webAnswer(q)) }, human.ChannelWeb},
		{"sealed with another key", func(_ *testing.T, _ *store.Store, q human.Question) string {
			var a human.Answer
			json.Unmarshal(webAnswer(q), &a)
			raw, _ := json.Marshal(other.Seal("r", q, a))
			return string(raw)
		}, human.ChannelWeb},
		{"a real answer of an earlier asking", func(t *testing.T, st *store.Store, q human.Question) string {
			key, err := st.AnswerKey()
			if err != nil {
				t.Fatal(err)
			}
			var a human.Answer
			json.Unmarshal(webAnswer(q), &a)
			q.Nonce = answerkey.Nonce()
			raw, _ := json.Marshal(key.Seal("r", q, a))
			return string(raw)
		}, human.ChannelWeb},
		{"not JSON", func(*testing.T, *store.Store, human.Question) string { return `{"channel": "web", "key": "appr` }, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			st, dir, q := asking(t)
			forge(t, dir, "r", c.forged(t, st, q))
			r, _ := st.GetRun(t.Context(), "r")
			a, ok, err := st.PostedAnswer(r)
			var f *store.ForgedError
			if ok || !errors.As(err, &f) || !errors.Is(err, store.ErrForged) || a.Key != "" {
				t.Fatalf("PostedAnswer = %+v, %v, %v: want it refused as forged", a, ok, err)
			}
			if f.Claimed.Channel != c.claimed || f.RunID != "r" {
				t.Errorf("forged error %+v: want the claimed channel %q", f, c.claimed)
			}
			if _, err := st.CheckAnswer("r", q, r.Answer); !errors.Is(err, store.ErrForged) {
				t.Errorf("CheckAnswer = %v, want ErrForged", err)
			}
			// A real answer is taken over it.
			if err := st.PostAnswer(t.Context(), "r", q.ID, webAnswer(q)); err != nil {
				t.Fatalf("a real answer after the forged one: %v", err)
			}
			r, _ = st.GetRun(t.Context(), "r")
			if _, ok, err := st.PostedAnswer(r); !ok || err != nil {
				t.Errorf("the real answer is not there: %v", err)
			}
		})
	}
}

func TestDropAnswerNeedsTheLeaseAndTheSameAnswer(t *testing.T) {
	t.Parallel()
	st, dir, _ := asking(t)
	forge(t, dir, "r", `{"channel":"web"}`)
	ctx := t.Context()
	for _, c := range []struct {
		token, raw string
		dropped    bool
	}{
		{"not-the-lease", `{"channel":"web"}`, false},
		{"t", `{"channel":"terminal"}`, false},
		{"t", `{"channel":"web"}`, true},
	} {
		if err := st.DropAnswer(ctx, "r", c.token, json.RawMessage(c.raw)); err != nil {
			t.Fatal(err)
		}
		r, _ := st.GetRun(ctx, "r")
		if dropped := len(r.Answer) == 0; dropped != c.dropped {
			t.Errorf("DropAnswer(%s, %s): dropped %v, want %v", c.token, c.raw, dropped, c.dropped)
		}
	}
}

// Without its key the store takes no answer and tells none, and acts on
// no run: it fails, saying which file and what to do, instead of making a
// new key (which would turn every answer and run sealed with the old one
// into a forgery) or taking answers unchecked.
func TestAnswersFailClosedWithoutTheKey(t *testing.T) {
	t.Parallel()
	_, dir, q := asking(t)
	keyPath := filepath.Join(dir, answerkey.FileName)
	if err := os.Remove(keyPath); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(keyPath, 0o700); err != nil {
		t.Fatal(err)
	}
	st := open(t, filepath.Join(dir, store.FileName)) // a process started now, which cannot read the key
	err := st.PostAnswer(t.Context(), "r", q.ID, webAnswer(q))
	if err == nil || !strings.Contains(err.Error(), "answer key "+keyPath) || errors.Is(err, store.ErrForged) {
		t.Fatalf("PostAnswer without a readable key: %v", err)
	}
	if _, err := st.GetRun(t.Context(), "r"); err == nil || !strings.Contains(err.Error(), "answer key "+keyPath) || errors.Is(err, store.ErrRunForged) {
		t.Fatalf("GetRun without a readable key: %v, want the key's error", err)
	}
	forge(t, dir, "r", string(webAnswer(q)))
	r, err := st.Peek(t.Context(), "r")
	if err != nil || r.Unverified == nil || errors.Is(r.Unverified, store.ErrRunForged) {
		t.Fatalf("Peek without a readable key: %v, unverified %v: want the run, not verified for want of the key", err, r.Unverified)
	}
	if a, ok, err := st.PostedAnswer(r); ok || err == nil || errors.Is(err, store.ErrForged) || a.Key != "" {
		t.Errorf("PostedAnswer without a readable key = %+v, %v, %v: want an error", a, ok, err)
	}
	if info, err := os.Stat(keyPath); err != nil || !info.IsDir() {
		t.Errorf("the unreadable key was replaced: %v", err)
	}
}
