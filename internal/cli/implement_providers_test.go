package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/azero-dev/azero/internal/testenv"
)

// wireCall is one request a provider server received: its output limit
// and the whole prompt text.
type wireCall struct {
	maxTokens int
	prompt    string
}

// providerServer answers as a real model would, in one provider's wire
// format: the first reply is cut off at its limit, the rest are prose
// around one fenced block (the tests when asked for tests, else the code).
type providerServer struct {
	*httptest.Server
	mu    sync.Mutex
	calls []wireCall
}

func newProviderServer(t *testing.T, provider string) *providerServer {
	s := &providerServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var req struct {
			MaxTokens           int                           `json:"max_tokens"`            // anthropic, openai-compatible
			MaxCompletionTokens int                           `json:"max_completion_tokens"` // api.openai.com
			Gen                 struct{ MaxOutputTokens int } `json:"generationConfig"`      // gemini
		}
		json.Unmarshal(raw, &req)
		s.mu.Lock()
		s.calls = append(s.calls, wireCall{maxTokens: max(req.MaxTokens, req.MaxCompletionTokens, req.Gen.MaxOutputTokens), prompt: string(raw)})
		n := len(s.calls)
		s.mu.Unlock()
		text, cut := "", n == 1
		switch {
		case cut:
			text = "Here are the tests for `multiply`:\n\n```python\nimport calc\n\n\ndef test_add():\n    assert calc.add(2, 3) =="
		case strings.Contains(string(raw), "the tests first"):
			text = "Here are the tests. They fail until `multiply` exists:\n\n" + goodTests + "\nRun them with pytest."
		default:
			text = "I added `multiply` next to `add`:\n\n" + goodCalc + "\nThe tests should pass now."
		}
		body, _ := json.Marshal(text)
		w.Header().Set("Content-Type", "application/json")
		switch provider {
		case "anthropic":
			if r.URL.Path != "/v1/messages" {
				t.Errorf("anthropic: %s %s", r.Method, r.URL.Path)
			}
			stop := "end_turn"
			if cut {
				stop = "max_tokens"
			}
			fmt.Fprintf(w, `{"id":"msg_01X%d","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929",
"content":[{"type":"text","text":%s}],"stop_reason":%q,"stop_sequence":null,
"usage":{"input_tokens":1812,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":240,"service_tier":"standard"}}`, n, body, stop)
		case "gemini":
			if !strings.HasSuffix(r.URL.Path, "/models/gemini-2.5-pro:generateContent") {
				t.Errorf("gemini: %s %s", r.Method, r.URL.Path)
			}
			stop := "STOP"
			if cut {
				stop = "MAX_TOKENS"
			}
			fmt.Fprintf(w, `{"candidates":[{"content":{"parts":[{"text":%s}],"role":"model"},"finishReason":%q,"index":0}],
"usageMetadata":{"promptTokenCount":3120,"candidatesTokenCount":240,"totalTokenCount":3360},"modelVersion":"gemini-2.5-pro","responseId":"r%d"}`, body, stop, n)
		case "openai":
			if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer test-key-0123456789abcdef" {
				t.Errorf("openai: %s %s (Authorization %q)", r.Method, r.URL.Path, r.Header.Get("Authorization"))
			}
			stop := "stop"
			if cut {
				stop = "length"
			}
			fmt.Fprintf(w, `{"id":"chatcmpl-%d","object":"chat.completion","created":1741569952,"model":"qwen2.5-coder:7b",
"choices":[{"index":0,"message":{"role":"assistant","content":%s},"finish_reason":%q}],
"usage":{"prompt_tokens":3120,"completion_tokens":240,"total_tokens":3360}}`, n, body, stop)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *providerServer) requests() []wireCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]wireCall(nil), s.calls...)
}

// TestImplementWithRealWireFormats runs the implementation workflow
// against servers speaking Anthropic's, Gemini's and OpenAI's wire formats, replying as models do: a first reply cut off at its limit (never
// applied, asked again with more room, shown on the terminal), then prose
// around the file. The coder sees the file the change modifies.
func TestImplementWithRealWireFormats(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "pytest")
	for _, tt := range []struct{ provider, model, env string }{
		{"anthropic", "anthropic:claude-sonnet-4-5", "ANTHROPIC"},
		{"gemini", "gemini:gemini-2.5-pro", "GEMINI"},
		{"openai", "openai:qwen2.5-coder:7b", "OPENAI"},
	} {
		t.Run(tt.provider, func(t *testing.T) {
			t.Parallel()
			repo, state := calcRepo(t), t.TempDir()
			srv := newProviderServer(t, tt.provider)
			env := []string{tt.env + "_API_KEY=test-key-0123456789abcdef", "ANTHROPIC_BASE_URL=" + srv.URL, "GOOGLE_GEMINI_BASE_URL=" + srv.URL, "OPENAI_BASE_URL=" + srv.URL + "/v1"}
			res := runAzeroIn(t, state, repo, env, "implement", "--lld", "docs/design.md", "--coder", tt.model)
			if res.code != ExitNeedsHuman {
				t.Fatalf("exit %d, want 3 at the review\n%s", res.code, res.stderr)
			}
			if !strings.Contains(res.stderr, "test_calc.py: reply cut off at 8192 tokens; asking again with 16384") {
				t.Errorf("the retry was not shown:\n%s", res.stderr)
			}
			calls := srv.requests()
			if len(calls) != 3 {
				t.Fatalf("%d calls, want 3 (cut off, the tests again, the code)", len(calls))
			}
			if calls[0].maxTokens != 8192 || calls[1].maxTokens != 16384 {
				t.Errorf("limits %d then %d: the cut-off reply was asked the same way again", calls[0].maxTokens, calls[1].maxTokens)
			}
			// The tests are written against the real code: calc.py is in the prompt.
			if !strings.Contains(calls[0].prompt, `def add(a, b):\n    return a + b`) {
				t.Errorf("the scaffold prompt does not show calc.py")
			}
			r, hist := runOf(t, state)
			if got := testenv.NodePath(hist); got != "worktree:ok baseline:ok scaffold:ok red:ok implement:ok green:ok lint:ok diff_review:ok human_review:waiting" {
				t.Errorf("path %s", got)
			}
			if r.Meta["coder"] != tt.model {
				t.Errorf("runs show names %q as the coder, want %q", r.Meta["coder"], tt.model)
			}
			show := runAzeroIn(t, state, repo, nil, "runs", "show", r.ID, "--events", "--json")
			if !strings.Contains(show.stdout, "reply cut off at 8192 tokens") || !strings.Contains(show.stdout, `"gate": "human_review"`) {
				t.Errorf("the run's events or pending question lack the retry or the question:\n%.2000s", show.stdout)
			}
		})
	}
}
