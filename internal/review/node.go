package review

import (
	"context"
	"errors"

	"github.com/azero-dev/azero/internal/flow"
)

// Routes name the nodes a gate node continues to.
type Routes struct {
	// Approved is where approved changes (or, without a terminal, changes
	// with nothing flagged) go: the commit.
	Approved string
	// Rejected is where a rejection goes (a cleanup node); "" ends the run
	// as aborted.
	Rejected string
}

// GateNode returns a workflow node running g. Add it with Graph.Gate and
// make it the only way into the commit node, so that no path of the graph
// reaches a commit without it (Graph.PathAvoiding proves it in a test).
//
// opts says what to review from the state (the run id defaults to the
// running workflow's); record stores the outcome in the state when the
// node continues. Without a terminal and with flagged files the node
// returns the gate's NeedsHuman error: the run waits at the gate (exit 3)
// and asks again on resume. A rejection goes to routes.Rejected, or ends
// the run as aborted (exit 4) when there is none. Any other error fails
// the node: nothing is committed.
func GateNode[S any](g *Gate, opts func(*S) GateOptions, record func(*S, Outcome), routes Routes) flow.NodeFunc[S] {
	return func(ctx context.Context, s *S) (string, error) {
		o := opts(s)
		if o.RunID == "" {
			o.RunID = flow.RunID(ctx)
		}
		out, err := g.Run(ctx, o)
		switch {
		case err == nil:
			record(s, out)
			return routes.Approved, nil
		case out.Decision == Rejected && routes.Rejected != "" && errors.Is(err, ErrRejected):
			record(s, out)
			return routes.Rejected, nil
		}
		return "", err
	}
}
