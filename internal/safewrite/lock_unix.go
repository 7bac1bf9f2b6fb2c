//go:build unix

package safewrite

import (
	"fmt"
	"os"
	"syscall"

	"github.com/azero-dev/azero/internal/filelock"
)

// lockFile takes an exclusive flock on f. The kernel drops it when the
// process dies, which is how leftovers of killed writers are recognised.
func lockFile(f *os.File, wait bool) error { return filelock.Lock(f, wait) }

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
