package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Sentinels that classify model errors; a [*ProviderError] matches exactly one of them.
var (
	// ErrTransient matches errors worth retrying: rate limits, overload, server errors,
	// dropped connections and timeouts.
	ErrTransient = errors.New("transient model error")
	// ErrPermanent matches errors that fail the same way if retried: authentication, bad
	// requests, prompts longer than the context window, unknown models.
	ErrPermanent = errors.New("permanent model error")
	// ErrMissingKey is matched by [*MissingKeyError].
	ErrMissingKey = errors.New("missing API key")
)

// ErrorKind says what went wrong in a model call.
type ErrorKind string

// Kinds of model errors. The first five are transient.
const (
	KindRateLimited    ErrorKind = "rate_limited"     // HTTP 429
	KindOverloaded     ErrorKind = "overloaded"       // HTTP 529 (Anthropic), 503
	KindServer         ErrorKind = "server_error"     // other 5xx, 408, 409
	KindNetwork        ErrorKind = "network"          // connection refused, reset, dropped mid-body
	KindTimeout        ErrorKind = "timeout"          // an attempt ran past its timeout
	KindAuth           ErrorKind = "authentication"   // HTTP 401, 403
	KindBadRequest     ErrorKind = "bad_request"      // HTTP 400, 422 and other 4xx
	KindContextTooLong ErrorKind = "context_too_long" // the prompt does not fit the context window
	KindNotFound       ErrorKind = "model_not_found"  // HTTP 404
	KindQuota          ErrorKind = "quota_exceeded"   // out of credit (OpenAI's 429 insufficient_quota)
	KindOther          ErrorKind = "other"            // an unexpected reply
)

// Transient reports whether an error of this kind is worth retrying.
func (k ErrorKind) Transient() bool {
	switch k {
	case KindRateLimited, KindOverloaded, KindServer, KindNetwork, KindTimeout:
		return true
	}
	return false
}

// ProviderError is a classified failure of a model call.
type ProviderError struct {
	// Provider is the provider's name ("anthropic", ...).
	Provider string
	Kind     ErrorKind
	// Status is the HTTP status, 0 when no response arrived.
	Status int
	// Message is the provider's own explanation (from the error body), or the transport error.
	Message string
	// RetryAfter is how long the provider asked us to wait (retry-after headers or the body's
	// retry info); 0 when it did not say.
	RetryAfter time.Duration
	// Err is the underlying SDK or transport error, for errors.As; its text is not shown,
	// since SDK errors may carry request details.
	Err error
}

// Error says what failed, the provider's message, and what to do.
func (e *ProviderError) Error() string {
	var b strings.Builder
	b.WriteString(e.Provider)
	b.WriteString(": ")
	b.WriteString(kindText(e.Kind))
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if h := hint(e.Provider, e.Kind); h != "" {
		b.WriteString("; ")
		b.WriteString(h)
	}
	return b.String()
}

// Unwrap returns the SDK or transport error.
func (e *ProviderError) Unwrap() error { return e.Err }

// Is matches [ErrTransient] or [ErrPermanent] according to the kind.
func (e *ProviderError) Is(target error) bool {
	switch target {
	case ErrTransient:
		return e.Kind.Transient()
	case ErrPermanent:
		return !e.Kind.Transient()
	}
	return false
}

// Transient reports whether retrying may succeed.
func (e *ProviderError) Transient() bool { return e.Kind.Transient() }

func kindText(k ErrorKind) string {
	switch k {
	case KindRateLimited:
		return "rate limited"
	case KindOverloaded:
		return "overloaded"
	case KindServer:
		return "server error"
	case KindNetwork:
		return "connection failed"
	case KindTimeout:
		return "timed out"
	case KindAuth:
		return "authentication failed"
	case KindBadRequest:
		return "request rejected"
	case KindContextTooLong:
		return "prompt too long for the model's context window"
	case KindNotFound:
		return "model or endpoint not found"
	case KindQuota:
		return "quota exceeded"
	}
	return "unexpected reply"
}

func hint(provider string, k ErrorKind) string {
	switch k {
	case KindAuth:
		if vars := KeyVars(provider); len(vars) > 0 {
			return "check the API key (" + strings.Join(vars, " or ") + ", or the provider's api_key in the config)"
		}
	case KindContextTooLong:
		return "shorten the input or choose a model with a larger context window"
	case KindNotFound:
		return "check the model name and the base URL (`azero models` shows them)"
	case KindQuota:
		return "check the account's plan and billing with the provider"
	case KindNetwork:
		if v := BaseURLVar(provider); v != "" {
			return "check the network, or that the server named by " + v + " is running"
		}
	}
	return ""
}

