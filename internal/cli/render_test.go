package cli

import (
	"testing"

	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/workflow/roles"
)

// TestRenderEvent: what the terminal prints for each event a run stores,
// live and in runs show --events.
func TestRenderEvent(t *testing.T) {
	t.Parallel()
	q := human.Question{Gate: "diff_review", Kind: human.Word, Title: "Diff review", Report: "calc.py | 2 +-\n", Prompt: "Commit?",
		Options: []human.Option{{Key: "approve"}, {Key: "reject"}}}
	tests := []struct {
		name string
		ev   event.Event
		want string
	}{
		{"node started", event.Event{Kind: event.NodeStarted, Node: "red"}, "▸ red\n"},
		{"a line", event.New(event.Info, event.Plain, "scaffold test_calc.py"), "  scaffold test_calc.py\n"},
		{"a test result", event.New(event.TestResult, event.Bad, "red: 1 failed"), "  ● red: 1 failed\n"},
		{"a model call", roles.CallEvent(llm.Call{Role: "coder", Model: "mock:scripted", Purpose: "scaffold", InputTokens: 12, OutputTokens: 3}),
			"  coder mock:scripted (scaffold): 12 tokens in, 3 out, $0.0000\n"},
		{"a failed model call", roles.CallEvent(llm.Call{Role: "coder", Model: "openai:gpt-4.1", Err: "rate limited"}),
			"  ● coder openai:gpt-4.1: 0 tokens in, 0 out, $0.0000: rate limited\n"},
		{"a question shows its report", event.Event{Kind: event.Question, Node: "diff_review"}.WithData(q), "\nDiff review\ncalc.py | 2 +-\n"},
		{"the terminal's own answer is not repeated", event.Event{Kind: event.Answer, Node: "diff_review", Text: "APPROVED"}.
			WithData(human.Answer{Key: "approve", Channel: human.ChannelTerminal}), ""},
		{"an answer from the web page", event.Event{Kind: event.Answer, Node: "diff_review", Text: "APPROVED"}.
			WithData(human.Answer{Key: "approve", Channel: human.ChannelWeb, By: "127.0.0.1"}), "diff_review answered APPROVED on the web channel 127.0.0.1\n"},
	}
	for _, tt := range tests {
		if got := renderEvent(tt.ev, iostreams.ColorScheme{}); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
