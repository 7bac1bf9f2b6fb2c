package mock

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"

	"github.com/azero-dev/azero/internal/llm"
)

// ErrScript is wrapped by every script parse error.
var ErrScript = errors.New("invalid mock script")

// Reply is one scripted answer.
type Reply struct {
	Role llm.Role
	// Turn is the role's call number in the run, from 1.
	Turn int
	Text string
	// Stop defaults to end.
	Stop llm.StopReason
	// Error, when set, makes the call fail with an error of this kind instead of replying.
	Error llm.ErrorKind
	// Message is the error's message (a default names the script).
	Message string
	// RetryAfter is the wait the error asks for.
	RetryAfter time.Duration
	// InputTokens and OutputTokens replace the estimates when positive.
	InputTokens, OutputTokens int
	// Line is where the reply starts in the script (0 when unknown).
	Line int
}

// Script is a parsed script: replies in file order.
type Script struct {
	// Name is the file the script came from, for messages.
	Name    string
	Replies []Reply
}

// replies returns the replies for role and turn, in file order.
func (s *Script) replies(role llm.Role, turn int) []Reply {
	var out []Reply
	for _, r := range s.Replies {
		if r.Role == role && r.Turn == turn {
			out = append(out, r)
		}
	}
	return out
}

// scriptFile is the TOML shape of a script.
type scriptFile struct {
	Reply []replyFile `toml:"reply"`
}

type replyFile struct {
	Role         string `toml:"role"`
	Turn         int    `toml:"turn"`
	Text         string `toml:"text,omitempty"`
	Stop         string `toml:"stop,omitempty"`
	Error        string `toml:"error,omitempty"`
	Message      string `toml:"message,omitempty"`
	RetryAfter   string `toml:"retry_after,omitempty"`
	InputTokens  int    `toml:"input_tokens,omitempty"`
	OutputTokens int    `toml:"output_tokens,omitempty"`
}

// scriptErrors maps the error names a script may use to kinds.
var scriptErrors = map[string]llm.ErrorKind{
	"transient":        llm.KindServer,
	"server_error":     llm.KindServer,
	"rate_limited":     llm.KindRateLimited,
	"overloaded":       llm.KindOverloaded,
	"timeout":          llm.KindTimeout,
	"network":          llm.KindNetwork,
	"auth":             llm.KindAuth,
	"bad_request":      llm.KindBadRequest,
	"context_too_long": llm.KindContextTooLong,
	"model_not_found":  llm.KindNotFound,
}

