//go:build unix

package runs

import (
	"fmt"
	"syscall"
)

// ExecCommand replaces this process with path: the same process id,
// terminal, streams and signals, so the command goes on as if azero had
// run it. It returns only when the exec fails.
func ExecCommand(path string, argv, env []string) error {
	if err := syscall.Exec(path, argv, env); err != nil {
		return fmt.Errorf("start %s: %w", path, err)
	}
	return nil
}
