package llm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

type memLineage struct {
	mu      sync.Mutex
	n       int
	files   map[string]string
	order   []string
	failOn  string // Save fails for names containing this
	nextErr error
}

func (l *memLineage) Next(context.Context) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.nextErr != nil {
		return 0, l.nextErr
	}
	l.n++
	return l.n, nil
}

func (l *memLineage) Save(_ context.Context, name string, b []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.failOn != "" && strings.Contains(name, l.failOn) {
		return errors.New("disk full")
	}
	if l.files == nil {
		l.files = map[string]string{}
	}
	l.files[name] = string(b)
	l.order = append(l.order, name)
	return nil
}

type memRecorder struct {
	mu       sync.Mutex
	start    float64
	calls    []Call
	spentErr error
	recErr   error
}

func (r *memRecorder) Spent(context.Context) (float64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.spentErr != nil {
		return 0, r.spentErr
	}
	s := r.start
	for _, c := range r.calls {
		s += c.CostUSD
	}
	return s, nil
}

func (r *memRecorder) Record(_ context.Context, c Call) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.recErr != nil {
		return r.recErr
	}
	r.calls = append(r.calls, c)
	return nil
}

// fixedClock advances by step on every reading.
func fixedClock(step time.Duration) func() time.Time {
	var mu sync.Mutex
	t := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(step)
		return t
	}
}

func draftRequest() Request {
	temp := 0.3
	return Request{
		System:      "You draft issues.",
		Messages:    []Message{{Role: SpeakerUser, Text: "Brief: budgets."}, {Role: SpeakerAssistant, Text: "Which?"}, {Role: SpeakerUser, Text: "All."}},
		MaxTokens:   2000,
		Temperature: &temp,
		Purpose:     "draft",
	}
}

func TestMeterBudgetStopsBeforeTheCall(t *testing.T) {
	t.Parallel()
	est := NewEstimator()
	req := draftRequest()
	price := DefaultPrices()["anthropic:claude-sonnet-4-5"]
	estimate := price.Cost(est.EstimateRequest(req), req.MaxTokens)

	tests := []struct {
		name     string
		model    string
		spent    float64
		budget   float64
		refused  bool
		estimate float64
	}{
		{"well within", "anthropic:claude-sonnet-4-5", 0, 1, false, estimate},
		{"exactly at the budget", "anthropic:claude-sonnet-4-5", 1 - estimate, 1, false, estimate},
		{"over by the estimate", "anthropic:claude-sonnet-4-5", 1 - estimate/2, 1, true, estimate},
		{"already over", "anthropic:claude-sonnet-4-5", 2, 1, true, estimate},
		{"no budget", "anthropic:claude-sonnet-4-5", 100, 0, false, estimate},
		{"unpriced model costs nothing", "openai:qwen2.5-coder", 0.99, 1, false, 0},
		{"unpriced model after the budget is spent", "openai:qwen2.5-coder", 1.5, 1, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := &fakeModel{name: tt.model, results: []result{{resp: Response{Text: "ok", Stop: StopEnd, CostUSD: 0.001}}}}
			rec := &memRecorder{start: tt.spent}
			lin := &memLineage{}
			m := Meter(f, RoleDrafter, MeterOptions{Recorder: rec, Lineage: lin, Budget: tt.budget, Estimator: est})
			_, err := m.Generate(t.Context(), req)
			if !tt.refused {
				if err != nil || f.Calls() != 1 {
					t.Fatalf("err = %v, calls = %d; want one call", err, f.Calls())
				}
				return
			}
			var be *BudgetError
			if !errors.As(err, &be) || !errors.Is(err, ErrBudgetExceeded) {
				t.Fatalf("err = %v, want a budget error", err)
			}
			if f.Calls() != 0 || len(lin.order) != 0 || len(rec.calls) != 0 {
				t.Errorf("refused call still reached the model (%d), lineage (%v) or recorder (%d)", f.Calls(), lin.order, len(rec.calls))
			}
			if be.Budget != tt.budget || be.Spent != tt.spent || math.Abs(be.Estimate-tt.estimate) > 1e-12 || be.Model != tt.model {
				t.Errorf("BudgetError = %+v", be)
			}
			if !strings.Contains(err.Error(), "--budget") {
				t.Errorf("%q does not say what to do", err)
			}
		})
	}
}

func TestMeterBudgetAcrossCallsWithoutRecorder(t *testing.T) {
	t.Parallel()
	f := &fakeModel{results: []result{{resp: Response{Text: "ok", Stop: StopEnd, CostUSD: 0.4}}}}
	m := Meter(f, RoleCoder, MeterOptions{Budget: 1})
	req := Request{Messages: []Message{{Role: SpeakerUser, Text: "x"}}, MaxTokens: 1}
	var err error
	for i := 0; i < 5 && err == nil; i++ {
		_, err = m.Generate(t.Context(), req)
	}
	if !errors.Is(err, ErrBudgetExceeded) || f.Calls() != 3 {
		t.Errorf("err = %v after %d calls; want the budget to stop the 4th call (0.4 × 3 = 1.2 > 1 is only known after the 3rd)", err, f.Calls())
	}
}

