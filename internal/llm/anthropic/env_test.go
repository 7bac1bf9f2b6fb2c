package anthropic

import (
	"net/http"
	"testing"

	"github.com/azero-dev/azero/internal/llm/llmtest"
)

// The provider must not read the process environment: the key and base URL come from Options
// only (azero reads the environment through its injected getenv). Not parallel: it sets
// variables.
func TestIgnoresProcessEnvironment(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "process-key-must-not-be-used")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "process-token-must-not-be-used")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	t.Setenv("ANTHROPIC_CUSTOM_HEADERS", "X-Leak: yes")
	t.Setenv("ANTHROPIC_PROFILE", "no-such-profile")
	srv := llmtest.NewServer(t, ok("message.json"))
	m, err := New(Options{Model: "claude-sonnet-4-5", APIKey: testKey, BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Generate(t.Context(), request()); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	r := srv.Requests()[0]
	if r.Header.Get("x-api-key") != testKey || r.Header.Get("Authorization") != "" || r.Header.Get("X-Leak") != "" {
		t.Errorf("process environment leaked into the request: %v", r.Header)
	}
}

// A large max_tokens is sent as it is, without a streaming request.
func TestLargeMaxTokens(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, llmtest.Exchange{Method: http.MethodPost, Path: "/v1/messages", BodyFile: "testdata/message.json"})
	m, err := New(Options{Model: "claude-opus-4-1", APIKey: testKey, BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	req := request()
	req.MaxTokens = 64000
	if _, err := m.Generate(t.Context(), req); err != nil {
		t.Fatalf("Generate with max_tokens 64000: %v", err)
	}
}
