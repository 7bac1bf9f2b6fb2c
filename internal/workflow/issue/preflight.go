package issue

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sync"

	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/tracker"
)

// Preflight is N1: everything a run needs is checked before any model is
// called, so a missing editor or a bad token fails in seconds instead of
// after paid model calls. Spec #62 also strips the agent's permissions
// here (no `gh`); azero's models have no tools at all, so there is nothing
// to strip: they receive text and return text, and only file_issue files.
type Preflight struct {
	// Editor finds the editor the gates open (prompt.Prompter.CheckEditor).
	Editor func() (string, error)
	// Tracker is checked with a real call (token and repository).
	Tracker tracker.Tracker
	// Root and AuditDir locate the repository that keeps the trail.
	Root, AuditDir string
	// Models are opened here when they are opened lazily (llm.Lazy): a
	// missing key fails the check.
	Models []llm.Model

	mu     sync.Mutex
	passed bool
	editor string
}

// PreflightError says which check failed and what to do.
type PreflightError struct {
	Check string // editor, tracker, git, models
	Err   error
}

func (e *PreflightError) Error() string {
	return fmt.Sprintf("pre-flight check failed (%s): %v", e.Check, e.Err)
}

// Unwrap returns the cause.
func (e *PreflightError) Unwrap() error { return e.Err }

// EditorCommand returns the editor the checks found.
func (p *Preflight) EditorCommand() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.editor
}

// Run performs the checks. Once they passed in this process they are not
// repeated (the command checks before creating a run, and the run's N1
// node asks again).
func (p *Preflight) Run(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.passed {
		return nil
	}
	if p.Editor == nil {
		return &PreflightError{"editor", errors.New("no editor lookup configured")}
	}
	ed, err := p.Editor()
	if err != nil {
		return &PreflightError{"editor", err}
	}
	if p.Tracker == nil {
		return &PreflightError{"tracker", errors.New("no tracker configured")}
	}
	if err := p.Tracker.Check(ctx); err != nil {
		return &PreflightError{"tracker", fmt.Errorf("%s: %w", p.Tracker.Name(), err)}
	}
	if err := checkRepository(ctx, p.Root, p.AuditDir); err != nil {
		return &PreflightError{"git", err}
	}
	for _, m := range p.Models {
		if m == nil {
			return &PreflightError{"models", errors.New("the drafter and the reviewer must both be open")}
		}
		if err := llm.Open(m); err != nil {
			return &PreflightError{"models", err}
		}
	}
	p.passed, p.editor = true, ed
	return nil
}

// checkRepository verifies that root is a git work tree with a commit and
// that the audit directory is not ignored, so the commit that ends a run
// can be made.
func checkRepository(ctx context.Context, root, auditDir string) error {
	top, err := gitx.TopLevel(ctx, root)
	if err != nil {
		return fmt.Errorf("the audit trail is committed to the repository: %w", err)
	}
	repo := gitx.Repo{Dir: top}
	ok, err := repo.HasCommits(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s has no commits yet: make a first commit, then run azero issue again", top)
	}
	probe := path.Join(auditDir, "active", "probe.md")
	_, err = repo.Run(ctx, "check-ignore", "-q", "--", probe)
	var ge *gitx.Error
	switch {
	case err == nil:
		return fmt.Errorf("%s is ignored by git (.gitignore), so the audit trail could not be committed: un-ignore it or set issue.audit_dir in the config", auditDir)
	case errors.As(err, &ge) && ge.ExitCode == 1:
		return nil
	default:
		return err
	}
}
