package openai

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/llm/llmtest"
)

// TestAPIErrorEnvelopes: OpenAI's envelope and the variants compatible servers send all give
// the server's own message and the right kind.
func TestAPIErrorEnvelopes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		status  int
		body    string
		kind    llm.ErrorKind
		message string
	}{
		{"openai envelope", 400, `{"error":{"message":"bad temperature","type":"invalid_request_error","param":"temperature","code":null}}`, llm.KindBadRequest, "bad temperature"},
		{"string code", 404, `{"error":{"message":"The model gpt-9 does not exist","type":"invalid_request_error","code":"model_not_found"}}`, llm.KindNotFound, "The model gpt-9 does not exist"},
		{"quota by type", 429, `{"error":{"message":"out of credit","type":"insufficient_quota","code":null}}`, llm.KindQuota, "out of credit"},
		{"error as a string (llama.cpp, older Ollama)", 404, `{"error":"model 'qwen9' not found"}`, llm.KindNotFound, "model 'qwen9' not found"},
		{"vLLM top-level fields, numeric code", 400, `{"object":"error","message":"This model's maximum context length is 32768 tokens.","type":"BadRequestError","param":null,"code":400}`, llm.KindContextTooLong, "maximum context length is 32768"},
		{"a proxy's page", 502, `<html><body>Bad Gateway</body></html>`, llm.KindServer, "<html><body>Bad Gateway</body></html>"},
		{"empty body", 503, ``, llm.KindOverloaded, "Service Unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pe := APIError(tt.status, http.Header{}, []byte(tt.body))
			if pe.Kind != tt.kind || pe.Status != tt.status || !strings.Contains(pe.Message, tt.message) {
				t.Errorf("APIError(%d, %s) = kind %s, status %d, message %q; want %s, %q", tt.status, tt.body, pe.Kind, pe.Status, pe.Message, tt.kind, tt.message)
			}
		})
	}
}

// FuzzAPIError: any error reply is classified as a ProviderError of the status's family with a
// non-negative wait and a bounded message, and never panics.
func FuzzAPIError(f *testing.F) {
	for _, name := range []string{"error_400_context.json", "error_401.json", "error_429.json", "error_429_quota.json", "error_500.json", "ollama_error_404.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(400, b)
	}
	f.Add(502, []byte("<html>Bad Gateway</html>"))
	f.Add(404, []byte(`{"error":"not found"}`))
	f.Add(400, []byte(`{"message":"x","code":400}`))
	f.Add(500, []byte(`{"error":null}`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if status < 400 || status > 599 {
			return
		}
		llmtest.CheckAPIError(t, llm.ProviderOpenAI, status, body, APIError(status, http.Header{}, body))
	})
}

// FuzzNormalise: any chat completion either becomes a response with non-negative token counts
// and a known stop reason, or a classified error; it never panics.
func FuzzNormalise(f *testing.F) {
	for _, name := range []string{"completion.json", "truncated.json", "refusal.json", "content_filter.json", "ollama_completion.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"choices":[]}`))
	f.Add([]byte(`{"choices":[{"message":{"content":null,"refusal":null}}],"usage":{"prompt_tokens":-4}}`))
	spec := llm.Spec{Provider: llm.ProviderOpenAI, Model: "gpt-4.1"}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var c completion
		if json.Unmarshal(raw, &c) != nil {
			return
		}
		out, err := c.normalise(spec, llm.DefaultPrices())
		llmtest.CheckNormalised(t, llm.ProviderOpenAI, out, err)
	})
}
