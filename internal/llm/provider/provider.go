// Package provider opens a model from its "provider:model" name: it resolves the key and base
// URL (environment over config), builds the provider's client, and wraps it with the one retry
// policy.
//
// Invariants: the process environment is read only through Env.Getenv; a missing key is an
// *llm.MissingKeyError when the model is opened, before any work starts; every model returned
// by Open retries through llm.WithRetry; with Env.MockLLM every role gets mock:scripted,
// whatever its configured name; nothing here makes a network call.
package provider

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/llm/anthropic"
	"github.com/azero-dev/azero/internal/llm/gemini"
	"github.com/azero-dev/azero/internal/llm/mock"
	"github.com/azero-dev/azero/internal/llm/openai"
)

// MockEnvVar switches every role to the offline scripted model.
const MockEnvVar = "AZERO_MOCK_LLM"

// Env is everything Open needs from outside. Only Getenv is needed for real providers.
type Env struct {
	// Getenv reads an environment variable (os.Getenv in main).
	Getenv func(string) string
	// Providers holds what the config says per provider ("anthropic", "gemini", "openai").
	Providers map[string]llm.ProviderConfig
	// HTTPClient replaces the SDKs' default clients (tests, proxies).
	HTTPClient *http.Client
	// Timeout bounds each attempt; zero keeps Retry.Timeout (default 10 minutes).
	Timeout time.Duration
	// Retry is the retry policy; zero fields take llm's defaults.
	Retry llm.RetryPolicy
	// Prices prices responses; nil uses llm.DefaultPrices().
	Prices llm.PriceTable
	// MockLLM makes every role use mock:scripted (the caller sets it from AZERO_MOCK_LLM,
	// see MockRequested).
	MockLLM bool
	// Role is the role the model is opened for; the scripted model answers by role.
	Role llm.Role
	// MockScript is the scripted model's script (empty: built-in replies, drafter and
	// reviewer only).
	MockScript string
	// MockTurns counts the role's completed calls in the run, so a resumed run gets the same
	// scripted replies; nil counts in memory.
	MockTurns func(ctx context.Context) (int, error)
}

// MockRequested reports whether AZERO_MOCK_LLM asks for the scripted model ("1", "true",
// "yes", "on", in any case).
func MockRequested(getenv func(string) string) bool {
	if getenv == nil {
		return false
	}
	switch strings.ToLower(strings.TrimSpace(getenv(MockEnvVar))) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// Open returns the model named by spec ("anthropic:claude-sonnet-4-5"), retrying through
// llm.WithRetry. Errors: llm.ErrInvalidSpec for a bad name, *llm.MissingKeyError without a
// key, a script error for a broken mock script.
func Open(spec string, env Env) (llm.Model, error) {
	s, err := effectiveSpec(spec, env)
	if err != nil {
		return nil, err
	}
	m, err := openRaw(s, env)
	if err != nil {
		return nil, err
	}
	policy := env.Retry
	if env.Timeout != 0 {
		policy.Timeout = env.Timeout
	}
	return llm.WithRetry(m, policy), nil
}

func effectiveSpec(spec string, env Env) (llm.Spec, error) {
	if env.MockLLM {
		return llm.Spec{Provider: llm.ProviderMock, Model: llm.MockScripted}, nil
	}
	return llm.ParseSpec(spec)
}

func openRaw(s llm.Spec, env Env) (llm.Model, error) {
	if s.Provider == llm.ProviderMock {
		return mock.New(mock.Options{Script: env.MockScript, Role: env.Role, Turns: env.MockTurns})
	}
	ep, err := llm.ResolveEndpoint(s.Provider, env.Getenv, env.Providers[s.Provider])
	if err != nil {
		return nil, err
	}
	timeout := env.Timeout
	if timeout <= 0 {
		timeout = env.Retry.Timeout
	}
	if timeout < 0 {
		timeout = 0
	}
	opts := llm.ClientOptions{Model: s.Model, APIKey: ep.APIKey, BaseURL: ep.BaseURL, HTTPClient: env.HTTPClient, Timeout: timeout, Prices: env.Prices}
	switch s.Provider {
	case llm.ProviderAnthropic:
		return anthropic.New(opts)
	case llm.ProviderGemini:
		return gemini.New(opts)
	case llm.ProviderOpenAI:
		return openai.New(opts)
	}
	return nil, fmt.Errorf("%w: no provider %q", llm.ErrInvalidSpec, s.Provider)
}

// Status describes a role's model for `azero models`, without any network call.
type Status struct {
	Role llm.Role
	// Configured is the name as configured; Spec is what Open would use (mock:scripted when
	// Mocked).
	Configured string
	Spec       llm.Spec
	Mocked     bool
	// Endpoint tells whether a key is present and where it and the base URL come from; its
	// String never shows the key.
	Endpoint llm.Endpoint
	// Price is the model's price when Priced.
	Price  llm.Price
	Priced bool
	// Err says why Open would fail (bad name, missing key, broken script); nil when it would
	// succeed.
	Err error
}

// Describe reports what Open would do for spec, and why it would fail.
func Describe(spec string, env Env) Status {
	st := Status{Role: env.Role, Configured: spec, Mocked: env.MockLLM}
	s, err := effectiveSpec(spec, env)
	if err != nil {
		st.Err = err
		return st
	}
	st.Spec = s
	prices := env.Prices
	if prices == nil {
		prices = llm.DefaultPrices()
	}
	st.Price, st.Priced = prices.Price(s)
	if s.Provider == llm.ProviderMock {
		st.Endpoint = llm.Endpoint{Provider: llm.ProviderMock}
		_, st.Err = mock.New(mock.Options{Script: env.MockScript, Role: env.Role})
		return st
	}
	st.Endpoint, st.Err = llm.ResolveEndpoint(s.Provider, env.Getenv, env.Providers[s.Provider])
	return st
}

// Secrets returns every API key the environment and config hold, for llm.MeterOptions.Secrets
// and for redacting logs.
func Secrets(env Env) []string {
	var out []string
	seen := map[string]bool{}
	add := func(v string) {
		v = strings.TrimSpace(v)
		if v != "" && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	for _, p := range llm.Providers() {
		if env.Getenv != nil {
			for _, v := range llm.KeyVars(p) {
				add(env.Getenv(v))
			}
		}
		add(env.Providers[p].APIKey)
	}
	return out
}
