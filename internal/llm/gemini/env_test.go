package gemini

import (
	"testing"

	"github.com/azero-dev/azero/internal/llm/llmtest"
)

// The variables Google's own clients read must not change what is called: not the backend
// (GOOGLE_GENAI_USE_VERTEXAI), not the key, not the base URL. Not parallel: it sets variables.
func TestIgnoresProcessEnvironment(t *testing.T) {
	t.Setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
	t.Setenv("GOOGLE_CLOUD_PROJECT", "leak-project")
	t.Setenv("GOOGLE_CLOUD_LOCATION", "us-central1")
	t.Setenv("GOOGLE_API_KEY", "process-key-must-not-be-used")
	t.Setenv("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:1")
	srv := llmtest.NewServer(t, ok("content.json"))
	m, err := New(Options{Model: "gemini-2.5-pro", APIKey: testKey, BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Generate(t.Context(), request()); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if got := srv.Requests()[0].Header.Get("x-goog-api-key"); got != testKey {
		t.Errorf("x-goog-api-key = %q", got)
	}
}
