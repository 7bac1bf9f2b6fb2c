//go:build unix

// Package filelock is azero's one way of taking an exclusive lock on a
// file: flock(2), which the kernel drops when the holding process dies, so
// a lock left by a killed azero is never stale. Where flock does not exist
// the functions succeed without locking; callers that need to recognise
// the files of dead processes there use other means (see safewrite).
package filelock

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// Lock takes an exclusive lock on f, waiting for it when wait is set, else
// failing at once (ErrHeld) when another holds it.
func Lock(f *os.File, wait bool) error {
	how := syscall.LOCK_EX
	if !wait {
		how |= syscall.LOCK_NB
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var lockErr error
	if err := rc.Control(func(fd uintptr) {
		for {
			lockErr = syscall.Flock(int(fd), how)
			if !errors.Is(lockErr, syscall.EINTR) {
				return
			}
		}
	}); err != nil {
		return err
	}
	if errors.Is(lockErr, syscall.EWOULDBLOCK) {
		return ErrHeld
	}
	return lockErr
}

// Hold opens path (a file, created with mode 0600 when missing, or a
// directory), waits for its exclusive lock and returns the function that
// releases it.
func Hold(path string) (release func(), err error) {
	f, err := open(path)
	if err != nil {
		return nil, err
	}
	if err := Lock(f, true); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() {
		rc, err := f.SyscallConn()
		if err == nil {
			rc.Control(func(fd uintptr) { syscall.Flock(int(fd), syscall.LOCK_UN) })
		}
		f.Close()
	}, nil
}
