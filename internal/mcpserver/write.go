package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/azero-dev/azero/internal/agentpolicy"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/safewrite"
)

// WriteArgs are azero_write's arguments.
type WriteArgs struct {
	Path     string `json:"path" jsonschema:"the file to write, relative to the project root (or absolute inside it)"`
	Content  string `json:"content" jsonschema:"the whole new file (replace), or the piece to add (append, insert, extend)"`
	Strategy string `json:"strategy,omitempty" jsonschema:"replace (the default; also creates new files), append, insert or extend"`
	Line     int    `json:"line,omitempty" jsonschema:"for insert: the 1-based line where the content starts (lines+1 appends)"`
}

// WriteResult is what azero_write did.
type WriteResult struct {
	Written bool `json:"written"`
	safewrite.Result
}

func (s *server) write(ctx context.Context, req *mcp.CallToolRequest, args WriteArgs) (*mcp.CallToolResult, WriteResult, error) {
	st, err := safewrite.ParseStrategy(args.Strategy)
	if err != nil {
		return nil, WriteResult{}, err
	}
	if st == safewrite.Edit {
		return nil, WriteResult{}, errors.New(`strategy "edit" is for content derived from FIND/REPLACE blocks: use azero_apply for those, or replace, append, insert or extend here`)
	}
	if st == safewrite.Insert && args.Line < 1 {
		return nil, WriteResult{}, errors.New("strategy insert needs line: the 1-based line where the content starts")
	}
	sreq := safewrite.Request{Root: s.root, Path: args.Path, Content: []byte(args.Content), Strategy: st, Line: args.Line, Actor: actor(req)}
	p, err := safewrite.ProposeContext(ctx, sreq)
	if err != nil {
		return nil, WriteResult{}, s.explain(err)
	}
	w := &safewrite.Writer{Audit: s.audit}
	// A call carrying an answer is bound to the question it answers, even
	// if the file no longer needs approval: the answer was about other
	// content.
	if p.RequiresApproval || answering(req) {
		what := agentpolicy.ReplaceReason(p)
		if p.Strategy != safewrite.Replace && p.RequiresApproval {
			what = fmt.Sprintf("this %s changes or drops existing lines of %s (%d lines; -%d +%d)", p.Strategy, p.Rel, p.ExistingLines, p.Deleted, p.Added)
		}
		outcome, question, why := s.ask(ctx, req, "azero_write", p, what)
		switch outcome {
		case approvalAsk:
			return question, WriteResult{}, nil
		case approvalUnavailable:
			return nil, WriteResult{}, fmt.Errorf("nothing was written: %s, and this MCP client cannot ask the user (it does not support elicitation). "+
				"Change the file with azero_apply (FIND/REPLACE blocks for the lines that change), add to it with strategy append, insert or extend, "+
				"or ask the user to run `azero write %s` in a terminal", what, p.Rel)
		case approvalRefused:
			return nil, WriteResult{}, errors.New(why)
		}
		// The approval is for exactly this content of the file: a change
		// while the user was asked makes the write stale, even one that
		// leaves nothing needing approval.
		snap := p.Snapshot()
		sreq.Base = &snap
		w.Approver = boundApprover{tool: "azero_write", binding: binding("azero_write", p)}
	}
	res, err := w.Write(ctx, sreq)
	if err != nil {
		return nil, WriteResult{}, s.explain(err)
	}
	return nil, WriteResult{Written: !res.Unchanged, Result: res}, nil
}

// explain rewrites safewrite's refusals for a model.
func (s *server) explain(err error) error {
	var (
		pt    *safewrite.PathTraversalError
		stale *safewrite.StaleError
		appr  *safewrite.ApprovalError
	)
	switch {
	case errors.As(err, &pt):
		return fmt.Errorf("%w. Paths must stay inside the project root %s (relative paths are relative to it), never inside .git, and never through a symlink leading out of it", err, s.root)
	case errors.As(err, &stale):
		return fmt.Errorf("%s changed while azero was working on it; nothing was written: read it again and retry", stale.Path)
	case errors.As(err, &appr):
		return fmt.Errorf("nothing was written: replacing %s (%d lines with %d) needs the user's approval. Use azero_apply for a partial change", appr.Path, appr.ExistingLines, appr.NewLines)
	case errors.Is(err, flow.ErrAborted):
		return fmt.Errorf("nothing was written: the user did not approve the change")
	case errors.Is(err, errChanged):
		return err
	}
	return fmt.Errorf("nothing was written: %s", strings.TrimPrefix(err.Error(), "azero: "))
}
