//go:build !linux && !darwin && !dragonfly && !freebsd && !netbsd && !openbsd && !windows

package iostreams

import "errors"

// flushTerminalInput cannot discard a terminal's pending input here, so a
// question on a terminal fails rather than risk an answer typed ahead.
func flushTerminalInput(int) error {
	return errors.New("discarding typed-ahead terminal input is not supported on this system")
}
