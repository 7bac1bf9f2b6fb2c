package safewrite

import (
	"errors"
	"fmt"
)

// PathTraversalError refuses a path that is not a legitimate target inside
// the project root.
type PathTraversalError struct {
	Path   string // the path as the caller gave it
	Reason string
}

func (e *PathTraversalError) Error() string {
	return fmt.Sprintf("refusing path %q: %s", e.Path, e.Reason)
}

// StaleError reports that the file changed after azero read it, so writing
// would lose those changes.
type StaleError struct {
	Path      string
	Read, Now Snapshot
}

func (e *StaleError) Error() string {
	return fmt.Sprintf("%s changed since azero read it (%s, now %s); nothing was written: re-run to work from the current content",
		e.Path, e.Read.describe(), e.Now.describe())
}

// ErrNeedsApproval is matched (errors.Is) by every *ApprovalError.
var ErrNeedsApproval = errors.New("write needs approval")

// ApprovalError refuses a write that needs approval nobody gave.
type ApprovalError struct {
	Path          string
	ExistingLines int
	NewLines      int
	Auto          bool // refused because of auto mode
	Interactive   bool // a human could have been asked (an Approver was set)
}

func (e *ApprovalError) Error() string {
	what := fmt.Sprintf("replacing %s (%d lines with %d lines) needs approval", e.Path, e.ExistingLines, e.NewLines)
	switch {
	case e.Auto && e.Interactive:
		return what + ", and --auto never replaces such a file: pass --force to replace it, or drop --auto to be asked"
	case e.Auto:
		return what + ", and --auto never replaces such a file: pass --force to replace it, or run without --auto from a terminal to choose a merge strategy"
	default:
		return what + " and nobody can be asked here: run from a terminal to choose a merge strategy, or pass --force to replace it"
	}
}

// NeedsHuman reports true when nobody could be asked: the caller may
// checkpoint and exit 3. In auto mode with a terminal the refusal is the
// user's own setting, a plain error.
func (e *ApprovalError) NeedsHuman() bool { return !e.Interactive }

// Is makes ApprovalError match ErrNeedsApproval.
func (e *ApprovalError) Is(target error) bool { return target == ErrNeedsApproval }