// IsTransient reports whether err is worth retrying: a transient [*ProviderError], or a bare
// transport failure (connection refused or reset, a body cut short) that no provider
// classified. Context cancellation is never transient.
func IsTransient(err error) bool {
	if err == nil {
		return false
	}
	// A ProviderError decides, even when it wraps a context error (an attempt's own timeout).
	var pe *ProviderError
	if errors.As(err, &pe) {
		return pe.Transient()
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	return isTransportFailure(err)
}

// RetryAfterOf returns the wait a provider asked for, if err carries one.
func RetryAfterOf(err error) (time.Duration, bool) {
	var pe *ProviderError
	if errors.As(err, &pe) && pe.RetryAfter > 0 {
		return pe.RetryAfter, true
	}
	return 0, false
}

// StatusKind classifies an HTTP error status.
func StatusKind(status int) ErrorKind {
	switch {
	case status == http.StatusTooManyRequests:
		return KindRateLimited
	case status == 529 || status == http.StatusServiceUnavailable:
		return KindOverloaded
	case status == http.StatusRequestTimeout || status == http.StatusConflict || status >= 500:
		return KindServer
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return KindAuth
	case status == http.StatusNotFound:
		return KindNotFound
	case status == http.StatusRequestEntityTooLarge:
		return KindContextTooLong
	case status >= 400:
		return KindBadRequest
	}
	return KindOther
}

// HTTPError builds the [*ProviderError] for an error response: the kind from the status
// (a 400 whose message says the prompt is too long becomes [KindContextTooLong]), the wait
// from the retry headers. Provider packages refine Kind afterwards when their error body is
// more precise than the status.
func HTTPError(provider string, status int, header http.Header, message string, cause error) *ProviderError {
	kind := StatusKind(status)
	if (kind == KindBadRequest || kind == KindContextTooLong) && LooksLikeContextTooLong(message) {
		kind = KindContextTooLong
	}
	if strings.TrimSpace(message) == "" {
		// An error reply that says nothing still gets a message to show.
		message = http.StatusText(status)
		if message == "" {
			message = "the reply says nothing more"
		}
	}
	e := &ProviderError{Provider: provider, Kind: kind, Status: status, Message: trimMessage(message), Err: cause}
	if d, ok := ParseRetryAfter(header, time.Now()); ok {
		e.RetryAfter = d
	}
	return e
}

// LooksLikeContextTooLong recognises the providers' wordings for a prompt that does not fit:
// Anthropic "prompt is too long", OpenAI "maximum context length" / context_length_exceeded,
// Gemini "input token count ... exceeds the maximum", llama.cpp and vLLM variants.
func LooksLikeContextTooLong(message string) bool {
	m := strings.ToLower(message)
	for _, s := range []string{
		"prompt is too long",
		"context_length_exceeded",
		"maximum context length",
		"context length",
		"context window",
		"exceeds the maximum number of tokens",
		"input token count",
		"too many tokens",
		"exceeds the available context size",
	} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// maxMessage bounds a provider message kept in an error (an HTML error page from a proxy
// would otherwise flood the terminal).
const maxMessage = 600

func trimMessage(s string) string {
	s = strings.TrimSpace(s)
	if len(s) <= maxMessage {
		return s
	}
	cut := maxMessage
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// TransportError classifies an error that happened before a complete response arrived.
// It returns a transient [*ProviderError] for a refused, reset or dropped connection or a
// network timeout, and ok=false for anything else (including context cancellation, which the
// caller handles).
func TransportError(provider string, err error) (*ProviderError, bool) {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil, false
	}
	if !isTransportFailure(err) {
		return nil, false
	}
	kind := KindNetwork
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		kind = KindTimeout
	}
	return &ProviderError{Provider: provider, Kind: kind, Message: transportText(err), Err: err}, true
}

func isTransportFailure(err error) bool {
	// A name that does not resolve is usually a typo in a base URL: retrying will not help
	// unless the resolver itself timed out.
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return dnsErr.IsTimeout || dnsErr.IsTemporary
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return true
	}
	// *url.Error is a net.Error too, for every failure of http.Client.Do (a bad scheme
	// included), so only its timeouts count, and otherwise a socket-level *net.OpError.
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var oe *net.OpError
	return errors.As(err, &oe)
}

// transportText names the failure without the request URL's query (which may hold a key on
// some gateways): the innermost system error is enough to act on.
func transportText(err error) string {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset by peer"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "connection closed before the response was complete"
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "network timeout"
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Op + ": " + oe.Err.Error()
	}
	return "network error"
}

// ParseRetryAfter reads how long a response asks us to wait: retry-after-ms (milliseconds),
// else retry-after as seconds or as an HTTP date (relative to now). ok is false when neither
// header holds a usable value.
func ParseRetryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if h == nil {
		return 0, false
	}
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("retry-after"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		// Written so that NaN fails too.
		if !(s >= 0 && s <= 1e9) {
			return 0, false
		}
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		d := t.Sub(now)
		if d < 0 {
			d = 0
		}
		return d, true
	}
	return 0, false
}

// MissingKeyError is returned when a model is opened without an API key. It names the
// environment variables that would provide one.
type MissingKeyError struct {
	Provider string
	Vars     []string
}

// Error tells the user which variable to set.
func (e *MissingKeyError) Error() string {
	vars := strings.Join(e.Vars, " or ")
	if vars == "" {
		vars = "the provider's API key variable"
	}
	return fmt.Sprintf("%s: no API key: set %s (or api_key for %s in the config), or run with AZERO_MOCK_LLM=1 to use the offline scripted model", e.Provider, vars, e.Provider)
}

// Is matches [ErrMissingKey].
func (e *MissingKeyError) Is(target error) bool { return target == ErrMissingKey }

// ClassifyError is the last step of a provider's error mapping, after it has handled its SDK's
// API error type: context errors and [*ProviderError]s pass through unchanged, transport
// failures become transient, and anything else becomes a permanent [KindOther] error.
func ClassifyError(provider string, err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var pe *ProviderError
	if errors.As(err, &pe) {
		return err
	}
	if te, ok := TransportError(provider, err); ok {
		return te
	}
	return &ProviderError{Provider: provider, Kind: KindOther, Message: trimMessage(err.Error()), Err: err}
}
