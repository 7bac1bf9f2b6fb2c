// Package mock is mock:scripted, an offline model that answers from a script of replies keyed
// by role and turn, so workflows run without keys or network: for demonstrations
// (AZERO_MOCK_LLM=1) and for tests that need exact replies, truncations and failures.
//
// Invariants: a reply depends only on the script, the role and the turn, never on the clock
// or on randomness; the turn comes from an injectable source, so a run resumed after a crash
// (which counts its completed calls from the store) gets the same replies as an uninterrupted
// one; a missing reply is an error naming the role, turn and script, never an invented answer.
// Without a script, the drafter and reviewer get built-in replies (an issue, a design document
// for the repository the request maps, an approving review); the coder gets none.
package mock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/llm"
)

// Name is the model's provider:model name.
const Name = llm.ProviderMock + ":" + llm.MockScripted

// ErrNoReply is wrapped by the error for a role and turn the script does not answer.
var ErrNoReply = errors.New("no scripted reply")

// Options configures the scripted model.
type Options struct {
	// Script is the path of a TOML script (see [ParseScript]); empty uses the built-in
	// replies, which exist for the drafter and the reviewer only.
	Script string
	// Role is the role this model plays; replies are looked up by it.
	Role llm.Role
	// Turns returns how many replies this role has already received in the current run (its
	// completed calls); the next call is turn Turns()+1. A resumed run passes a count from the
	// store. Nil counts replies in memory, from zero.
	Turns func(ctx context.Context) (int, error)
	// Estimator counts tokens for replies that do not state them; nil makes one.
	Estimator *llm.Estimator
}

// Model is the scripted model.
type Model struct {
	role   llm.Role
	script *Script // nil: built-in replies
	turns  func(ctx context.Context) (int, error)
	est    *llm.Estimator

	mu       sync.Mutex
	replied  int         // replies given, for the in-memory turn count
	attempts map[int]int // calls seen per turn, to play a turn's replies in order
}

var _ llm.Model = (*Model)(nil)

// New reads and checks the script now, so a broken script fails before any work starts.
func New(opts Options) (llm.Model, error) {
	if !opts.Role.Valid() {
		return nil, fmt.Errorf("%s: role %q is not drafter, reviewer or coder", Name, opts.Role)
	}
	m := &Model{role: opts.Role, turns: opts.Turns, est: opts.Estimator, attempts: map[int]int{}}
	if m.est == nil {
		m.est = llm.NewEstimator()
	}
	if opts.Script == "" {
		if opts.Role == llm.RoleCoder {
			return nil, fmt.Errorf("%s has no built-in replies for the coder: give it a script of [[reply]] entries with role = \"coder\" (the mock script setting)", Name)
		}
		return m, nil
	}
	data, err := readScript(opts.Script)
	if err != nil {
		return nil, fmt.Errorf("%s: read script: %w", Name, err)
	}
	s, err := ParseScript(opts.Script, data)
	if err != nil {
		return nil, err
	}
	m.script = s
	return m, nil
}

// MaxScriptBytes bounds a script: a path that names a device that never
// ends (/dev/zero) or a huge file by mistake fails at once instead of
// filling memory.
const MaxScriptBytes = 32 << 20

// readScript reads a script file: a regular file of at most
// MaxScriptBytes (a named pipe is refused before it is opened: opening it
// could wait forever).
func readScript(path string) ([]byte, error) {
	data, err := iostreams.ReadRegularFile(path, MaxScriptBytes)
	var notRegular *iostreams.NotRegularError
	var tooLarge *iostreams.InputTooLargeError
	switch {
	case errors.As(err, &notRegular):
		return nil, fmt.Errorf("%s is not a regular file: a script is a TOML text file", path)
	case errors.As(err, &tooLarge):
		return nil, fmt.Errorf("%s is larger than %d MiB: check that it is the script you meant", path, MaxScriptBytes>>20)
	}
	return data, err
}

// Name returns "mock:scripted".
func (m *Model) Name() string { return Name }

