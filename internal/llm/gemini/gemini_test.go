package gemini

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

const (
	testKey = "AIzaSyTEST-0123456789abcdefghijklmnopq"
	path    = "/v1beta/models/gemini-2.5-pro:generateContent"
)

func request() llm.Request {
	temp := 0.5
	return llm.Request{
		System: "You review issue drafts against the 0701c checklist.",
		Messages: []llm.Message{
			{Role: llm.SpeakerUser, Text: "Review this draft."},
			{Role: llm.SpeakerAssistant, Text: "Send the draft."},
			{Role: llm.SpeakerUser, Text: "# Add --budget"},
		},
		MaxTokens:   2048,
		Temperature: &temp,
		Purpose:     "review",
	}
}

func ok(file string) llmtest.Exchange {
	return llmtest.Exchange{Method: http.MethodPost, Path: path, BodyFile: "testdata/" + file}
}

func fail(status int, file string, header map[string]string) llmtest.Exchange {
	return llmtest.Exchange{Method: http.MethodPost, Path: path, Status: status, BodyFile: "testdata/" + file, Header: header}
}

const blocked = "**Verdict:** BLOCKED\n\n## Tier 1\n- The acceptance criteria do not say what happens when the budget is 0."

func TestGenerate(t *testing.T) {
	t.Parallel()
	normal := llm.Response{Text: blocked, Stop: llm.StopEnd, InputTokens: 3120, OutputTokens: 41 + 602,
		Model: "gemini:gemini-2.5-pro", CostUSD: (3120*1.25 + 643*10.0) / 1e6}
	tests := []struct {
		name      string
		exchanges []llmtest.Exchange
		want      llm.Response
		wantKind  llm.ErrorKind
		wantMsg   string
		wantWaits []time.Duration
	}{
		{name: "normal reply, thinking tokens billed as output", exchanges: []llmtest.Exchange{ok("content.json")}, want: normal},
		{
			name:      "truncated reply",
			exchanges: []llmtest.Exchange{ok("truncated.json")},
			want: llm.Response{Text: "**Verdict:** APPROVED\n\n## Tier 2\n- Consider naming the", Stop: llm.StopMaxTokens,
				InputTokens: 3120, OutputTokens: 32, Model: "gemini:gemini-2.5-pro", CostUSD: (3120*1.25 + 32*10.0) / 1e6},
		},
		{
			name:      "safety stop",
			exchanges: []llmtest.Exchange{ok("safety.json")},
			want:      llm.Response{Stop: llm.StopRefused, InputTokens: 3120, Model: "gemini:gemini-2.5-pro", CostUSD: 3120 * 1.25 / 1e6},
		},
		{
			name:      "prompt blocked",
			exchanges: []llmtest.Exchange{ok("prompt_blocked.json")},
			want:      llm.Response{Stop: llm.StopRefused, InputTokens: 3120, Model: "gemini:gemini-2.5-pro", CostUSD: 3120 * 1.25 / 1e6},
		},
		{
			name: "429 with retry-after header, then success",
			exchanges: []llmtest.Exchange{
				fail(429, "error_429.json", map[string]string{"Retry-After": "5"}),
				ok("content.json"),
			},
			want:      normal,
			wantWaits: []time.Duration{5 * time.Second},
		},
		{
			name: "429 with only RetryInfo in the body, then success",
			exchanges: []llmtest.Exchange{
				fail(429, "error_429.json", nil),
				ok("content.json"),
			},
			want:      normal,
			wantWaits: []time.Duration{37 * time.Second},
		},
		{
			name:      "500 then success",
			exchanges: []llmtest.Exchange{fail(500, "error_500.json", nil), ok("content.json")},
			want:      normal,
			wantWaits: []time.Duration{llm.DefaultBaseDelay},
		},
		{
			name:      "503 overloaded then success",
			exchanges: []llmtest.Exchange{fail(503, "error_503.json", nil), ok("content.json")},
			want:      normal,
			wantWaits: []time.Duration{llm.DefaultBaseDelay},
		},
		{
			name:      "401 fails at once",
			exchanges: []llmtest.Exchange{fail(401, "error_401.json", nil)},
			wantKind:  llm.KindAuth,
			wantMsg:   "Request had invalid authentication credentials",
		},
		{
			name:      "invalid key (400 API_KEY_INVALID) fails at once",
			exchanges: []llmtest.Exchange{fail(400, "error_400_key.json", nil)},
			wantKind:  llm.KindAuth,
			wantMsg:   "API key not valid. Please pass a valid API key.",
		},
		{
			name:      "input too long fails at once",
			exchanges: []llmtest.Exchange{fail(400, "error_400_too_long.json", nil)},
			wantKind:  llm.KindContextTooLong,
			wantMsg:   "The input token count (1245678) exceeds the maximum number of tokens allowed (1048576).",
		},
		{
			name:      "unknown model fails at once",
			exchanges: []llmtest.Exchange{fail(404, "error_404.json", nil)},
			wantKind:  llm.KindNotFound,
			wantMsg:   "is not found for API version v1beta",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			llmtest.Exercise(t, llm.ProviderGemini, testKey, tt.exchanges,
				func(srv *llmtest.Server) (llm.Model, error) {
					return New(Options{Model: "gemini-2.5-pro", APIKey: testKey, BaseURL: srv.URL})
				},
				request(), llmtest.Want{Response: tt.want, Kind: tt.wantKind, Msg: tt.wantMsg, Waits: tt.wantWaits}, assertRequest)
		})
	}
}

