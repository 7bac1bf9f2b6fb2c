//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package iostreams

import "golang.org/x/sys/unix"

// ioctlReadTermios reads a terminal's mode (tcgetattr).
const ioctlReadTermios = unix.TIOCGETA
