package llm

import (
	"fmt"
	"log/slog"
	"net/url"
	"strings"
)

// ProviderConfig is what the config file may say about a provider. The caller maps its
// configuration format into it.
type ProviderConfig struct {
	APIKey  string
	BaseURL string
}

// KeyVars lists the environment variables that hold a provider's API key, in the order they
// are consulted. The mock provider needs none.
func KeyVars(provider string) []string {
	switch provider {
	case ProviderAnthropic:
		return []string{"ANTHROPIC_API_KEY"}
	case ProviderGemini:
		return []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}
	case ProviderOpenAI:
		return []string{"OPENAI_API_KEY"}
	}
	return nil
}

// BaseURLVar names the environment variable that overrides a provider's base URL.
func BaseURLVar(provider string) string {
	switch provider {
	case ProviderAnthropic:
		return "ANTHROPIC_BASE_URL"
	case ProviderGemini:
		return "GOOGLE_GEMINI_BASE_URL"
	case ProviderOpenAI:
		return "OPENAI_BASE_URL"
	}
	return ""
}

// Where an [Endpoint] setting came from, besides an environment variable's name.
const (
	SourceConfig = "config"
	SourceNone   = ""
)

// Endpoint is where and how a provider is reached. Its String, GoString and LogValue never
// show the key.
type Endpoint struct {
	Provider string
	APIKey   string
	// KeySource names where the key came from: an environment variable's name, [SourceConfig],
	// or [SourceNone].
	KeySource string
	// BaseURL is empty for the provider's public API.
	BaseURL       string
	BaseURLSource string
}

// KeyPresent reports whether a key was found.
func (e Endpoint) KeyPresent() bool { return e.APIKey != "" }

// String describes the endpoint without its key.
func (e Endpoint) String() string {
	key := "no key"
	if e.APIKey != "" {
		key = "key from " + e.KeySource
	}
	base := "default base URL"
	if e.BaseURL != "" {
		base = "base URL " + e.BaseURL
	}
	return fmt.Sprintf("%s (%s, %s)", e.Provider, key, base)
}

// GoString keeps %#v from printing the key.
func (e Endpoint) GoString() string { return "llm.Endpoint{" + e.String() + "}" }

// LogValue keeps slog from printing the key.
func (e Endpoint) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("provider", e.Provider),
		slog.Bool("key_present", e.APIKey != ""),
		slog.String("key_source", e.KeySource),
		slog.String("base_url", e.BaseURL),
	)
}

// ResolveEndpoint finds a provider's key and base URL. An environment variable wins over the
// config file, so a one-off `OPENAI_BASE_URL=http://localhost:11434/v1 azero ...` works without
// editing the config; getenv is injected (os.Getenv in main).
//
// A missing key is a [*MissingKeyError], except for OpenAI-compatible servers at a base URL
// other than api.openai.com: local servers (Ollama, llama.cpp, vLLM) usually need no key, so
// none is sent.
func ResolveEndpoint(provider string, getenv func(string) string, cfg ProviderConfig) (Endpoint, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	e := Endpoint{Provider: provider}
	if provider == ProviderMock {
		return e, nil
	}
	for _, v := range KeyVars(provider) {
		if k := strings.TrimSpace(getenv(v)); k != "" {
			e.APIKey, e.KeySource = k, v
			break
		}
	}
	if e.APIKey == "" && strings.TrimSpace(cfg.APIKey) != "" {
		e.APIKey, e.KeySource = strings.TrimSpace(cfg.APIKey), SourceConfig
	}
	if v := BaseURLVar(provider); v != "" {
		if u := strings.TrimSpace(getenv(v)); u != "" {
			e.BaseURL, e.BaseURLSource = u, v
		}
	}
	if e.BaseURL == "" && strings.TrimSpace(cfg.BaseURL) != "" {
		e.BaseURL, e.BaseURLSource = strings.TrimSpace(cfg.BaseURL), SourceConfig
	}
	if e.BaseURL != "" {
		u, err := url.Parse(e.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return e, fmt.Errorf("%s: base URL %q (from %s) is not an http(s) URL", provider, e.BaseURL, e.BaseURLSource)
		}
	}
	if e.APIKey == "" && KeyRequired(provider, e.BaseURL) {
		return e, &MissingKeyError{Provider: provider, Vars: KeyVars(provider)}
	}
	return e, nil
}

// KeyRequired reports whether a provider at baseURL needs an API key. Only an
// OpenAI-compatible server other than api.openai.com may go without.
func KeyRequired(provider, baseURL string) bool {
	switch provider {
	case ProviderMock:
		return false
	case ProviderOpenAI:
		if baseURL == "" {
			return true
		}
		u, err := url.Parse(baseURL)
		return err != nil || strings.EqualFold(u.Hostname(), "api.openai.com")
	}
	return true
}
