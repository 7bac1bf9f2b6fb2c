package llm

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Defaults of [RetryPolicy].
const (
	DefaultMaxAttempts   = 4
	DefaultBaseDelay     = time.Second
	DefaultMaxDelay      = 30 * time.Second
	DefaultMaxRetryAfter = 60 * time.Second
	// DefaultAttemptTimeout bounds one attempt. Long code generations on large models take
	// minutes; ten minutes is also the ceiling Anthropic suggests for a non-streaming call.
	DefaultAttemptTimeout = 10 * time.Minute
)

// RetryPolicy says how [WithRetry] retries transient failures. Zero fields take the defaults.
type RetryPolicy struct {
	// MaxAttempts is the total number of attempts, the first included (default 4).
	MaxAttempts int
	// BaseDelay and MaxDelay bound the exponential backoff: before retry n (1-based) the wait is
	// drawn uniformly from [0, min(MaxDelay, BaseDelay*2^(n-1))] ("full jitter").
	BaseDelay, MaxDelay time.Duration
	// MaxRetryAfter caps a wait the provider asks for (retry-after); the provider's wait
	// replaces the backoff when present.
	MaxRetryAfter time.Duration
	// Timeout bounds each attempt (default 10 minutes); an attempt that runs out is a transient
	// timeout and is retried while attempts remain. Negative means no per-attempt timeout.
	Timeout time.Duration
	// Sleep waits d or until ctx is done (returning ctx.Err()). Tests inject a recorder.
	Sleep func(ctx context.Context, d time.Duration) error
	// Jitter returns a duration in [0, max]; default uniform random.
	Jitter func(max time.Duration) time.Duration
	// OnRetry, when set, is told about each retry before its wait (for progress messages).
	OnRetry func(RetryEvent)
}

// RetryEvent describes a retry about to happen.
type RetryEvent struct {
	Model string
	// Attempt is the attempt that failed (1-based).
	Attempt int
	Err     error
	Wait    time.Duration
}

// DefaultRetryPolicy returns the policy with every default filled in.
func DefaultRetryPolicy() RetryPolicy { return RetryPolicy{}.withDefaults() }

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = DefaultBaseDelay
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = DefaultMaxDelay
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if p.Timeout == 0 {
		p.Timeout = DefaultAttemptTimeout
	}
	if p.Sleep == nil {
		p.Sleep = sleepContext
	}
	if p.Jitter == nil {
		p.Jitter = func(max time.Duration) time.Duration {
			if max <= 0 {
				return 0
			}
			return rand.N(max + 1)
		}
	}
	return p
}

// Backoff returns the wait before retry n (1-based) when the provider asked for none: the
// exponential ceiling min(MaxDelay, BaseDelay*2^(n-1)) passed through Jitter.
func (p RetryPolicy) Backoff(n int) time.Duration {
	p = p.withDefaults()
	ceiling := p.BaseDelay
	for i := 1; i < n && ceiling < p.MaxDelay; i++ {
		ceiling *= 2
	}
	ceiling = min(ceiling, p.MaxDelay)
	d := p.Jitter(ceiling)
	if d < 0 {
		d = 0
	}
	if d > ceiling {
		d = ceiling
	}
	return d
}

// Wait returns the wait before retry n after err: the provider's retry-after (capped at
// MaxRetryAfter) when it gave one, else [RetryPolicy.Backoff].
func (p RetryPolicy) Wait(n int, err error) time.Duration {
	p = p.withDefaults()
	if d, ok := RetryAfterOf(err); ok {
		return min(d, p.MaxRetryAfter)
	}
	return p.Backoff(n)
}

func sleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// WithRetry returns m retrying transient failures under p. Permanent errors return at once,
// a done context stops everything at once (its error is returned), and after the last attempt
// the last error is returned wrapped with the number of attempts.
func WithRetry(m Model, p RetryPolicy) Model {
	return &retrying{m: m, p: p.withDefaults()}
}

type retrying struct {
	m Model
	p RetryPolicy
}

func (r *retrying) Name() string { return r.m.Name() }

func (r *retrying) Generate(ctx context.Context, req Request) (Response, error) {
	var last error
	for attempt := 1; ; attempt++ {
		resp, err := r.attempt(ctx, req)
		if err == nil {
			return resp, nil
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return Response{}, fmt.Errorf("%s: %w", r.m.Name(), ctxErr)
		}
		if !IsTransient(err) {
			return Response{}, err
		}
		last = err
		if attempt >= r.p.MaxAttempts {
			break
		}
		wait := r.p.Wait(attempt, err)
		if r.p.OnRetry != nil {
			r.p.OnRetry(RetryEvent{Model: r.m.Name(), Attempt: attempt, Err: err, Wait: wait})
		}
		if err := r.p.Sleep(ctx, wait); err != nil {
			return Response{}, fmt.Errorf("%s: waiting to retry: %w", r.m.Name(), err)
		}
	}
	return Response{}, &RetryError{Attempts: r.p.MaxAttempts, Err: last}
}

// attempt runs one call under the per-attempt timeout, turning its expiry (while the caller's
// context is still live) into a transient timeout error.
func (r *retrying) attempt(ctx context.Context, req Request) (Response, error) {
	if r.p.Timeout < 0 {
		return r.m.Generate(ctx, req)
	}
	actx, cancel := context.WithTimeout(ctx, r.p.Timeout)
	defer cancel()
	resp, err := r.m.Generate(actx, req)
	if err != nil && ctx.Err() == nil && (actx.Err() != nil || errors.Is(err, context.DeadlineExceeded)) {
		provider := r.m.Name()
		if s, perr := ParseSpec(provider); perr == nil {
			provider = s.Provider
		}
		return Response{}, &ProviderError{
			Provider: provider,
			Kind:     KindTimeout,
			Message:  fmt.Sprintf("no reply within %s", r.p.Timeout),
			Err:      err,
		}
	}
	return resp, err
}

// RetryError is returned when every attempt failed transiently. It unwraps to the last error,
// so errors.Is(err, ErrTransient) and errors.As(err, **ProviderError) still work.
type RetryError struct {
	Attempts int
	Err      error
}

// Error names the attempts and the last failure.
func (e *RetryError) Error() string {
	return fmt.Sprintf("gave up after %d attempts: %v", e.Attempts, e.Err)
}

// Unwrap returns the last attempt's error.
func (e *RetryError) Unwrap() error { return e.Err }
