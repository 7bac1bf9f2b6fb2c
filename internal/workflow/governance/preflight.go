package governance

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"sync"

	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/tracker"
)

// Preflight is spec #62's N1: everything a run needs is checked before
// any model is called, so a missing editor or a bad token fails in seconds
// instead of after paid model calls. Spec #62 also strips the agent's
// permissions here (no `gh`); azero's models have no tools at all, so
// there is nothing to strip: they receive text and return text, and only
// the workflow's own nodes file, write or commit.
type Preflight struct {
	// Editor finds the editor the gates open (prompt.Prompter.CheckEditor).
	Editor func() (string, error)
	// Tracker is checked with a real call (token and repository); nil
	// when the run reaches no tracker (the workflow checks that it has
	// the one it needs).
	Tracker tracker.Tracker
	// Root and AuditDir locate the repository that keeps the trail.
	Root, AuditDir string
	// Dirs are more directories the run commits to, by the configuration
	// key that sets them ("design.lld_dir"): none may be ignored by git.
	Dirs map[string]string
	// Models are opened here when they are opened lazily (llm.Lazy): a
	// missing key fails the check.
	Models []llm.Model
	// Command names the command in messages ("azero issue").
	Command string

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
	if p.Tracker != nil {
		if err := p.Tracker.Check(ctx); err != nil {
			return &PreflightError{"tracker", fmt.Errorf("%s: %w", p.Tracker.Name(), err)}
		}
	}
	if err := p.checkRepository(ctx); err != nil {
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

// checkRepository verifies that the root is a git work tree with a commit
// and that no directory the run commits to is ignored, so the commit that
// ends a run can be made.
func (p *Preflight) checkRepository(ctx context.Context) error {
	command := p.Command
	if command == "" {
		command = "azero"
	}
	top, err := gitx.TopLevel(ctx, p.Root)
	if err != nil {
		return fmt.Errorf("the audit trail is committed to the repository: %w", err)
	}
	repo := gitx.Repo{Dir: top}
	ok, err := repo.HasCommits(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s has no commits yet: make a first commit, then run %s again", top, command)
	}
	// A file the run would write in each directory, by the key setting it.
	dirs := map[string]string{"issue.audit_dir": p.AuditDir}
	probes := map[string]string{"issue.audit_dir": path.Join(p.AuditDir, "active", "probe.md")}
	for key, dir := range p.Dirs {
		dirs[key], probes[key] = dir, path.Join(dir, "probe.md")
	}
	keys := make([]string, 0, len(probes))
	for k := range probes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		_, err = repo.Run(ctx, "check-ignore", "-q", "--", probes[key])
		var ge *gitx.Error
		switch {
		case err == nil:
			return fmt.Errorf("%s is ignored by git (.gitignore), so what the run writes there could not be committed: un-ignore it or set %s in the config",
				dirs[key], key)
		case errors.As(err, &ge) && ge.ExitCode == 1:
		default:
			return err
		}
	}
	return nil
}
