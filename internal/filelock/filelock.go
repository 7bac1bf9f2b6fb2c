package filelock

import (
	"errors"
	"os"
)

// ErrHeld is returned by Lock without waiting when another holds the lock.
var ErrHeld = errors.New("the lock is held by another process")

// open opens a directory read-only, or a file for writing (creating it).
func open(path string) (*os.File, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return os.Open(path)
	}
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
}
