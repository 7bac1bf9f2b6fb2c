package llm

import (
	"strings"
	"sync"
	"testing"

	"github.com/tiktoken-go/tokenizer/codec"
)

func TestCountTokens(t *testing.T) {
	t.Parallel()
	e := NewEstimator()
	tests := []struct {
		text string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{"Hello, world!", 4},
	}
	for _, tt := range tests {
		if got := e.CountTokens(tt.text); got != tt.want {
			t.Errorf("CountTokens(%q) = %d, want %d", tt.text, got, tt.want)
		}
	}
	// Invalid UTF-8 is counted, not rejected.
	if got := e.CountTokens("\xff\xfe binary"); got < 2 {
		t.Errorf("invalid UTF-8 counted as %d tokens", got)
	}
	// Proportional: ten copies of a sentence cost about ten times one.
	one := e.CountTokens("The quick brown fox jumps over the lazy dog. ")
	ten := e.CountTokens(strings.Repeat("The quick brown fox jumps over the lazy dog. ", 10))
	if ten < 9*one || ten > 11*one {
		t.Errorf("one sentence %d tokens, ten sentences %d", one, ten)
	}
}

func TestEstimateRequest(t *testing.T) {
	t.Parallel()
	e := NewEstimator()
	req := Request{
		System:    "You are terse.",
		Messages:  []Message{{Role: SpeakerUser, Text: "hello world"}, {Role: SpeakerAssistant, Text: "hi"}},
		MaxTokens: 10,
	}
	want := tokensPerReply + (tokensPerMessage + e.CountTokens("You are terse.")) +
		(tokensPerMessage + 2) + (tokensPerMessage + e.CountTokens("hi"))
	if got := e.EstimateRequest(req); got != want {
		t.Errorf("EstimateRequest = %d, want %d", got, want)
	}
	if got := e.EstimateRequest(Request{}); got != tokensPerReply {
		t.Errorf("empty request = %d", got)
	}
}

func TestEstimatorConcurrent(t *testing.T) {
	t.Parallel()
	e := NewEstimator()
	text := strings.Repeat("func main() { fmt.Println(\"hi\") }\n", 50)
	want := e.CountTokens(text)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if got := e.CountTokens(text); got != want {
				t.Errorf("concurrent count %d, want %d", got, want)
			}
		})
	}
	wg.Wait()
}

// Opening an estimator (every metered model, every scripted model) builds nothing: the
// encoding's 200,000-entry vocabulary and its split pattern wait for the first count.
func TestNewEstimatorBuildsNothing(t *testing.T) {
	if n := testing.AllocsPerRun(10, func() { _ = NewEstimator() }); n > 0 {
		t.Errorf("NewEstimator allocates %v objects per call, want none", n)
	}
	var zero Estimator
	if got := zero.CountTokens("hello world"); got != 2 {
		t.Errorf("the zero Estimator counts %d tokens in %q, want 2", got, "hello world")
	}
}

// BenchmarkFirstCount is what the first count in a process pays: the vocabulary and the split
// pattern (measured in a fresh encoding, since the process keeps one).
func BenchmarkFirstCount(b *testing.B) {
	for b.Loop() {
		c := codec.NewO200kBase()
		if _, err := c.Count("hello world"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCountTokens reports tokens per second on Go source, the bulk of azero's prompts.
func BenchmarkCountTokens(b *testing.B) {
	e := NewEstimator()
	text := strings.Repeat(benchSource, 40) // ~40 KB
	n := e.CountTokens(text)
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for b.Loop() {
		e.CountTokens(text)
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}

const benchSource = `// Meter wraps m so that each call is checked against the budget.
func Meter(m Model, role Role, opts MeterOptions) Model {
	if opts.Estimator == nil {
		opts.Estimator = NewEstimator()
	}
	return &metered{m: m, role: role, o: opts}
}

Please review the draft above against the checklist; answer APPROVED or BLOCKED.
`
