package llm

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Role is the part a model plays in a workflow. Each role is configured with its own model.
type Role string

// The roles azero's workflows use.
const (
	RoleDrafter  Role = "drafter"
	RoleReviewer Role = "reviewer"
	RoleCoder    Role = "coder"
)

// Roles lists every role, in the order `azero models` shows them.
func Roles() []Role { return []Role{RoleDrafter, RoleReviewer, RoleCoder} }

// Valid reports whether r is one of [Roles].
func (r Role) Valid() bool {
	switch r {
	case RoleDrafter, RoleReviewer, RoleCoder:
		return true
	}
	return false
}

// Speakers of a [Message].
const (
	SpeakerUser      = "user"
	SpeakerAssistant = "assistant"
)

// Message is one turn of a conversation: Role is "user" or "assistant".
type Message struct {
	Role string
	Text string
}

// Request is one call to a model.
type Request struct {
	// System is the system text (instructions); empty for none.
	System string
	// Messages is the conversation, starting with a user message.
	Messages []Message
	// MaxTokens bounds the reply's length in tokens; required.
	MaxTokens int
	// Temperature is sent only when set; nil leaves the provider's default.
	Temperature *float64
	// Purpose is a short slug naming why the call is made ("draft", "review", "scaffold",
	// "implement"); it names lineage files.
	Purpose string
}

// ErrInvalidRequest is wrapped by every error [Request.Validate] returns.
var ErrInvalidRequest = errors.New("invalid model request")

// Validate checks what every provider needs: at least one message, known speakers, a user
// message first, and a positive MaxTokens. Providers call it before sending anything.
func (r Request) Validate() error {
	if len(r.Messages) == 0 {
		return fmt.Errorf("%w: no messages", ErrInvalidRequest)
	}
	for i, m := range r.Messages {
		if m.Role != SpeakerUser && m.Role != SpeakerAssistant {
			return fmt.Errorf("%w: message %d has role %q (want %q or %q)", ErrInvalidRequest, i+1, m.Role, SpeakerUser, SpeakerAssistant)
		}
	}
	if r.Messages[0].Role != SpeakerUser {
		return fmt.Errorf("%w: the first message must be from the user", ErrInvalidRequest)
	}
	if r.MaxTokens <= 0 {
		return fmt.Errorf("%w: max tokens must be positive, got %d", ErrInvalidRequest, r.MaxTokens)
	}
	return nil
}

// StopReason says why a model stopped, normalised across providers.
type StopReason string

// The normalised stop reasons.
const (
	// StopEnd: the model finished its answer.
	StopEnd StopReason = "end"
	// StopMaxTokens: the answer was cut off at the token limit (truncated).
	StopMaxTokens StopReason = "max_tokens"
	// StopRefused: the model or a safety filter declined to answer.
	StopRefused StopReason = "refused"
	// StopOther: anything else (tool use, unknown reasons).
	StopOther StopReason = "other"
)

// Response is a model's answer to one [Request].
type Response struct {
	Text string
	Stop StopReason
	// InputTokens and OutputTokens are the provider's own counts (billed tokens; output
	// includes hidden reasoning tokens where the provider bills them).
	InputTokens, OutputTokens int
	// Model is provider:model as the provider reported it (it may name a dated snapshot).
	Model string
	// CostUSD is computed from the price table; 0 for an unpriced model.
	CostUSD float64
	// Latency is the duration of the HTTP call that produced this response (the last attempt).
	Latency time.Duration
}

// Truncated reports whether the reply was cut off at the token limit.
func (r Response) Truncated() bool { return r.Stop == StopMaxTokens }

// Model is a language model. Implementations are safe for concurrent use.
type Model interface {
	// Name is the model's provider:model name, as configured.
	Name() string
	// Generate sends one request and returns the reply. Errors are classified (see
	// [ProviderError]); Generate itself never retries.
	Generate(ctx context.Context, req Request) (Response, error)
}