func TestMeterLineageAndRecord(t *testing.T) {
	t.Parallel()
	f := &fakeModel{results: []result{
		{resp: Response{Text: "# Draft\n\nbody", Stop: StopEnd, InputTokens: 120, OutputTokens: 30, Model: "anthropic:claude-sonnet-4-5-20250929", CostUSD: 0.0008}},
		{err: &ProviderError{Provider: "anthropic", Kind: KindAuth, Status: 401, Message: "invalid x-api-key"}},
	}}
	rec, lin := &memRecorder{}, &memLineage{}
	m := Meter(f, RoleDrafter, MeterOptions{Recorder: rec, Lineage: lin, Now: fixedClock(250 * time.Millisecond)})
	if m.Name() != f.Name() {
		t.Errorf("Name = %q", m.Name())
	}
	resp, err := m.Generate(t.Context(), draftRequest())
	if err != nil || resp.Text != "# Draft\n\nbody" {
		t.Fatalf("Generate = %+v, %v", resp, err)
	}
	review := draftRequest()
	review.Purpose = "Review / Round 2"
	_, err = m.Generate(t.Context(), review)
	if !errors.Is(err, ErrPermanent) {
		t.Fatalf("second call err = %v", err)
	}

	want := []string{"001-prompt-draft.md", "002-response-draft.md", "003-prompt-review-round-2.md", "004-response-review-round-2.md"}
	if !slices.Equal(lin.order, want) {
		t.Fatalf("lineage = %v, want %v", lin.order, want)
	}
	prompt := lin.files["001-prompt-draft.md"]
	for _, s := range []string{"# Prompt 001: draft", "- role: drafter", "- model: anthropic:claude-sonnet-4-5", "- max tokens: 2000",
		"- temperature: 0.3", "## System\n\nYou draft issues.\n", "## Message 1 (user)\n\nBrief: budgets.\n",
		"## Message 2 (assistant)\n\nWhich?\n", "## Message 3 (user)\n\nAll.\n"} {
		if !strings.Contains(prompt, s) {
			t.Errorf("prompt file lacks %q:\n%s", s, prompt)
		}
	}
	response := lin.files["002-response-draft.md"]
	for _, s := range []string{"# Response 002: draft", "- model: anthropic:claude-sonnet-4-5-20250929", "- stop: end",
		"- tokens: 120 in, 30 out", "- cost: $0.000800", "- latency: 250ms", "\n# Draft\n\nbody\n"} {
		if !strings.Contains(response, s) {
			t.Errorf("response file lacks %q:\n%s", s, response)
		}
	}
	failed := lin.files["004-response-review-round-2.md"]
	if !strings.Contains(failed, "- error: anthropic: authentication failed (HTTP 401): invalid x-api-key") {
		t.Errorf("failed response file:\n%s", failed)
	}

	if len(rec.calls) != 2 {
		t.Fatalf("recorded %d calls", len(rec.calls))
	}
	wantCall := Call{Role: "drafter", Purpose: "draft", Model: "anthropic:claude-sonnet-4-5", InputTokens: 120, OutputTokens: 30,
		CostUSD: 0.0008, Latency: 250 * time.Millisecond, Stop: StopEnd}
	if rec.calls[0] != wantCall {
		t.Errorf("call = %+v\nwant %+v", rec.calls[0], wantCall)
	}
	if c := rec.calls[1]; c.Purpose != "review-round-2" || !strings.Contains(c.Err, "invalid x-api-key") || c.CostUSD != 0 {
		t.Errorf("failed call = %+v", c)
	}
}

func TestMeterFailures(t *testing.T) {
	t.Parallel()
	ok := []result{{resp: Response{Text: "ok", Stop: StopEnd, CostUSD: 0.01}}}

	// The prompt cannot be saved: the model is not called.
	f := &fakeModel{results: ok}
	_, err := Meter(f, RoleCoder, MeterOptions{Lineage: &memLineage{failOn: "prompt"}}).Generate(t.Context(), draftRequest())
	if err == nil || f.Calls() != 0 || !strings.Contains(err.Error(), "save the prompt") {
		t.Errorf("err = %v, calls = %d", err, f.Calls())
	}
	f = &fakeModel{results: ok}
	_, err = Meter(f, RoleCoder, MeterOptions{Lineage: &memLineage{nextErr: errors.New("no dir")}}).Generate(t.Context(), draftRequest())
	if err == nil || f.Calls() != 0 {
		t.Errorf("numbering failure: err = %v, calls = %d", err, f.Calls())
	}

	// The response cannot be saved, or the call cannot be recorded: the reply comes back with
	// the error, and the call is still recorded.
	f = &fakeModel{results: ok}
	rec := &memRecorder{}
	resp, err := Meter(f, RoleCoder, MeterOptions{Lineage: &memLineage{failOn: "response"}, Recorder: rec}).Generate(t.Context(), draftRequest())
	if err == nil || resp.Text != "ok" || len(rec.calls) != 1 {
		t.Errorf("response save failure: resp %+v, err %v, recorded %d", resp, err, len(rec.calls))
	}
	f = &fakeModel{results: ok}
	resp, err = Meter(f, RoleCoder, MeterOptions{Recorder: &memRecorder{recErr: errors.New("database is locked")}}).Generate(t.Context(), draftRequest())
	if err == nil || !strings.Contains(err.Error(), "database is locked") || resp.Text != "ok" {
		t.Errorf("record failure: resp %+v, err %v", resp, err)
	}
	f = &fakeModel{results: ok}
	_, err = Meter(f, RoleCoder, MeterOptions{Budget: 1, Recorder: &memRecorder{spentErr: errors.New("store closed")}}).Generate(t.Context(), draftRequest())
	if err == nil || f.Calls() != 0 {
		t.Errorf("spent failure: err %v, calls %d", err, f.Calls())
	}
}

