package mcpserver

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/azero-dev/azero/internal/safewrite"
)

// EventApproval is the audit event of every approval question's outcome.
const EventApproval = "mcp_approval"

// approvalWord is what the user must type, in full (any case).
const approvalWord = "approve"

// answerField is the elicitation form's one field.
const answerField = "answer"

// inputKey names the approval question in a tool result's inputRequests.
const inputKey = "azero_approval"

// maxQuestionDiff bounds the diff shown in the question.
const maxQuestionDiff = 6000

// binding identifies one write exactly: an approval of it approves
// nothing else.
func binding(tool string, p safewrite.Proposal) string {
	sum := sha256.Sum256(p.Result)
	return strings.Join([]string{"azero-approval-v1", tool, p.Abs, string(p.Strategy), strconv.Itoa(p.Line),
		strconv.FormatBool(p.Exists), p.Snapshot().SHA256, hex.EncodeToString(sum[:])}, "\x00")
}

// sign is the request state for the question about binding b.
func (s *server) sign(b string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(b))
	return "v1." + hex.EncodeToString(m.Sum(nil))
}

func (s *server) verify(b, state string) bool {
	return hmac.Equal([]byte(s.sign(b)), []byte(state))
}

// approval is the outcome of asking.
type approval int

const (
	approvalAsk         approval = iota // the question must be sent
	approvalGranted                     // the user typed approve
	approvalRefused                     // declined, dismissed, wrong word, or nobody to ask
	approvalUnavailable                 // the client cannot ask the user
)

// multiRoundTrip is the first protocol version whose clients answer
// server questions by retrying the call (SEP-2322); older clients answer
// an elicitation/create request sent while the call is open.
const multiRoundTrip = "2026-07-28"

// ask runs the approval round for a write that needs it. With a client of
// the current protocol the first call returns the question (as
// inputRequests) and the retry carrying the user's answer returns the
// outcome; with an older client the question is sent and answered while
// the call waits. why is the reason to refuse, for the model.
func (s *server) ask(ctx context.Context, req *mcp.CallToolRequest, tool string, p safewrite.Proposal, what string) (approval, *mcp.CallToolResult, string) {
	b := binding(tool, p)
	if !answering(req) {
		if !canElicit(req) {
			s.auditApproval(ctx, req, tool, p, "unavailable", "the client cannot ask the user (no elicitation)")
			return approvalUnavailable, nil, ""
		}
		q := question(tool, p, what)
		if req.ProtocolVersion() < multiRoundTrip {
			res, err := req.Session.Elicit(ctx, q)
			if err != nil {
				s.auditApproval(ctx, req, tool, p, "failed", "the question failed: "+err.Error())
				return approvalRefused, nil, fmt.Sprintf("nothing was written to %s: the approval question could not be asked (%v). Ask the user, then call %s again.", p.Rel, err, tool)
			}
			return s.judge(ctx, req, tool, p, res)
		}
		return approvalAsk, &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{inputKey: q}, RequestState: s.sign(b)}, ""
	}
	if !s.verify(b, req.Params.RequestState) {
		s.auditApproval(ctx, req, tool, p, "stale", "the answer does not belong to this exact change")
		return approvalRefused, nil, fmt.Sprintf("nothing was written: the user's answer does not belong to this exact change of %s "+
			"(the file, the content or the arguments changed since the question was asked). Call %s again to ask anew.", p.Rel, tool)
	}
	res, ok := req.Params.InputResponses[inputKey].(*mcp.ElicitResult)
	if !ok || res == nil {
		s.auditApproval(ctx, req, tool, p, "no_answer", "the retry carried no answer")
		return approvalRefused, nil, fmt.Sprintf("nothing was written to %s: no answer to the approval question came back. Call %s again to ask the user.", p.Rel, tool)
	}
	return s.judge(ctx, req, tool, p, res)
}

// question is the form asking the user to type the approval word.
func question(tool string, p safewrite.Proposal, what string) *mcp.ElicitParams {
	return &mcp.ElicitParams{
		Mode: "form",
		Message: fmt.Sprintf("azero: %s wants to change %s: %s.\n\n%s\nType %q to make this change; anything else refuses it.",
			tool, p.Rel, what, capDiff(p.Diff), approvalWord),
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				answerField: map[string]any{
					"type":        "string",
					"title":       "Type approve to make this change",
					"description": fmt.Sprintf("%s of %s: type %q, or anything else to refuse", tool, p.Rel, approvalWord),
				},
			},
		},
	}
}

