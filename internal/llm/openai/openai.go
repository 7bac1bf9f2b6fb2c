// Package openai is the provider for OpenAI and every OpenAI-compatible server (Ollama,
// llama.cpp, vLLM): one call of the Chat Completions API
// (https://platform.openai.com/docs/api-reference/chat/create), which all of them speak, over
// net/http.
//
// It does not use the official SDK (github.com/openai/openai-go): azero needs one endpoint,
// and the SDK, generated for the whole API, measured 20 MB of the release binary and 1.6 ms of
// the start of every azero command, model or not (scripts/bench-startup.sh). The request and
// the reply are the documented JSON, tested against recorded replies in testdata.
//
// Invariants: no retries here (llm.WithRetry is the only retry loop); nothing reads the
// process environment (OPENAI_API_KEY, OPENAI_ORG_ID, OPENAI_CUSTOM_HEADERS... change nothing:
// the key and base URL come only from Options); errors are classified into *llm.ProviderError
// with the server's own message and retry-after wait; the key is sent only as
// "Authorization: Bearer" and appears in no error. Without a key no Authorization header is
// sent, which local servers accept.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

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
	spec     llm.Spec
	endpoint string // .../chat/completions
	key      string
	client   *http.Client
	timeout  time.Duration
	prices   llm.PriceTable
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
		// Not the parser's text: a base URL may carry credentials.
		return nil, errors.New("openai: the base URL is not an http(s) URL; check OPENAI_BASE_URL or providers.openai.base_url")
	}
	official := strings.EqualFold(u.Hostname(), "api.openai.com")
	if opts.APIKey == "" && official {
		return nil, &llm.MissingKeyError{Provider: llm.ProviderOpenAI, Vars: llm.KeyVars(llm.ProviderOpenAI)}
	}
	client := opts.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	return &Model{
		spec:     llm.Spec{Provider: llm.ProviderOpenAI, Model: opts.Model},
		endpoint: u.JoinPath("chat/completions").String(),
		key:      opts.APIKey,
		client:   client,
		timeout:  opts.RequestTimeout(),
		prices:   opts.PriceTable(),
		official: official,
		now:      time.Now,
	}, nil
}

// Name returns "openai:<model>".
func (m *Model) Name() string { return m.spec.String() }

// The request and reply, as far as azero uses them (field names as in the API reference).

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type completionRequest struct {
	Model               string    `json:"model"`
	Messages            []message `json:"messages"`
	MaxCompletionTokens int       `json:"max_completion_tokens,omitempty"`
	MaxTokens           int       `json:"max_tokens,omitempty"`
	Temperature         *float64  `json:"temperature,omitempty"`
}

type completion struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
			Refusal *string `json:"refusal"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

func (m *Model) newRequest(req llm.Request) completionRequest {
	out := completionRequest{Model: m.spec.Model, Messages: make([]message, 0, len(req.Messages)+1), Temperature: req.Temperature}
	if m.official {
		out.MaxCompletionTokens = req.MaxTokens
	} else {
		out.MaxTokens = req.MaxTokens
	}
	if req.System != "" {
		out.Messages = append(out.Messages, message{Role: "system", Content: req.System})
	}
	for _, msg := range req.Messages {
		role := "user"
		if msg.Role == llm.SpeakerAssistant {
			role = "assistant"
		}
		out.Messages = append(out.Messages, message{Role: role, Content: msg.Text})
	}
	return out
}

// Generate sends one chat completion request.
func (m *Model) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	if err := req.Validate(); err != nil {
		return llm.Response{}, fmt.Errorf("%s: %w", m.Name(), err)
	}
	header := http.Header{}
	if m.key != "" {
		header.Set("Authorization", "Bearer "+m.key)
	}
	start := m.now()
	reply, err := llm.Post(ctx, m.client, llm.ProviderOpenAI, m.endpoint, header, m.newRequest(req), m.timeout, 0)
	latency := m.now().Sub(start)
	if err != nil {
		return llm.Response{}, err
	}
	if !reply.OK() {
		return llm.Response{}, APIError(reply.Status, reply.Header, reply.Body)
	}
	var c completion
	if err := json.Unmarshal(reply.Body, &c); err != nil {
		return llm.Response{}, &llm.ProviderError{Provider: llm.ProviderOpenAI, Kind: llm.KindOther,
			Message: "the reply is not a chat completion: " + err.Error(), Err: err}
	}
	out, err := c.normalise(m.spec, m.prices)
	out.Latency = latency
	return out, err
}

// normalise turns a reply into an llm.Response: the first choice's text (its refusal when it
// has no text), the stop reason, the tokens and their cost.
func (c *completion) normalise(spec llm.Spec, prices llm.PriceTable) (llm.Response, error) {
	if len(c.Choices) == 0 {
		return llm.Response{}, &llm.ProviderError{Provider: llm.ProviderOpenAI, Kind: llm.KindOther, Message: "the reply has no choices"}
	}
	choice := c.Choices[0]
	text, refusal := deref(choice.Message.Content), deref(choice.Message.Refusal)
	stop := StopReason(choice.FinishReason)
	if refusal != "" {
		stop = llm.StopRefused
	}
	if text == "" {
		text = refusal
	}
	out := llm.Response{
		Text:         text,
		Stop:         stop,
		InputTokens:  max(0, c.Usage.PromptTokens),
		OutputTokens: max(0, c.Usage.CompletionTokens),
		Model:        spec.String(),
	}
	out.CostUSD, _ = prices.Cost(spec, out.InputTokens, out.OutputTokens)
	if c.Model != "" {
		out.Model = llm.ProviderOpenAI + ":" + c.Model
	}
	return out, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
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

// APIError classifies an error reply: OpenAI's {"error": {message, type, code}} envelope, the
// variants compatible servers send ({"error": "text"}, vLLM's top-level {"message", "type"}),
// or whatever a proxy sent instead (its text becomes the message).
func APIError(status int, header http.Header, body []byte) *llm.ProviderError {
	message, code, errType := errorBody(body)
	pe := llm.HTTPError(llm.ProviderOpenAI, status, header, message, nil)
	switch {
	case code == "context_length_exceeded" || code == "string_above_max_length":
		pe.Kind = llm.KindContextTooLong
	case code == "invalid_api_key":
		pe.Kind = llm.KindAuth
	case code == "model_not_found":
		pe.Kind = llm.KindNotFound
	case code == "insufficient_quota" || errType == "insufficient_quota":
		// A 429 that waiting does not cure: the account is out of credit.
		pe.Kind = llm.KindQuota
	}
	return pe
}

// errorBody reads the message, code and type of an error reply; a body that is no known
// envelope is returned whole as the message.
func errorBody(body []byte) (message, code, errType string) {
	type detail struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	var env struct {
		Error json.RawMessage `json:"error"`
		detail
	}
	if json.Unmarshal(body, &env) == nil {
		var d detail
		var text string
		switch {
		case json.Unmarshal(env.Error, &d) == nil && d.Message != "":
		case json.Unmarshal(env.Error, &text) == nil && text != "":
			d.Message = text
		default:
			d = env.detail
		}
		if d.Message != "" {
			// code is a string at OpenAI, a number or null at some compatible servers.
			_ = json.Unmarshal(d.Code, &code)
			return d.Message, code, d.Type
		}
	}
	return strings.TrimSpace(string(body)), "", ""
}
