package llm

import (
	"net/http"
	"time"
)

// DefaultClientTimeout bounds one HTTP request of a provider's client when
// ClientOptions.Timeout is zero; WithRetry's per-attempt timeout usually ends
// a call sooner.
const DefaultClientTimeout = 10 * time.Minute

// ClientOptions configure a provider's model (packages anthropic, gemini
// and openai; each says what its BaseURL means and whether a key is
// required).
type ClientOptions struct {
	// Model is the provider's own model name ("claude-sonnet-4-5").
	Model string
	// APIKey authenticates the calls.
	APIKey string
	// BaseURL replaces the provider's public API.
	BaseURL string
	// HTTPClient replaces the default client.
	HTTPClient *http.Client
	// Timeout bounds one HTTP request (default DefaultClientTimeout).
	Timeout time.Duration
	// Prices computes Response.CostUSD; nil uses DefaultPrices().
	Prices PriceTable
}

// RequestTimeout returns Timeout, or the default when it is not set.
func (o ClientOptions) RequestTimeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return DefaultClientTimeout
}

// PriceTable returns Prices, or the default table when it is not set.
func (o ClientOptions) PriceTable() PriceTable {
	if o.Prices != nil {
		return o.Prices
	}
	return DefaultPrices()
}
