package mcpserver

import (
	"context"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/azero-dev/azero/internal/store"
)

// RunsArgs are azero_runs' arguments.
type RunsArgs struct {
	Status   string `json:"status,omitempty" jsonschema:"only runs with this status: running, waiting, interrupted, done, failed or aborted"`
	Workflow string `json:"workflow,omitempty" jsonschema:"only runs of this workflow (implement, issue, ...)"`
	Limit    int    `json:"limit,omitempty" jsonschema:"at most this many runs (default 50)"`
}

// Run is one run as azero_runs reports it.
type Run struct {
	ID        string            `json:"id"`
	Workflow  string            `json:"workflow"`
	Key       string            `json:"key,omitempty"`
	Status    store.Status      `json:"status"`
	Node      string            `json:"node"`
	Steps     int               `json:"steps"`
	Error     string            `json:"error,omitempty"`
	CreatedAt time.Time         `json:"created_at"`
	UpdatedAt time.Time         `json:"updated_at"`
	Meta      map[string]string `json:"meta,omitempty"`
}

// RunsResult lists runs, newest first.
type RunsResult struct {
	Runs []Run `json:"runs"`
}

func (s *server) runs(ctx context.Context, _ *mcp.CallToolRequest, args RunsArgs) (*mcp.CallToolResult, RunsResult, error) {
	want := store.Status(args.Status)
	switch want {
	case "", store.StatusRunning, store.StatusWaiting, store.StatusInterrupted, store.StatusDone, store.StatusFailed, store.StatusAborted:
	default:
		return nil, RunsResult{}, fmt.Errorf("unknown status %q: use running, waiting, interrupted, done, failed or aborted", args.Status)
	}
	if args.Limit < 0 {
		return nil, RunsResult{}, fmt.Errorf("limit must be positive, got %d", args.Limit)
	}
	out := RunsResult{Runs: []Run{}}
	if s.store == nil {
		return nil, out, nil
	}
	st, err := s.store(ctx)
	if err != nil {
		return nil, RunsResult{}, fmt.Errorf("open azero's run store: %w", err)
	}
	limit := args.Limit
	if limit == 0 {
		limit = 50
	}
	filter := store.Filter{Workflow: args.Workflow}
	// An interrupted run is stored as running with a dead driver, so those
	// two statuses are filtered after the lease is checked.
	switch want {
	case store.StatusInterrupted, store.StatusRunning:
	default:
		filter.Status, filter.Limit = want, limit
	}
	list, err := st.ListRuns(ctx, filter)
	if err != nil {
		return nil, RunsResult{}, err
	}
	for _, r := range list {
		status := r.Status
		if status == store.StatusRunning && !st.LeaseLive(r) {
			status = store.StatusInterrupted
		}
		if want != "" && status != want {
			continue
		}
		out.Runs = append(out.Runs, Run{ID: r.ID, Workflow: r.Workflow, Key: r.Key, Status: status, Node: r.Node, Steps: r.Steps,
			Error: r.Error, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, Meta: r.Meta})
		if len(out.Runs) == limit {
			break
		}
	}
	return nil, out, nil
}
