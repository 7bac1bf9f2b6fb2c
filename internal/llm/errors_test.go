package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestHTTPErrorClassification(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status    int
		message   string
		header    http.Header
		wantKind  ErrorKind
		transient bool
		wantWait  time.Duration
	}{
		{429, "slow down", http.Header{"Retry-After": {"3"}}, KindRateLimited, true, 3 * time.Second},
		{529, "Overloaded", nil, KindOverloaded, true, 0},
		{503, "unavailable", http.Header{"Retry-After-Ms": {"250"}}, KindOverloaded, true, 250 * time.Millisecond},
		{500, "internal", nil, KindServer, true, 0},
		{502, "<html>bad gateway</html>", nil, KindServer, true, 0},
		{504, "timeout", nil, KindServer, true, 0},
		{408, "request timeout", nil, KindServer, true, 0},
		{401, "invalid x-api-key", nil, KindAuth, false, 0},
		{403, "permission denied", nil, KindAuth, false, 0},
		{400, "messages: field required", nil, KindBadRequest, false, 0},
		{400, "prompt is too long: 215034 tokens > 200000 maximum", nil, KindContextTooLong, false, 0},
		{400, "This model's maximum context length is 128000 tokens.", nil, KindContextTooLong, false, 0},
		{400, "The input token count (1245678) exceeds the maximum number of tokens allowed (1048576).", nil, KindContextTooLong, false, 0},
		{413, "request_too_large", nil, KindContextTooLong, false, 0},
		{422, "unprocessable", nil, KindBadRequest, false, 0},
		{404, "model: claude-9", nil, KindNotFound, false, 0},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d %s", tt.status, tt.message), func(t *testing.T) {
			t.Parallel()
			pe := HTTPError("anthropic", tt.status, tt.header, tt.message, nil)
			if pe.Kind != tt.wantKind || pe.Transient() != tt.transient || pe.RetryAfter != tt.wantWait {
				t.Errorf("HTTPError = kind %s transient %v wait %v; want %s %v %v", pe.Kind, pe.Transient(), pe.RetryAfter, tt.wantKind, tt.transient, tt.wantWait)
			}
			if IsTransient(pe) != tt.transient || errors.Is(pe, ErrTransient) != tt.transient || errors.Is(pe, ErrPermanent) == tt.transient {
				t.Error("IsTransient / errors.Is disagree with the kind")
			}
			if !strings.Contains(pe.Error(), tt.message) || !strings.Contains(pe.Error(), fmt.Sprint(tt.status)) {
				t.Errorf("Error() = %q lacks the message or status", pe.Error())
			}
		})
	}
}

func TestErrorHints(t *testing.T) {
	t.Parallel()
	auth := HTTPError("gemini", 401, nil, "bad key", nil).Error()
	if !strings.Contains(auth, "GEMINI_API_KEY or GOOGLE_API_KEY") {
		t.Errorf("auth error %q does not say which variable to check", auth)
	}
	long := HTTPError("openai", 413, nil, strings.Repeat("x", 5000), nil).Error()
	if len(long) > 1000 || !strings.Contains(long, "…") {
		t.Errorf("a huge provider message is not trimmed (%d bytes)", len(long))
	}
}

func TestTransportClassification(t *testing.T) {
	t.Parallel()
	opErr := func(e error) error {
		return &url.Error{Op: "Post", URL: "http://127.0.0.1:1/v1/messages", Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", e)}}
	}
	tests := []struct {
		name      string
		err       error
		transient bool
		kind      ErrorKind
	}{
		{"connection refused", opErr(syscall.ECONNREFUSED), true, KindNetwork},
		{"connection reset", opErr(syscall.ECONNRESET), true, KindNetwork},
		{"unexpected EOF", &url.Error{Op: "Post", URL: "u", Err: io.ErrUnexpectedEOF}, true, KindNetwork},
		{"net timeout", &url.Error{Op: "Post", URL: "u", Err: timeoutErr{}}, true, KindTimeout},
		{"dns typo", &url.Error{Op: "Post", URL: "u", Err: &net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "api.antropic.com", IsNotFound: true}}}, false, KindOther},
		{"dns timeout", &url.Error{Op: "Post", URL: "u", Err: &net.DNSError{Err: "timeout", Name: "x", IsTimeout: true}}, true, KindTimeout},
		{"bad scheme", &url.Error{Op: "Post", URL: "u", Err: errors.New("unsupported protocol scheme")}, false, KindOther},
		{"decode error", errors.New("unexpected end of JSON input"), false, KindOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if IsTransient(tt.err) != tt.transient {
				t.Errorf("IsTransient = %v, want %v", !tt.transient, tt.transient)
			}
			got := ClassifyError("openai", tt.err)
			var pe *ProviderError
			if !errors.As(got, &pe) || pe.Kind != tt.kind || pe.Transient() != tt.transient {
				t.Errorf("ClassifyError = %v (%T), want kind %s", got, got, tt.kind)
			}
			if !errors.Is(got, tt.err) {
				t.Error("the classified error does not unwrap to the original")
			}
		})
	}
	for _, ctxErr := range []error{context.Canceled, context.DeadlineExceeded, fmt.Errorf("post: %w", context.Canceled)} {
		if IsTransient(ctxErr) || ClassifyError("openai", ctxErr) != ctxErr {
			t.Errorf("context error %v was classified", ctxErr)
		}
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 10, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header http.Header
		want   time.Duration
		ok     bool
	}{
		{"none", http.Header{}, 0, false},
		{"nil", nil, 0, false},
		{"seconds", http.Header{"Retry-After": {"7"}}, 7 * time.Second, true},
		{"fractional seconds", http.Header{"Retry-After": {"1.5"}}, 1500 * time.Millisecond, true},
		{"milliseconds win", http.Header{"Retry-After": {"7"}, "Retry-After-Ms": {"1200"}}, 1200 * time.Millisecond, true},
		{"http date", http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second, true},
		{"date in the past", http.Header{"Retry-After": {now.Add(-time.Hour).Format(http.TimeFormat)}}, 0, true},
		{"garbage", http.Header{"Retry-After": {"soon"}}, 0, false},
		{"negative", http.Header{"Retry-After": {"-3"}}, 0, false},
		{"absurd", http.Header{"Retry-After": {"1e300"}}, 0, false},
		{"not a number", http.Header{"Retry-After": {"NaN"}}, 0, false},
		{"bad ms falls back", http.Header{"Retry-After": {"2"}, "Retry-After-Ms": {"x"}}, 2 * time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := ParseRetryAfter(tt.header, now)
			if got != tt.want || ok != tt.ok {
				t.Errorf("ParseRetryAfter = %v, %v; want %v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestMissingKeyError(t *testing.T) {
	t.Parallel()
	err := error(&MissingKeyError{Provider: "gemini", Vars: KeyVars("gemini")})
	if !errors.Is(err, ErrMissingKey) {
		t.Error("not ErrMissingKey")
	}
	for _, want := range []string{"GEMINI_API_KEY", "GOOGLE_API_KEY", "AZERO_MOCK_LLM=1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not mention %s", err, want)
		}
	}
}
