package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/runs"
)

// Exit codes, the contract of every azero command (DESIGN.md).
const (
	ExitOK          = 0   // success (or approved)
	ExitError       = 1   // error, including edits that cannot be applied and paths refused
	ExitUsage       = 2   // usage error
	ExitNeedsHuman  = 3   // human approval needed but nobody can be asked; run checkpointed
	ExitRejected    = 4   // rejected or aborted by the human at a gate
	ExitTestsFailed = 5   // tests failed where they had to pass
	ExitInterrupted = 130 // SIGINT/SIGTERM; run checkpointed
)

// exitCodes documents the codes for --help and the man pages, in order;
// run is what the code adds for a command that drives a run.
var exitCodes = []struct {
	code      int
	text, run string
}{
	{ExitOK, "success (or approved)", ""},
	{ExitError, "error (including edits that cannot be applied, paths refused)", ""},
	{ExitUsage, "usage error", ""},
	{ExitNeedsHuman, "human approval needed but nobody can be asked (no TTY)", "; the run is checkpointed"},
	{ExitRejected, "rejected or aborted by the human at a gate", ""},
	{ExitTestsFailed, "tests failed where they had to pass", ""},
	{ExitInterrupted, "interrupted (SIGINT/SIGTERM)", "; the run is checkpointed"},
}

// UsageError marks a mistake in how azero was called (as does a
// runs.RequestError: what was asked of the run service cannot be meant).
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// usagef returns a UsageError.
func usagef(format string, args ...any) error {
	return &UsageError{Err: errorf(format, args...)}
}

// ExitStatus is the exit status of a program azero ran for the user
// (azero sandbox), passed through as azero's own: Code is the program's
// status, or 125 when it could not be started (Err says why; a program's
// own failure has no Err, and azero prints nothing of its own).
type ExitStatus struct {
	Code int
	Err  error
}

func (e *ExitStatus) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return fmt.Sprintf("exit status %d", e.Code)
}

func (e *ExitStatus) Unwrap() error { return e.Err }

// TestsFailedError reports tests that had to pass and did not.
type TestsFailedError interface{ TestsFailed() bool }

// ExitCode maps an error to the process exit code. It is the only place
// that does.
func ExitCode(err error) int {
	var (
		usage   *UsageError
		request *runs.RequestError
		tf      TestsFailedError
		status  *ExitStatus
	)
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &status):
		return status.Code
	case errors.As(err, &usage), errors.As(err, &request), isCobraUsage(err):
		return ExitUsage
	case errors.Is(err, flow.ErrInterrupted), errors.Is(err, context.Canceled):
		return ExitInterrupted
	case errors.Is(err, flow.ErrWaiting), human.Needed(err):
		return ExitNeedsHuman
	case errors.Is(err, human.ErrAborted):
		return ExitRejected
	case errors.As(err, &tf) && tf.TestsFailed():
		return ExitTestsFailed
	default:
		return ExitError
	}
}

// isCobraUsage recognises the few usage errors cobra creates itself
// before any of our code runs.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command ", "unknown flag: ", "unknown shorthand flag: ", "flag needs an argument: ", "invalid argument ", "required flag(s) ", "accepts ", "requires at least ", "requires at most ", "if any flags in the group "} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}
