//go:build unix

package iostreams

import (
	"errors"
	"os"
	"syscall"
)

// terminalPath names the controlling terminal of whichever process opens it.
const terminalPath = "/dev/tty"

// openTerminal opens /dev/tty. Without a controlling terminal the open
// fails with ENXIO; a system without the device at all (a bare container)
// has no terminal either.
func openTerminal() (*os.File, error) {
	return openTerminalFile(terminalPath, func(err error) bool {
		return errors.Is(err, syscall.ENXIO) || errors.Is(err, syscall.ENODEV) || errors.Is(err, os.ErrNotExist)
	})
}
