package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/llm/llmtest"
)

// environ is a fake process environment.
type environ map[string]string

func (e environ) get(k string) string { return e[k] }

func ask() llm.Request {
	return llm.Request{
		System:    "You are terse.",
		Messages:  []llm.Message{{Role: llm.SpeakerUser, Text: "Say hi."}},
		MaxTokens: 64,
		Purpose:   "ping",
	}
}

// Pointing a provider's base URL variable at a local server that speaks its protocol is all
// it takes: only environment variables are set.
func TestOpenFromEnvironmentOnly(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		spec     string
		path     string
		body     string
		env      func(url string) environ
		keyCheck func(r llmtest.Request) bool
		wantStop llm.StopReason
	}{
		{
			name: "anthropic", spec: "anthropic:claude-sonnet-4-5", path: "/v1/messages",
			body: "../anthropic/testdata/message.json",
			env: func(url string) environ {
				return environ{"ANTHROPIC_API_KEY": "sk-ant-env-key-123456", "ANTHROPIC_BASE_URL": url}
			},
			keyCheck: func(r llmtest.Request) bool { return r.Header.Get("x-api-key") == "sk-ant-env-key-123456" },
			wantStop: llm.StopEnd,
		},
		{
			name: "gemini with GOOGLE_API_KEY", spec: "gemini:gemini-2.5-pro", path: "/v1beta/models/gemini-2.5-pro:generateContent",
			body: "../gemini/testdata/truncated.json",
			env: func(url string) environ {
				return environ{"GOOGLE_API_KEY": "AIza-env-key-123456", "GOOGLE_GEMINI_BASE_URL": url}
			},
			keyCheck: func(r llmtest.Request) bool { return r.Header.Get("x-goog-api-key") == "AIza-env-key-123456" },
			wantStop: llm.StopMaxTokens,
		},
		{
			name: "gemini prefers GEMINI_API_KEY", spec: "gemini:gemini-2.5-pro", path: "/v1beta/models/gemini-2.5-pro:generateContent",
			body: "../gemini/testdata/content.json",
			env: func(url string) environ {
				return environ{"GEMINI_API_KEY": "gemini-key-123456", "GOOGLE_API_KEY": "google-key-123456", "GOOGLE_GEMINI_BASE_URL": url}
			},
			keyCheck: func(r llmtest.Request) bool { return r.Header.Get("x-goog-api-key") == "gemini-key-123456" },
			wantStop: llm.StopEnd,
		},
		{
			name: "openai-compatible server without a key", spec: "openai:qwen2.5-coder:7b", path: "/v1/chat/completions",
			body: "../openai/testdata/ollama_completion.json",
			env:  func(url string) environ { return environ{"OPENAI_BASE_URL": url + "/v1"} },
			keyCheck: func(r llmtest.Request) bool {
				return r.Header.Get("Authorization") == ""
			},
			wantStop: llm.StopEnd,
		},
		{
			name: "openai-compatible server with a key", spec: "openai:gpt-4.1", path: "/v1/chat/completions",
			body: "../openai/testdata/truncated.json",
			env: func(url string) environ {
				return environ{"OPENAI_API_KEY": "sk-env-key-123456", "OPENAI_BASE_URL": url + "/v1"}
			},
			keyCheck: func(r llmtest.Request) bool { return r.Header.Get("Authorization") == "Bearer sk-env-key-123456" },
			wantStop: llm.StopMaxTokens,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t, llmtest.Exchange{Method: http.MethodPost, Path: tt.path, BodyFile: tt.body})
			m, err := Open(tt.spec, Env{Getenv: tt.env(srv.URL).get, Role: llm.RoleDrafter})
			if err != nil {
				t.Fatal(err)
			}
			if m.Name() != tt.spec {
				t.Errorf("Name = %q, want %q", m.Name(), tt.spec)
			}
			got, err := m.Generate(t.Context(), ask())
			if err != nil {
				t.Fatal(err)
			}
			if got.Stop != tt.wantStop || got.OutputTokens == 0 {
				t.Errorf("reply = %+v", got)
			}
			if r := srv.Requests(); len(r) != 1 || !tt.keyCheck(r[0]) {
				t.Errorf("the key was not sent as the provider expects: %v", r[0].Header)
			}
		})
	}
}

