//go:build !unix

package filelock

import "os"

// Lock does nothing where flock does not exist.
func Lock(*os.File, bool) error { return nil }

// Hold opens path and returns a release that closes it, without locking.
func Hold(path string) (func(), error) {
	f, err := open(path)
	if err != nil {
		return nil, err
	}
	return func() { f.Close() }, nil
}
