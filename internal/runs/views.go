package runs

import (
	"context"
	"errors"

	"github.com/azero-dev/azero/internal/rundoc"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/workflow/gates"
)

// The documents of azero runs and azero runs show are rundoc's, built
// here from an engine's runs, so that the command line, the JSON API of
// azero serve and MCP describe runs alike.

// List lists the runs q selects, newest first. A run whose stored row
// does not verify is listed, marked (rundoc.View.Unverified). A status
// that does not exist is a RequestError.
func (l *localEngine) List(ctx context.Context, q Query) (Listing, error) {
	views, err := rundoc.List(ctx, l.st, q, l.env.now())
	var bad *rundoc.ErrStatus
	if errors.As(err, &bad) {
		return Listing{}, &RequestError{Err: err}
	}
	if err != nil {
		return Listing{}, err
	}
	out := Listing{Engine: Local, Runs: make([]View, len(views))}
	for i, v := range views {
		out.Runs[i] = View{View: v}
	}
	return out, nil
}

// Show describes the run ref names. A run whose row does not verify is
// shown, marked; never resumed.
func (l *localEngine) Show(ctx context.Context, ref string, withEvents bool) (Shown, error) {
	r, err := l.st.Peek(ctx, ref)
	if err != nil {
		return Shown{}, err
	}
	if r.Unverified != nil {
		if _, qerr := rundoc.Question(r); qerr != nil {
			r.Question = nil // a forged question that does not even decode
		}
	}
	dir, _ := l.env.RunDir(r.ID)
	d, err := rundoc.DetailOf(ctx, l.st, r, l.env.now(), dir, withEvents)
	if err != nil {
		return Shown{}, err
	}
	s := Shown{Detail: d, Engine: Local}
	if d.Run.Status == store.StatusWaiting && d.Run.Unverified == "" {
		s.Resume = l.env.ResumeCommand(d.Run.ID, false)
	}
	return s, nil
}

// ChangeReport is the diff review's report of the change in the worktree
// dir since the commit base, as a gate would show it now (a run's
// Summary names its worktree and base).
func ChangeReport(ctx context.Context, dir, base string) (string, error) {
	c, err := gates.Describe(ctx, dir, base)
	if err != nil {
		return "", err
	}
	return c.Report, nil
}
