package coder

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/edit"
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
		change      edit.ChangeType
		existing    string
		replies     []llm.Response
		wantContent string
		wantErr     error
		strategy    Strategy
		calls       int
		truncations int
		corrections int
	}{
		{"add takes the whole file", edit.Add, "", []llm.Response{reply("```go\npackage x\n```")}, "package x\n", nil, FullFile, 1, 0, 0},
		{"T115 truncation then success", edit.Add, "", []llm.Response{truncated("```go\npackage"), reply("```go\npackage x\n```")}, "package x\n", nil, FullFile, 2, 1, 0},
		{"truncated four times gives up", edit.Add, "", []llm.Response{truncated("a"), truncated("b"), truncated("c"), truncated("d")}, "", ErrTruncated, FullFile, 4, 4, 0},
		{"large modify uses blocks", edit.Modify, large, []llm.Response{reply(blocksReply)}, strings.Replace(large, "return 300\n", "return 3000\n", 1), nil, Blocks, 1, 0, 0},
		{"truncated blocks are never applied", edit.Modify, large, []llm.Response{truncated(blocksReply), reply(blocksReply)}, strings.Replace(large, "return 300\n", "return 3000\n", 1), nil, Blocks, 2, 1, 0},
		{"bad block corrected once", edit.Modify, large, []llm.Response{reply(strings.Replace(blocksReply, "return 300\n```", "return 301\n```", 1)), reply(blocksReply)},
			strings.Replace(large, "return 300\n", "return 3000\n", 1), nil, Blocks, 2, 0, 1},
		{"third failure gives up", edit.Modify, large, []llm.Response{reply("no blocks here"), reply("still none"), reply("none again")}, "", nil, Blocks, 3, 0, 2},
		{"refusal gives up", edit.Add, "", []llm.Response{{Text: "I cannot help", Stop: llm.StopRefused}}, "", ErrRefused, FullFile, 1, 0, 0},
		{"a small modify answered with SEARCH blocks in a fence applies them", edit.Modify, "def a():\n    return 1\n\ndef b():\n    return 2\n",
			[]llm.Response{reply("The change:\n\na.py\n```python\n<<<<<<< SEARCH\ndef b():\n    return 2\n=======\ndef b():\n    return 20\n>>>>>>> REPLACE\n```\n")},
			"def a():\n    return 1\n\ndef b():\n    return 20\n", nil, Blocks, 1, 0, 0},
		{"a small modify answered with blocks that do not match is corrected, never written as text", edit.Modify, "def a():\n    return 1\n",
			[]llm.Response{reply("<<<<<<< SEARCH\ndef c():\n=======\ndef d():\n>>>>>>> REPLACE\n"), reply("```python\ndef a():\n    return 2\n```\n")},
			"def a():\n    return 2\n", nil, FullFile, 2, 0, 1},
		{"a new file answered with blocks is corrected", edit.Add, "",
			[]llm.Response{reply("```python\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n```\n"), reply("```python\ny = 1\n```\n")},
			"y = 1\n", nil, FullFile, 2, 0, 1},
		{"the file next to a block showing how to run the tests", edit.Modify, "x = 1\n",
			[]llm.Response{reply("Here is a.py:\n```python\nx = 2\n```\nRun:\n```bash\npytest\n```\n")}, "x = 2\n", nil, FullFile, 1, 0, 0},
		{"a whole file that quotes the block format is the file", edit.Modify, "notes\n",
			[]llm.Response{reply("````markdown\n# Format\n\nWrite FIND: then a fence.\n\n```\n<<<<<<< SEARCH\n```\n````\n")},
			"# Format\n\nWrite FIND: then a fence.\n\n```\n<<<<<<< SEARCH\n```\n", nil, FullFile, 1, 0, 0},
		{"lazy full file is corrected", edit.Modify, "def a():\n    return 1\n\ndef b():\n    return 2\n",
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
	_, err := Generate(context.Background(), m, GenerateInput{Change: edit.Modify, MaxTokens: 10, System: "sys", Purpose: "implement",
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
	res, err := Generate(context.Background(), m, GenerateInput{Change: edit.Modify, Prompt: PromptInput{Path: "a.py", Existing: existing}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Content != "def a():\r\n    return 2\r\n" {
		t.Errorf("content = %q, want the file's CRLF kept", res.Content)
	}
}

// slipped writes a one-block reply in the SEARCH/REPLACE format.
func searchReply(path, find, replace string) string {
	head := ""
	if path != "" {
		head = path + "\n"
	}
	return head + "<<<<<<< SEARCH\n" + find + "=======\n" + replace + ">>>>>>> REPLACE\n"
}

// TestGenerateCorrectsSlips: a model that slips slightly gets the precise
// error back, with the file's exact lines to copy (never numbered), and
// its corrected reply is applied; loose matches that are safe are applied
// at once and reported.
func TestGenerateCorrectsSlips(t *testing.T) {
	t.Parallel()
	large := largeFile()
	fixed := strings.Replace(large, "return 300\n", "return 3000\n", 1)
	var dup strings.Builder
	for i := range 600 {
		fmt.Fprintf(&dup, "def g%d():\n    x = compute()\n    return x\n", i)
	}
	indented := "class C:\n" + strings.ReplaceAll("    "+strings.TrimSuffix(large, "\n"), "\n", "\n    ") + "\n"
	good := reply(searchReply("", "def f300():\n    return 300\n", "def f300():\n    return 3000\n"))
	tests := []struct {
		name        string
		existing    string
		replies     []llm.Response
		want        string // "" means Generate gives up
		corrections int
		says        []string // in the first correction sent back
		never       []string // nowhere in the first correction
		loose       []edit.LooseKind
	}{
		{
			name:     "uneven indentation is refused and the exact lines are shown",
			existing: large,
			replies:  []llm.Response{reply(searchReply("", "def f300():\n  return 300\n", "def f300():\n    return 3000\n")), good},
			want:     fixed, corrections: 1,
			says:  []string{"edit block 1", "not one uniform shift", "```\ndef f300():\n    return 300\n```", "none of them was applied"},
			never: []string{"599 |", "600 |"},
		},
		{
			name:     "not found shows the closest lines unnumbered",
			existing: large,
			replies:  []llm.Response{reply(searchReply("", "def f300():\n    return 301\n", "def f300():\n    return 3000\n")), good},
			want:     fixed, corrections: 1,
			says:  []string{"does not match", "lines 597-602", "```\ndef f299():\n    return 299\ndef f300():\n    return 300\ndef f301():\n    return 301\n```"},
			never: []string{"599 |", "600 | "},
		},
		{
			name:     "ambiguous shows each place",
			existing: dup.String(),
			replies: []llm.Response{
				reply(searchReply("", "    x = compute()\n    return x\n", "    x = compute()\n    return -x\n")),
				reply(searchReply("", "def g7():\n    x = compute()\n    return x\n", "def g7():\n    x = compute()\n    return -x\n")),
			},
			want:        strings.Replace(dup.String(), "def g7():\n    x = compute()\n    return x\n", "def g7():\n    x = compute()\n    return -x\n", 1),
			corrections: 1,
			says:        []string{"600 places", "Add neighbouring lines", "```\ndef g0():\n    x = compute()\n    return x\ndef g1():\n"},
		},
		{
			name:     "a block for another file is sent back",
			existing: large,
			replies:  []llm.Response{reply(searchReply("tests/test_a.py", "def f300():\n    return 300\n", "def f300():\n    return 3000\n")), good},
			want:     fixed, corrections: 1,
			says: []string{"edit block 1 is for tests/test_a.py", "only a.py"},
		},
		{
			name:     "a block naming the file by a longer path is accepted",
			existing: large,
			replies:  []llm.Response{reply(searchReply("repo/a.py", "def f300():\n    return 300\n", "def f300():\n    return 3000\n"))},
			want:     fixed,
		},
		{
			name:     "a reply that changes nothing is sent back",
			existing: large,
			replies:  []llm.Response{reply(searchReply("", "def f300():\n    return 300\n", "def f300():\n    return 300\n")), good},
			want:     fixed, corrections: 1,
			says: []string{"changes nothing"},
		},
		{
			name:     "a numbered FIND is applied at once and reported",
			existing: large,
			replies:  []llm.Response{reply(searchReply("", "599 | def f300():\n600 |     return 300\n", "599 | def f300():\n600 |     return 3000\n"))},
			want:     fixed,
			loose:    []edit.LooseKind{edit.LineNumbers},
		},
		{
			name:     "a uniformly dedented FIND is applied at once and reported",
			existing: indented,
			replies:  []llm.Response{reply(searchReply("", "def f300():\n    return 300\n", "def f300():\n    return 3000\n"))},
			want:     strings.Replace(indented, "        return 300\n", "        return 3000\n", 1),
			loose:    []edit.LooseKind{edit.IndentShift},
		},
		{
			name:     "three slips give up, every error kept",
			existing: large,
			replies: []llm.Response{
				reply(searchReply("", "def f300():\n  return 300\n", "def f300():\n    return 3000\n")),
				reply(searchReply("", "def f300():\n    return 301\n", "x\n")),
				reply("<<<< SEARCH\ndef f300():\n=======\nx\n>>>>>>> REPLACE\n"),
			},
			corrections: 2,
			says:        []string{"not one uniform shift"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := &scripted{replies: tt.replies}
			res, err := Generate(t.Context(), m, GenerateInput{Change: edit.Modify, MaxTokens: 100, Prompt: PromptInput{Path: "a.py", Existing: tt.existing}})
			if tt.want == "" {
				var gu *GiveUpError
				if !errors.As(err, &gu) {
					t.Fatalf("err = %v, want a GiveUpError", err)
				}
			} else if err != nil {
				t.Fatal(err)
			} else if res.Content != tt.want {
				t.Errorf("content differs:\n%.300q\nwant\n%.300q", res.Content, tt.want)
			}
			if res.Corrections != tt.corrections || res.Calls != len(tt.replies) || len(res.Rejected) != len(tt.replies)-btoi(tt.want != "") {
				t.Errorf("calls %d corrections %d rejected %d, want %d %d %d", res.Calls, res.Corrections, len(res.Rejected), len(tt.replies), tt.corrections, len(tt.replies)-btoi(tt.want != ""))
			}
			if len(tt.says)+len(tt.never) > 0 {
				if len(m.requests) < 2 {
					t.Fatal("no correction was sent")
				}
				sent := m.requests[1].Messages[2].Text
				for _, s := range tt.says {
					if !strings.Contains(sent, s) {
						t.Errorf("correction lacks %q:\n%s", s, sent)
					}
				}
				for _, s := range tt.never {
					if strings.Contains(sent, s) {
						t.Errorf("correction contains %q:\n%s", s, sent)
					}
				}
				if res.Rejected[0] == "" || !strings.Contains(sent, res.Rejected[0]) {
					t.Errorf("Rejected[0] = %q is not the error sent back", res.Rejected[0])
				}
			}
			if tt.loose != nil {
				if len(res.Blocks) != 1 || len(res.Blocks[0].Loose) != len(tt.loose) {
					t.Fatalf("blocks %+v, want one loose match of kinds %v", res.Blocks, tt.loose)
				}
				for i, k := range tt.loose {
					if res.Blocks[0].Loose[i].Kind != k {
						t.Errorf("loose %d = %v, want %v", i, res.Blocks[0].Loose[i].Kind, k)
					}
				}
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestTruncationIsNeverAskedTheSameWay: a reply cut off at its limit is
// asked again with more room, up to the model's maximum; a whole-file
// rewrite of an existing file is asked again as edit blocks; when nothing
// can change, Generate gives up instead of repeating the call.
func TestTruncationIsNeverAskedTheSameWay(t *testing.T) {
	t.Parallel()
	small := "def f300():\n    return 300\n"
	tests := []struct {
		name      string
		change    edit.ChangeType
		existing  string
		maxOutput int
		replies   []llm.Response
		limits    []int
		blocks    []bool // per request: asked for edit blocks
		content   string
		giveUp    string
	}{
		{"an Add gets twice the room each time", edit.Add, "", 0,
			[]llm.Response{truncated("```go\npack"), truncated("```go\npackage"), reply("```go\npackage x\n```")},
			[]int{1000, 2000, 4000}, []bool{false, false, false}, "package x\n", ""},
		{"the room stops at the model's maximum", edit.Add, "", 3000,
			[]llm.Response{truncated("```go\npack"), truncated("```go\npackage"), reply("```go\npackage x\n```")},
			[]int{1000, 2000, 3000}, []bool{false, false, false}, "package x\n", ""},
		{"at the maximum it gives up instead of asking the same again", edit.Add, "", 1000,
			[]llm.Response{truncated("```go\npack")},
			[]int{1000}, []bool{false}, "", "the most this model may write"},
		{"a cut-off rewrite of an existing file becomes edit blocks", edit.Modify, small, 1000,
			[]llm.Response{truncated("```python\ndef f300"), reply(blocksReply)},
			[]int{1000, 1000}, []bool{false, true}, "def f300():\n    return 3000\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := &scripted{replies: tt.replies}
			var told []string
			res, err := Generate(t.Context(), m, GenerateInput{
				Change: tt.change, Prompt: PromptInput{Path: "x.py", LLD: "design", Existing: tt.existing},
				MaxTokens: 1000, MaxOutput: tt.maxOutput,
				OnTruncated: func(cut, next int, blocks bool) { told = append(told, fmt.Sprint(cut, "->", next, blocks)) },
			})
			if tt.giveUp != "" {
				if !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), tt.giveUp) {
					t.Fatalf("err = %v, want a truncation give-up naming %q", err, tt.giveUp)
				}
			} else if err != nil || res.Content != tt.content {
				t.Fatalf("Generate = %q, %v; want %q", res.Content, err, tt.content)
			}
			if len(m.requests) != len(tt.limits) {
				t.Fatalf("%d calls, want %d", len(m.requests), len(tt.limits))
			}
			for i, req := range m.requests {
				asked := strings.Contains(req.Messages[0].Text, "FIND:")
				if req.MaxTokens != tt.limits[i] || asked != tt.blocks[i] {
					t.Errorf("call %d: limit %d blocks %v; want %d %v", i+1, req.MaxTokens, asked, tt.limits[i], tt.blocks[i])
				}
				if i > 0 && req.MaxTokens == m.requests[i-1].MaxTokens && req.Messages[0].Text == m.requests[i-1].Messages[0].Text {
					t.Errorf("call %d repeats call %d", i+1, i)
				}
			}
			if want := len(tt.limits) - 1; len(told) != want {
				t.Errorf("told of %d retries %v, want %d", len(told), told, want)
			}
		})
	}
}
