//go:build !unix

package runs

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// ExecCommand runs path in this process's place where a process cannot
// be replaced: with its streams, and exits with its exit code.
func ExecCommand(path string, argv, env []string) error {
	cmd := exec.Command(path, argv[1:]...)
	cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = env, os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		os.Exit(0)
	case errors.As(err, &exit):
		os.Exit(exit.ExitCode())
	}
	return fmt.Errorf("start %s: %w", path, err)
}
