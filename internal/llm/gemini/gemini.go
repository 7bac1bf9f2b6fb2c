// Package gemini is the Gemini provider, through the official SDK (google.golang.org/genai)
// with the Gemini API backend and an API key.
//
// Invariants: the SDK's own retries are off (llm.WithRetry is the only retry loop); the
// backend, key and base URL are set explicitly, so the SDK's environment lookups
// (GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_API_KEY, ...) never change what is called; errors are
// classified into *llm.ProviderError with Google's own message and the wait it asks for (a
// retry-after header or the body's RetryInfo); the key is sent only in the x-goog-api-key
// header and appears in no error.
package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"google.golang.org/genai"

	"github.com/azero-dev/azero/internal/llm"
)

// Options configures a Gemini model. The APIKey is required; BaseURL
// replaces https://generativelanguage.googleapis.com/ (without the API
// version); the HTTPClient is copied, never modified.
type Options = llm.ClientOptions

// Model is a Gemini model.
type Model struct {
	spec   llm.Spec
	client *genai.Client
	prices llm.PriceTable
	now    func() time.Time
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
	timeout := opts.RequestTimeout()
	one := int32(1)
	cfg := &genai.ClientConfig{
		APIKey:     opts.APIKey,
		Backend:    genai.BackendGeminiAPI,
		HTTPClient: capturingClient(opts.HTTPClient),
		HTTPOptions: genai.HTTPOptions{
			BaseURL: opts.BaseURL,
			Timeout: &timeout,
			// One attempt: llm.WithRetry retries.
			RetryOptions: &genai.HTTPRetryOptions{Attempts: &one},
		},
	}
	// The context only matters for Vertex AI credential discovery, which the Gemini API
	// backend with a key never does.
	client, err := genai.NewClient(context.Background(), cfg)
	if err != nil {
		// Not %w and not the SDK's text: it may print the whole config, key included.
		return nil, errors.New("gemini: the client could not be configured; check GOOGLE_GEMINI_BASE_URL")
	}
	return &Model{
		spec:   llm.Spec{Provider: llm.ProviderGemini, Model: opts.Model},
		client: client,
		prices: opts.PriceTable(),
		now:    time.Now,
	}, nil
}

// Name returns "gemini:<model>".
func (m *Model) Name() string { return m.spec.String() }

// Generate sends one generateContent request.
func (m *Model) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	if err := req.Validate(); err != nil {
		return llm.Response{}, fmt.Errorf("%s: %w", m.Name(), err)
	}
	noContinuation := false
	config := &genai.GenerateContentConfig{
		MaxOutputTokens:       int32(min(req.MaxTokens, 1<<31-1)),
		AutomaticContinuation: &noContinuation,
	}
	if req.System != "" {
		config.SystemInstruction = &genai.Content{Parts: []*genai.Part{{Text: req.System}}}
	}
	if req.Temperature != nil {
		t := float32(*req.Temperature)
		config.Temperature = &t
	}
	contents := make([]*genai.Content, 0, len(req.Messages))
	for _, msg := range req.Messages {
		role := genai.Role(genai.RoleUser)
		if msg.Role == llm.SpeakerAssistant {
			role = genai.RoleModel
		}
		contents = append(contents, genai.NewContentFromText(msg.Text, role))
	}

	capture := &headerCapture{}
	ctx = context.WithValue(ctx, captureKey{}, capture)
	start := m.now()
	resp, err := m.client.Models.GenerateContent(ctx, m.spec.Model, contents, config)
	latency := m.now().Sub(start)
	if err != nil {
		return llm.Response{}, classify(err, capture.get())
	}

	out := llm.Response{Model: m.Name(), Latency: latency, Stop: llm.StopOther}
	if resp.ModelVersion != "" {
		out.Model = llm.ProviderGemini + ":" + resp.ModelVersion
	}
	if u := resp.UsageMetadata; u != nil {
		out.InputTokens = int(u.PromptTokenCount + u.ToolUsePromptTokenCount)
		// Thinking tokens are billed as output.
		out.OutputTokens = int(u.CandidatesTokenCount + u.ThoughtsTokenCount)
	}
	out.CostUSD, _ = m.prices.Cost(m.spec, out.InputTokens, out.OutputTokens)
	if len(resp.Candidates) == 0 || resp.Candidates[0] == nil {
		// The prompt itself was blocked: promptFeedback says why and no candidate comes back.
		if resp.PromptFeedback != nil && resp.PromptFeedback.BlockReason != "" {
			out.Stop = llm.StopRefused
			return out, nil
		}
		return llm.Response{}, &llm.ProviderError{Provider: llm.ProviderGemini, Kind: llm.KindOther, Message: "the reply has no candidates"}
	}
	cand := resp.Candidates[0]
	var text strings.Builder
	if cand.Content != nil {
		for _, p := range cand.Content.Parts {
			if p != nil && !p.Thought {
				text.WriteString(p.Text)
			}
		}
	}
	out.Text = text.String()
	out.Stop = StopReason(string(cand.FinishReason))
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

func classify(err error, header http.Header) error {
	var apiErr genai.APIError
	if !errors.As(err, &apiErr) {
		var p *genai.APIError
		if errors.As(err, &p) && p != nil {
			apiErr = *p
		} else {
			return llm.ClassifyError(llm.ProviderGemini, err)
		}
	}
	pe := llm.HTTPError(llm.ProviderGemini, apiErr.Code, header, apiErr.Message, err)
	reason, retryDelay := details(apiErr.Details)
	switch {
	case reason == "API_KEY_INVALID" || apiErr.Status == "UNAUTHENTICATED" || apiErr.Status == "PERMISSION_DENIED":
		pe.Kind = llm.KindAuth
	case apiErr.Status == "NOT_FOUND":
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

// The genai SDK drops the response headers of an error, and with them retry-after. A
// transport wrapper copies them into a holder the call puts in its context.

type captureKey struct{}

type headerCapture struct {
	mu sync.Mutex
	h  http.Header
}

func (c *headerCapture) set(h http.Header) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.h = h.Clone()
}

func (c *headerCapture) get() http.Header {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.h
}

type capturingTransport struct{ base http.RoundTripper }

func (t capturingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if c, ok := r.Context().Value(captureKey{}).(*headerCapture); ok && resp != nil {
		c.set(resp.Header)
	}
	return resp, err
}

// capturingClient returns a copy of c (or a new client) whose transport records headers.
func capturingClient(c *http.Client) *http.Client {
	var out http.Client
	if c != nil {
		out = *c
	}
	base := out.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	out.Transport = capturingTransport{base: base}
	return &out
}
