// Package anthropic is the Claude provider, through the official SDK
// (github.com/anthropics/anthropic-sdk-go) and the Messages API.
//
// Invariants: the SDK's own retries are off (llm.WithRetry is the only retry loop); the SDK
// reads no environment variables or profile files (the key and base URL come only from
// Options); errors are classified into *llm.ProviderError with Anthropic's own message and
// retry-after wait; the API key is sent only in the x-api-key header and appears in no error.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/azero-dev/azero/internal/llm"
)

// Options configures a Claude model. The APIKey is required; BaseURL
// replaces https://api.anthropic.com (without /v1).
type Options = llm.ClientOptions

// Model is a Claude model.
type Model struct {
	spec   llm.Spec
	client sdk.Client
	prices llm.PriceTable
	now    func() time.Time
}

var _ llm.Model = (*Model)(nil)

// New returns a Claude model. It fails with *llm.MissingKeyError without a key.
func New(opts Options) (llm.Model, error) {
	if strings.TrimSpace(opts.Model) == "" {
		return nil, errors.New("anthropic: no model name")
	}
	if opts.APIKey == "" {
		return nil, &llm.MissingKeyError{Provider: llm.ProviderAnthropic, Vars: llm.KeyVars(llm.ProviderAnthropic)}
	}
	ro := []option.RequestOption{
		// Our getenv decides the key and base URL; the SDK must not add ANTHROPIC_* or a
		// profile file of its own.
		option.WithoutEnvironmentDefaults(),
		option.WithAPIKey(opts.APIKey),
		option.WithMaxRetries(0),
		option.WithRequestTimeout(opts.RequestTimeout()),
	}
	if opts.BaseURL != "" {
		ro = append(ro, option.WithBaseURL(opts.BaseURL))
	}
	if opts.HTTPClient != nil {
		ro = append(ro, option.WithHTTPClient(opts.HTTPClient))
	}
	return &Model{
		spec:   llm.Spec{Provider: llm.ProviderAnthropic, Model: opts.Model},
		client: sdk.NewClient(ro...),
		prices: opts.PriceTable(),
		now:    time.Now,
	}, nil
}

// Name returns "anthropic:<model>".
func (m *Model) Name() string { return m.spec.String() }

// Generate sends one Messages API request.
func (m *Model) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	if err := req.Validate(); err != nil {
		return llm.Response{}, fmt.Errorf("%s: %w", m.Name(), err)
	}
	params := sdk.MessageNewParams{
		Model:     sdk.Model(m.spec.Model),
		MaxTokens: int64(req.MaxTokens),
		Messages:  make([]sdk.MessageParam, 0, len(req.Messages)),
	}
	if req.System != "" {
		params.System = []sdk.TextBlockParam{{Text: req.System}}
	}
	if req.Temperature != nil {
		params.Temperature = sdk.Float(*req.Temperature)
	}
	for _, msg := range req.Messages {
		block := sdk.NewTextBlock(msg.Text)
		if msg.Role == llm.SpeakerAssistant {
			params.Messages = append(params.Messages, sdk.NewAssistantMessage(block))
		} else {
			params.Messages = append(params.Messages, sdk.NewUserMessage(block))
		}
	}

	start := m.now()
	msg, err := m.client.Messages.New(ctx, params)
	latency := m.now().Sub(start)
	if err != nil {
		return llm.Response{}, classify(err)
	}

	var text strings.Builder
	for _, block := range msg.Content {
		if block.Type == "text" {
			text.WriteString(block.Text)
		}
	}
	in := int(msg.Usage.InputTokens + msg.Usage.CacheCreationInputTokens + msg.Usage.CacheReadInputTokens)
	out := int(msg.Usage.OutputTokens)
	cost, _ := m.prices.Cost(m.spec, in, out)
	model := m.Name()
	if msg.Model != "" {
		model = llm.ProviderAnthropic + ":" + string(msg.Model)
	}
	return llm.Response{
		Text:         text.String(),
		Stop:         StopReason(string(msg.StopReason)),
		InputTokens:  in,
		OutputTokens: out,
		Model:        model,
		CostUSD:      cost,
		Latency:      latency,
	}, nil
}

// StopReason maps Anthropic's stop_reason to the normalised one.
func StopReason(s string) llm.StopReason {
	switch s {
	case "end_turn", "stop_sequence":
		return llm.StopEnd
	// The context window filled up mid-answer: as truncated as hitting max_tokens.
	case "max_tokens", "model_context_window_exceeded":
		return llm.StopMaxTokens
	case "refusal":
		return llm.StopRefused
	}
	return llm.StopOther
}

// classify turns an SDK error into a classified one.
func classify(err error) error {
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		var header http.Header
		if apiErr.Response != nil {
			header = apiErr.Response.Header
		}
		errType, message := errorBody(apiErr.RawJSON())
		pe := llm.HTTPError(llm.ProviderAnthropic, apiErr.StatusCode, header, message, err)
		switch errType {
		case "overloaded_error":
			pe.Kind = llm.KindOverloaded
		case "rate_limit_error":
			pe.Kind = llm.KindRateLimited
		case "authentication_error", "permission_error":
			pe.Kind = llm.KindAuth
		case "not_found_error":
			pe.Kind = llm.KindNotFound
		case "request_too_large":
			pe.Kind = llm.KindContextTooLong
		}
		return pe
	}
	return llm.ClassifyError(llm.ProviderAnthropic, err)
}

// errorBody reads Anthropic's error envelope {"type":"error","error":{"type":..,"message":..}};
// a body that is not that envelope (a proxy's page) is returned whole as the message.
func errorBody(raw string) (errType, message string) {
	var env struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(raw), &env); err == nil && env.Error.Message != "" {
		return env.Error.Type, env.Error.Message
	}
	return "", strings.TrimSpace(raw)
}
