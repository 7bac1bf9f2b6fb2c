package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestModelsListsRolesWithoutLeakingKeys(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	res := runAzeroIn(t, state, state, []string{"ANTHROPIC_API_KEY=sk-ant-test-key-that-must-not-leak-1234"}, "models", "--json")
	if res.code != 0 {
		t.Fatalf("azero models: exit %d\n%s", res.code, res.stderr)
	}
	out := []byte(res.stdout)
	if strings.Contains(string(out), "must-not-leak") {
		t.Fatalf("key printed:\n%s", out)
	}
	var doc struct {
		Models []struct {
			Role       string `json:"role"`
			Model      string `json:"model"`
			KeyPresent bool   `json:"key_present"`
			Problem    string `json:"problem"`
		} `json:"models"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, out)
	}
	got := map[string]bool{}
	for _, m := range doc.Models {
		got[m.Role] = m.KeyPresent
		if m.Role == "reviewer" && !strings.Contains(m.Problem, "GEMINI_API_KEY") {
			t.Errorf("reviewer without key: problem %q does not name the variable", m.Problem)
		}
	}
	if len(doc.Models) != 3 || !got["drafter"] || !got["coder"] || got["reviewer"] {
		t.Errorf("models = %+v", doc.Models)
	}
}

func TestModelsPingAnOpenAICompatibleServer(t *testing.T) {
	t.Parallel()
	var sawAuth, sawModel string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			t.Errorf("unexpected request %s", r.URL.Path)
			http.NotFound(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var req struct{ Model string }
		json.Unmarshal(body, &req)
		sawAuth, sawModel = r.Header.Get("Authorization"), req.Model
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"qwen2.5-coder",
"choices":[{"index":0,"message":{"role":"assistant","content":"pong"},"finish_reason":"stop"}],
"usage":{"prompt_tokens":12,"completion_tokens":1,"total_tokens":13}}`)
	}))
	defer srv.Close()
	state := t.TempDir()
	cfgDir := filepath.Join(state, "config", "azero")
	os.MkdirAll(cfgDir, 0o755)
	os.WriteFile(filepath.Join(cfgDir, "config.toml"), []byte("[models]\ncoder = \"openai:qwen2.5-coder\"\n"), 0o644)
	res := runAzeroIn(t, state, state, []string{"OPENAI_BASE_URL=" + srv.URL + "/v1", "OPENAI_API_KEY=local-key-123456"}, "models", "ping", "coder", "--json")
	if res.code != 0 {
		t.Fatalf("ping: exit %d\n%s", res.code, res.stderr)
	}
	out := []byte(res.stdout)
	var v struct {
		Text        string `json:"text"`
		Stop        string `json:"stop"`
		InputTokens int    `json:"input_tokens"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if v.Text != "pong" || v.Stop != "end" || v.InputTokens != 12 {
		t.Errorf("ping = %+v", v)
	}
	if sawAuth != "Bearer local-key-123456" || sawModel != "qwen2.5-coder" {
		t.Errorf("server saw auth %q model %q", sawAuth, sawModel)
	}
	if r := runAzeroIn(t, state, state, nil, "models", "ping", "nobody"); r.code != 2 {
		t.Errorf("unknown role: exit %d, want 2", r.code)
	}
}
