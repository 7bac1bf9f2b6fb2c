package llm

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// fakeModel answers with a fixed sequence of results; past the end it repeats the last.
type fakeModel struct {
	name    string
	results []result
	block   bool // wait for ctx instead of answering

	mu    sync.Mutex
	calls int
}

type result struct {
	resp Response
	err  error
}

func (f *fakeModel) Name() string {
	if f.name == "" {
		return "anthropic:claude-sonnet-4-5"
	}
	return f.name
}

func (f *fakeModel) Generate(ctx context.Context, _ Request) (Response, error) {
	f.mu.Lock()
	n := f.calls
	f.calls++
	f.mu.Unlock()
	if f.block {
		<-ctx.Done()
		return Response{}, ctx.Err()
	}
	r := f.results[min(n, len(f.results)-1)]
	return r.resp, r.err
}

func (f *fakeModel) Calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

type sleepRecorder struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleepRecorder) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

func transient(kind ErrorKind, wait time.Duration) error {
	return &ProviderError{Provider: "anthropic", Kind: kind, Status: 500, Message: "boom", RetryAfter: wait}
}

var okResult = result{resp: Response{Text: "done", Stop: StopEnd}}

func TestWithRetry(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		results   []result
		attempts  int
		wantCalls int
		wantWaits []time.Duration
		wantErr   error // errors.Is target; nil for success
	}{
		{"success at once", []result{okResult}, 4, 1, nil, nil},
		{"transient then success", []result{{err: transient(KindServer, 0)}, okResult}, 4, 2, []time.Duration{time.Second}, nil},
		{"backoff doubles", []result{{err: transient(KindServer, 0)}, {err: transient(KindOverloaded, 0)}, {err: transient(KindNetwork, 0)}, okResult}, 4, 4,
			[]time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, nil},
		{"retry-after replaces backoff", []result{{err: transient(KindRateLimited, 12*time.Second)}, okResult}, 4, 2, []time.Duration{12 * time.Second}, nil},
		{"retry-after is capped", []result{{err: transient(KindRateLimited, time.Hour)}, okResult}, 4, 2, []time.Duration{DefaultMaxRetryAfter}, nil},
		{"attempt limit", []result{{err: transient(KindServer, 0)}}, 3, 3, []time.Duration{time.Second, 2 * time.Second}, ErrTransient},
		{"one attempt means no retry", []result{{err: transient(KindServer, 0)}}, 1, 1, nil, ErrTransient},
		{"permanent fails at once", []result{{err: &ProviderError{Provider: "openai", Kind: KindAuth, Status: 401}}}, 4, 1, nil, ErrPermanent},
		{"context too long fails at once", []result{{err: &ProviderError{Provider: "openai", Kind: KindContextTooLong, Status: 400}}}, 4, 1, nil, ErrPermanent},
		{"unclassified error fails at once", []result{{err: errors.New("weird")}}, 4, 1, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := &fakeModel{results: tt.results}
			s := &sleepRecorder{}
			var events []RetryEvent
			p := RetryPolicy{MaxAttempts: tt.attempts, Sleep: s.sleep, Jitter: func(max time.Duration) time.Duration { return max },
				OnRetry: func(e RetryEvent) { events = append(events, e) }}
			resp, err := WithRetry(f, p).Generate(t.Context(), Request{})
			if f.Calls() != tt.wantCalls {
				t.Errorf("calls = %d, want %d", f.Calls(), tt.wantCalls)
			}
			if len(s.waits) != len(tt.wantWaits) {
				t.Fatalf("waits = %v, want %v", s.waits, tt.wantWaits)
			}
			for i := range s.waits {
				if s.waits[i] != tt.wantWaits[i] {
					t.Errorf("waits = %v, want %v", s.waits, tt.wantWaits)
				}
			}
			if len(events) != len(tt.wantWaits) {
				t.Errorf("OnRetry saw %d events, want %d", len(events), len(tt.wantWaits))
			}
			lastOK := tt.results[min(tt.wantCalls-1, len(tt.results)-1)].err == nil
			switch {
			case lastOK:
				if err != nil || resp.Text != "done" {
					t.Errorf("Generate = %+v, %v; want success", resp, err)
				}
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("err = %v, want %v", err, tt.wantErr)
				}
			default:
				if err == nil {
					t.Error("want an error")
				}
			}
			var re *RetryError
			if errors.As(err, &re) != (tt.wantErr == ErrTransient) {
				t.Errorf("RetryError presence wrong for %v", err)
			}
		})
	}
}

