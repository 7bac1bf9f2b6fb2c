package agenthook

import (
	"encoding/json"
	"io"
)

// Decision is a PreToolUse permission decision.
type Decision string

// The decisions. Abstain is no decision: the hook prints nothing and
// Claude Code's own permission flow decides, as if azero were not there.
const (
	Allow   Decision = "allow"
	Ask     Decision = "ask"
	Deny    Decision = "deny"
	Abstain Decision = ""
)

// rank orders decisions when several rules answer one tool call, the way
// Claude Code orders several hooks: deny over ask over allow; abstaining
// is weaker than any decision.
func (d Decision) rank() int {
	switch d {
	case Deny:
		return 3
	case Ask:
		return 2
	case Allow:
		return 1
	}
	return 0
}

// Response is the hook's answer.
type Response struct {
	Decision Decision
	// Reason is shown to the user for ask, to Claude for deny, and only
	// logged for allow (Claude Code's documented behaviour).
	Reason string
}

// hookOutput is the documented JSON shape of a PreToolUse decision.
type hookOutput struct {
	HookSpecificOutput struct {
		HookEventName            string   `json:"hookEventName"`
		PermissionDecision       Decision `json:"permissionDecision"`
		PermissionDecisionReason string   `json:"permissionDecisionReason,omitempty"`
	} `json:"hookSpecificOutput"`
}

// Write prints the response for Claude Code: the decision JSON on one line,
// or nothing when azero abstains. The hook always exits 0 after it: Claude
// Code treats other exit codes (except 2) as a hook failure and lets the
// tool run.
func (r Response) Write(w io.Writer) error {
	if r.Decision == Abstain {
		return nil
	}
	var out hookOutput
	out.HookSpecificOutput.HookEventName = EventPreToolUse
	out.HookSpecificOutput.PermissionDecision = r.Decision
	out.HookSpecificOutput.PermissionDecisionReason = r.Reason
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// errorResponse fails closed: any error becomes a deny naming it.
func errorResponse(err error) Response {
	return Response{Decision: Deny, Reason: "azero could not check this tool call, so it is denied: " + err.Error()}
}
