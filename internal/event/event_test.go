package event

import (
	"context"
	"encoding/json"
	"testing"
)

func TestDataRoundTrip(t *testing.T) {
	t.Parallel()
	in := ModelCallData{Role: "coder", Model: "openai:gpt-4.1", InputTokens: 1200, OutputTokens: 300, CostUSD: 0.0123}
	ev := New(ModelCall, Plain, "%s %s", in.Role, in.Model).WithData(in)
	if ev.Text != "coder openai:gpt-4.1" || ev.Kind != ModelCall {
		t.Fatalf("event = %+v", ev)
	}
	// Stored and read back, as a viewer replays it.
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	var back Event
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	var out ModelCallData
	if err := back.Decode(&out); err != nil || out != in {
		t.Fatalf("Decode = %+v, %v; want %+v", out, err, in)
	}
}

func TestDataThatCannotBeEncodedIsDropped(t *testing.T) {
	t.Parallel()
	ev := New(Warning, Warn, "still said").WithData(map[string]any{"f": func() {}})
	if ev.Data != nil || ev.Text != "still said" {
		t.Fatalf("event = %+v, want the text without data", ev)
	}
	var v map[string]any
	if err := ev.Decode(&v); err == nil {
		t.Error("Decode of an event without data succeeded")
	}
}

func TestSinks(t *testing.T) {
	t.Parallel()
	var got []Kind
	var s Sink = SinkFunc(func(_ context.Context, e Event) { got = append(got, e.Kind) })
	s.Emit(t.Context(), Event{Kind: TestResult})
	Discard.Emit(t.Context(), Event{Kind: Warning})
	if len(got) != 1 || got[0] != TestResult {
		t.Fatalf("got %v", got)
	}
}
