package llm

import (
	"maps"
	"strings"
)

// Price is what a model costs, in USD per million tokens, and how much it can read.
type Price struct {
	// Input and Output are USD per million input (prompt) and output tokens.
	Input, Output float64
	// LongAbove, when positive, is the prompt size in tokens above which the whole call is
	// billed at LongInput and LongOutput (Gemini 2.5 Pro, Claude Sonnet with a long context).
	LongAbove             int
	LongInput, LongOutput float64
	// ContextWindow is the model's context window in tokens; 0 when unknown.
	ContextWindow int
	// MaxOutput is the most output tokens one reply may have; 0 when unknown.
	MaxOutput int
}

// Cost returns the USD cost of a call with the given token counts.
func (p Price) Cost(inputTokens, outputTokens int) float64 {
	in, out := p.Input, p.Output
	if p.LongAbove > 0 && inputTokens > p.LongAbove {
		in, out = p.LongInput, p.LongOutput
	}
	return (float64(inputTokens)*in + float64(outputTokens)*out) / 1e6
}

// PriceTable maps "provider:model" to its price.
type PriceTable map[string]Price

// DefaultPrices returns a copy of the built-in price table: the vendors' published list
// prices (standard tier, no batch or cache discounts) as of late 2025. When a vendor changes a
// price, override it in the config rather than waiting for a release.
func DefaultPrices() PriceTable { return maps.Clone(defaultPrices) }

var defaultPrices = PriceTable{
	// Anthropic: https://www.anthropic.com/pricing
	"anthropic:claude-opus-4-5":   {Input: 5, Output: 25, ContextWindow: 200_000, MaxOutput: 64_000},
	"anthropic:claude-opus-4-1":   {Input: 15, Output: 75, ContextWindow: 200_000, MaxOutput: 32_000},
	"anthropic:claude-opus-4-0":   {Input: 15, Output: 75, ContextWindow: 200_000, MaxOutput: 32_000},
	"anthropic:claude-opus-4":     {Input: 15, Output: 75, ContextWindow: 200_000, MaxOutput: 32_000},
	"anthropic:claude-sonnet-4-5": {Input: 3, Output: 15, LongAbove: 200_000, LongInput: 6, LongOutput: 22.5, ContextWindow: 200_000, MaxOutput: 64_000},
	"anthropic:claude-sonnet-4-0": {Input: 3, Output: 15, LongAbove: 200_000, LongInput: 6, LongOutput: 22.5, ContextWindow: 200_000, MaxOutput: 64_000},
	"anthropic:claude-sonnet-4":   {Input: 3, Output: 15, LongAbove: 200_000, LongInput: 6, LongOutput: 22.5, ContextWindow: 200_000, MaxOutput: 64_000},
	"anthropic:claude-3-7-sonnet": {Input: 3, Output: 15, ContextWindow: 200_000, MaxOutput: 64_000},
	"anthropic:claude-haiku-4-5":  {Input: 1, Output: 5, ContextWindow: 200_000, MaxOutput: 64_000},
	"anthropic:claude-3-5-haiku":  {Input: 0.8, Output: 4, ContextWindow: 200_000, MaxOutput: 8_192},
	"anthropic:claude-3-haiku":    {Input: 0.25, Output: 1.25, ContextWindow: 200_000, MaxOutput: 4_096},

	// Gemini API: https://ai.google.dev/gemini-api/docs/pricing
	"gemini:gemini-3-pro-preview":  {Input: 2, Output: 12, LongAbove: 200_000, LongInput: 4, LongOutput: 18, ContextWindow: 1_048_576, MaxOutput: 65_536},
	"gemini:gemini-2.5-pro":        {Input: 1.25, Output: 10, LongAbove: 200_000, LongInput: 2.5, LongOutput: 15, ContextWindow: 1_048_576, MaxOutput: 65_536},
	"gemini:gemini-2.5-flash":      {Input: 0.30, Output: 2.50, ContextWindow: 1_048_576, MaxOutput: 65_536},
	"gemini:gemini-2.5-flash-lite": {Input: 0.10, Output: 0.40, ContextWindow: 1_048_576, MaxOutput: 65_536},
	"gemini:gemini-2.0-flash":      {Input: 0.10, Output: 0.40, ContextWindow: 1_048_576, MaxOutput: 8_192},
	"gemini:gemini-2.0-flash-lite": {Input: 0.075, Output: 0.30, ContextWindow: 1_048_576, MaxOutput: 8_192},

	// OpenAI: https://openai.com/api/pricing
	"openai:gpt-5":        {Input: 1.25, Output: 10, ContextWindow: 400_000, MaxOutput: 128_000},
	"openai:gpt-5-mini":   {Input: 0.25, Output: 2, ContextWindow: 400_000, MaxOutput: 128_000},
	"openai:gpt-5-nano":   {Input: 0.05, Output: 0.40, ContextWindow: 400_000, MaxOutput: 128_000},
	"openai:gpt-4.1":      {Input: 2, Output: 8, ContextWindow: 1_047_576, MaxOutput: 32_768},
	"openai:gpt-4.1-mini": {Input: 0.40, Output: 1.60, ContextWindow: 1_047_576, MaxOutput: 32_768},
	"openai:gpt-4.1-nano": {Input: 0.10, Output: 0.40, ContextWindow: 1_047_576, MaxOutput: 32_768},
	"openai:gpt-4o":       {Input: 2.50, Output: 10, ContextWindow: 128_000, MaxOutput: 16_384},
	"openai:gpt-4o-mini":  {Input: 0.15, Output: 0.60, ContextWindow: 128_000, MaxOutput: 16_384},
	"openai:o3":           {Input: 2, Output: 8, ContextWindow: 200_000, MaxOutput: 100_000},
	"openai:o3-mini":      {Input: 1.10, Output: 4.40, ContextWindow: 200_000, MaxOutput: 100_000},
	"openai:o4-mini":      {Input: 1.10, Output: 4.40, ContextWindow: 200_000, MaxOutput: 100_000},
	"openai:o1":           {Input: 15, Output: 60, ContextWindow: 200_000, MaxOutput: 100_000},
}

