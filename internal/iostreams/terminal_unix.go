//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package iostreams

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// terminalPath names the controlling terminal of whichever process opens it.
const terminalPath = "/dev/tty"

// openTerminal opens /dev/tty, when a human can be asked on it. Without a
// controlling terminal the open fails with ENXIO (a system without the
// device at all, a bare container, has none either). A terminal this
// process may not read from is refused too: in the background of its
// terminal a read would stop the process (SIGTTIN), and a terminal in raw
// mode belongs to a full-screen program that reads it itself (an agent's
// interface, an editor, a git TUI), so the keys typed there are not
// answers to azero's question. A shell running `git commit` gives the
// command the foreground and a line-mode terminal.
func openTerminal() (*os.File, error) {
	f, err := openTerminalFile(terminalPath, func(err error) bool {
		return errors.Is(err, syscall.ENXIO) || errors.Is(err, syscall.ENODEV) || errors.Is(err, os.ErrNotExist)
	})
	if err != nil {
		return nil, err
	}
	if err := canAskOn(int(f.Fd())); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func canAskOn(fd int) error {
	fg, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	if err != nil {
		return fmt.Errorf("%w: read its foreground process group: %w", ErrTerminalInUse, err)
	}
	if fg != unix.Getpgrp() {
		return fmt.Errorf("%w: this process runs in the background of it", ErrTerminalInUse)
	}
	t, err := unix.IoctlGetTermios(fd, ioctlReadTermios)
	if err != nil {
		return fmt.Errorf("%w: read its mode: %w", ErrTerminalInUse, err)
	}
	if t.Lflag&unix.ICANON == 0 {
		return fmt.Errorf("%w: it is in raw mode, held by a full-screen program that reads the keys itself", ErrTerminalInUse)
	}
	return nil
}