func TestConfigKeysAndPrecedence(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t,
		llmtest.Exchange{Method: http.MethodPost, Path: "/v1/messages", BodyFile: "../anthropic/testdata/message.json"},
		llmtest.Exchange{Method: http.MethodPost, Path: "/v1/messages", BodyFile: "../anthropic/testdata/message.json"},
	)
	cfg := map[string]llm.ProviderConfig{llm.ProviderAnthropic: {APIKey: "config-key-123456", BaseURL: srv.URL}}
	// Config alone is enough.
	m, err := Open("anthropic:claude-haiku-4-5", Env{Getenv: environ{}.get, Providers: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Generate(t.Context(), ask()); err != nil {
		t.Fatal(err)
	}
	// The environment wins over the config.
	m, err = Open("anthropic:claude-haiku-4-5", Env{Getenv: environ{"ANTHROPIC_API_KEY": "env-key-123456"}.get, Providers: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Generate(t.Context(), ask()); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()
	if r[0].Header.Get("x-api-key") != "config-key-123456" || r[1].Header.Get("x-api-key") != "env-key-123456" {
		t.Errorf("keys sent: %q, %q", r[0].Header.Get("x-api-key"), r[1].Header.Get("x-api-key"))
	}
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		spec string
		env  Env
		want []string
		is   error
	}{
		{"missing anthropic key", "anthropic:claude-sonnet-4-5", Env{Getenv: environ{}.get}, []string{"ANTHROPIC_API_KEY"}, llm.ErrMissingKey},
		{"missing gemini key", "gemini:gemini-2.5-flash", Env{Getenv: environ{}.get}, []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}, llm.ErrMissingKey},
		{"missing openai key for api.openai.com", "openai:gpt-4.1", Env{Getenv: environ{}.get}, []string{"OPENAI_API_KEY"}, llm.ErrMissingKey},
		{"missing openai key with the official base URL", "openai:gpt-4.1", Env{Getenv: environ{"OPENAI_BASE_URL": "https://api.openai.com/v1"}.get}, []string{"OPENAI_API_KEY"}, llm.ErrMissingKey},
		{"no colon", "claude-sonnet-4-5", Env{}, []string{"anthropic:claude-sonnet-4-5"}, llm.ErrInvalidSpec},
		{"unknown provider", "mistral:large", Env{}, []string{`unknown provider "mistral"`, "anthropic, gemini, openai, mock"}, llm.ErrInvalidSpec},
		{"bad base URL", "openai:gpt-4.1", Env{Getenv: environ{"OPENAI_API_KEY": "k-123456789", "OPENAI_BASE_URL": "localhost:11434"}.get}, []string{"OPENAI_BASE_URL", "not an http(s) URL"}, nil},
		{"coder mock without a script", "mock:scripted", Env{Role: llm.RoleCoder}, []string{"script"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Open(tt.spec, tt.env)
			if err == nil {
				t.Fatal("Open succeeded")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("err = %v, want %v", err, tt.is)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestMockLLMReplacesEveryRole(t *testing.T) {
	t.Parallel()
	env := Env{Getenv: environ{"AZERO_MOCK_LLM": "1"}.get, Role: llm.RoleReviewer}
	env.MockLLM = MockRequested(env.Getenv)
	// No key anywhere, and a real provider configured: the scripted model answers.
	m, err := Open("anthropic:claude-opus-4-1", env)
	if err != nil {
		t.Fatal(err)
	}
	if m.Name() != "mock:scripted" {
		t.Errorf("Name = %q", m.Name())
	}
	got, err := m.Generate(t.Context(), ask())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got.Text, "APPROVED") {
		t.Errorf("reviewer reply = %q", got.Text)
	}
	for v, want := range map[string]bool{"1": true, "true": true, "YES": true, "0": false, "": false, "no": false} {
		if got := MockRequested(environ{"AZERO_MOCK_LLM": v}.get); got != want {
			t.Errorf("MockRequested(%q) = %v", v, got)
		}
	}
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	env := Env{
		Getenv:    environ{"ANTHROPIC_API_KEY": "sk-ant-describe-123456"}.get,
		Providers: map[string]llm.ProviderConfig{llm.ProviderOpenAI: {BaseURL: "http://localhost:11434/v1"}},
	}
	st := Describe("anthropic:claude-sonnet-4-5-20250929", env)
	if st.Err != nil || !st.Endpoint.KeyPresent() || st.Endpoint.KeySource != "ANTHROPIC_API_KEY" || !st.Priced || st.Price.Input != 3 {
		t.Errorf("anthropic status = %+v", st)
	}
	if s := fmt.Sprintf("%v %+v %#v", st.Endpoint, st.Endpoint, st.Endpoint); strings.Contains(s, "sk-ant-describe-123456") {
		t.Errorf("formatting the endpoint shows the key: %s", s)
	}
	st = Describe("gemini:gemini-2.5-pro", env)
	if !errors.Is(st.Err, llm.ErrMissingKey) || st.Endpoint.KeyPresent() || !st.Priced {
		t.Errorf("gemini status = %+v", st)
	}
	st = Describe("openai:qwen2.5-coder:7b", env)
	if st.Err != nil || st.Priced || st.Endpoint.BaseURL != "http://localhost:11434/v1" || st.Endpoint.BaseURLSource != llm.SourceConfig {
		t.Errorf("local openai status = %+v", st)
	}
	env.MockLLM = true
	env.Role = llm.RoleCoder
	st = Describe("openai:gpt-4.1", env)
	if !st.Mocked || st.Spec.String() != "mock:scripted" || st.Err == nil {
		t.Errorf("mocked coder without a script = %+v", st)
	}
}

func TestSecrets(t *testing.T) {
	t.Parallel()
	env := Env{
		Getenv:    environ{"ANTHROPIC_API_KEY": "a-key", "GOOGLE_API_KEY": "g-key", "HOME": "/root"}.get,
		Providers: map[string]llm.ProviderConfig{llm.ProviderOpenAI: {APIKey: "o-key"}, llm.ProviderAnthropic: {APIKey: "a-key"}},
	}
	got := Secrets(env)
	sort.Strings(got)
	if strings.Join(got, ",") != "a-key,g-key,o-key" {
		t.Errorf("Secrets = %v", got)
	}
}

// memLineage and memRecorder stand in for the run folder and the store.
type memLineage struct {
	mu    sync.Mutex
	n     int
	files map[string]string
	order []string
}

func (l *memLineage) Next(context.Context) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n++
	return l.n, nil
}

func (l *memLineage) Save(_ context.Context, name string, b []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.files == nil {
		l.files = map[string]string{}
	}
	l.files[name] = string(b)
	l.order = append(l.order, name)
	return nil
}

type memRecorder struct {
	mu    sync.Mutex
	calls []llm.Call
}

func (r *memRecorder) Spent(context.Context) (float64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := 0.0
	for _, c := range r.calls {
		s += c.CostUSD
	}
	return s, nil
}

func (r *memRecorder) Record(_ context.Context, c llm.Call) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
	return nil
}

// A real provider with a fake key from the environment, metered: the key is on the wire and
// nowhere else, not in lineage files, not in recorded calls, not in errors.
func TestMeteredKeyNeverLeaks(t *testing.T) {
	t.Parallel()
	const key = "sk-ant-api03-FAKE-KEY-do-not-leak-0123456789"
	srv := llmtest.NewServer(t,
		llmtest.Exchange{Method: http.MethodPost, Path: "/v1/messages", BodyFile: "../anthropic/testdata/message.json"},
		llmtest.Exchange{Method: http.MethodPost, Path: "/v1/messages", Status: 401, BodyFile: "../anthropic/testdata/error_401.json"},
	)
	env := Env{Getenv: environ{"ANTHROPIC_API_KEY": key, "ANTHROPIC_BASE_URL": srv.URL}.get, Role: llm.RoleDrafter}
	m, err := Open("anthropic:claude-sonnet-4-5", env)
	if err != nil {
		t.Fatal(err)
	}
	lin, rec := &memLineage{}, &memRecorder{}
	metered := llm.Meter(m, llm.RoleDrafter, llm.MeterOptions{Recorder: rec, Lineage: lin, Budget: 5, Secrets: Secrets(env)})

	if _, err := metered.Generate(t.Context(), ask()); err != nil {
		t.Fatal(err)
	}
	_, err = metered.Generate(t.Context(), ask())
	if !errors.Is(err, llm.ErrPermanent) {
		t.Fatalf("second call: err = %v, want the 401", err)
	}

	var texts []string
	texts = append(texts, err.Error())
	for _, name := range lin.order {
		texts = append(texts, name, lin.files[name])
	}
	for _, c := range rec.calls {
		texts = append(texts, fmt.Sprintf("%+v", c))
	}
	if llmtest.Contains(key, texts...) {
		t.Errorf("the API key leaked into: %q", texts)
	}
	if want := []string{"001-prompt-ping.md", "002-response-ping.md", "003-prompt-ping.md", "004-response-ping.md"}; strings.Join(lin.order, " ") != strings.Join(want, " ") {
		t.Errorf("lineage files = %v, want %v", lin.order, want)
	}
	if len(rec.calls) != 2 || rec.calls[0].CostUSD == 0 || rec.calls[1].Err == "" || !strings.Contains(rec.calls[1].Err, "invalid x-api-key") {
		t.Errorf("recorded calls = %+v", rec.calls)
	}
	if got := srv.Requests(); got[0].Header.Get("x-api-key") != key {
		t.Error("the key did not reach the server")
	}
}
