package agenthook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/shellcmd"
)

// EventDecision is the audit event of every decision the hook makes
// (abstentions are not recorded: azero had no opinion).
const EventDecision = "agent_hook_decision"

// EventError reports a payload for another hook event: azero answers
// PreToolUse only, and cannot answer this one in its format.
type EventError struct{ Event string }

func (e *EventError) Error() string {
	return fmt.Sprintf("azero hook claude-code answers PreToolUse only, not %s: configure it under hooks.PreToolUse (azero hook claude-code --install does)", e.Event)
}

// Hook decides Claude Code's PreToolUse tool calls with azero's write
// policy and diff gate.
type Hook struct {
	Audit   *audit.Logger // every decision is recorded; nil discards
	WorkDir string        // where the hook runs, when the payload has no cwd
	Home    string        // for cd and ~ in shell commands
	// Aliases reads git aliases; nil means GitAliases.
	Aliases func(ctx context.Context) shellcmd.AliasResolver
}

// Run reads one payload from stdin and prints the decision to stdout. It
// fails closed: a payload it cannot read, a git failure or any other error
// is printed as a deny naming the error. Only an *EventError (a payload of
// another hook event, which has no deny to print) and a failure to write
// stdout are returned.
func (h *Hook) Run(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	p, err := ParsePayload(stdin)
	var resp Response
	switch {
	case err != nil:
		resp = errorResponse(err)
		h.audit(ctx, Payload{}, resp, slog.String("error", err.Error()))
	case p.HookEventName != "" && p.HookEventName != EventPreToolUse:
		return &EventError{Event: p.HookEventName}
	default:
		resp = h.decideSafely(ctx, p)
	}
	if err := resp.Write(stdout); err != nil {
		return fmt.Errorf("print the hook decision: %w", err)
	}
	return nil
}

// decideSafely is Decide with a panic turned into a denial: a crash would
// exit 2, which Claude Code would show as a hook error instead of azero's
// reason.
func (h *Hook) decideSafely(ctx context.Context, p Payload) (resp Response) {
	defer func() {
		if r := recover(); r != nil {
			resp = errorResponse(fmt.Errorf("internal error: %v", r))
			h.audit(ctx, p, resp)
		}
	}()
	return h.Decide(ctx, p)
}

// Decide answers one tool call. It never returns an error: errors are
// denials.
func (h *Hook) Decide(ctx context.Context, p Payload) Response {
	var (
		resp  Response
		attrs []slog.Attr
	)
	switch p.ToolName {
	case "Write":
		resp, attrs = h.decideWrite(ctx, p)
	case "Edit", "MultiEdit":
		resp, attrs = h.decideEdit(ctx, p)
	case "NotebookEdit":
		resp, attrs = h.decideNotebook(ctx, p)
	case "Bash":
		resp, attrs = h.decideBash(ctx, p)
	default:
		if noOpinion(p.ToolName) {
			return Response{}
		}
		resp = unknownTool(p.ToolName)
	}
	h.audit(ctx, p, resp, attrs...)
	return resp
}

func (h *Hook) audit(ctx context.Context, p Payload, r Response, attrs ...slog.Attr) {
	if r.Decision == Abstain {
		return
	}
	attrs = append([]slog.Attr{
		slog.String("agent", "claude-code"), slog.String("tool", p.ToolName), slog.String("decision", string(r.Decision)),
		slog.String("reason", r.Reason), slog.String("session_id", p.SessionID), slog.String("tool_use_id", p.ToolUseID),
		slog.String("cwd", p.Cwd),
	}, attrs...)
	h.Audit.Event(ctx, EventDecision, "", attrs...)
}

// cwd is where the tool call runs: the payload's cwd, else the hook's.
func (h *Hook) cwd(p Payload) (string, error) {
	cwd := p.Cwd
	if cwd == "" {
		cwd = h.WorkDir
	}
	if cwd == "" || !filepath.IsAbs(cwd) {
		return "", fmt.Errorf("the payload's cwd %q is not an absolute directory", p.Cwd)
	}
	return filepath.Clean(cwd), nil
}

// projectRoot is the git work tree holding cwd. Outside one there is no
// project root to confine a write to (and inside .git, or a bare
// repository, no work tree), so there is no root and the caller denies.
func projectRoot(ctx context.Context, cwd string) (string, error) {
	top, err := gitx.TopLevel(ctx, cwd)
	switch {
	case errors.Is(err, gitx.ErrNotRepository):
		return "", fmt.Errorf("the session's cwd %s is not inside a git work tree, so azero has no project root to confine this write to "+
			"(the project root is the git repository holding the cwd): start Claude Code in a repository's checkout, or run git init there", cwd)
	case err != nil:
		return "", fmt.Errorf("find the project root: %w", err)
	}
	return top, nil
}

// GitAliases reads git aliases with `git config --get alias.NAME`.
func GitAliases(ctx context.Context) shellcmd.AliasResolver {
	return func(dir, name string) (string, bool, error) {
		out, err := gitx.Repo{Dir: dir}.Run(ctx, "config", "--get", "alias."+name)
		var ge *gitx.Error
		if errors.As(err, &ge) && ge.ExitCode == 1 {
			return "", false, nil
		}
		if err != nil {
			return "", false, err
		}
		return strings.TrimSuffix(string(out), "\n"), true, nil
	}
}
