package anthropic

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

// FuzzAPIError: any error reply is classified as a ProviderError of the status's family with a
// non-negative wait and a bounded message, and never panics.
func FuzzAPIError(f *testing.F) {
	for _, name := range []string{"error_400_too_long.json", "error_401.json", "error_404.json", "error_429.json", "error_500.json", "error_529.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(400, b)
	}
	f.Add(502, []byte("<html>Bad Gateway</html>"))
	f.Add(500, []byte(`{"error":null}`))
	f.Add(497, []byte(``))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if status < 400 || status > 599 {
			return
		}
		llmtest.CheckAPIError(t, llm.ProviderAnthropic, status, body, APIError(status, http.Header{}, body))
	})
}

// FuzzNormalise: any Messages API reply becomes a response with non-negative token counts, a
// known stop reason and the text of its text blocks only; it never panics.
func FuzzNormalise(f *testing.F) {
	for _, name := range []string{"message.json", "truncated.json", "refusal.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"ok"}],"usage":{"input_tokens":-3}}`))
	spec := llm.Spec{Provider: llm.ProviderAnthropic, Model: "claude-sonnet-4-5"}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var r messagesReply
		if json.Unmarshal(raw, &r) != nil {
			return
		}
		out := r.normalise(spec, llm.DefaultPrices())
		llmtest.CheckNormalised(t, llm.ProviderAnthropic, out, nil)
		var want strings.Builder
		for _, b := range r.Content {
			if b.Type == "text" {
				want.WriteString(b.Text)
			}
		}
		if out.Text != want.String() {
			t.Fatalf("text %q, want the text blocks %q", out.Text, want.String())
		}
	})
}

// TestThinkingIsNotText: a reply with extended thinking gives only its text blocks.
func TestThinkingIsNotText(t *testing.T) {
	t.Parallel()
	var r messagesReply
	raw := `{"model":"claude-sonnet-4-5-20250929","content":[{"type":"thinking","thinking":"Let me think.","signature":"abc"},{"type":"text","text":"Answer."}],"stop_reason":"end_turn","usage":{"input_tokens":10,"cache_read_input_tokens":5,"output_tokens":3}}`
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		t.Fatal(err)
	}
	out := r.normalise(llm.Spec{Provider: llm.ProviderAnthropic, Model: "claude-sonnet-4-5"}, llm.DefaultPrices())
	if out.Text != "Answer." || out.InputTokens != 15 || out.OutputTokens != 3 || out.Stop != llm.StopEnd {
		t.Errorf("normalise = %+v; want the text block only, cache reads counted as input", out)
	}
}
