package llm

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestResolveEndpoint(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		provider   string
		env        map[string]string
		cfg        ProviderConfig
		wantKey    string
		wantSource string
		wantBase   string
		wantErr    string
	}{
		{name: "anthropic from env", provider: ProviderAnthropic, env: map[string]string{"ANTHROPIC_API_KEY": "k1"}, wantKey: "k1", wantSource: "ANTHROPIC_API_KEY"},
		{name: "anthropic from config", provider: ProviderAnthropic, cfg: ProviderConfig{APIKey: "c1"}, wantKey: "c1", wantSource: SourceConfig},
		{name: "env wins over config", provider: ProviderAnthropic, env: map[string]string{"ANTHROPIC_API_KEY": "k1", "ANTHROPIC_BASE_URL": "http://e"},
			cfg: ProviderConfig{APIKey: "c1", BaseURL: "http://c"}, wantKey: "k1", wantSource: "ANTHROPIC_API_KEY", wantBase: "http://e"},
		{name: "config base URL", provider: ProviderAnthropic, env: map[string]string{"ANTHROPIC_API_KEY": "k1"}, cfg: ProviderConfig{BaseURL: "https://proxy.local"}, wantKey: "k1", wantSource: "ANTHROPIC_API_KEY", wantBase: "https://proxy.local"},
		{name: "blank env value is absent", provider: ProviderAnthropic, env: map[string]string{"ANTHROPIC_API_KEY": "  "}, cfg: ProviderConfig{APIKey: "c1"}, wantKey: "c1", wantSource: SourceConfig},
		{name: "gemini key", provider: ProviderGemini, env: map[string]string{"GEMINI_API_KEY": "g"}, wantKey: "g", wantSource: "GEMINI_API_KEY"},
		{name: "google key", provider: ProviderGemini, env: map[string]string{"GOOGLE_API_KEY": "g2", "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:9"}, wantKey: "g2", wantSource: "GOOGLE_API_KEY", wantBase: "http://127.0.0.1:9"},
		{name: "missing anthropic key", provider: ProviderAnthropic, wantErr: "ANTHROPIC_API_KEY"},
		{name: "missing gemini key", provider: ProviderGemini, wantErr: "GEMINI_API_KEY or GOOGLE_API_KEY"},
		{name: "openai needs a key by default", provider: ProviderOpenAI, wantErr: "OPENAI_API_KEY"},
		{name: "openai official host needs a key", provider: ProviderOpenAI, env: map[string]string{"OPENAI_BASE_URL": "https://API.openai.com/v1"}, wantErr: "OPENAI_API_KEY"},
		{name: "local server needs none", provider: ProviderOpenAI, env: map[string]string{"OPENAI_BASE_URL": "http://localhost:11434/v1"}, wantBase: "http://localhost:11434/v1"},
		{name: "base URL must be http", provider: ProviderOpenAI, env: map[string]string{"OPENAI_BASE_URL": "localhost:8080"}, wantErr: "not an http(s) URL"},
		{name: "mock needs nothing", provider: ProviderMock},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, err := ResolveEndpoint(tt.provider, func(k string) string { return tt.env[k] }, tt.cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if e.APIKey != tt.wantKey || e.KeySource != tt.wantSource || e.BaseURL != tt.wantBase {
				t.Errorf("endpoint = key %q from %q, base %q", e.APIKey, e.KeySource, e.BaseURL)
			}
		})
	}
	if _, err := ResolveEndpoint(ProviderAnthropic, nil, ProviderConfig{}); !errors.Is(err, ErrMissingKey) {
		t.Errorf("nil getenv: %v", err)
	}
}

func TestEndpointNeverPrintsKey(t *testing.T) {
	t.Parallel()
	e := Endpoint{Provider: "openai", APIKey: "sk-secret-value-123", KeySource: "OPENAI_API_KEY", BaseURL: "http://x"}
	var logs strings.Builder
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("model", "endpoint", e)
	for _, s := range []string{fmt.Sprint(e), fmt.Sprintf("%v %+v %#v %s", e, e, e, e), logs.String()} {
		if strings.Contains(s, "sk-secret-value-123") {
			t.Errorf("key printed: %s", s)
		}
	}
	if !strings.Contains(e.String(), "OPENAI_API_KEY") || !strings.Contains(logs.String(), `"key_present":true`) {
		t.Errorf("String = %q, log = %s", e.String(), logs.String())
	}
}
