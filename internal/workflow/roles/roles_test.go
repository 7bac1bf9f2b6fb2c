package roles_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/llm/provider"
	"github.com/azero-dev/azero/internal/safewrite"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/workflow/roles"
)

// A one-node workflow whose node makes two coder calls.
type state struct{ Replies []string }

func TestOpenRecordsCallsAndLineagePerRun(t *testing.T) {
	t.Parallel()
	stateDir := t.TempDir()
	st, err := store.Open(t.Context(), filepath.Join(stateDir, store.FileName), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	script := filepath.Join(t.TempDir(), "s.toml")
	os.WriteFile(script, []byte("[[reply]]\nrole = \"coder\"\nturn = 1\ntext = \"one\"\ninput_tokens = 10\noutput_tokens = 2\n\n[[reply]]\nrole = \"coder\"\nturn = 2\ntext = \"two\"\n"), 0o644)
	w := &safewrite.Writer{}
	eng := &flow.Engine{Store: st}
	var model llm.Model
	g := flow.New[state]("t", "ask").Node("ask", func(ctx context.Context, s *state) (string, error) {
		for range 2 {
			resp, err := model.Generate(ctx, llm.Request{Messages: []llm.Message{{Role: llm.SpeakerUser, Text: "hi"}}, MaxTokens: 5, Purpose: "implement"})
			if err != nil {
				return "", err
			}
			s.Replies = append(s.Replies, resp.Text)
		}
		return flow.End, nil
	}, flow.End)
	id, err := flow.Create(t.Context(), eng, g, &state{}, flow.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	run := roles.Run{Store: st, Writer: w, StateDir: stateDir, RunID: id,
		Env: provider.Env{Getenv: func(string) string { return "" }, MockLLM: true, MockScript: script}, Events: eng}
	run.Lineage = roles.NewLineage(w, stateDir, id)
	if model, err = roles.Open(llm.RoleCoder, "anthropic:claude-sonnet-4-5", run); err != nil {
		t.Fatal(err)
	}
	s, err := flow.Drive(t.Context(), eng, g, id)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(s.Replies, ",") != "one,two" {
		t.Errorf("replies = %v (turns must advance)", s.Replies)
	}
	calls, err := st.Calls(t.Context(), id)
	if err != nil || len(calls) != 2 || calls[0].Node != "ask" || calls[0].Role != "coder" || calls[0].InputTokens != 10 {
		t.Fatalf("calls = %+v, %v", calls, err)
	}
	// Every call is an event of the run, for every viewer.
	events, err := st.Events(t.Context(), id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var reported []event.ModelCallData
	for _, ev := range events {
		if ev.Kind != event.ModelCall {
			continue
		}
		var d event.ModelCallData
		if err := ev.Decode(&d); err != nil || ev.Node != "ask" || !strings.Contains(ev.Text, "coder") {
			t.Errorf("model call event %+v: %v", ev, err)
		}
		reported = append(reported, d)
	}
	if len(reported) != 2 || reported[0].Role != "coder" || reported[0].InputTokens != 10 || reported[0].OutputTokens != 2 || reported[0].Purpose != "implement" {
		t.Errorf("model call events = %+v, want the two calls", reported)
	}
	files, _ := filepath.Glob(filepath.Join(roles.LineageDir(stateDir, id), "*"))
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	if got := strings.Join(names, " "); got != "001-prompt-implement.md 002-response-implement.md 003-prompt-implement.md 004-response-implement.md" {
		t.Errorf("lineage = %s", got)
	}

	// A resumed run counts its turns from the store: a new model for the
	// same run answers turn 3, not turn 1 (which the script has).
	again, err := roles.Open(llm.RoleCoder, "mock:scripted", run)
	if err != nil {
		t.Fatal(err)
	}
	_, err = again.Generate(t.Context(), llm.Request{Messages: []llm.Message{{Role: llm.SpeakerUser, Text: "hi"}}, MaxTokens: 5})
	if err == nil || !strings.Contains(err.Error(), "turn 3") {
		t.Errorf("third call: %v, want no scripted reply for turn 3", err)
	}
}

func TestOpenFailsEarlyWithoutAKey(t *testing.T) {
	t.Parallel()
	_, err := roles.Open(llm.RoleCoder, "anthropic:claude-sonnet-4-5", roles.Run{Env: provider.Env{Getenv: func(string) string { return "" }}})
	var mk *llm.MissingKeyError
	if !errors.As(err, &mk) || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Fatalf("err = %v", err)
	}
}

// TestARepeatedNodeAsksTheSameTurn: a node that made its model call and
// then died (here: failed) before completing runs again on resume and gets
// the same scripted reply, not the next turn's; the next node gets the
// next turn. Before the fix the killed attempt's call counted as a turn and
// the run got replies meant for other files, or none ("no reply for role
// coder, turn 4").
func TestARepeatedNodeAsksTheSameTurn(t *testing.T) {
	t.Parallel()
	stateDir := t.TempDir()
	st, err := store.Open(t.Context(), filepath.Join(stateDir, store.FileName), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	script := filepath.Join(t.TempDir(), "s.toml")
	os.WriteFile(script, []byte("[[reply]]\nrole = \"coder\"\nturn = 1\ntext = \"test file\"\n\n[[reply]]\nrole = \"coder\"\nturn = 2\ntext = \"code file\"\n"), 0o644)
	w := &safewrite.Writer{}
	eng := &flow.Engine{Store: st}
	var model llm.Model
	crashes := 2
	ask := func(ctx context.Context) (string, error) {
		resp, err := model.Generate(ctx, llm.Request{Messages: []llm.Message{{Role: llm.SpeakerUser, Text: "hi"}}, MaxTokens: 5, Purpose: "scaffold"})
		return resp.Text, err
	}
	g := flow.New[state]("t", "scaffold").
		Node("scaffold", func(ctx context.Context, s *state) (string, error) {
			text, err := ask(ctx)
			if err != nil {
				return "", err
			}
			if crashes > 0 {
				crashes--
				return "", errors.New("died after the model answered")
			}
			s.Replies = append(s.Replies, text)
			return "implement", nil
		}, "implement").
		Node("implement", func(ctx context.Context, s *state) (string, error) {
			text, err := ask(ctx)
			s.Replies = append(s.Replies, text)
			return flow.End, err
		}, flow.End)
	id, err := flow.Create(t.Context(), eng, g, &state{}, flow.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	run := roles.Run{Store: st, Writer: w, StateDir: stateDir, RunID: id,
		Env: provider.Env{Getenv: func(string) string { return "" }, MockLLM: true, MockScript: script}}
	if model, err = roles.Open(llm.RoleCoder, "mock:scripted", run); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := flow.Drive(t.Context(), eng, g, id); err == nil {
			t.Fatal("the crashing node completed")
		}
	}
	s, err := flow.Drive(t.Context(), eng, g, id)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(s.Replies, ",") != "test file,code file" {
		t.Errorf("replies = %v; a repeated node must get its own turn again", s.Replies)
	}
	// Every call is still recorded (and paid for).
	if calls, _ := st.Calls(t.Context(), id); len(calls) != 4 {
		t.Errorf("%d calls recorded, want 4 (three attempts of scaffold, one of implement)", len(calls))
	}
}

func TestCallEvent(t *testing.T) {
	t.Parallel()
	ok := roles.CallEvent(llm.Call{Role: "drafter", Model: "mock:scripted", Purpose: "draft", InputTokens: 5, OutputTokens: 7, CostUSD: 0.5})
	if ok.Kind != event.ModelCall || ok.Tone != event.Plain || ok.Text != "drafter mock:scripted (draft): 5 tokens in, 7 out, $0.5000" {
		t.Errorf("event = %+v", ok)
	}
	failed := roles.CallEvent(llm.Call{Role: "coder", Model: "openai:gpt-4.1", Err: "rate limited"})
	var d event.ModelCallData
	if failed.Tone != event.Bad || !strings.HasSuffix(failed.Text, ": rate limited") || failed.Decode(&d) != nil || d.Error != "rate limited" {
		t.Errorf("event of a failed call = %+v (%+v)", failed, d)
	}
}