func TestMeterRedactsSecrets(t *testing.T) {
	t.Parallel()
	const key = "sk-ant-secret-0123456789"
	f := &fakeModel{results: []result{{err: fmt.Errorf("proxy said: bad key %s", key)}}}
	lin, rec := &memLineage{}, &memRecorder{}
	req := draftRequest()
	req.Messages[0].Text = "my key is " + key
	_, err := Meter(f, RoleDrafter, MeterOptions{Lineage: lin, Recorder: rec, Secrets: []string{key, "", "short"}}).Generate(t.Context(), req)
	if err == nil {
		t.Fatal("want the model's error")
	}
	for name, body := range lin.files {
		if strings.Contains(body, key) {
			t.Errorf("%s contains the key", name)
		}
		if !strings.Contains(body, "[REDACTED]") {
			t.Errorf("%s shows no redaction:\n%s", name, body)
		}
	}
	if strings.Contains(rec.calls[0].Err, key) {
		t.Errorf("recorded error contains the key: %q", rec.calls[0].Err)
	}
}

func TestSlug(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"draft":                       "draft",
		"Implement Step 2":            "implement-step-2",
		"../../etc/passwd":            "etc-passwd",
		"":                            "call",
		"///":                         "call",
		"ünïcode":                     "n-code",
		strings.Repeat("abcdefgh", 9): "abcdefghabcdefghabcdefghabcdefghabcdefgh",
	} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}

// diskWriter writes for real, as the project's safe-write function would.
type diskWriter struct{}

func (diskWriter) WriteFile(_ context.Context, path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

func TestDirLineageContinuesAfterRestart(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "runs", "r1")
	f := &fakeModel{results: []result{{resp: Response{Text: "ok", Stop: StopEnd}}}}
	req := draftRequest()

	first := Meter(f, RoleDrafter, MeterOptions{Lineage: NewDirLineage(dir, diskWriter{})})
	if _, err := first.Generate(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	// A new process: a new lineage over the same folder (which also holds a stray file).
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	req.Purpose = "review"
	second := Meter(f, RoleReviewer, MeterOptions{Lineage: NewDirLineage(dir, diskWriter{})})
	if _, err := second.Generate(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{"001-prompt-draft.md", "002-response-draft.md", "003-prompt-review.md", "004-response-review.md", "notes.txt"}
	if !slices.Equal(names, want) {
		t.Errorf("files = %v, want %v", names, want)
	}
	// Two lineages on one folder (one per role) interleave without reusing numbers.
	a, b := NewDirLineage(dir, diskWriter{}), NewDirLineage(dir, diskWriter{})
	for i, l := range []*DirLineage{a, b, a} {
		n, err := l.Next(t.Context())
		if err != nil || n != 5+i {
			t.Fatalf("Next #%d = %d, %v; want %d", i+1, n, err, 5+i)
		}
		if err := l.Save(t.Context(), fmt.Sprintf("%03d-test-output.txt", n), []byte("ok")); err != nil {
			t.Fatal(err)
		}
	}
	// A number taken but not saved is not handed out again.
	if n1, _ := a.Next(t.Context()); n1 != 8 {
		t.Errorf("Next = %d, want 8", n1)
	}
	if n2, _ := a.Next(t.Context()); n2 != 9 {
		t.Errorf("Next after an unsaved number = %d, want 9", n2)
	}
	l := NewDirLineage(dir, diskWriter{})
	for _, bad := range []string{"../x.md", "a/b.md", "", ".hidden"} {
		if err := l.Save(t.Context(), bad, nil); err == nil {
			t.Errorf("Save(%q) accepted", bad)
		}
	}
}

func TestLastSeq(t *testing.T) {
	t.Parallel()
	tests := []struct {
		names []string
		want  int
	}{
		{nil, 0},
		{[]string{"001-prompt-draft.md", "002-response-draft.md"}, 2},
		{[]string{"010-x.md", "009-y.md", "notes.txt", "-1-z.md", "+5-a.md", "abc-d.md"}, 10},
		{[]string{"1000-prompt-x.md", "999-response-x.md"}, 1000},
		{[]string{"99999999999999999999-x.md"}, 0},
	}
	for _, tt := range tests {
		if got := LastSeq(tt.names); got != tt.want {
			t.Errorf("LastSeq(%v) = %d, want %d", tt.names, got, tt.want)
		}
	}
}
