// Package gemini is the Gemini provider: one generateContent call of the Gemini API
// (https://ai.google.dev/api/generate-content), over net/http, with an API key.
//
// It does not use the official SDK (google.golang.org/genai): that SDK links gRPC, Google Cloud
// auth, OpenCensus and go-cmp into every azero command, which measured 28 MB of a 79 MB
// release binary (its reflection-based dependencies turn off the linker's removal of unused
// methods for the whole program) and a third of the startup time of `azero version`
// (scripts/bench-startup.sh). azero needs one endpoint of the API: the request and the reply
// are the documented JSON, tested against recorded replies in testdata.
//
// Invariants: no retries here (llm.WithRetry is the only retry loop); the key is sent only in
// the x-goog-api-key header and appears in no error and no URL; nothing reads the process
// environment (GOOGLE_API_KEY, GOOGLE_GENAI_USE_VERTEXAI, ... change nothing); errors are
// classified into *llm.ProviderError with Google's own message and the wait it asks for (a
// retry-after header or the body's RetryInfo); a reply larger than maxReply is refused.
package gemini

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

// DefaultBaseURL is the Gemini API, without its version.
const DefaultBaseURL = "https://generativelanguage.googleapis.com/"

// apiVersion is the version of the API the request and reply types follow.
const apiVersion = "v1beta"

// maxReply bounds a reply body.
const maxReply = llm.MaxReply

// Options configures a Gemini model. The APIKey is required; BaseURL replaces
// https://generativelanguage.googleapis.com/ (without the API version); the HTTPClient is
// used as given, never modified.
type Options = llm.ClientOptions

// Model is a Gemini model.
type Model struct {
	spec     llm.Spec
	endpoint string // .../v1beta/models/NAME:generateContent
	key      string
	client   *http.Client
	timeout  time.Duration
	maxReply int64
	prices   llm.PriceTable
	now      func() time.Time
}

var _ llm.Model = (*Model)(nil)

// New returns a Gemini model. It fails with *llm.MissingKeyError without a key.
func New(opts Options) (llm.Model, error) {
	if strings.TrimSpace(opts.Model) == "" {
		return nil, errors.New("gemini: no model name")
	}
	if opts.APIKey == "" {
		return nil, &llm.MissingKeyError{Provider: llm.ProviderGemini, Vars: llm.KeyVars(llm.ProviderGemini)}
	}
	endpoint, err := Endpoint(opts.BaseURL, opts.Model)
	if err != nil {
		return nil, err
	}
	client := opts.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	return &Model{
		spec:     llm.Spec{Provider: llm.ProviderGemini, Model: opts.Model},
		endpoint: endpoint,
		key:      opts.APIKey,
		client:   client,
		timeout:  opts.RequestTimeout(),
		maxReply: maxReply,
		prices:   opts.PriceTable(),
		now:      time.Now,
	}, nil
}

// Endpoint returns the generateContent URL of model under baseURL (DefaultBaseURL when
// empty). The model is "gemini-2.5-pro", or a full resource name starting with "models/" or
// "tunedModels/".
func Endpoint(baseURL, model string) (string, error) {
	if baseURL == "" {
		baseURL = DefaultBaseURL
	}
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// Not the parser's text: a base URL may carry credentials.
		return "", errors.New("gemini: the base URL is not an http(s) URL; check GOOGLE_GEMINI_BASE_URL or providers.gemini.base_url")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", errors.New("gemini: the base URL has a query or fragment; give the API's root, e.g. " + DefaultBaseURL)
	}
	if strings.ContainsAny(model, "?#%") || strings.Contains(model, "..") || strings.TrimSpace(model) != model {
		return "", fmt.Errorf("gemini: invalid model name %q", model)
	}
	name := model
	if !strings.HasPrefix(name, "models/") && !strings.HasPrefix(name, "tunedModels/") {
		name = "models/" + name
	}
	return u.JoinPath(apiVersion, name).String() + ":generateContent", nil
}

// Name returns "gemini:<model>".
func (m *Model) Name() string { return m.spec.String() }

// Generate sends one generateContent request.
func (m *Model) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	if err := req.Validate(); err != nil {
		return llm.Response{}, fmt.Errorf("%s: %w", m.Name(), err)
	}
	header := http.Header{}
	header.Set("x-goog-api-key", m.key)
	start := m.now()
	reply, err := llm.Post(ctx, m.client, llm.ProviderGemini, m.endpoint, header, newRequest(req), m.timeout, m.maxReply)
	latency := m.now().Sub(start)
	if err != nil {
		return llm.Response{}, err
	}
	if !reply.OK() {
		return llm.Response{}, APIError(reply.Status, reply.Header, reply.Body)
	}
	raw := reply.Body
	var resp generateResponse
	if err := json.Unmarshal(raw, &resp); err != nil {
		return llm.Response{}, &llm.ProviderError{Provider: llm.ProviderGemini, Kind: llm.KindOther,
			Message: "the reply is not a generateContent response: " + err.Error(), Err: err}
	}
	out, err := resp.normalise(m.spec, m.prices)
	out.Latency = latency
	return out, err
}

// The request and reply, as far as azero uses them (field names as in the API reference).

type part struct {
	Text    string `json:"text,omitempty"`
	Thought bool   `json:"thought,omitempty"`
}

type content struct {
	Role  string `json:"role,omitempty"`
	Parts []part `json:"parts"`
}

type generationConfig struct {
	MaxOutputTokens int      `json:"maxOutputTokens,omitempty"`
	Temperature     *float64 `json:"temperature,omitempty"`
}

type generateRequest struct {
	Contents          []content        `json:"contents"`
	SystemInstruction *content         `json:"systemInstruction,omitempty"`
	GenerationConfig  generationConfig `json:"generationConfig"`
}