func assertRequest(t *testing.T, r llmtest.Request) {
	t.Helper()
	if got := r.Header.Get("x-goog-api-key"); got != testKey {
		t.Errorf("x-goog-api-key = %q", got)
	}
	if strings.Contains(r.Query, testKey) {
		t.Errorf("the key is in the URL query: %q", r.Query)
	}
	var body struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"contents"`
		SystemInstruction *struct {
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"systemInstruction"`
		GenerationConfig struct {
			MaxOutputTokens int      `json:"maxOutputTokens"`
			Temperature     *float64 `json:"temperature"`
		} `json:"generationConfig"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("request body: %v\n%s", err, r.Body)
	}
	if body.SystemInstruction == nil || len(body.SystemInstruction.Parts) != 1 ||
		body.SystemInstruction.Parts[0].Text != "You review issue drafts against the 0701c checklist." {
		t.Errorf("systemInstruction = %+v", body.SystemInstruction)
	}
	if body.GenerationConfig.MaxOutputTokens != 2048 {
		t.Errorf("maxOutputTokens = %d, want 2048", body.GenerationConfig.MaxOutputTokens)
	}
	if tp := body.GenerationConfig.Temperature; tp == nil || *tp != 0.5 {
		t.Errorf("temperature = %v, want 0.5", tp)
	}
	want := []struct{ role, text string }{
		{"user", "Review this draft."},
		{"model", "Send the draft."},
		{"user", "# Add --budget"},
	}
	if len(body.Contents) != len(want) {
		t.Fatalf("contents = %+v", body.Contents)
	}
	for i, w := range want {
		c := body.Contents[i]
		if c.Role != w.role || len(c.Parts) != 1 || c.Parts[0].Text != w.text {
			t.Errorf("content %d = %+v, want %s %q", i, c, w.role, w.text)
		}
	}
}

func TestNewNeedsKey(t *testing.T) {
	t.Parallel()
	_, err := New(Options{Model: "gemini-2.5-pro"})
	var mk *llm.MissingKeyError
	if !errors.As(err, &mk) || !strings.Contains(err.Error(), "GEMINI_API_KEY") || !strings.Contains(err.Error(), "GOOGLE_API_KEY") {
		t.Fatalf("error = %v, want a missing-key error naming GEMINI_API_KEY and GOOGLE_API_KEY", err)
	}
}

func TestStopReason(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]llm.StopReason{
		"STOP": llm.StopEnd, "MAX_TOKENS": llm.StopMaxTokens, "SAFETY": llm.StopRefused,
		"RECITATION": llm.StopRefused, "PROHIBITED_CONTENT": llm.StopRefused, "BLOCKLIST": llm.StopRefused,
		"SPII": llm.StopRefused, "MALFORMED_FUNCTION_CALL": llm.StopOther, "OTHER": llm.StopOther, "": llm.StopOther,
	} {
		if got := StopReason(in); got != want {
			t.Errorf("StopReason(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestDetails(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		details    []map[string]any
		wantReason string
		wantDelay  time.Duration
	}{
		{"none", nil, "", 0},
		{"string delay", []map[string]any{{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1.5s"}}, "", 1500 * time.Millisecond},
		{"object delay", []map[string]any{{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": map[string]any{"seconds": "3", "nanos": 5e8}}}, "", 3500 * time.Millisecond},
		{"garbage delay", []map[string]any{{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "soon"}}, "", 0},
		{"reason", []map[string]any{{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID"}}, "API_KEY_INVALID", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reason, delay := details(tt.details)
			if reason != tt.wantReason || delay != tt.wantDelay {
				t.Errorf("details = %q, %v; want %q, %v", reason, delay, tt.wantReason, tt.wantDelay)
			}
		})
	}
}

func TestGenerateReplies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		ex       llmtest.Exchange
		want     llm.Response
		wantKind llm.ErrorKind
		wantMsg  string
	}{
		{
			name: "thoughts are not text, tool-use prompt tokens are input, the model version names the model",
			ex:   ok("thoughts.json"),
			want: llm.Response{Text: "**Verdict:** APPROVED\n\n## Tier 2\n- Name the owner of the budget check.", Stop: llm.StopEnd,
				InputTokens: 3125, OutputTokens: 31, Model: "gemini:gemini-2.5-pro-preview-05-06"},
		},
		{
			name:     "a proxy's HTML error page becomes the message",
			ex:       llmtest.Exchange{Method: http.MethodPost, Path: path, Status: 404, Body: "<html><body>404 page not found</body></html>", Header: map[string]string{"Content-Type": "text/html"}},
			wantKind: llm.KindNotFound,
			wantMsg:  "404 page not found",
		},
		{
			name:     "an empty error body says the status",
			ex:       llmtest.Exchange{Method: http.MethodPost, Path: path, Status: 403},
			wantKind: llm.KindAuth,
			wantMsg:  "Forbidden",
		},
		{
			name:     "a reply that is not JSON is refused",
			ex:       llmtest.Exchange{Method: http.MethodPost, Path: path, Body: "<html>captive portal</html>"},
			wantKind: llm.KindOther,
			wantMsg:  "not a generateContent response",
		},
		{
			name:     "a reply with neither candidates nor a block reason is refused",
			ex:       llmtest.Exchange{Method: http.MethodPost, Path: path, Body: `{"modelVersion":"gemini-2.5-pro"}`},
			wantKind: llm.KindOther,
			wantMsg:  "no candidates",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			prices := llm.PriceTable{} // unpriced: the cost is 0 whatever the model version
			llmtest.Exercise(t, llm.ProviderGemini, testKey, []llmtest.Exchange{tt.ex},
				func(srv *llmtest.Server) (llm.Model, error) {
					return New(Options{Model: "gemini-2.5-pro", APIKey: testKey, BaseURL: srv.URL, Prices: prices})
				},
				request(), llmtest.Want{Response: tt.want, Kind: tt.wantKind, Msg: tt.wantMsg}, assertRequest)
		})
	}
}

// A base URL with a path (a gateway) keeps its path; the API version and model follow it.
func TestBaseURLWithPath(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Exchange{Method: http.MethodPost, Path: "/gateway/google" + path, BodyFile: "testdata/content.json"})
	m, err := New(Options{Model: "gemini-2.5-pro", APIKey: testKey, BaseURL: srv.URL + "/gateway/google/"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Generate(t.Context(), request())
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if got.Stop != llm.StopEnd || got.Text != blocked {
		t.Errorf("response = %+v", got)
	}
	assertRequest(t, srv.Requests()[0])
}

func TestEndpoint(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, base, model, want, wantErr string
	}{
		{name: "default", model: "gemini-2.5-pro", want: "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:generateContent"},
		{name: "full resource name", model: "models/gemini-2.5-flash", want: "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"},
		{name: "tuned model", model: "tunedModels/reviewer-7", want: "https://generativelanguage.googleapis.com/v1beta/tunedModels/reviewer-7:generateContent"},
		{name: "base without slash", base: "http://127.0.0.1:8080", model: "gemini-2.5-pro", want: "http://127.0.0.1:8080/v1beta/models/gemini-2.5-pro:generateContent"},
		{name: "base with a path", base: "https://gw.example/google/", model: "gemini-2.5-pro", want: "https://gw.example/google/v1beta/models/gemini-2.5-pro:generateContent"},
		{name: "not http", base: "ftp://gw.example/", model: "gemini-2.5-pro", wantErr: "not an http(s) URL"},
		{name: "no host", base: "generativelanguage.googleapis.com", model: "gemini-2.5-pro", wantErr: "not an http(s) URL"},
		{name: "query in the base", base: "https://gw.example/?key=AIzaSECRET", model: "gemini-2.5-pro", wantErr: "query or fragment"},
		{name: "query in the model", model: "gemini-2.5-pro?alt=sse", wantErr: "invalid model name"},
		{name: "escape from the models collection", model: "models/../files/x", wantErr: "invalid model name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Endpoint(tt.base, tt.model)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Endpoint(%q, %q) = %q, %v; want an error containing %q", tt.base, tt.model, got, err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "AIzaSECRET") {
					t.Errorf("error %q shows the base URL's query", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Endpoint(%q, %q) = %q, %v; want %q", tt.base, tt.model, got, err, tt.want)
			}
		})
	}
}

// A reply above the size limit is refused rather than read into memory whole.
func TestReplyTooLarge(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, ok("content.json"))
	m, err := New(Options{Model: "gemini-2.5-pro", APIKey: testKey, BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	m.(*Model).maxReply = 100
	_, err = m.Generate(t.Context(), request())
	var pe *llm.ProviderError
	if !errors.As(err, &pe) || pe.Kind != llm.KindOther || !strings.Contains(err.Error(), "larger than 100 bytes") {
		t.Fatalf("error = %v, want a permanent error about the reply's size", err)
	}
}

// Failures before a reply arrives: a refused connection is transient, and so is a reply
// that does not come within the request timeout; neither shows the key.
func TestTransportFailures(t *testing.T) {
	t.Parallel()
	t.Run("connection refused", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.NewServer(t)
		base := srv.URL
		srv.Close()
		m, err := New(Options{Model: "gemini-2.5-pro", APIKey: testKey, BaseURL: base})
		if err != nil {
			t.Fatal(err)
		}
		_, err = m.Generate(t.Context(), request())
		var pe *llm.ProviderError
		if !errors.As(err, &pe) || pe.Kind != llm.KindNetwork || !pe.Transient() {
			t.Fatalf("error = %v, want a transient network error", err)
		}
		if strings.Contains(err.Error(), testKey) {
			t.Errorf("error %q contains the key", err)
		}
	})
	t.Run("no reply within the request timeout", func(t *testing.T) {
		t.Parallel()
		hang := llmtest.Exchange{Method: http.MethodPost, Path: path, Hang: true}
		srv := llmtest.NewServer(t, hang, hang)
		m, err := New(Options{Model: "gemini-2.5-pro", APIKey: testKey, BaseURL: srv.URL, Timeout: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		sleeper := &llmtest.Sleeper{}
		_, err = llm.WithRetry(m, llmtest.Policy(sleeper, 2)).Generate(t.Context(), request())
		var pe *llm.ProviderError
		if !errors.As(err, &pe) || pe.Kind != llm.KindTimeout {
			t.Fatalf("error = %v, want a timeout after the retries", err)
		}
		if len(sleeper.Waits()) != 1 {
			t.Errorf("waits = %v, want one retry", sleeper.Waits())
		}
	})
}
