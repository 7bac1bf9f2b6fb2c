package edit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/llm"
)

// scripted answers with canned replies in order and records every request.
type scripted struct {
	replies  []llm.Response
	requests []llm.Request
}

func (s *scripted) Name() string { return "test:scripted" }

func (s *scripted) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	s.requests = append(s.requests, req)
	if len(s.requests) > len(s.replies) {
		return llm.Response{}, fmt.Errorf("no reply %d", len(s.requests))
	}
	return s.replies[len(s.requests)-1], nil
}

func reply(text string) llm.Response { return llm.Response{Text: text, Stop: llm.StopEnd} }
func truncated(text string) llm.Response {
	return llm.Response{Text: text, Stop: llm.StopMaxTokens}
}

func largeFile() string {
	var b strings.Builder
	for i := 1; i <= 600; i++ {
		fmt.Fprintf(&b, "def f%d():\n    return %d\n", i, i)
	}
	return b.String()
}

const blocksReply = "### CHANGE 1: fix f300\nFIND:\n```python\ndef f300():\n    return 300\n```\n\nREPLACE WITH:\n```python\ndef f300():\n    return 3000\n```\n"

func TestGenerate(t *testing.T) {
	t.Parallel()
	large := largeFile()
	tests := []struct {
		name        string
		change      ChangeType
		existing    string
		replies     []llm.Response
		wantContent string
		wantErr     error
		strategy    Strategy
		calls       int
		truncations int
		corrections int
	}{
		{"add takes the whole file", Add, "", []llm.Response{reply("```go\npackage x\n```")}, "package x\n", nil, FullFile, 1, 0, 0},
		{"T115 truncation then success", Add, "", []llm.Response{truncated("```go\npackage"), reply("```go\npackage x\n```")}, "package x\n", nil, FullFile, 2, 1, 0},
		{"truncated four times gives up", Add, "", []llm.Response{truncated("a"), truncated("b"), truncated("c"), truncated("d")}, "", ErrTruncated, FullFile, 4, 4, 0},
		{"large modify uses blocks", Modify, large, []llm.Response{reply(blocksReply)}, strings.Replace(large, "return 300\n", "return 3000\n", 1), nil, Blocks, 1, 0, 0},
		{"truncated blocks are never applied", Modify, large, []llm.Response{truncated(blocksReply), reply(blocksReply)}, strings.Replace(large, "return 300\n", "return 3000\n", 1), nil, Blocks, 2, 1, 0},
		{"bad block corrected once", Modify, large, []llm.Response{reply(strings.Replace(blocksReply, "return 300\n```", "return 301\n```", 1)), reply(blocksReply)},
			strings.Replace(large, "return 300\n", "return 3000\n", 1), nil, Blocks, 2, 0, 1},
		{"second failure gives up", Modify, large, []llm.Response{reply("no blocks here"), reply("still none")}, "", nil, Blocks, 2, 0, 1},
		{"refusal gives up", Add, "", []llm.Response{{Text: "I cannot help", Stop: llm.StopRefused}}, "", ErrRefused, FullFile, 1, 0, 0},
		{"lazy full file is corrected", Modify, "def a():\n    return 1\n\ndef b():\n    return 2\n",
			[]llm.Response{reply("```python\ndef a():\n    return 10\n\n# ... rest of code ...\n```"), reply("```python\ndef a():\n    return 10\n\ndef b():\n    return 2\n```")},
			"def a():\n    return 10\n\ndef b():\n    return 2\n", nil, FullFile, 2, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := &scripted{replies: tt.replies}
			res, err := Generate(context.Background(), m, GenerateInput{Change: tt.change, MaxTokens: 100, Purpose: "implement",
				Prompt: PromptInput{Path: "a.py", LLD: "design", Existing: tt.existing}})
			failing := tt.wantContent == ""
			switch {
			case failing && err == nil:
				t.Fatal("Generate succeeded")
			case failing:
				var gu *GiveUpError
				if !errors.As(err, &gu) || !strings.Contains(err.Error(), "file is unchanged") {
					t.Errorf("err = %v, want a GiveUpError", err)
				}
				if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
					t.Errorf("err = %v, want %v", err, tt.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			case res.Content != tt.wantContent:
				t.Errorf("content differs:\n%.200q\nwant\n%.200q", res.Content, tt.wantContent)
			}
			if res.Strategy != tt.strategy || res.Calls != tt.calls || res.Truncations != tt.truncations || res.Corrections != tt.corrections {
				t.Errorf("result = %+v, want strategy %v calls %d truncations %d corrections %d", res, tt.strategy, tt.calls, tt.truncations, tt.corrections)
			}
		})
	}
}

func TestGenerateSendsTheErrorBack(t *testing.T) {
	t.Parallel()
	m := &scripted{replies: []llm.Response{reply("no blocks"), reply(blocksReply)}}
	_, err := Generate(context.Background(), m, GenerateInput{Change: Modify, MaxTokens: 10, System: "sys", Purpose: "implement",
		Prompt: PromptInput{Path: "a.py", Existing: largeFile()}})
	if err != nil {
		t.Fatal(err)
	}
	second := m.requests[1]
	if len(second.Messages) != 3 || second.Messages[1].Role != llm.SpeakerAssistant || second.Messages[1].Text != "no blocks" {
		t.Fatalf("correction does not carry the conversation: %+v", second.Messages)
	}
	if !strings.Contains(second.Messages[2].Text, "could not be used") || !strings.Contains(second.Messages[2].Text, "FIND") {
		t.Errorf("correction text = %q", second.Messages[2].Text)
	}
	if second.System != "sys" || second.Purpose != "implement" || second.MaxTokens != 10 {
		t.Errorf("request = %+v", second)
	}
	if !strings.Contains(m.requests[0].Messages[0].Text, "FIND") {
		t.Error("the first prompt for a large file does not ask for FIND/REPLACE blocks")
	}
}

func TestGenerateKeepsTheFileShape(t *testing.T) {
	t.Parallel()
	existing := "def a():\r\n    return 1\r\n"
	m := &scripted{replies: []llm.Response{reply("```python\ndef a():\n    return 2\n```")}}
	res, err := Generate(context.Background(), m, GenerateInput{Change: Modify, Prompt: PromptInput{Path: "a.py", Existing: existing}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Content != "def a():\r\n    return 2\r\n" {
		t.Errorf("content = %q, want the file's CRLF kept", res.Content)
	}
}
