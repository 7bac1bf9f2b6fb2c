//go:build !linux && !darwin && !dragonfly && !freebsd && !netbsd && !openbsd

package iostreams

import (
	"fmt"
	"os"
)

// openTerminal has no console to reopen here: when the standard streams
// cannot ask, nobody can.
func openTerminal() (*os.File, error) {
	return nil, fmt.Errorf("%w: asking through the console when the standard streams are redirected is not supported on this system", ErrNoControllingTerminal)
}
