package gemini

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/llm/llmtest"
)

// FuzzDetails: any google.rpc details list yields a non-negative wait and never panics.
func FuzzDetails(f *testing.F) {
	f.Add(`[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"}]`)
	f.Add(`[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":{"seconds":"3","nanos":500000000}}]`)
	f.Add(`[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID"}]`)
	f.Add(`[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":{"seconds":-5,"nanos":-1}}]`)
	f.Fuzz(func(t *testing.T, raw string) {
		var ds []map[string]any
		if json.Unmarshal([]byte(raw), &ds) != nil {
			return
		}
		if _, d := details(ds); d < 0 {
			t.Fatalf("details(%s) gave a negative wait %v", raw, d)
		}
	})
}

// FuzzAPIError: any error reply is classified as a ProviderError of the status's family with a
// non-negative wait and a bounded message, and never panics.
func FuzzAPIError(f *testing.F) {
	for _, name := range []string{"error_400_key.json", "error_400_too_long.json", "error_401.json", "error_404.json", "error_429.json", "error_500.json", "error_503.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(400, b)
	}
	f.Add(502, []byte("<html>Bad Gateway</html>"))
	f.Add(429, []byte(`{"error":{"details":[{"@type":"google.rpc.RetryInfo","retryDelay":"-3s"}]}}`))
	f.Add(500, []byte(`{"error":null}`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if status < 400 || status > 599 {
			return
		}
		llmtest.CheckAPIError(t, llm.ProviderGemini, status, body, APIError(status, http.Header{}, body))
	})
}

// FuzzNormalise: any generateContent reply either becomes a response with non-negative token
// counts and a known stop reason, or a classified error; it never panics.
func FuzzNormalise(f *testing.F) {
	for _, name := range []string{"content.json", "truncated.json", "safety.json", "prompt_blocked.json", "thoughts.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"candidates":[null]}`))
	f.Add([]byte(`{"candidates":[{"content":{"parts":[]}}],"usageMetadata":{"promptTokenCount":-4}}`))
	spec := llm.Spec{Provider: llm.ProviderGemini, Model: "gemini-2.5-pro"}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var r generateResponse
		if json.Unmarshal(raw, &r) != nil {
			return
		}
		out, err := r.normalise(spec, llm.DefaultPrices())
		llmtest.CheckNormalised(t, llm.ProviderGemini, out, err)
	})
}
