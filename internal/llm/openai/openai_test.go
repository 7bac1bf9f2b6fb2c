package openai

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/llm/llmtest"
)

const testKey = "sk-test-0123456789abcdefghijklmnopqrstuvwxyzcdef"

func request() llm.Request {
	temp := 0.0
	return llm.Request{
		System: "You review drafts. Answer with a verdict.",
		Messages: []llm.Message{
			{Role: llm.SpeakerUser, Text: "Draft: add --budget."},
			{Role: llm.SpeakerAssistant, Text: "Which file?"},
			{Role: llm.SpeakerUser, Text: "draft.md"},
		},
		MaxTokens:   512,
		Temperature: &temp,
		Purpose:     "review",
	}
}

func ok(file string) llmtest.Exchange {
	return llmtest.Exchange{Method: http.MethodPost, Path: "/v1/chat/completions", BodyFile: "testdata/" + file}
}

func fail(status int, file string, header map[string]string) llmtest.Exchange {
	return llmtest.Exchange{Method: http.MethodPost, Path: "/v1/chat/completions", Status: status, BodyFile: "testdata/" + file, Header: header}
}

// officialClient sends requests for api.openai.com to srv, so the code path for OpenAI's own
// API (max_completion_tokens, required key) runs without the internet.
func officialClient(srv *llmtest.Server) *http.Client {
	var d net.Dialer
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, srv.Listener.Addr().String())
		},
	}}
}

const approved = "**Verdict:** APPROVED\n\nThe acceptance criteria are testable."

func TestGenerateOpenAI(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		exchanges []llmtest.Exchange
		want      llm.Response
		wantKind  llm.ErrorKind
		wantMsg   string
		wantWaits []time.Duration
	}{
		{
			name:      "normal reply",
			exchanges: []llmtest.Exchange{ok("completion.json")},
			want: llm.Response{Text: approved, Stop: llm.StopEnd, InputTokens: 1204, OutputTokens: 17,
				Model: "openai:gpt-4.1-2025-04-14", CostUSD: (1204*2.0 + 17*8.0) / 1e6},
		},
		{
			name:      "truncated reply",
			exchanges: []llmtest.Exchange{ok("truncated.json")},
			want: llm.Response{Text: "def check_budget(spent, budget):\n    if spent >", Stop: llm.StopMaxTokens,
				InputTokens: 980, OutputTokens: 16, Model: "openai:gpt-4.1-2025-04-14", CostUSD: (980*2.0 + 16*8.0) / 1e6},
		},
		{
			name:      "refusal field",
			exchanges: []llmtest.Exchange{ok("refusal.json")},
			want: llm.Response{Text: "I'm sorry, I can't help with that.", Stop: llm.StopRefused, InputTokens: 25, OutputTokens: 10,
				Model: "openai:gpt-4.1-2025-04-14", CostUSD: (25*2.0 + 10*8.0) / 1e6},
		},
		{
			name:      "content filter",
			exchanges: []llmtest.Exchange{ok("content_filter.json")},
			want: llm.Response{Stop: llm.StopRefused, InputTokens: 40,
				Model: "openai:gpt-4.1-2025-04-14", CostUSD: 40 * 2.0 / 1e6},
		},
		{
			name: "429 with retry-after, then success",
			exchanges: []llmtest.Exchange{
				fail(429, "error_429.json", map[string]string{"retry-after": "2", "x-ratelimit-reset-tokens": "1.442s"}),
				ok("completion.json"),
			},
			want: llm.Response{Text: approved, Stop: llm.StopEnd, InputTokens: 1204, OutputTokens: 17,
				Model: "openai:gpt-4.1-2025-04-14", CostUSD: (1204*2.0 + 17*8.0) / 1e6},
			wantWaits: []time.Duration{2 * time.Second},
		},
		{
			name: "429 with an HTTP-date retry-after far away is capped",
			exchanges: []llmtest.Exchange{
				fail(429, "error_429.json", map[string]string{"retry-after": time.Now().Add(2 * time.Hour).UTC().Format(http.TimeFormat)}),
				ok("completion.json"),
			},
			want: llm.Response{Text: approved, Stop: llm.StopEnd, InputTokens: 1204, OutputTokens: 17,
				Model: "openai:gpt-4.1-2025-04-14", CostUSD: (1204*2.0 + 17*8.0) / 1e6},
			wantWaits: []time.Duration{llm.DefaultMaxRetryAfter},
		},
		{
			name:      "500 then success",
			exchanges: []llmtest.Exchange{fail(500, "error_500.json", nil), ok("truncated.json")},
			want: llm.Response{Text: "def check_budget(spent, budget):\n    if spent >", Stop: llm.StopMaxTokens,
				InputTokens: 980, OutputTokens: 16, Model: "openai:gpt-4.1-2025-04-14", CostUSD: (980*2.0 + 16*8.0) / 1e6},
			wantWaits: []time.Duration{llm.DefaultBaseDelay},
		},
		{
			name:      "401 fails at once",
			exchanges: []llmtest.Exchange{fail(401, "error_401.json", nil)},
			wantKind:  llm.KindAuth,
			wantMsg:   "Incorrect API key provided",
		},
		{
			name:      "insufficient quota is not retried",
			exchanges: []llmtest.Exchange{fail(429, "error_429_quota.json", map[string]string{"retry-after": "1"})},
			wantKind:  llm.KindQuota,
			wantMsg:   "You exceeded your current quota",
		},
		{
			name:      "context too long fails at once",
			exchanges: []llmtest.Exchange{fail(400, "error_400_context.json", nil)},
			wantKind:  llm.KindContextTooLong,
			wantMsg:   "maximum context length is 128000 tokens",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			llmtest.Exercise(t, llm.ProviderOpenAI, testKey, tt.exchanges,
				func(srv *llmtest.Server) (llm.Model, error) {
					return New(Options{Model: "gpt-4.1", APIKey: testKey, BaseURL: "http://api.openai.com/v1", HTTPClient: officialClient(srv)})
				},
				request(), llmtest.Want{Response: tt.want, Kind: tt.wantKind, Msg: tt.wantMsg, Waits: tt.wantWaits}, assertOfficialRequest)
		})
	}
}

