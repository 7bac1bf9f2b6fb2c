package iostreams

import "golang.org/x/sys/unix"

// flushTerminalInput discards what the terminal received but nobody has
// read yet: tcflush(fd, TCIFLUSH).
func flushTerminalInput(fd int) error {
	return unix.IoctlSetInt(fd, unix.TCFLSH, unix.TCIFLUSH)
}