func scriptErrorNames() string {
	names := make([]string, 0, len(scriptErrors))
	for n := range scriptErrors {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// maxTurn bounds turn numbers; no run makes a million calls per role.
const maxTurn = 1_000_000

// ParseScript parses a script. name labels errors ("file:line: ..."). The format:
//
//	[[reply]]
//	role = "coder"          # drafter | reviewer | coder
//	turn = 1                # the role's n-th call in the run, from 1
//	text = '''...'''        # the reply
//	stop = "max_tokens"     # end (default) | max_tokens | refused | other
//	input_tokens = 900      # optional; estimated from the request otherwise
//	output_tokens = 4096    # optional; estimated from the text otherwise
//
//	[[reply]]
//	role = "reviewer"
//	turn = 1
//	error = "transient"     # fail instead: transient, rate_limited, overloaded, timeout,
//	retry_after = "2s"      #   network, auth, bad_request, context_too_long, model_not_found
//
// Several replies for one role and turn are played in order on successive attempts of that
// call (retries), the last one repeating; a reply with an error does not end the turn.
func ParseScript(name string, data []byte) (*Script, error) {
	var f scriptFile
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, decodeError(name, err)
	}
	lines := replyLines(data)
	s := &Script{Name: name, Replies: make([]Reply, 0, len(f.Reply))}
	for i, rf := range f.Reply {
		pos := replyPos{}
		if i < len(lines) {
			pos = lines[i]
		}
		r, err := rf.reply(pos)
		if err != nil {
			line := pos.key(err.key)
			return nil, fmt.Errorf("%w: %s: reply %d: %s", ErrScript, location(name, line), i+1, err.msg)
		}
		s.Replies = append(s.Replies, r)
	}
	return s, nil
}

type fieldError struct{ key, msg string }

func (rf replyFile) reply(pos replyPos) (Reply, *fieldError) {
	r := Reply{
		Role: llm.Role(rf.Role), Turn: rf.Turn, Text: rf.Text, Stop: llm.StopEnd,
		Message: rf.Message, InputTokens: rf.InputTokens, OutputTokens: rf.OutputTokens, Line: pos.line,
	}
	if !r.Role.Valid() {
		if rf.Role == "" {
			return r, &fieldError{"", `has no role (drafter, reviewer or coder)`}
		}
		return r, &fieldError{"role", fmt.Sprintf("role %q is not drafter, reviewer or coder", rf.Role)}
	}
	if rf.Turn < 1 || rf.Turn > maxTurn {
		if rf.Turn == 0 {
			return r, &fieldError{"turn", "has no turn (1 for the role's first call)"}
		}
		return r, &fieldError{"turn", fmt.Sprintf("turn %d is not between 1 and %d", rf.Turn, maxTurn)}
	}
	switch s := llm.StopReason(rf.Stop); s {
	case "":
	case llm.StopEnd, llm.StopMaxTokens, llm.StopRefused, llm.StopOther:
		r.Stop = s
	default:
		return r, &fieldError{"stop", fmt.Sprintf("stop %q is not end, max_tokens, refused or other", rf.Stop)}
	}
	if rf.Error != "" {
		kind, ok := scriptErrors[rf.Error]
		if !ok {
			return r, &fieldError{"error", fmt.Sprintf("error %q is not one of %s", rf.Error, scriptErrorNames())}
		}
		r.Error = kind
		if rf.Text != "" || rf.Stop != "" {
			return r, &fieldError{"error", "has an error and a text or stop; a failing call returns no reply"}
		}
	}
	if rf.RetryAfter != "" {
		d, err := time.ParseDuration(rf.RetryAfter)
		if err != nil || d < 0 || d > time.Hour {
			return r, &fieldError{"retry_after", fmt.Sprintf("retry_after %q is not a duration such as \"2s\" (at most 1h)", rf.RetryAfter)}
		}
		if r.Error == "" {
			return r, &fieldError{"retry_after", "retry_after needs an error"}
		}
		r.RetryAfter = d
	}
	if rf.Message != "" && r.Error == "" {
		return r, &fieldError{"message", "message needs an error"}
	}
	if rf.InputTokens < 0 || rf.OutputTokens < 0 {
		return r, &fieldError{"input_tokens", "token counts cannot be negative"}
	}
	return r, nil
}

func location(name string, line int) string {
	if line > 0 {
		return fmt.Sprintf("%s:%d", name, line)
	}
	return name
}

// decodeError names the file, line and column of a TOML error.
func decodeError(name string, err error) error {
	var de *toml.DecodeError
	var sm *toml.StrictMissingError
	switch {
	case errors.As(err, &sm) && len(sm.Errors) > 0:
		e := sm.Errors[0]
		row, col := e.Position()
		return fmt.Errorf("%w: %s:%d:%d: unknown key %q (reply keys: role, turn, text, stop, error, message, retry_after, input_tokens, output_tokens)",
			ErrScript, name, row, col, strings.Join(e.Key(), "."))
	case errors.As(err, &de):
		row, col := de.Position()
		return fmt.Errorf("%w: %s:%d:%d: %s", ErrScript, name, row, col, fieldNames.Replace(strings.TrimPrefix(de.Error(), "toml: ")))
	}
	return fmt.Errorf("%w: %s: %s", ErrScript, name, strings.TrimPrefix(err.Error(), "toml: "))
}

// fieldNames turns the Go field names in go-toml's type errors into the script's keys.
var fieldNames = strings.NewReplacer(
	"struct field mock.replyFile.RetryAfter", "key retry_after",
	"struct field mock.replyFile.InputTokens", "key input_tokens",
	"struct field mock.replyFile.OutputTokens", "key output_tokens",
	"struct field mock.replyFile.Role", "key role",
	"struct field mock.replyFile.Turn", "key turn",
	"struct field mock.replyFile.Text", "key text",
	"struct field mock.replyFile.Stop", "key stop",
	"struct field mock.replyFile.Error", "key error",
	"struct field mock.replyFile.Message", "key message",
)

// replyPos is where a [[reply]] table and its keys are in the file.
type replyPos struct {
	line int
	keys map[string]int
}

func (p replyPos) key(k string) int {
	if l, ok := p.keys[k]; ok {
		return l
	}
	return p.line
}

// replyLines finds the line of each [[reply]] header and of its keys, in order, by walking
// the TOML syntax tree (decoding into structs loses positions).
func replyLines(data []byte) []replyPos {
	var p unstable.Parser
	p.Reset(data)
	var out []replyPos
	cur := -1
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.ArrayTable, unstable.Table:
			cur = -1
			it := e.Key()
			var parts []string
			line := 0
			for it.Next() {
				n := it.Node()
				if line == 0 {
					line = p.Shape(n.Raw).Start.Line
				}
				parts = append(parts, string(n.Data))
			}
			if e.Kind == unstable.ArrayTable && len(parts) == 1 && parts[0] == "reply" {
				out = append(out, replyPos{line: line, keys: map[string]int{}})
				cur = len(out) - 1
			}
		case unstable.KeyValue:
			if cur < 0 {
				continue
			}
			it := e.Key()
			if it.Next() {
				n := it.Node()
				out[cur].keys[string(n.Data)] = p.Shape(n.Raw).Start.Line
			}
		}
	}
	return out
}

// Marshal writes s back as a script, for tests and tools that generate scripts.
func (s *Script) Marshal() ([]byte, error) {
	f := scriptFile{Reply: make([]replyFile, 0, len(s.Replies))}
	names := map[llm.ErrorKind]string{}
	for n, k := range scriptErrors {
		if prev, ok := names[k]; !ok || n < prev {
			names[k] = n
		}
	}
	for _, r := range s.Replies {
		rf := replyFile{
			Role: string(r.Role), Turn: r.Turn, Text: r.Text, Message: r.Message,
			InputTokens: r.InputTokens, OutputTokens: r.OutputTokens,
		}
		if r.Stop != llm.StopEnd && r.Error == "" {
			rf.Stop = string(r.Stop)
		}
		if r.Error != "" {
			rf.Error = names[r.Error]
		}
		if r.RetryAfter > 0 {
			rf.RetryAfter = r.RetryAfter.String()
		}
		f.Reply = append(f.Reply, rf)
	}
	return toml.Marshal(f)
}