// Generate answers from the script.
func (m *Model) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	start := time.Now()
	if err := req.Validate(); err != nil {
		return llm.Response{}, fmt.Errorf("%s: %w", Name, err)
	}
	if err := ctx.Err(); err != nil {
		return llm.Response{}, err
	}
	turn, err := m.turn(ctx)
	if err != nil {
		return llm.Response{}, err
	}

	var r Reply
	if m.script == nil {
		r = builtin(m.role, turn, req)
	} else {
		replies := m.script.replies(m.role, turn)
		if len(replies) == 0 {
			return llm.Response{}, fmt.Errorf("%w: %s: script %s has no reply for role %q, turn %d; add a [[reply]] with role = %q and turn = %d",
				ErrNoReply, Name, m.script.Name, m.role, turn, m.role, turn)
		}
		m.mu.Lock()
		n := m.attempts[turn]
		m.attempts[turn] = n + 1
		m.mu.Unlock()
		r = replies[min(n, len(replies)-1)]
	}

	if r.Error != "" {
		msg := r.Message
		if msg == "" {
			msg = fmt.Sprintf("scripted %s for role %s, turn %d", r.Error, m.role, turn)
		}
		return llm.Response{}, &llm.ProviderError{Provider: llm.ProviderMock, Kind: r.Error, Message: msg, RetryAfter: r.RetryAfter}
	}

	in, out := r.InputTokens, r.OutputTokens
	if in <= 0 {
		in = m.est.EstimateRequest(req)
	}
	if out <= 0 {
		out = m.est.CountTokens(r.Text)
	}
	m.mu.Lock()
	m.replied++
	m.mu.Unlock()
	return llm.Response{
		Text: r.Text, Stop: r.Stop, InputTokens: in, OutputTokens: out,
		Model: Name, Latency: time.Since(start),
	}, nil
}

func (m *Model) turn(ctx context.Context) (int, error) {
	if m.turns != nil {
		n, err := m.turns(ctx)
		if err != nil {
			return 0, fmt.Errorf("%s: count the %s's completed calls: %w", Name, m.role, err)
		}
		if n < 0 {
			return 0, fmt.Errorf("%s: the turn source returned %d completed calls", Name, n)
		}
		return n + 1, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.replied + 1, nil
}

// builtin is the reply without a script: a deterministic draft built from the request's last
// user message (an issue, or for PurposeDesign a design document), or an approving review, so
// the governance workflows run offline.
func builtin(role llm.Role, turn int, req llm.Request) Reply {
	brief := ""
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == llm.SpeakerUser {
			brief = strings.TrimSpace(req.Messages[i].Text)
			break
		}
	}
	switch {
	case role == llm.RoleReviewer && req.Purpose == PurposeDesignReview:
		return Reply{Role: role, Turn: turn, Stop: llm.StopEnd, Text: DesignReviewerText}
	case role == llm.RoleReviewer:
		return Reply{Role: role, Turn: turn, Stop: llm.StopEnd, Text: ReviewerText}
	case req.Purpose == PurposeDesign:
		return Reply{Role: role, Turn: turn, Stop: llm.StopEnd, Text: designDraft(brief)}
	}
	return Reply{Role: role, Turn: turn, Stop: llm.StopEnd, Text: draft(brief)}
}

// ReviewerText is the built-in reviewer's reply.
const ReviewerText = `**Verdict:** APPROVED

## Review

- The draft states the problem and the change it asks for.
- Its acceptance criteria can be checked by a test.

_Offline review by mock:scripted: no model read this draft._
`

// draft is the built-in issue draft: its title the brief's first line,
// its summary the brief. The issue workflow's request wraps the brief in a
// <brief> part among its instructions; only the brief is read then.
func draft(brief string) string {
	if b, ok := part(brief, "brief"); ok {
		brief = strings.TrimSpace(b)
	}
	title := "Untitled change"
	for _, line := range strings.Split(brief, "\n") {
		line = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "#"))
		if line != "" {
			title = line
			break
		}
	}
	if r := []rune(title); len(r) > 72 {
		title = strings.TrimSpace(string(r[:72]))
	}
	if brief == "" {
		brief = "(the request had no brief)"
	}
	return fmt.Sprintf(`# %s

**Labels:** enhancement

## Summary

%s

## Acceptance Criteria

- [ ] The behaviour described in the summary works as described.
- [ ] Automated tests cover it.

_Drafted offline by mock:scripted: no model wrote this draft._
`, title, brief)
}
