package coder

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/azero-dev/azero/internal/edit"
	"github.com/azero-dev/azero/internal/llm"
)

// MaxTruncationRetries bounds how often a reply cut off at the output
// limit is asked for again (spec #324: at most 3 retries).
const MaxTruncationRetries = 3

// MaxCorrections bounds how often a reply that cannot be used (it does
// not parse, a block is not found, is ambiguous or slips in its
// indentation, ...) is sent back with the error. All or nothing means a
// corrected reply must get every block right at once, so a model that
// slips slightly gets a second chance.
const MaxCorrections = 2

// ErrNoChange is returned (wrapped) for a reply whose every block leaves
// the file as it is: REPLACE WITH repeats FIND.
var ErrNoChange = errors.New("every edit block's REPLACE WITH is the same as its FIND, so the reply changes nothing")

// ErrBlocksForNewFile is returned (as the reason sent back to the model)
// for edit blocks written for a file that does not exist yet.
var ErrBlocksForNewFile = errors.New("the reply holds edit blocks, but this file is new: there is nothing to FIND in it; send the complete file in one fenced code block")

// ErrTruncated is returned when every reply was cut off at the output limit.
var ErrTruncated = errors.New("the model's reply was cut off at its output limit")

// ErrRefused is returned when the model refused to answer.
var ErrRefused = errors.New("the model refused to answer")

// GenerateInput describes one file to produce with a model.
type GenerateInput struct {
	Change    edit.ChangeType
	Prompt    PromptInput // Path, LLD, Existing (for Modify), Tests, Feedback
	System    string      // the system text
	Extra     string      // more instructions appended to the prompt (context files, the phase's goal)
	MaxTokens int         // the output limit of the first call
	// MaxOutput is the most output a retry may ask for (the model's
	// maximum, or the configured max_output_tokens); 0 lets each retry
	// double the limit.
	MaxOutput int
	Purpose   string // lineage slug: "scaffold", "implement", ...
	// OnTruncated, when set, is told of every reply cut off at its limit
	// and how it is asked again: with next tokens, and as edit blocks
	// instead of a whole file when blocks is set.
	OnTruncated func(cutAt, next int, blocks bool)
	// OnRejected, when set, is told of every reply that could not be used
	// and the reason sent back with it (or the reason Generate gives up).
	OnRejected func(reason string)
	// MayKeep lets the model say that the file needs no change: a reply
	// that is NoChangeWord alone (with its explanation), a whole file
	// equal to the current one, or edit blocks that change nothing are
	// accepted, with Unchanged set.
	MayKeep bool
	// KeepExisting refuses a reply that deletes or changes a line of the
	// existing file (KeepsExisting): a stub round only adds declarations.
	KeepExisting bool
}

// NoChangeWord is what a model answers, alone on a line and without code,
// when it was told it may leave the file as it is (MayKeep).
const NoChangeWord = "NO CHANGE"