func TestBackoffBounds(t *testing.T) {
	t.Parallel()
	p := RetryPolicy{BaseDelay: 500 * time.Millisecond, MaxDelay: 5 * time.Second}
	ceilings := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}
	for n, ceiling := range ceilings {
		// Real jitter: every draw stays within [0, ceiling].
		for range 200 {
			if d := p.Backoff(n + 1); d < 0 || d > ceiling {
				t.Fatalf("Backoff(%d) = %v, outside [0, %v]", n+1, d, ceiling)
			}
		}
		pinned := p
		pinned.Jitter = func(max time.Duration) time.Duration { return max }
		if d := pinned.Backoff(n + 1); d != ceiling {
			t.Errorf("ceiling of retry %d = %v, want %v", n+1, d, ceiling)
		}
	}
	// A huge retry number neither overflows nor exceeds the cap.
	if d := (RetryPolicy{BaseDelay: time.Hour, MaxDelay: 2 * time.Hour, Jitter: func(m time.Duration) time.Duration { return m }}).Backoff(1000); d != 2*time.Hour {
		t.Errorf("Backoff(1000) = %v", d)
	}
	// A misbehaving jitter is clamped.
	if d := (RetryPolicy{Jitter: func(time.Duration) time.Duration { return -time.Second }}).Backoff(1); d != 0 {
		t.Errorf("negative jitter gave %v", d)
	}
	if d := (RetryPolicy{Jitter: func(time.Duration) time.Duration { return time.Hour }}).Backoff(1); d != DefaultBaseDelay {
		t.Errorf("oversized jitter gave %v", d)
	}
	// Full jitter spreads: 200 draws are not all equal.
	seen := map[time.Duration]bool{}
	for range 200 {
		seen[DefaultRetryPolicy().Backoff(3)] = true
	}
	if len(seen) < 10 {
		t.Errorf("jitter produced only %d distinct waits", len(seen))
	}
}

func TestRetryStopsWhenCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	f := &fakeModel{results: []result{{err: transient(KindServer, 0)}}}
	p := RetryPolicy{MaxAttempts: 10, Sleep: func(ctx context.Context, d time.Duration) error {
		cancel() // the user presses ^C while we wait
		return sleepContext(ctx, d)
	}}
	_, err := WithRetry(f, p).Generate(ctx, Request{})
	if !errors.Is(err, context.Canceled) || f.Calls() != 1 {
		t.Errorf("err = %v after %d calls, want context.Canceled after 1", err, f.Calls())
	}

	// Cancelled during a call: no retry, the context error.
	ctx2, cancel2 := context.WithCancel(t.Context())
	blocking := &fakeModel{block: true}
	go func() { time.Sleep(20 * time.Millisecond); cancel2() }()
	_, err = WithRetry(blocking, RetryPolicy{MaxAttempts: 5}).Generate(ctx2, Request{})
	if !errors.Is(err, context.Canceled) || blocking.Calls() != 1 {
		t.Errorf("err = %v after %d calls, want context.Canceled after 1", err, blocking.Calls())
	}
}

func TestAttemptTimeout(t *testing.T) {
	t.Parallel()
	f := &fakeModel{block: true}
	s := &sleepRecorder{}
	// The fake blocks until its attempt's context ends: only the attempt
	// timeout lets this call return at all.
	_, err := WithRetry(f, RetryPolicy{MaxAttempts: 3, Timeout: 20 * time.Millisecond, Sleep: s.sleep}).Generate(t.Context(), Request{})
	var pe *ProviderError
	if !errors.As(err, &pe) || pe.Kind != KindTimeout || pe.Provider != "anthropic" {
		t.Fatalf("err = %v, want a timeout", err)
	}
	if f.Calls() != 3 || len(s.waits) != 2 {
		t.Errorf("calls %d, waits %d; want 3 attempts, 2 waits", f.Calls(), len(s.waits))
	}
}

func TestSleepContext(t *testing.T) {
	t.Parallel()
	if err := sleepContext(t.Context(), time.Millisecond); err != nil {
		t.Error(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := sleepContext(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("sleep on a cancelled context = %v", err)
	}
}
