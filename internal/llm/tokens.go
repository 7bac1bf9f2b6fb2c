package llm

import (
	"sync"

	"github.com/tiktoken-go/tokenizer"
	"github.com/tiktoken-go/tokenizer/codec"
)

// Token accounting overheads, following OpenAI's published chat format: every message costs a
// few tokens of framing, and the reply is primed with a few more. Other vendors' framing is
// similar in size.
const (
	tokensPerMessage = 4
	tokensPerReply   = 3
)

// Estimator counts tokens offline with the o200k_base encoding (the GPT-4o/4.1/o-series
// tokenizer, embedded in the binary). For Claude and Gemini, whose tokenizers are not public,
// it is an approximation, typically within 10-20%; use it for budgets and context limits,
// never for billing (responses carry the provider's own counts). It is safe for concurrent
// use; the zero value is ready to use.
type Estimator struct{}

// o200k builds the encoding once per process, on the first count: its vocabulary is a map of
// 200,000 entries, which commands that never count tokens (most of them) must not pay for.
var o200k = sync.OnceValue(func() tokenizer.Codec {
	c := codec.NewO200kBase()
	// Invalid UTF-8 (a binary file pasted into a prompt) is counted, not rejected.
	c.SetErrorMode(codec.ErrorModeReplace)
	return c
})

// NewEstimator returns an estimator. It builds nothing: the vocabulary loads on the first
// count.
func NewEstimator() *Estimator { return &Estimator{} }

// CountTokens returns the number of tokens in text.
func (e *Estimator) CountTokens(text string) int {
	if text == "" {
		return 0
	}
	n, err := o200k().Count(text)
	if err != nil {
		// Counting only fails on pathological input; a rough bytes-per-token ratio keeps the
		// estimate usable rather than zero.
		return (len(text) + 3) / 4
	}
	return n
}

// EstimateRequest returns the estimated input tokens of req: system text and messages plus
// the chat framing overhead.
func (e *Estimator) EstimateRequest(req Request) int {
	n := tokensPerReply
	if req.System != "" {
		n += tokensPerMessage + e.CountTokens(req.System)
	}
	for _, m := range req.Messages {
		n += tokensPerMessage + e.CountTokens(m.Text)
	}
	return n
}