func newRequest(req llm.Request) generateRequest {
	out := generateRequest{
		Contents:         make([]content, 0, len(req.Messages)),
		GenerationConfig: generationConfig{MaxOutputTokens: min(req.MaxTokens, 1<<31-1), Temperature: req.Temperature},
	}
	if req.System != "" {
		out.SystemInstruction = &content{Parts: []part{{Text: req.System}}}
	}
	for _, msg := range req.Messages {
		role := "user"
		if msg.Role == llm.SpeakerAssistant {
			role = "model"
		}
		out.Contents = append(out.Contents, content{Role: role, Parts: []part{{Text: msg.Text}}})
	}
	return out
}

type generateResponse struct {
	Candidates []*struct {
		Content      *content `json:"content"`
		FinishReason string   `json:"finishReason"`
	} `json:"candidates"`
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	UsageMetadata *struct {
		PromptTokenCount        int `json:"promptTokenCount"`
		CandidatesTokenCount    int `json:"candidatesTokenCount"`
		ToolUsePromptTokenCount int `json:"toolUsePromptTokenCount"`
		ThoughtsTokenCount      int `json:"thoughtsTokenCount"`
	} `json:"usageMetadata"`
	ModelVersion string `json:"modelVersion"`
}

// normalise turns a reply into an llm.Response: the first candidate's text without its
// thoughts, the stop reason, the tokens and their cost.
func (r *generateResponse) normalise(spec llm.Spec, prices llm.PriceTable) (llm.Response, error) {
	out := llm.Response{Model: spec.String(), Stop: llm.StopOther}
	if r.ModelVersion != "" {
		out.Model = llm.ProviderGemini + ":" + r.ModelVersion
	}
	if u := r.UsageMetadata; u != nil {
		out.InputTokens = max(0, u.PromptTokenCount) + max(0, u.ToolUsePromptTokenCount)
		// Thinking tokens are billed as output.
		out.OutputTokens = max(0, u.CandidatesTokenCount) + max(0, u.ThoughtsTokenCount)
	}
	out.CostUSD, _ = prices.Cost(spec, out.InputTokens, out.OutputTokens)
	if len(r.Candidates) == 0 || r.Candidates[0] == nil {
		// The prompt itself was blocked: promptFeedback says why and no candidate comes back.
		if r.PromptFeedback != nil && r.PromptFeedback.BlockReason != "" {
			out.Stop = llm.StopRefused
			return out, nil
		}
		return llm.Response{}, &llm.ProviderError{Provider: llm.ProviderGemini, Kind: llm.KindOther, Message: "the reply has no candidates"}
	}
	cand := r.Candidates[0]
	var text strings.Builder
	if cand.Content != nil {
		for _, p := range cand.Content.Parts {
			if !p.Thought {
				text.WriteString(p.Text)
			}
		}
	}
	out.Text = text.String()
	out.Stop = StopReason(cand.FinishReason)
	return out, nil
}

// StopReason maps a candidate's finishReason to the normalised one.
func StopReason(s string) llm.StopReason {
	switch s {
	case "STOP":
		return llm.StopEnd
	case "MAX_TOKENS":
		return llm.StopMaxTokens
	case "SAFETY", "RECITATION", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "LANGUAGE",
		"IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION":
		return llm.StopRefused
	}
	return llm.StopOther
}

// APIError classifies an error reply: Google's {"error": {code, message, status, details}}
// body, or whatever a proxy sent instead (its text becomes the message).
func APIError(status int, header http.Header, body []byte) *llm.ProviderError {
	var env struct {
		Error *struct {
			Message string           `json:"message"`
			Status  string           `json:"status"`
			Details []map[string]any `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &env) != nil || env.Error == nil {
		return llm.HTTPError(llm.ProviderGemini, status, header, strings.TrimSpace(string(body)), nil)
	}
	e := env.Error
	pe := llm.HTTPError(llm.ProviderGemini, status, header, e.Message, nil)
	reason, retryDelay := details(e.Details)
	switch {
	case reason == "API_KEY_INVALID" || e.Status == "UNAUTHENTICATED" || e.Status == "PERMISSION_DENIED":
		pe.Kind = llm.KindAuth
	case e.Status == "NOT_FOUND":
		pe.Kind = llm.KindNotFound
	}
	if pe.RetryAfter == 0 && retryDelay > 0 {
		pe.RetryAfter = retryDelay
	}
	return pe
}

// details reads the google.rpc details Gemini attaches to errors: ErrorInfo's reason
// ("API_KEY_INVALID") and RetryInfo's retryDelay ("37s").
func details(ds []map[string]any) (reason string, retryDelay time.Duration) {
	for _, d := range ds {
		t, _ := d["@type"].(string)
		switch {
		case strings.HasSuffix(t, "google.rpc.ErrorInfo"):
			reason, _ = d["reason"].(string)
		case strings.HasSuffix(t, "google.rpc.RetryInfo"):
			switch v := d["retryDelay"].(type) {
			case string:
				// A protobuf Duration in JSON: decimal seconds with an "s" suffix.
				if dur, err := time.ParseDuration(v); err == nil && dur > 0 {
					retryDelay = dur
				}
			case map[string]any:
				b, _ := json.Marshal(v)
				var pd struct {
					Seconds json.Number `json:"seconds"`
					Nanos   int64       `json:"nanos"`
				}
				if json.Unmarshal(b, &pd) == nil {
					if s, err := pd.Seconds.Int64(); err == nil && s >= 0 && s < 1e9 && pd.Nanos >= 0 && pd.Nanos < 1e9 {
						retryDelay = time.Duration(s)*time.Second + time.Duration(pd.Nanos)
					}
				}
			}
		}
	}
	return reason, retryDelay
}
