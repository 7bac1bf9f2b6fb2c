package anthropic

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/llm/llmtest"
)

const testKey = "sk-ant-test-0123456789abcdef"

func request() llm.Request {
	temp := 0.2
	return llm.Request{
		System: "You draft GitHub issues.",
		Messages: []llm.Message{
			{Role: llm.SpeakerUser, Text: "Brief: add a --budget flag."},
			{Role: llm.SpeakerAssistant, Text: "Which commands?"},
			{Role: llm.SpeakerUser, Text: "All workflows."},
		},
		MaxTokens:   1024,
		Temperature: &temp,
		Purpose:     "draft",
	}
}

func ok(file string) llmtest.Exchange {
	return llmtest.Exchange{Method: http.MethodPost, Path: "/v1/messages", BodyFile: "testdata/" + file}
}

func fail(status int, file string, header map[string]string) llmtest.Exchange {
	return llmtest.Exchange{Method: http.MethodPost, Path: "/v1/messages", Status: status, BodyFile: "testdata/" + file, Header: header}
}

func TestGenerate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		exchanges []llmtest.Exchange
		want      llm.Response
		wantKind  llm.ErrorKind // an error of this kind is expected
		wantMsg   string        // the provider's message, in the error
		wantWaits []time.Duration
	}{
		{
			name:      "normal reply",
			exchanges: []llmtest.Exchange{ok("message.json")},
			want: llm.Response{
				Text: "# Add a --budget flag\n\n**Labels:** enhancement\n\n## Summary\nStop a workflow cleanly when the next model call would exceed the budget.",
				Stop: llm.StopEnd, InputTokens: 2095, OutputTokens: 503,
				Model: "anthropic:claude-sonnet-4-5-20250929", CostUSD: (2095*3.0 + 503*15.0) / 1e6,
			},
		},
		{
			name:      "truncated reply",
			exchanges: []llmtest.Exchange{ok("truncated.json")},
			want: llm.Response{
				Text: "package budget\n\nimport (\n\t\"errors\"\n\t\"fmt\"\n)\n\n// Check returns an error when",
				Stop: llm.StopMaxTokens, InputTokens: 1812, OutputTokens: 64,
				Model: "anthropic:claude-sonnet-4-5-20250929", CostUSD: (1812*3.0 + 64*15.0) / 1e6,
			},
		},
		{
			name:      "refusal",
			exchanges: []llmtest.Exchange{ok("refusal.json")},
			want: llm.Response{
				Stop: llm.StopRefused, InputTokens: 31, Model: "anthropic:claude-sonnet-4-5-20250929", CostUSD: 31 * 3.0 / 1e6,
			},
		},
		{
			name: "429 with retry-after, then success",
			exchanges: []llmtest.Exchange{
				fail(429, "error_429.json", map[string]string{"retry-after": "7", "anthropic-ratelimit-input-tokens-remaining": "0"}),
				ok("message.json"),
			},
			want: llm.Response{
				Text: "# Add a --budget flag\n\n**Labels:** enhancement\n\n## Summary\nStop a workflow cleanly when the next model call would exceed the budget.",
				Stop: llm.StopEnd, InputTokens: 2095, OutputTokens: 503,
				Model: "anthropic:claude-sonnet-4-5-20250929", CostUSD: (2095*3.0 + 503*15.0) / 1e6,
			},
			wantWaits: []time.Duration{7 * time.Second},
		},
		{
			name: "529 overloaded, then success",
			exchanges: []llmtest.Exchange{
				fail(529, "error_529.json", nil),
				ok("truncated.json"),
			},
			want: llm.Response{
				Text: "package budget\n\nimport (\n\t\"errors\"\n\t\"fmt\"\n)\n\n// Check returns an error when",
				Stop: llm.StopMaxTokens, InputTokens: 1812, OutputTokens: 64,
				Model: "anthropic:claude-sonnet-4-5-20250929", CostUSD: (1812*3.0 + 64*15.0) / 1e6,
			},
			// No retry-after: the first backoff ceiling (jitter pinned to the ceiling).
			wantWaits: []time.Duration{llm.DefaultBaseDelay},
		},
		{
			name: "500 twice, then success",
			exchanges: []llmtest.Exchange{
				fail(500, "error_500.json", nil),
				fail(500, "error_500.json", map[string]string{"retry-after-ms": "1500"}),
				ok("refusal.json"),
			},
			want: llm.Response{
				Stop: llm.StopRefused, InputTokens: 31, Model: "anthropic:claude-sonnet-4-5-20250929", CostUSD: 31 * 3.0 / 1e6,
			},
			wantWaits: []time.Duration{llm.DefaultBaseDelay, 1500 * time.Millisecond},
		},
		{
			name:      "401 fails at once",
			exchanges: []llmtest.Exchange{fail(401, "error_401.json", nil)},
			wantKind:  llm.KindAuth,
			wantMsg:   "invalid x-api-key",
		},
		{
			name:      "prompt too long fails at once",
			exchanges: []llmtest.Exchange{fail(400, "error_400_too_long.json", nil)},
			wantKind:  llm.KindContextTooLong,
			wantMsg:   "prompt is too long: 215034 tokens > 200000 maximum",
		},
		{
			name:      "unknown model fails at once",
			exchanges: []llmtest.Exchange{fail(404, "error_404.json", nil)},
			wantKind:  llm.KindNotFound,
			wantMsg:   "model: claude-sonnet-9",
		},
		{
			name: "overloaded on every attempt gives up",
			exchanges: []llmtest.Exchange{
				fail(529, "error_529.json", nil),
				fail(529, "error_529.json", nil),
				fail(529, "error_529.json", nil),
			},
			wantKind:  llm.KindOverloaded,
			wantMsg:   "Overloaded",
			wantWaits: []time.Duration{llm.DefaultBaseDelay, 2 * llm.DefaultBaseDelay},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			llmtest.Exercise(t, llm.ProviderAnthropic, testKey, tt.exchanges,
				func(srv *llmtest.Server) (llm.Model, error) {
					return New(Options{Model: "claude-sonnet-4-5", APIKey: testKey, BaseURL: srv.URL})
				},
				request(), llmtest.Want{Response: tt.want, Kind: tt.wantKind, Msg: tt.wantMsg, Waits: tt.wantWaits}, assertRequest)
		})
	}
}