// GenerateResult is a file's new content and how it was obtained.
type GenerateResult struct {
	Content     string   `json:"-"`
	Strategy    Strategy `json:"strategy"`
	Calls       int      `json:"calls"`
	Truncations int      `json:"truncations"`
	Corrections int      `json:"corrections"`
	// Blocks is how each edit block was applied, for a Blocks strategy:
	// callers show and record the loose matches (edit.LooseMatches).
	Blocks []edit.Result `json:"blocks,omitempty"`
	// Rejected holds, in order, the error sent back to the model for each
	// reply that could not be used.
	Rejected []string `json:"rejected,omitempty"`
	// Prose is what the accepted reply says outside its code (edit.Prose):
	// the model's explanation, to show as such.
	Prose string `json:"prose,omitempty"`
	// Unchanged: the model said the file needs no change (MayKeep);
	// Content is the existing content.
	Unchanged bool `json:"unchanged,omitempty"`
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
// applied: it is asked for again, at most MaxTruncationRetries times, each
// time with twice the room up to MaxOutput, and a whole-file Modify as edit
// blocks; when neither can change, Generate gives up rather than repeat
// the same call. A
// reply that cannot be used is sent back with the error text, which shows
// the model the file's exact lines to copy (see edit.NotFoundError,
// edit.AmbiguousError, edit.IndentError), at most MaxCorrections times; then
// Generate gives up. Unusable means: it does not parse, a block fails to
// apply, a block names another file, or every block changes nothing.
// A whole-file reply is read as models write them (edit.ExtractFile: the file
// among other code blocks); edit blocks sent for an existing file asked
// for whole are applied as blocks (Strategy then says Blocks), and for a
// new file are sent back: a reply's markers are never written as text.
// Generate never writes; on any error the caller's file stays as it is.
func Generate(ctx context.Context, m llm.Model, in GenerateInput) (GenerateResult, error) {
	existing := in.Prompt.Existing
	res := GenerateResult{Strategy: SelectStrategy(in.Change, []byte(existing))}
	start := func() []llm.Message {
		prompt := FullFilePrompt(in.Prompt)
		if res.Strategy == Blocks {
			prompt = BlocksPrompt(in.Prompt)
		}
		if in.Extra != "" {
			prompt += "\n\n" + in.Extra
		}
		return []llm.Message{{Role: llm.SpeakerUser, Text: prompt}}
	}
	msgs := start()
	giveUp := func(err error) (GenerateResult, error) {
		return res, &GiveUpError{Path: in.Prompt.Path, Reason: err, Calls: res.Calls}
	}
	limit := in.MaxTokens
	for {
		resp, err := m.Generate(ctx, llm.Request{System: in.System, Messages: msgs, MaxTokens: limit, Purpose: in.Purpose})
		res.Calls++
		if err != nil {
			return res, fmt.Errorf("%s: %w", in.Prompt.Path, err)
		}
		switch resp.Stop {
		case llm.StopMaxTokens:
			// A cut-off reply is never applied, and never asked for the
			// same way again: the limit grows, and a whole-file rewrite of
			// an existing file becomes edit blocks.
			res.Truncations++
			next := 2 * limit
			if in.MaxOutput > 0 {
				next = min(next, in.MaxOutput)
			}
			blocks := res.Strategy == FullFile && in.Change == edit.Modify && existing != ""
			switch {
			case res.Truncations > MaxTruncationRetries:
				return giveUp(fmt.Errorf("%w %d times (last limit %d tokens)", ErrTruncated, res.Truncations, limit))
			case next <= limit && !blocks:
				return giveUp(fmt.Errorf("%w at %d tokens, the most this model may write in one reply (max_output_tokens)", ErrTruncated, limit))
			}
			if in.OnTruncated != nil {
				in.OnTruncated(limit, max(next, limit), blocks)
			}
			limit = max(next, limit)
			if blocks {
				res.Strategy = Blocks
				msgs = start()
			}
			continue
		case llm.StopRefused:
			return giveUp(fmt.Errorf("%w: %s", ErrRefused, firstLines(resp.Text, 3)))
		}
		if in.MayKeep && existing != "" && saysNoChange(resp.Text) {
			res.Content, res.Unchanged, res.Prose = existing, true, withoutNoChange(edit.Prose(resp.Text))
			return res, nil
		}
		content, blocks, followed, err := interpret(res.Strategy, in.Prompt.Path, existing, resp.Text)
		if err != nil && in.MayKeep && errors.Is(err, ErrNoChange) {
			content, err = existing, nil
		}
		if err == nil && in.KeepExisting && existing != "" {
			err = KeepsExisting(in.Prompt.Path, existing, content)
		}
		if err == nil {
			res.Content, res.Blocks, res.Strategy = content, blocks, followed
			res.Prose = edit.Prose(resp.Text)
			res.Unchanged = in.MayKeep && content == existing
			return res, nil
		}
		res.Rejected = append(res.Rejected, err.Error())
		if in.OnRejected != nil {
			in.OnRejected(err.Error())
		}
		if res.Corrections >= MaxCorrections {
			return giveUp(err)
		}
		res.Corrections++
		msgs = append(msgs,
			llm.Message{Role: llm.SpeakerAssistant, Text: resp.Text},
			llm.Message{Role: llm.SpeakerUser, Text: correction(res.Strategy, err)})
	}
}

// interpret turns a reply into the file's content. It reports the
// strategy the reply followed: a model asked for the whole of an existing
// file sometimes answers with edit blocks instead, which are applied as
// such (never written into the file as text).
func interpret(st Strategy, path, existing, reply string) (string, []edit.Result, Strategy, error) {
	if st == Blocks {
		content, results, err := applyReply(path, existing, reply)
		return content, results, Blocks, err
	}
	if existing != "" && repliedBlocks(reply) {
		content, results, err := applyReply(path, existing, reply)
		return content, results, Blocks, err
	}
	if existing == "" && repliedBlocks(reply) {
		return "", nil, st, ErrBlocksForNewFile
	}
	content, err := edit.ExtractFile(reply, path)
	if err != nil {
		return "", nil, st, err
	}
	if existing == "" {
		return content, nil, st, nil
	}
	// A whole file that swaps real code for "... rest of code ..." would
	// delete that code just as a lazy block would.
	var el *edit.ElisionError
	if err := edit.CheckElision([]edit.Block{{N: 1, Find: existing, Replace: content}}); errors.As(err, &el) {
		return "", nil, st, fmt.Errorf("the file you sent replaces existing code with the placeholder %q; send the complete file, with every line written out", strings.TrimSpace(el.Line))
	} else if err != nil {
		return "", nil, st, err
	}
	// Keep the file's line endings, byte-order mark and final newline.
	return edit.KeepFileShape(existing, content), nil, st, nil
}

// repliedBlocks reports whether a reply asked for a whole file is edit
// blocks instead: it parses as blocks, and its one code block (if it has
// exactly one) is not a file that merely mentions the format, since that
// block then holds a marker or label line of its own.
func repliedBlocks(reply string) bool {
	if _, err := edit.Parse(reply); err != nil {
		return false
	}
	body, err := edit.ExtractFullFile(reply)
	if err != nil {
		return true // no single fenced file: blocks, or blocks in several fences
	}
	blocks, err := edit.Parse(body)
	return err == nil && len(blocks) > 0
}

// applyReply parses a reply as edit blocks and applies them to existing.
func applyReply(path, existing, reply string) (string, []edit.Result, error) {
	blocks, err := edit.Parse(reply)
	if err != nil {
		return "", nil, err
	}
	for _, b := range blocks {
		if b.Path != "" && !edit.PathMatches(path, b.Path) {
			return "", nil, fmt.Errorf("edit block %d is for %s, but this reply must change only %s; send the blocks for %s alone", b.N, b.Path, path, path)
		}
	}
	out, results, err := edit.Apply(existing, blocks)
	if err != nil {
		return "", nil, err
	}
	if !slices.ContainsFunc(results, func(r edit.Result) bool { return r.Status == edit.Applied }) {
		return "", nil, fmt.Errorf("%w; write the changed lines in REPLACE WITH", ErrNoChange)
	}
	return out, results, nil
}

// saysNoChange reports whether a reply says, without any code, that the
// file needs no change: a line that is NoChangeWord (in any case, marked
// up or not) and no code block or edit block.
func saysNoChange(reply string) bool {
	if _, err := edit.ExtractFullFile(reply); !errors.Is(err, edit.ErrNoCodeBlock) {
		return false
	}
	if blocks, err := edit.Parse(reply); err == nil && len(blocks) > 0 {
		return false
	}
	for l := range strings.SplitSeq(reply, "\n") {
		if strings.EqualFold(strings.Trim(strings.TrimSpace(l), "*_`#:.!> \t"), NoChangeWord) {
			return true
		}
	}
	return false
}

// withoutNoChange drops the NoChangeWord line from a reply's prose: what
// is left is the model's reason.
func withoutNoChange(prose string) string {
	var out []string
	for l := range strings.SplitSeq(prose, "\n") {
		if !strings.EqualFold(strings.Trim(strings.TrimSpace(l), "*_`#:.!> \t"), NoChangeWord) {
			out = append(out, l)
		}
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
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
