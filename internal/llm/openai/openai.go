// Package openai is the provider for OpenAI and every OpenAI-compatible server (Ollama,
// llama.cpp, vLLM), through the official SDK (github.com/openai/openai-go/v3) and the Chat
// Completions API, which all of them speak.
//
// Invariants: the SDK's own retries are off (llm.WithRetry is the only retry loop); the SDK
// reads no OPENAI_* environment variables (its environment defaults are never installed: the
// key and base URL come only from Options); errors are classified into *llm.ProviderError
// with the server's own message and retry-after wait; the key is sent only as
// "Authorization: Bearer" and appears in no error. Without a key no Authorization header is
// sent, which local servers accept.
package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/azero-dev/azero/internal/llm"
)

// DefaultBaseURL is OpenAI's public API.
const DefaultBaseURL = "https://api.openai.com/v1/"

// Options configures an OpenAI-compatible model. BaseURL includes the API
// version path ("http://localhost:11434/v1"), default DefaultBaseURL; the
// APIKey is required for api.openai.com and optional for other servers.
// Local models are unpriced and cost 0.
type Options = llm.ClientOptions

// Model is an OpenAI-compatible chat model.
type Model struct {
	spec   llm.Spec
	chat   sdk.ChatCompletionService
	prices llm.PriceTable
	// official is true for api.openai.com, which wants max_completion_tokens; compatible
	// servers are sent the older max_tokens, which all of them understand.
	official bool
	now      func() time.Time
}

var _ llm.Model = (*Model)(nil)

// New returns an OpenAI-compatible model. It fails with *llm.MissingKeyError when the server
// is api.openai.com and there is no key.
func New(opts Options) (llm.Model, error) {
	if strings.TrimSpace(opts.Model) == "" {
		return nil, errors.New("openai: no model name")
	}
	base := opts.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openai: base URL %q is not an http(s) URL", base)
	}
	official := strings.EqualFold(u.Hostname(), "api.openai.com")
	if opts.APIKey == "" && official {
		return nil, &llm.MissingKeyError{Provider: llm.ProviderOpenAI, Vars: llm.KeyVars(llm.ProviderOpenAI)}
	}
	ro := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithMaxRetries(0),
		option.WithRequestTimeout(opts.RequestTimeout()),
	}
	if opts.APIKey != "" {
		ro = append(ro, option.WithAPIKey(opts.APIKey))
	}
	if opts.HTTPClient != nil {
		ro = append(ro, option.WithHTTPClient(opts.HTTPClient))
	}
	return &Model{
		spec: llm.Spec{Provider: llm.ProviderOpenAI, Model: opts.Model},
		// The service alone, not sdk.NewClient: NewClient would add OPENAI_API_KEY,
		// OPENAI_ORG_ID, OPENAI_CUSTOM_HEADERS... from the process environment.
		chat:     sdk.NewChatCompletionService(ro...),
		prices:   opts.PriceTable(),
		official: official,
		now:      time.Now,
	}, nil
}

// Name returns "openai:<model>".
func (m *Model) Name() string { return m.spec.String() }

// Generate sends one chat completion request.
func (m *Model) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	if err := req.Validate(); err != nil {
		return llm.Response{}, fmt.Errorf("%s: %w", m.Name(), err)
	}
	params := sdk.ChatCompletionNewParams{
		Model:    m.spec.Model,
		Messages: make([]sdk.ChatCompletionMessageParamUnion, 0, len(req.Messages)+1),
	}
	if m.official {
		params.MaxCompletionTokens = sdk.Int(int64(req.MaxTokens))
	} else {
		params.MaxTokens = sdk.Int(int64(req.MaxTokens))
	}
	if req.Temperature != nil {
		params.Temperature = sdk.Float(*req.Temperature)
	}
	if req.System != "" {
		params.Messages = append(params.Messages, sdk.SystemMessage(req.System))
	}
	for _, msg := range req.Messages {
		if msg.Role == llm.SpeakerAssistant {
			params.Messages = append(params.Messages, sdk.AssistantMessage(msg.Text))
		} else {
			params.Messages = append(params.Messages, sdk.UserMessage(msg.Text))
		}
	}

	start := m.now()
	completion, err := m.chat.New(ctx, params)
	latency := m.now().Sub(start)
	if err != nil {
		return llm.Response{}, classify(err)
	}
	if len(completion.Choices) == 0 {
		return llm.Response{}, &llm.ProviderError{Provider: llm.ProviderOpenAI, Kind: llm.KindOther, Message: "the reply has no choices"}
	}
	choice := completion.Choices[0]
	stop := StopReason(choice.FinishReason)
	if choice.Message.Refusal != "" {
		stop = llm.StopRefused
	}
	in := int(completion.Usage.PromptTokens)
	out := int(completion.Usage.CompletionTokens)
	cost, _ := m.prices.Cost(m.spec, in, out)
	model := m.Name()
	if completion.Model != "" {
		model = llm.ProviderOpenAI + ":" + completion.Model
	}
	text := choice.Message.Content
	if text == "" && choice.Message.Refusal != "" {
		text = choice.Message.Refusal
	}
	return llm.Response{
		Text:         text,
		Stop:         stop,
		InputTokens:  in,
		OutputTokens: out,
		Model:        model,
		CostUSD:      cost,
		Latency:      latency,
	}, nil
}

// StopReason maps a chat completion's finish_reason to the normalised one.
func StopReason(s string) llm.StopReason {
	switch s {
	case "stop":
		return llm.StopEnd
	case "length":
		return llm.StopMaxTokens
	case "content_filter":
		return llm.StopRefused
	}
	return llm.StopOther
}

func classify(err error) error {
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		var header http.Header
		if apiErr.Response != nil {
			header = apiErr.Response.Header
		}
		message := apiErr.Message
		if message == "" {
			message = apiErr.RawJSON()
		}
		pe := llm.HTTPError(llm.ProviderOpenAI, apiErr.StatusCode, header, message, err)
		switch apiErr.Code {
		case "context_length_exceeded", "string_above_max_length":
			pe.Kind = llm.KindContextTooLong
		case "invalid_api_key":
			pe.Kind = llm.KindAuth
		case "model_not_found":
			pe.Kind = llm.KindNotFound
		case "insufficient_quota":
			// A 429 that waiting does not cure: the account is out of credit.
			pe.Kind = llm.KindQuota
		}
		return pe
	}
	return llm.ClassifyError(llm.ProviderOpenAI, err)
}
