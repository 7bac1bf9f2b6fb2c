// Package anthropic is the Claude provider: one call of the Messages API
// (https://docs.claude.com/en/api/messages), over net/http.
//
// It does not use the official SDK (github.com/anthropics/anthropic-sdk-go): azero needs one
// endpoint, and the SDK, generated for the whole API, measured 9 MB of the release binary and
// most of a millisecond of the start of every azero command, model or not
// (scripts/bench-startup.sh). The request and the reply are the documented JSON, tested
// against recorded replies in testdata.
//
// Invariants: no retries here (llm.WithRetry is the only retry loop); nothing reads the
// process environment or profile files (ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN,
// ANTHROPIC_CUSTOM_HEADERS... change nothing: the key and base URL come only from Options);
// errors are classified into *llm.ProviderError with Anthropic's own message and retry-after
// wait; the API key is sent only in the x-api-key header and appears in no error.
package anthropic

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

// DefaultBaseURL is Anthropic's API, without its version.
const DefaultBaseURL = "https://api.anthropic.com/"

// APIVersion is the anthropic-version the request and reply types follow.
const APIVersion = "2023-06-01"

// Options configures a Claude model. The APIKey is required; BaseURL
// replaces https://api.anthropic.com (without /v1).
type Options = llm.ClientOptions

// Model is a Claude model.
type Model struct {
	spec     llm.Spec
	endpoint string // .../v1/messages
	key      string
	client   *http.Client
	timeout  time.Duration
	prices   llm.PriceTable
	now      func() time.Time
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
	base := opts.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// Not the parser's text: a base URL may carry credentials.
		return nil, errors.New("anthropic: the base URL is not an http(s) URL; check ANTHROPIC_BASE_URL or providers.anthropic.base_url")
	}
	client := opts.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	return &Model{
		spec:     llm.Spec{Provider: llm.ProviderAnthropic, Model: opts.Model},
		endpoint: u.JoinPath("v1/messages").String(),
		key:      opts.APIKey,
		client:   client,
		timeout:  opts.RequestTimeout(),
		prices:   opts.PriceTable(),
		now:      time.Now,
	}, nil
}

// Name returns "anthropic:<model>".
func (m *Model) Name() string { return m.spec.String() }

// The request and reply, as far as azero uses them (field names as in the API reference).

type block struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type message struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

type messagesRequest struct {
	Model       string    `json:"model"`
	MaxTokens   int       `json:"max_tokens"`
	System      []block   `json:"system,omitempty"`
	Messages    []message `json:"messages"`
	Temperature *float64  `json:"temperature,omitempty"`
}

type messagesReply struct {
	Model      string  `json:"model"`
	Content    []block `json:"content"`
	StopReason string  `json:"stop_reason"`
	Usage      struct {
		InputTokens              int `json:"input_tokens"`
		OutputTokens             int `json:"output_tokens"`
		CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	} `json:"usage"`
}

func (m *Model) newRequest(req llm.Request) messagesRequest {
	out := messagesRequest{Model: m.spec.Model, MaxTokens: req.MaxTokens, Messages: make([]message, 0, len(req.Messages)), Temperature: req.Temperature}
	if req.System != "" {
		out.System = []block{{Type: "text", Text: req.System}}
	}
	for _, msg := range req.Messages {
		role := "user"
		if msg.Role == llm.SpeakerAssistant {
			role = "assistant"
		}
		out.Messages = append(out.Messages, message{Role: role, Content: []block{{Type: "text", Text: msg.Text}}})
	}
	return out
}

// Generate sends one Messages API request.
func (m *Model) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	if err := req.Validate(); err != nil {
		return llm.Response{}, fmt.Errorf("%s: %w", m.Name(), err)
	}
	header := http.Header{}
	header.Set("x-api-key", m.key)
	header.Set("anthropic-version", APIVersion)
	start := m.now()
	reply, err := llm.Post(ctx, m.client, llm.ProviderAnthropic, m.endpoint, header, m.newRequest(req), m.timeout, 0)
	latency := m.now().Sub(start)
	if err != nil {
		return llm.Response{}, err
	}
	if !reply.OK() {
		return llm.Response{}, APIError(reply.Status, reply.Header, reply.Body)
	}
	var r messagesReply
	if err := json.Unmarshal(reply.Body, &r); err != nil {
		return llm.Response{}, &llm.ProviderError{Provider: llm.ProviderAnthropic, Kind: llm.KindOther,
			Message: "the reply is not a Messages API response: " + err.Error(), Err: err}
	}
	out := r.normalise(m.spec, m.prices)
	out.Latency = latency
	return out, nil
}

// normalise turns a reply into an llm.Response: its text blocks (not its thinking), the stop
// reason, the tokens (cache writes and reads are input) and their cost.
func (r *messagesReply) normalise(spec llm.Spec, prices llm.PriceTable) llm.Response {
	var text strings.Builder
	for _, b := range r.Content {
		if b.Type == "text" {
			text.WriteString(b.Text)
		}
	}
	u := r.Usage
	out := llm.Response{
		Text:         text.String(),
		Stop:         StopReason(r.StopReason),
		InputTokens:  max(0, u.InputTokens) + max(0, u.CacheCreationInputTokens) + max(0, u.CacheReadInputTokens),
		OutputTokens: max(0, u.OutputTokens),
		Model:        spec.String(),
	}
	out.CostUSD, _ = prices.Cost(spec, out.InputTokens, out.OutputTokens)
	if r.Model != "" {
		out.Model = llm.ProviderAnthropic + ":" + r.Model
	}
	return out
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

// APIError classifies an error reply: Anthropic's {"type":"error","error":{type, message}}
// envelope, or whatever a proxy sent instead (its text becomes the message).
func APIError(status int, header http.Header, body []byte) *llm.ProviderError {
	errType, message := errorBody(body)
	pe := llm.HTTPError(llm.ProviderAnthropic, status, header, message, nil)
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

// errorBody reads Anthropic's error envelope; a body that is not that envelope (a proxy's
// page) is returned whole as the message.
func errorBody(raw []byte) (errType, message string) {
	var env struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &env); err == nil && env.Error.Message != "" {
		return env.Error.Type, env.Error.Message
	}
	return "", strings.TrimSpace(string(raw))
}
