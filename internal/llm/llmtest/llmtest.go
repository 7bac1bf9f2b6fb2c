// Package llmtest helps test model providers: an HTTP server that plays recorded exchanges in
// order and fails the test on any request it did not expect, and a sleeper that records
// retry waits instead of waiting.
package llmtest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/llm"
)

// Exchange is one expected request and its recorded reply.
type Exchange struct {
	// Method and Path the request must have (Path excludes the query).
	Method, Path string
	// Status of the reply; 0 means 200.
	Status int
	// Header holds reply headers; Content-Type defaults to application/json.
	Header map[string]string
	// BodyFile is a file (relative to the test's directory) holding the reply body; Body is
	// used when BodyFile is empty.
	BodyFile string
	Body     string
	// Hang makes the handler wait for the request's context to end instead of replying.
	Hang bool
}

// Request is a request the server received.
type Request struct {
	Method, Path string
	Query        string
	Header       http.Header
	Body         []byte
}

// Server plays exchanges in order.
type Server struct {
	*httptest.Server
	t testing.TB

	mu        sync.Mutex
	exchanges []Exchange
	next      int
	requests  []Request
}

// NewServer starts a server that expects exactly the given exchanges, in order. At cleanup it
// fails the test if any exchange was not used.
func NewServer(t testing.TB, exchanges ...Exchange) *Server {
	t.Helper()
	s := &Server{t: t, exchanges: exchanges}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() {
		s.Close()
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.next < len(s.exchanges) {
			t.Errorf("llmtest: %d of %d expected requests were not made", len(s.exchanges)-s.next, len(s.exchanges))
		}
	})
	return s
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
	if s.next >= len(s.exchanges) {
		s.mu.Unlock()
		s.t.Errorf("llmtest: unexpected request %s %s (all %d expected requests were made)", r.Method, r.URL.Path, len(s.exchanges))
		http.Error(w, `{"error":"unexpected request"}`, http.StatusTeapot)
		return
	}
	ex := s.exchanges[s.next]
	s.next++
	s.mu.Unlock()

	if r.Method != ex.Method || r.URL.Path != ex.Path {
		s.t.Errorf("llmtest: request %s %s, want %s %s", r.Method, r.URL.Path, ex.Method, ex.Path)
		http.Error(w, `{"error":"wrong request"}`, http.StatusTeapot)
		return
	}
	if ex.Hang {
		<-r.Context().Done()
		return
	}
	payload := []byte(ex.Body)
	if ex.BodyFile != "" {
		b, err := os.ReadFile(ex.BodyFile)
		if err != nil {
			s.t.Errorf("llmtest: read recorded body: %v", err)
			http.Error(w, "no body", http.StatusInternalServerError)
			return
		}
		payload = b
	}
	w.Header().Set("Content-Type", "application/json")
	for k, v := range ex.Header {
		w.Header().Set(k, v)
	}
	status := ex.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = w.Write(payload)
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Sleeper records the waits a retry policy asks for and returns at once.
type Sleeper struct {
	mu    sync.Mutex
	waits []time.Duration
}

// Sleep records d; it fails only when ctx is already done.
func (s *Sleeper) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

// Waits returns the recorded waits.
func (s *Sleeper) Waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// Policy returns a retry policy that sleeps through s and takes the full backoff ceiling as
// its jitter, so waits are predictable.
func Policy(s *Sleeper, attempts int) llm.RetryPolicy {
	return llm.RetryPolicy{
		MaxAttempts: attempts,
		Sleep:       s.Sleep,
		Jitter:      func(max time.Duration) time.Duration { return max },
	}
}

// Contains reports whether any of the texts contains secret; tests use it to prove a key
// leaked nowhere.
func Contains(secret string, texts ...string) bool {
	for _, t := range texts {
		if secret != "" && strings.Contains(t, secret) {
			return true
		}
	}
	return false
}

// Want is the expected outcome of one call through WithRetry: an error of
// Kind carrying the provider's message Msg, or Response; and the waits
// the retry policy slept.
type Want struct {
	Response llm.Response
	Kind     llm.ErrorKind
	Msg      string
	Waits    []time.Duration
}

