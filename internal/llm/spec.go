package llm

import (
	"errors"
	"fmt"
	"strings"
)

// Provider names, the part of a model name before the first colon.
const (
	ProviderAnthropic = "anthropic"
	ProviderGemini    = "gemini"
	ProviderOpenAI    = "openai"
	ProviderMock      = "mock"
)

// MockScripted is the only model the mock provider has.
const MockScripted = "scripted"

// MockSpec names the offline scripted model as provider:model.
const MockSpec = ProviderMock + ":" + MockScripted

// Providers lists the known providers.
func Providers() []string {
	return []string{ProviderAnthropic, ProviderGemini, ProviderOpenAI, ProviderMock}
}

// ErrInvalidSpec is wrapped by every error [ParseSpec] returns.
var ErrInvalidSpec = errors.New("invalid model name")

// Spec names a model: a provider and the provider's own model name.
type Spec struct {
	Provider string
	Model    string
}

// String returns provider:model.
func (s Spec) String() string { return s.Provider + ":" + s.Model }

// ParseSpec parses "provider:model". It splits at the first colon, because model names may
// contain colons themselves (Ollama tags such as "openai:qwen2.5-coder:7b"). The provider is
// case-insensitive; the model name is kept as written.
func ParseSpec(s string) (Spec, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Spec{}, fmt.Errorf("%w: empty; write it as provider:model, e.g. anthropic:claude-sonnet-4-5", ErrInvalidSpec)
	}
	provider, model, ok := strings.Cut(s, ":")
	if !ok {
		hint := "e.g. anthropic:claude-sonnet-4-5"
		if p := guessProvider(s); p != "" {
			hint = "did you mean " + p + ":" + s + "?"
		}
		return Spec{}, fmt.Errorf("%w: %q has no provider; write it as provider:model (%s)", ErrInvalidSpec, s, hint)
	}
	provider = strings.ToLower(strings.TrimSpace(provider))
	model = strings.TrimSpace(model)
	if provider == "" {
		return Spec{}, fmt.Errorf("%w: %q has no provider before the colon (known: %s)", ErrInvalidSpec, s, strings.Join(Providers(), ", "))
	}
	known := false
	for _, p := range Providers() {
		if p == provider {
			known = true
		}
	}
	if !known {
		return Spec{}, fmt.Errorf("%w: unknown provider %q in %q (known: %s)", ErrInvalidSpec, provider, s, strings.Join(Providers(), ", "))
	}
	if model == "" {
		return Spec{}, fmt.Errorf("%w: %q has no model after the colon", ErrInvalidSpec, s)
	}
	if provider == ProviderMock && model != MockScripted {
		return Spec{}, fmt.Errorf("%w: the mock provider has one model, %q; got %q", ErrInvalidSpec, ProviderMock+":"+MockScripted, s)
	}
	return Spec{Provider: provider, Model: model}, nil
}

// guessProvider suggests a provider for a bare model name, for the error message only.
func guessProvider(model string) string {
	m := strings.ToLower(model)
	switch {
	case strings.HasPrefix(m, "claude"):
		return ProviderAnthropic
	case strings.HasPrefix(m, "gemini"):
		return ProviderGemini
	case strings.HasPrefix(m, "gpt"), strings.HasPrefix(m, "o1"), strings.HasPrefix(m, "o3"), strings.HasPrefix(m, "o4"):
		return ProviderOpenAI
	case m == MockScripted:
		return ProviderMock
	}
	return ""
}
