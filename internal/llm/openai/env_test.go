package openai

import (
	"testing"

	"github.com/azero-dev/azero/internal/llm/llmtest"
)

// The provider must not read OPENAI_* from the process: no organisation, project or custom headers
// sneak in, and the base URL and key are ours. Not parallel: it sets variables.
func TestIgnoresProcessEnvironment(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "process-key-must-not-be-used")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	t.Setenv("OPENAI_ORG_ID", "org-leak")
	t.Setenv("OPENAI_PROJECT_ID", "proj-leak")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Leak: yes")
	srv := llmtest.NewServer(t, ok("ollama_completion.json"))
	m, err := New(Options{Model: "qwen2.5-coder:7b", BaseURL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Generate(t.Context(), request()); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	r := srv.Requests()[0]
	for _, h := range []string{"Authorization", "OpenAI-Organization", "OpenAI-Project", "X-Leak"} {
		if v := r.Header.Get(h); v != "" {
			t.Errorf("header %s = %q came from the process environment", h, v)
		}
	}
}
