//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package iostreams

import "golang.org/x/sys/unix"

// flushTerminalInput discards what the terminal received but nobody has
// read yet: tcflush(fd, TCIFLUSH), which the BSDs implement as TIOCFLUSH
// with FREAD.
func flushTerminalInput(fd int) error {
	const fread = 0x1 // FREAD of <sys/fcntl.h>
	return unix.IoctlSetPointerInt(fd, unix.TIOCFLUSH, fread)
}