type wireBody struct {
	Model               string   `json:"model"`
	MaxTokens           int      `json:"max_tokens"`
	MaxCompletionTokens int      `json:"max_completion_tokens"`
	Temperature         *float64 `json:"temperature"`
	Messages            []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
}

// assertOfficialRequest checks what was sent to api.openai.com.
func assertOfficialRequest(t *testing.T, r llmtest.Request) {
	t.Helper()
	if got := r.Header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization = %q", got)
	}
	body := decode(t, r.Body)
	if body.Model != "gpt-4.1" || body.MaxCompletionTokens != 512 || body.MaxTokens != 0 {
		t.Errorf("model %q, max_completion_tokens %d, max_tokens %d; want gpt-4.1, 512, absent",
			body.Model, body.MaxCompletionTokens, body.MaxTokens)
	}
	assertMessages(t, body)
}

func decode(t *testing.T, raw []byte) wireBody {
	t.Helper()
	var b wireBody
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Fatalf("request body: %v\n%s", err, raw)
	}
	return b
}

func assertMessages(t *testing.T, b wireBody) {
	t.Helper()
	want := []struct{ role, text string }{
		{"system", "You review drafts. Answer with a verdict."},
		{"user", "Draft: add --budget."},
		{"assistant", "Which file?"},
		{"user", "draft.md"},
	}
	if len(b.Messages) != len(want) {
		t.Fatalf("messages = %+v", b.Messages)
	}
	for i, w := range want {
		if b.Messages[i].Role != w.role || b.Messages[i].Content != w.text {
			t.Errorf("message %d = %+v, want %s %q", i, b.Messages[i], w.role, w.text)
		}
	}
	if b.Temperature == nil || *b.Temperature != 0 {
		t.Errorf("temperature = %v, want an explicit 0", b.Temperature)
	}
}

func TestLocalServerWithoutKey(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		llmtest.Exchange{Method: http.MethodPost, Path: "/v1/chat/completions", BodyFile: "testdata/ollama_completion.json"},
		llmtest.Exchange{Method: http.MethodPost, Path: "/v1/chat/completions", Status: 404, BodyFile: "testdata/ollama_error_404.json"},
	)
	m, err := New(Options{Model: "qwen2.5-coder:7b", BaseURL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	if m.Name() != "openai:qwen2.5-coder:7b" {
		t.Errorf("Name = %q", m.Name())
	}
	got, err := m.Generate(t.Context(), request())
	if err != nil {
		t.Fatal(err)
	}
	got.Latency = 0
	want := llm.Response{Text: "func Add(a, b int) int { return a + b }", Stop: llm.StopEnd, InputTokens: 48, OutputTokens: 15, Model: "openai:qwen2.5-coder:7b"}
	if got != want {
		t.Errorf("response = %+v, want %+v (a local model is unpriced: cost 0)", got, want)
	}
	_, err = m.Generate(t.Context(), request())
	var pe *llm.ProviderError
	if !errors.As(err, &pe) || pe.Kind != llm.KindNotFound || !strings.Contains(err.Error(), `model "qwen9" not found, try pulling it first`) {
		t.Errorf("error = %v, want model-not-found with Ollama's message", err)
	}
	for _, r := range srv.Requests() {
		if r.Header.Get("Authorization") != "" {
			t.Errorf("Authorization sent without a key: %q", r.Header.Get("Authorization"))
		}
		b := decode(t, r.Body)
		if b.MaxTokens != 512 || b.MaxCompletionTokens != 0 {
			t.Errorf("a compatible server must get max_tokens: max_tokens %d, max_completion_tokens %d", b.MaxTokens, b.MaxCompletionTokens)
		}
		assertMessages(t, b)
	}
}

func TestOfficialNeedsKey(t *testing.T) {
	t.Parallel()
	for _, base := range []string{"", "https://api.openai.com/v1"} {
		_, err := New(Options{Model: "gpt-4.1", BaseURL: base})
		var mk *llm.MissingKeyError
		if !errors.As(err, &mk) || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
			t.Errorf("base %q: error = %v, want a missing-key error naming OPENAI_API_KEY", base, err)
		}
	}
	if _, err := New(Options{Model: "gpt-4.1", APIKey: "k", BaseURL: "ftp://x"}); err == nil {
		t.Error("a non-http base URL was accepted")
	}
}

func TestStopReason(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]llm.StopReason{
		"stop": llm.StopEnd, "length": llm.StopMaxTokens, "content_filter": llm.StopRefused,
		"tool_calls": llm.StopOther, "function_call": llm.StopOther, "": llm.StopOther,
	} {
		if got := StopReason(in); got != want {
			t.Errorf("StopReason(%q) = %s, want %s", in, got, want)
		}
	}
}
