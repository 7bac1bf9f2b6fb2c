package llm

import (
	"errors"
	"strings"
	"testing"
)

func TestParseSpec(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    Spec
		wantErr string
	}{
		{in: "anthropic:claude-sonnet-4-5", want: Spec{"anthropic", "claude-sonnet-4-5"}},
		{in: "gemini:gemini-2.5-pro", want: Spec{"gemini", "gemini-2.5-pro"}},
		{in: "openai:gpt-4.1", want: Spec{"openai", "gpt-4.1"}},
		{in: "openai:qwen2.5-coder", want: Spec{"openai", "qwen2.5-coder"}},
		{in: "openai:qwen2.5-coder:7b", want: Spec{"openai", "qwen2.5-coder:7b"}},
		{in: "  OpenAI : gpt-4o ", want: Spec{"openai", "gpt-4o"}},
		{in: "mock:scripted", want: Spec{"mock", "scripted"}},
		{in: "", wantErr: "empty"},
		{in: "claude-sonnet-4-5", wantErr: "did you mean anthropic:claude-sonnet-4-5?"},
		{in: "gpt-4.1", wantErr: "did you mean openai:gpt-4.1?"},
		{in: "llama3", wantErr: "has no provider"},
		{in: ":gpt-4.1", wantErr: "no provider before the colon"},
		{in: "openai:", wantErr: "no model after the colon"},
		{in: "mistral:large", wantErr: `unknown provider "mistral"`},
		{in: "mock:other", wantErr: "one model"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseSpec(tt.in)
			if tt.wantErr != "" {
				if !errors.Is(err, ErrInvalidSpec) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want ErrInvalidSpec mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseSpec = %+v, %v; want %+v", got, err, tt.want)
			}
			if again, err := ParseSpec(got.String()); err != nil || again != got {
				t.Errorf("round trip of %q = %+v, %v", got, again, err)
			}
		})
	}
}

func TestRequestValidate(t *testing.T) {
	t.Parallel()
	user := []Message{{Role: SpeakerUser, Text: "hi"}}
	tests := []struct {
		name string
		req  Request
		ok   bool
	}{
		{"valid", Request{Messages: user, MaxTokens: 10}, true},
		{"no messages", Request{MaxTokens: 10}, false},
		{"no max tokens", Request{Messages: user}, false},
		{"assistant first", Request{Messages: []Message{{Role: SpeakerAssistant, Text: "x"}}, MaxTokens: 1}, false},
		{"unknown speaker", Request{Messages: []Message{{Role: SpeakerUser}, {Role: "system"}}, MaxTokens: 1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.req.Validate()
			if (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrInvalidRequest)) {
				t.Errorf("Validate = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}
