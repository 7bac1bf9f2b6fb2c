package edit

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/azero-dev/azero/internal/llm"
)

// MaxTruncationRetries bounds how often a reply cut off at the output
// limit is asked for again (spec #324: at most 3 retries).
const MaxTruncationRetries = 3

// ErrTruncated is returned when every reply was cut off at the output limit.
var ErrTruncated = errors.New("the model's reply was cut off at its output limit")

// ErrRefused is returned when the model refused to answer.
var ErrRefused = errors.New("the model refused to answer")

// GenerateInput describes one file to produce with a model.
type GenerateInput struct {
	Change    ChangeType
	Prompt    PromptInput // Path, LLD, Existing (for Modify), Tests, Feedback
	System    string      // the system text
	Extra     string      // more instructions appended to the prompt (context files, the phase's goal)
	MaxTokens int
	Purpose   string // lineage slug: "scaffold", "implement", ...
}

// GenerateResult is a file's new content and how it was obtained.
type GenerateResult struct {
	Content     string   `json:"-"`
	Strategy    Strategy `json:"strategy"`
	Calls       int      `json:"calls"`
	Truncations int      `json:"truncations"`
	Corrections int      `json:"corrections"`
	Blocks      []Result `json:"blocks,omitempty"`
}

// GiveUpError says why no content could be produced; the file is untouched.
type GiveUpError struct {
	Path   string
	Reason error
	Calls  int
}

func (e *GiveUpError) Error() string {
	return fmt.Sprintf("%s: gave up after %d model call(s), the file is unchanged: %v", e.Path, e.Calls, e.Reason)
}

func (e *GiveUpError) Unwrap() error { return e.Reason }

// Generate asks m for a file's content with the strategy the spec selects
// (SelectStrategy): the whole file for Add and small Modify, FIND/REPLACE
// blocks for a large Modify. A reply cut off at the output limit is never
// applied: it is asked for again, at most MaxTruncationRetries times. A
// reply that cannot be parsed or applied is sent back once with the error
// text; a second failure gives up. Generate never writes; on any error the
// caller's file stays as it is.
func Generate(ctx context.Context, m llm.Model, in GenerateInput) (GenerateResult, error) {
	existing := in.Prompt.Existing
	res := GenerateResult{Strategy: SelectStrategy(in.Change, []byte(existing))}
	prompt := FullFilePrompt(in.Prompt)
	if res.Strategy == Blocks {
		prompt = BlocksPrompt(in.Prompt)
	}
	if in.Extra != "" {
		prompt += "\n\n" + in.Extra
	}
	msgs := []llm.Message{{Role: llm.SpeakerUser, Text: prompt}}
	giveUp := func(err error) (GenerateResult, error) {
		return res, &GiveUpError{Path: in.Prompt.Path, Reason: err, Calls: res.Calls}
	}
	for {
		resp, err := m.Generate(ctx, llm.Request{System: in.System, Messages: msgs, MaxTokens: in.MaxTokens, Purpose: in.Purpose})
		res.Calls++
		if err != nil {
			return res, fmt.Errorf("%s: %w", in.Prompt.Path, err)
		}
		switch resp.Stop {
		case llm.StopMaxTokens:
			res.Truncations++
			if res.Truncations > MaxTruncationRetries {
				return giveUp(fmt.Errorf("%w %d times", ErrTruncated, res.Truncations))
			}
			continue
		case llm.StopRefused:
			return giveUp(fmt.Errorf("%w: %s", ErrRefused, firstLines(resp.Text, 3)))
		}
		content, blocks, err := interpret(res.Strategy, existing, resp.Text)
		if err == nil {
			res.Content, res.Blocks = content, blocks
			return res, nil
		}
		if res.Corrections >= 1 {
			return giveUp(err)
		}
		res.Corrections++
		msgs = append(msgs,
			llm.Message{Role: llm.SpeakerAssistant, Text: resp.Text},
			llm.Message{Role: llm.SpeakerUser, Text: correction(res.Strategy, err)})
	}
}

// interpret turns a reply into the file's content.
func interpret(st Strategy, existing, reply string) (string, []Result, error) {
	if st == Blocks {
		blocks, err := Parse(reply)
		if err != nil {
			return "", nil, err
		}
		out, results, err := Apply(existing, blocks)
		if err != nil {
			return "", nil, err
		}
		return out, results, nil
	}
	content, err := ExtractFullFile(reply)
	if err != nil {
		return "", nil, err
	}
	if existing == "" {
		return content, nil, nil
	}
	// A whole file that swaps real code for "... rest of code ..." would
	// delete that code just as a lazy block would.
	var el *ElisionError
	if err := CheckElision([]Block{{N: 1, Find: existing, Replace: content}}); errors.As(err, &el) {
		return "", nil, fmt.Errorf("the file you sent replaces existing code with the placeholder %q; send the complete file, with every line written out", strings.TrimSpace(el.Line))
	} else if err != nil {
		return "", nil, err
	}
	// Keep the file's line endings, byte-order mark and final newline.
	return KeepFileShape(existing, content), nil, nil
}

func correction(st Strategy, err error) string {
	what := "the complete file in one fenced code block"
	if st == Blocks {
		what = "only the FIND/REPLACE blocks, in the same format, with FIND copied exactly from the file"
	}
	return fmt.Sprintf("Your reply could not be used:\n\n%v\n\nSend it again, corrected: %s.", err, what)
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(strings.TrimSpace(s), "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, " ")
}