// With returns a copy of t with overrides added or replacing entries. Keys are
// "provider:model" (the provider part is case-insensitive).
func (t PriceTable) With(overrides map[string]Price) PriceTable {
	out := maps.Clone(t)
	if out == nil {
		out = PriceTable{}
	}
	for k, p := range overrides {
		out[normaliseKey(k)] = p
	}
	return out
}

func normaliseKey(k string) string {
	k = strings.TrimSpace(k)
	if p, m, ok := strings.Cut(k, ":"); ok {
		return strings.ToLower(strings.TrimSpace(p)) + ":" + strings.TrimSpace(m)
	}
	return k
}

// Price returns the price of a model, and false when the model is unpriced (local models,
// unknown names): its calls then cost 0. A dated snapshot takes its family's price:
// "claude-sonnet-4-5-20250929" and "gpt-4.1-2025-04-14" match "claude-sonnet-4-5" and
// "gpt-4.1"; the longest matching name wins, so "gpt-4.1-mini-2025-04-14" is gpt-4.1-mini.
// The provider part of s must be lower case, as [ParseSpec] returns it.
func (t PriceTable) Price(s Spec) (Price, bool) {
	if s.Provider == ProviderMock {
		return Price{}, false
	}
	key := s.String()
	if p, ok := t[key]; ok {
		return p, true
	}
	best, bestLen := Price{}, 0
	for k, p := range t {
		if len(k) > bestLen && len(key) > len(k)+1 && strings.HasPrefix(key, k) && key[len(k)] == '-' && isSnapshotSuffix(key[len(k)+1:]) {
			best, bestLen = p, len(k)
		}
	}
	return best, bestLen > 0
}

// isSnapshotSuffix recognises what vendors append to a model family's name for a dated or
// pinned snapshot: "20250929", "2025-04-14", "001", "preview-06-05", "latest". Anything else
// ("o3-pro", "gpt-4o-audio-preview") is a different model with its own price, so it is not
// matched to the family: better unpriced than priced wrong.
func isSnapshotSuffix(s string) bool {
	if s == "latest" {
		return true
	}
	s = strings.TrimPrefix(s, "preview-")
	if s == "" || s[0] < '0' || s[0] > '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if (s[i] < '0' || s[i] > '9') && s[i] != '-' {
			return false
		}
	}
	return true
}

// Cost returns the cost of a call to s and whether s is priced.
func (t PriceTable) Cost(s Spec, inputTokens, outputTokens int) (float64, bool) {
	p, ok := t.Price(s)
	if !ok {
		return 0, false
	}
	return p.Cost(inputTokens, outputTokens), true
}
