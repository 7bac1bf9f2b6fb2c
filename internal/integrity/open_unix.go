//go:build unix

package integrity

import "syscall"

// Flags of hashFile's open: never through a symbolic link, never blocking
// on a named pipe.
const (
	oNoFollow = syscall.O_NOFOLLOW
	oNonBlock = syscall.O_NONBLOCK
)