// judge reads the user's answer: only the typed word, in full, approves.
func (s *server) judge(ctx context.Context, req *mcp.CallToolRequest, tool string, p safewrite.Proposal, res *mcp.ElicitResult) (approval, *mcp.CallToolResult, string) {
	switch res.Action {
	case "accept":
		answer := typedAnswer(res.Content)
		if strings.EqualFold(strings.TrimSpace(answer), approvalWord) {
			s.auditApproval(ctx, req, tool, p, "approved", "the user typed "+approvalWord)
			return approvalGranted, nil, ""
		}
		s.auditApproval(ctx, req, tool, p, "wrong_word", fmt.Sprintf("the user typed %q", answer))
		return approvalRefused, nil, fmt.Sprintf("nothing was written to %s: the user typed %q, not %q, so the change is refused. "+
			"Ask the user what they want instead of repeating the same change.", p.Rel, answer, approvalWord)
	case "decline":
		s.auditApproval(ctx, req, tool, p, "declined", "the user declined")
		return approvalRefused, nil, fmt.Sprintf("nothing was written to %s: the user declined this change. "+
			"Do not repeat it; ask the user what they want, or make a smaller change with azero_apply.", p.Rel)
	default:
		s.auditApproval(ctx, req, tool, p, "cancelled", "the user dismissed the question ("+res.Action+")")
		return approvalRefused, nil, fmt.Sprintf("nothing was written to %s: the user dismissed the approval question. Ask the user before trying again.", p.Rel)
	}
}

// typedAnswer is what the user typed: the form's field, or, from a client
// that named its one field otherwise, that field's text. Anything else
// (no text, several fields) is no answer, which approves nothing. The
// field is not marked required, so such a client's answer reaches judge
// instead of failing the SDK's check against the form.
func typedAnswer(content map[string]any) string {
	if v, ok := content[answerField]; ok {
		s, _ := v.(string)
		return s
	}
	if len(content) == 1 {
		for _, v := range content {
			s, _ := v.(string)
			return s
		}
	}
	return ""
}

// answering reports whether a call carries an answer to an approval
// question (the retry of an input-required result).
func answering(req *mcp.CallToolRequest) bool {
	return len(req.Params.InputResponses) > 0 || req.Params.RequestState != ""
}

// canElicit reports whether the client can show the user a form.
func canElicit(req *mcp.CallToolRequest) bool {
	caps := req.ClientCapabilities()
	if caps == nil || caps.Elicitation == nil {
		return false
	}
	e := caps.Elicitation
	return e.Form != nil || e.URL == nil
}

func (s *server) auditApproval(ctx context.Context, req *mcp.CallToolRequest, tool string, p safewrite.Proposal, decision, detail string) {
	s.audit.Event(ctx, EventApproval, "", slog.String("actor", actor(req)), slog.String("tool", tool),
		slog.String("path", p.Rel), slog.String("root", s.root), slog.String("decision", decision), slog.String("detail", detail),
		slog.Int("old_lines", p.ExistingLines), slog.Int("new_lines", p.NewLines), slog.Int("deleted_lines", p.Deleted),
		slog.String("old_sha256", p.Snapshot().SHA256))
}

// boundApprover approves, for safewrite, exactly the write the user
// approved and nothing else.
type boundApprover struct {
	tool, binding string
}

var errChanged = errors.New("the file changed after the user approved the change; nothing was written: call the tool again to ask anew")

func (a boundApprover) Decide(_ context.Context, p safewrite.Proposal) (safewrite.Decision, error) {
	if binding(a.tool, p) != a.binding {
		return safewrite.Decision{}, errChanged
	}
	return safewrite.Decision{Approved: true, Strategy: p.Strategy, Line: p.Line}, nil
}

func capDiff(d string) string {
	if len(d) <= maxQuestionDiff {
		return d
	}
	cut := maxQuestionDiff
	for cut > 0 && d[cut-1] != '\n' {
		cut--
	}
	return d[:cut] + fmt.Sprintf("... (%d more bytes of diff)\n", len(d)-cut)
}