// Check asserts a call's outcome against want for provider: a classified
// *llm.ProviderError with the provider's own message and never the key,
// or the normalised response (latency aside); then the retry waits.
func Check(t testing.TB, provider string, got llm.Response, err error, want Want, key string, sleeper *Sleeper) {
	t.Helper()
	if want.Kind != "" {
		var pe *llm.ProviderError
		if !errors.As(err, &pe) {
			t.Fatalf("error = %v, want a *llm.ProviderError", err)
		}
		if pe.Kind != want.Kind || pe.Provider != provider {
			t.Errorf("error kind = %s/%s, want %s/%s", pe.Provider, pe.Kind, provider, want.Kind)
		}
		if !strings.Contains(err.Error(), want.Msg) {
			t.Errorf("error %q does not carry the provider's message %q", err, want.Msg)
		}
		if strings.Contains(err.Error(), key) {
			t.Errorf("error %q contains the API key", err)
		}
	} else {
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
		got.Latency = 0
		if !SameResponse(got, want.Response) {
			t.Errorf("response = %+v\nwant %+v", got, want.Response)
		}
	}
	if w := sleeper.Waits(); !slices.Equal(w, want.Waits) {
		t.Errorf("waits = %v, want %v", w, want.Waits)
	}
}

// SameResponse compares responses, costs up to rounding.
func SameResponse(a, b llm.Response) bool {
	const eps = 1e-12
	d := a.CostUSD - b.CostUSD
	a.CostUSD, b.CostUSD = 0, 0
	return a == b && d < eps && d > -eps
}

// Exercise runs one call against a fresh server answering with exchanges:
// open builds the provider's model on the server, the call goes through
// WithRetry (3 attempts, a recording sleeper), Check judges the outcome,
// and every request the server saw goes to checkRequest.
func Exercise(t *testing.T, provider, key string, exchanges []Exchange, open func(*Server) (llm.Model, error),
	req llm.Request, want Want, checkRequest func(*testing.T, Request)) {
	t.Helper()
	srv := NewServer(t, exchanges...)
	m, err := open(srv)
	if err != nil {
		t.Fatal(err)
	}
	sleeper := &Sleeper{}
	got, err := llm.WithRetry(m, Policy(sleeper, 3)).Generate(t.Context(), req)
	Check(t, provider, got, err, want, key, sleeper)
	reqs := srv.Requests()
	if len(reqs) != len(exchanges) {
		t.Fatalf("server saw %d requests, want %d", len(reqs), len(exchanges))
	}
	for _, r := range reqs {
		checkRequest(t, r)
	}
}

// CheckNormalised fails t when a provider's reading of a reply it decoded
// broke the Response contract: an error that is not a *llm.ProviderError,
// negative usage or cost, a stop reason outside llm's, or a model not named
// provider:model. It reports whether the reply was read (err == nil), for
// the caller's own checks.
func CheckNormalised(t testing.TB, provider string, out llm.Response, err error) bool {
	t.Helper()
	if err != nil {
		var pe *llm.ProviderError
		if !errors.As(err, &pe) {
			t.Fatalf("error %v is not classified", err)
		}
		return false
	}
	if out.InputTokens < 0 || out.OutputTokens < 0 || out.CostUSD < 0 {
		t.Fatalf("negative usage: %+v", out)
	}
	switch out.Stop {
	case llm.StopEnd, llm.StopMaxTokens, llm.StopRefused, llm.StopOther:
	default:
		t.Fatalf("stop reason %q", out.Stop)
	}
	if !strings.HasPrefix(out.Model, provider+":") {
		t.Fatalf("model %q is not named %s:MODEL", out.Model, provider)
	}
	return true
}

// CheckAPIError fails t when a provider's reading of an error reply of an
// HTTP status in 400-599 broke the ProviderError contract: nil, another
// provider or status, a negative wait, a message empty or over 700 bytes
// (a whole HTML page kept), or a 429 or 5xx classified as permanent
// though it is neither an auth nor a not-found error.
func CheckAPIError(t testing.TB, provider string, status int, body []byte, pe *llm.ProviderError) {
	t.Helper()
	if pe == nil || pe.Provider != provider || pe.Status != status {
		t.Fatalf("APIError(%d, %q) = %+v", status, body, pe)
	}
	if pe.RetryAfter < 0 {
		t.Fatalf("APIError(%d, %q) asks to wait %v", status, body, pe.RetryAfter)
	}
	if pe.Message == "" || len(pe.Message) > 700 {
		t.Fatalf("APIError(%d, %q) message of %d bytes", status, body, len(pe.Message))
	}
	if (status == 429 || status >= 500) && !pe.Transient() && pe.Kind != llm.KindAuth && pe.Kind != llm.KindNotFound {
		t.Fatalf("HTTP %d classified as permanent %s", status, pe.Kind)
	}
}
