//go:build unix

package safewrite

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockFile takes an exclusive flock on f. The kernel drops it when the
// process dies, which is how leftovers of killed writers are recognised.
func lockFile(f *os.File, wait bool) error {
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
	return lockErr
}

// abandoned reports whether f, a temporary file, belongs to no live
// writer: its lock can be taken. The caller removes it while the lock is
// held and then closes f.
func abandoned(f *os.File) bool {
	return lockFile(f, false) == nil
}

// unlinked reports whether f's directory entry is gone.
func unlinked(f *os.File) (bool, error) {
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false, fmt.Errorf("no link count for %s", f.Name())
	}
	return st.Nlink == 0, nil
}
