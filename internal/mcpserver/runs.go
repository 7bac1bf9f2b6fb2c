package mcpserver

import (
	"context"
	"fmt"

	"github.com/azero-dev/azero/internal/rundoc"
	"github.com/azero-dev/azero/internal/runs"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RunsArgs are azero_runs' arguments.
type RunsArgs struct {
	Status   string `json:"status,omitempty" jsonschema:"only runs with this status: running, waiting, interrupted, done, failed or aborted"`
	Workflow string `json:"workflow,omitempty" jsonschema:"only runs of this workflow (implement, issue, ...)"`
	Limit    int    `json:"limit,omitempty" jsonschema:"at most this many runs (default 50)"`
}

// Run is one run as azero_runs reports it: as `azero runs --json` does.
type Run = rundoc.View

// Lister lists runs as azero runs does: the run service (a runs.Engine).
type Lister interface {
	List(ctx context.Context, q runs.Query) (runs.Listing, error)
}

// RunsResult lists runs, newest first.
type RunsResult struct {
	Runs []Run `json:"runs"`
}

func (s *server) runs(ctx context.Context, _ *mcp.CallToolRequest, args RunsArgs) (*mcp.CallToolResult, RunsResult, error) {
	if args.Limit < 0 {
		return nil, RunsResult{}, fmt.Errorf("limit must be positive, got %d", args.Limit)
	}
	limit := args.Limit
	if limit == 0 {
		limit = 50
	}
	f := rundoc.Filter{Workflow: args.Workflow, Status: args.Status, Limit: limit}
	if err := f.Validate(); err != nil {
		return nil, RunsResult{}, err
	}
	out := RunsResult{Runs: []Run{}}
	if s.lister == nil {
		return nil, out, nil
	}
	svc, err := s.lister(ctx)
	if err != nil {
		return nil, RunsResult{}, fmt.Errorf("open azero's runs: %w", err)
	}
	listed, err := svc.List(ctx, f)
	if err != nil {
		return nil, RunsResult{}, err
	}
	for _, v := range listed.Runs {
		out.Runs = append(out.Runs, v.View)
	}
	return nil, out, nil
}
