package llm

import (
	"context"
	"errors"
	"fmt"
	"github.com/azero-dev/azero/internal/slug"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Call is the record of one metered model call (retries included), as a [Recorder] stores it.
type Call struct {
	Role    string
	Purpose string
	// Model is the provider:model the call was made to (as configured).
	Model                     string
	InputTokens, OutputTokens int
	CostUSD                   float64
	// Latency is the wall time of the whole call, retries and their waits included.
	Latency time.Duration
	Stop    StopReason
	// Err is the error text of a failed call, empty on success.
	Err string
}

// Recorder stores calls and reports what a run has spent; the store implements it per run.
type Recorder interface {
	// Spent returns the USD already spent by the run (every recorded call's cost).
	Spent(ctx context.Context) (float64, error)
	// Record stores one call.
	Record(ctx context.Context, c Call) error
}

// Lineage stores a run's prompts and responses as numbered files.
type Lineage interface {
	// Next reserves the next sequence number of the run's lineage (1, 2, ...). Numbers continue
	// after a process restart: an implementation derives them from what is already saved.
	Next(ctx context.Context) (int, error)
	// Save stores content under name ("001-prompt-draft.md"); name has no directory part.
	Save(ctx context.Context, name string, content []byte) error
}

// ErrBudgetExceeded is matched by [*BudgetError].
var ErrBudgetExceeded = errors.New("budget exceeded")

// BudgetError says a call was refused, before it was made, because it could take the run
// over its budget.
type BudgetError struct {
	Model string
	// Spent is what the run had spent, Estimate the refused call's worst-case cost (estimated
	// input tokens plus MaxTokens of output), Budget the limit; all in USD.
	Spent, Budget, Estimate float64
}

// Error says what would have been spent and what to do.
func (e *BudgetError) Error() string {
	return fmt.Sprintf("budget exceeded: the run has spent $%.4f of its $%.2f budget and the next call to %s could cost up to $%.4f; resume with a larger --budget to continue",
		e.Spent, e.Budget, e.Model, e.Estimate)
}

// Is matches [ErrBudgetExceeded].
func (e *BudgetError) Is(target error) bool { return target == ErrBudgetExceeded }

// MeterOptions configures [Meter]. Every field is optional.
type MeterOptions struct {
	// Recorder stores each call and reports what was spent; nil keeps the sum in memory,
	// which is enough for a budget within one process.
	Recorder Recorder
	// Lineage stores prompts and responses; nil stores nothing.
	Lineage Lineage
	// Budget is the run's limit in USD; zero or negative means none.
	Budget float64
	// Estimator counts prompt tokens for the cost estimate; nil makes one.
	Estimator *Estimator
	// Prices prices the estimate; nil uses [DefaultPrices]. An unpriced model is estimated at
	// 0: a budget stops it only once the run has already spent more than the budget.
	Prices PriceTable
	// Secrets are values (API keys) scrubbed from lineage files and recorded errors, as a
	// second line of defence: nothing in azero is meant to put them there.
	Secrets []string
	// Now is the clock for latencies; nil means time.Now.
	Now func() time.Time
}

// Meter wraps m so that each call is checked against the budget, saved to the lineage and
// recorded. Wrap the retrying model (Meter(WithRetry(m, p), ...)) so one logical call, retries
// included, is one record. Calls through one metered model are meant to be sequential, as in
// a workflow: two concurrent calls could both pass the budget check.
//
// Lineage numbering: each call takes two numbers from [Lineage.Next], one for the prompt
// ("001-prompt-draft.md") and one for the response ("002-response-draft.md"). A failed call's
// response file holds the error. If saving the prompt fails, the model is not called.
func Meter(m Model, role Role, opts MeterOptions) Model {
	if opts.Estimator == nil {
		opts.Estimator = NewEstimator()
	}
	if opts.Prices == nil {
		opts.Prices = DefaultPrices()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Recorder == nil {
		opts.Recorder = &memoryRecorder{}
	}
	var secrets []string
	for _, s := range opts.Secrets {
		// Very short values would scrub ordinary words; real keys are long.
		if len(strings.TrimSpace(s)) >= 8 {
			secrets = append(secrets, strings.TrimSpace(s))
		}
	}
	opts.Secrets = secrets
	return &metered{m: m, role: role, o: opts}
}

type metered struct {
	m    Model
	role Role
	o    MeterOptions
}

func (mm *metered) Name() string { return mm.m.Name() }

// estimate returns the estimated input tokens of req and its worst-case USD cost on this
// model (MaxTokens of output), and whether the model is priced.
func (mm *metered) estimate(req Request) (inputTokens int, cost float64, priced bool) {
	inputTokens = mm.o.Estimator.EstimateRequest(req)
	spec, err := ParseSpec(mm.m.Name())
	if err != nil {
		return inputTokens, 0, false
	}
	cost, priced = mm.o.Prices.Cost(spec, inputTokens, req.MaxTokens)
	return inputTokens, cost, priced
}

func (mm *metered) Generate(ctx context.Context, req Request) (Response, error) {
	inputTokens, estimate, _ := mm.estimate(req)
	if mm.o.Budget > 0 {
		spent, err := mm.o.Recorder.Spent(ctx)
		if err != nil {
			return Response{}, fmt.Errorf("meter %s: read the run's spending: %w", mm.m.Name(), err)
		}
		if spent+estimate > mm.o.Budget {
			return Response{}, &BudgetError{Model: mm.m.Name(), Spent: spent, Budget: mm.o.Budget, Estimate: estimate}
		}
	}

	purpose := Slug(req.Purpose)
	if mm.o.Lineage != nil {
		n, err := mm.o.Lineage.Next(ctx)
		if err != nil {
			return Response{}, fmt.Errorf("meter %s: number the prompt: %w", mm.m.Name(), err)
		}
		body := mm.redact(renderPrompt(n, mm.m.Name(), mm.role, purpose, inputTokens, req))
		if err := mm.o.Lineage.Save(ctx, lineageName(n, "prompt", purpose), body); err != nil {
			return Response{}, fmt.Errorf("meter %s: save the prompt: %w", mm.m.Name(), err)
		}
	}

	start := mm.o.Now()
	resp, genErr := mm.m.Generate(ctx, req)
	elapsed := mm.o.Now().Sub(start)

	call := Call{
		Role: string(mm.role), Purpose: purpose, Model: mm.m.Name(),
		InputTokens: resp.InputTokens, OutputTokens: resp.OutputTokens,
		CostUSD: resp.CostUSD, Latency: elapsed, Stop: resp.Stop,
	}
	if genErr != nil {
		call.Err = string(mm.redact([]byte(genErr.Error())))
	}

	var errs []error
	if genErr != nil {
		errs = append(errs, genErr)
	}
	if mm.o.Lineage != nil {
		if err := mm.saveResponse(ctx, purpose, resp, genErr, elapsed); err != nil {
			errs = append(errs, err)
		}
	}
	// The call is recorded even when saving its response failed: its cost was spent.
	// A cancelled ctx must not lose the record either.
	if err := mm.o.Recorder.Record(context.WithoutCancel(ctx), call); err != nil {
		errs = append(errs, fmt.Errorf("meter %s: record the call: %w", mm.m.Name(), err))
	}
	return resp, errors.Join(errs...)
}

func (mm *metered) saveResponse(ctx context.Context, purpose string, resp Response, genErr error, elapsed time.Duration) error {
	ctx = context.WithoutCancel(ctx)
	n, err := mm.o.Lineage.Next(ctx)
	if err != nil {
		return fmt.Errorf("meter %s: number the response: %w", mm.m.Name(), err)
	}
	body := mm.redact(renderResponse(n, mm.m.Name(), purpose, resp, genErr, elapsed))
	if err := mm.o.Lineage.Save(ctx, lineageName(n, "response", purpose), body); err != nil {
		return fmt.Errorf("meter %s: save the response: %w", mm.m.Name(), err)
	}
	return nil
}

func (mm *metered) redact(b []byte) []byte {
	if len(mm.o.Secrets) == 0 {
		return b
	}
	s := string(b)
	for _, secret := range mm.o.Secrets {
		s = strings.ReplaceAll(s, secret, "[REDACTED]")
	}
	return []byte(s)
}

// lineageName is "NNN-kind-purpose.md".
func lineageName(n int, kind, purpose string) string {
	return fmt.Sprintf("%03d-%s-%s.md", n, kind, purpose)
}

// Slug turns a purpose into a safe file-name part: lower-case letters, digits and single
// hyphens, at most 40 characters; "call" when nothing is left. It keeps a purpose from
// reaching outside the run's folder.
func Slug(s string) string {
	if out := slug.Make(s, 40); out != "" {
		return out
	}
	return "call"
}

func renderPrompt(n int, model string, role Role, purpose string, inputTokens int, req Request) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# Prompt %03d: %s\n\n", n, purpose)
	fmt.Fprintf(&b, "- role: %s\n- model: %s\n- max tokens: %d\n", role, model, req.MaxTokens)
	if req.Temperature != nil {
		fmt.Fprintf(&b, "- temperature: %s\n", strconv.FormatFloat(*req.Temperature, 'f', -1, 64))
	}
	fmt.Fprintf(&b, "- estimated input tokens: %d\n", inputTokens)
	if req.System != "" {
		b.WriteString("\n## System\n\n")
		b.WriteString(req.System)
		b.WriteString("\n")
	}
	for i, m := range req.Messages {
		fmt.Fprintf(&b, "\n## Message %d (%s)\n\n", i+1, m.Role)
		b.WriteString(m.Text)
		b.WriteString("\n")
	}
	return []byte(b.String())
}

func renderResponse(n int, model, purpose string, resp Response, genErr error, elapsed time.Duration) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# Response %03d: %s\n\n", n, purpose)
	if resp.Model != "" {
		model = resp.Model
	}
	fmt.Fprintf(&b, "- model: %s\n", model)
	if genErr != nil {
		fmt.Fprintf(&b, "- error: %s\n", oneLine(genErr.Error()))
	} else {
		fmt.Fprintf(&b, "- stop: %s\n", resp.Stop)
	}
	fmt.Fprintf(&b, "- tokens: %d in, %d out\n", resp.InputTokens, resp.OutputTokens)
	fmt.Fprintf(&b, "- cost: $%.6f\n", resp.CostUSD)
	fmt.Fprintf(&b, "- latency: %s\n", elapsed.Round(time.Millisecond))
	if genErr == nil {
		b.WriteString("\n")
		b.WriteString(resp.Text)
		if !strings.HasSuffix(resp.Text, "\n") {
			b.WriteString("\n")
		}
	}
	return []byte(b.String())
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// memoryRecorder sums costs in memory when no store is wired.
type memoryRecorder struct {
	mu    sync.Mutex
	spent float64
}

func (r *memoryRecorder) Spent(context.Context) (float64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.spent, nil
}

func (r *memoryRecorder) Record(_ context.Context, c Call) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.spent += c.CostUSD
	return nil
}
