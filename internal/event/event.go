// Package event is how a run reports what happens to the people watching
// it: steps starting and ending, test results, model calls, questions,
// answers, warnings. Nodes emit events instead of writing to a terminal;
// the engine stores each one in the run's history (so a web page, or a
// later `azero runs show`, can replay it) and hands it to the renderers of
// whoever is watching (the terminal that started the run).
//
// It is a leaf package: events carry plain text for every renderer and,
// where a viewer can do more, a JSON payload in Data.
package event

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Kind says what an event reports.
type Kind string

// Event kinds. The first group is the engine's; nodes emit the second.
const (
	RunStarted  Kind = "run_started"  // Text: "started" or "resumed"
	NodeStarted Kind = "node_started" //
	NodeDone    Kind = "node_done"    // Data: NodeDoneData
	Waiting     Kind = "waiting"      // Text: why
	Interrupted Kind = "interrupted"  //
	Failed      Kind = "failed"       // Text: the error
	Finished    Kind = "finished"     // Data: FinishedData
	Question    Kind = "question"     // Data: the human.Question asked
	Answer      Kind = "answer"       // Data: the human.Answer accepted

	Info       Kind = "info"        // a line for the human
	Warning    Kind = "warning"     // something the human should notice
	TestResult Kind = "test_result" // Data: the runner's result
	ModelCall  Kind = "model_call"  // Data: ModelCallData
	Diff       Kind = "diff"        // Text: a change's report and diffs
)

// Tone colours an event's line for renderers that can.
type Tone string

// Tones.
const (
	Plain Tone = ""
	Good  Tone = "good" // green: a pass, a merge
	Bad   Tone = "bad"  // red: a failure, a red test run
	Warn  Tone = "warn" // yellow: something to look at
)

// Event is one thing that happened in a run.
type Event struct {
	Seq   int64           `json:"seq,omitempty"` // order within the run, set when stored
	RunID string          `json:"run_id"`
	Node  string          `json:"node,omitempty"`
	Kind  Kind            `json:"kind"`
	Tone  Tone            `json:"tone,omitempty"`
	At    time.Time       `json:"occurred_at"`
	Text  string          `json:"text,omitempty"`
	Data  json.RawMessage `json:"data,omitempty"`
}

// Sink receives events. Emit never fails the caller: a viewer that cannot
// keep up, or a store that cannot record, must not stop a run.
type Sink interface {
	Emit(ctx context.Context, e Event)
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(ctx context.Context, e Event)

// Emit calls f.
func (f SinkFunc) Emit(ctx context.Context, e Event) { f(ctx, e) }

// Discard drops every event.
var Discard Sink = SinkFunc(func(context.Context, Event) {})

// New returns an event of kind with a formatted line.
func New(kind Kind, tone Tone, format string, args ...any) Event {
	return Event{Kind: kind, Tone: tone, Text: fmt.Sprintf(format, args...)}
}

// WithData returns e carrying v as its JSON payload. A value that cannot be
// encoded is dropped: the text still says what happened.
func (e Event) WithData(v any) Event {
	if b, err := json.Marshal(v); err == nil {
		e.Data = b
	}
	return e
}

// Decode reads e's payload into v.
func (e Event) Decode(v any) error {
	if len(e.Data) == 0 {
		return fmt.Errorf("event %s has no data", e.Kind)
	}
	return json.Unmarshal(e.Data, v)
}

// NodeDoneData is the payload of NodeDone.
type NodeDoneData struct {
	Next       string `json:"next"`
	DurationMS int64  `json:"duration_ms"`
	// Worker is the Temporal worker that ran the node; "" for a node run
	// in the process that drives the run.
	Worker string `json:"worker,omitempty"`
}

// FinishedData is the payload of Finished.
type FinishedData struct {
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
}

// ModelCallData is the payload of ModelCall.
type ModelCallData struct {
	Role         string  `json:"role"`
	Model        string  `json:"model"`
	Purpose      string  `json:"purpose,omitempty"`
	InputTokens  int     `json:"input_tokens"`
	OutputTokens int     `json:"output_tokens"`
	CostUSD      float64 `json:"cost_usd"`
	DurationMS   int64   `json:"duration_ms"`
	Stop         string  `json:"stop,omitempty"`
	Error        string  `json:"error,omitempty"`
}
