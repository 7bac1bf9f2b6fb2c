//go:build unix

package store

import (
	"errors"
	"syscall"

	"github.com/azero-dev/azero/internal/filelock"
)

// processAlive reports whether a process with pid exists. EPERM means it
// exists but belongs to someone else.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// lockFile holds an exclusive flock on path (created if needed) until
// the returned function is called.
func lockFile(path string) (func(), error) { return filelock.Hold(path) }