// assertRequest checks what was put on the wire.
func assertRequest(t *testing.T, r llmtest.Request) {
	t.Helper()
	if got := r.Header.Get("x-api-key"); got != testKey {
		t.Errorf("x-api-key = %q, want the test key", got)
	}
	if r.Header.Get("anthropic-version") == "" {
		t.Error("no anthropic-version header")
	}
	if r.Header.Get("Authorization") != "" {
		t.Error("an Authorization header was sent besides x-api-key")
	}
	var body struct {
		Model       string   `json:"model"`
		MaxTokens   int      `json:"max_tokens"`
		Temperature *float64 `json:"temperature"`
		System      []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"system"`
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, r.Body)
	}
	if body.Model != "claude-sonnet-4-5" || body.MaxTokens != 1024 {
		t.Errorf("model, max_tokens = %q, %d", body.Model, body.MaxTokens)
	}
	if body.Temperature == nil || *body.Temperature != 0.2 {
		t.Errorf("temperature = %v, want 0.2", body.Temperature)
	}
	if len(body.System) != 1 || body.System[0].Text != "You draft GitHub issues." {
		t.Errorf("system = %+v, want the system text as the top-level system block", body.System)
	}
	want := []struct{ role, text string }{
		{"user", "Brief: add a --budget flag."},
		{"assistant", "Which commands?"},
		{"user", "All workflows."},
	}
	if len(body.Messages) != len(want) {
		t.Fatalf("messages = %+v", body.Messages)
	}
	for i, w := range want {
		m := body.Messages[i]
		if m.Role != w.role || len(m.Content) != 1 || m.Content[0].Type != "text" || m.Content[0].Text != w.text {
			t.Errorf("message %d = %+v, want %s %q", i, m, w.role, w.text)
		}
	}
	if strings.Contains(string(r.Body), "You draft GitHub issues.") && strings.Contains(string(r.Body), `"role":"system"`) {
		t.Error("system text sent as a message")
	}
}

func TestNewNeedsKey(t *testing.T) {
	t.Parallel()
	_, err := New(Options{Model: "claude-sonnet-4-5"})
	var mk *llm.MissingKeyError
	if !errors.As(err, &mk) || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Fatalf("error = %v, want a missing-key error naming ANTHROPIC_API_KEY", err)
	}
}

func TestConnectionRefusedIsTransient(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	url := srv.URL
	srv.Close() // nothing listens there any more
	m, err := New(Options{Model: "claude-haiku-4-5", APIKey: testKey, BaseURL: url})
	if err != nil {
		t.Fatal(err)
	}
	sleeper := &llmtest.Sleeper{}
	_, err = llm.WithRetry(m, llmtest.Policy(sleeper, 2)).Generate(t.Context(), request())
	var pe *llm.ProviderError
	if !errors.As(err, &pe) || pe.Kind != llm.KindNetwork {
		t.Fatalf("error = %v, want a network error", err)
	}
	if !errors.Is(err, llm.ErrTransient) || len(sleeper.Waits()) != 1 {
		t.Errorf("want one retry of a transient error; waits %v, err %v", sleeper.Waits(), err)
	}
	if !strings.Contains(err.Error(), "ANTHROPIC_BASE_URL") {
		t.Errorf("error %q does not say which setting to check", err)
	}
}

func TestAttemptTimeoutIsRetried(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		llmtest.Exchange{Method: http.MethodPost, Path: "/v1/messages", Hang: true},
		ok("message.json"),
	)
	m, err := New(Options{Model: "claude-sonnet-4-5", APIKey: testKey, BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	sleeper := &llmtest.Sleeper{}
	p := llmtest.Policy(sleeper, 2)
	p.Timeout = 200 * time.Millisecond
	got, err := llm.WithRetry(m, p).Generate(t.Context(), request())
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if got.Stop != llm.StopEnd || len(sleeper.Waits()) != 1 {
		t.Errorf("stop %s after waits %v; want the second attempt to answer", got.Stop, sleeper.Waits())
	}
}

func TestStopReason(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]llm.StopReason{
		"end_turn": llm.StopEnd, "stop_sequence": llm.StopEnd, "max_tokens": llm.StopMaxTokens,
		"model_context_window_exceeded": llm.StopMaxTokens, "refusal": llm.StopRefused,
		"tool_use": llm.StopOther, "pause_turn": llm.StopOther, "": llm.StopOther,
	} {
		if got := StopReason(in); got != want {
			t.Errorf("StopReason(%q) = %s, want %s", in, got, want)
		}
	}
}
