//go:build !unix

package safewrite

import (
	"os"
	"time"
)

// Without flock a temporary file is taken for abandoned once it is an
// hour old: no write takes that long.
const abandonAge = time.Hour

func lockFile(*os.File, bool) error { return nil }

func abandoned(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && time.Since(fi.ModTime()) > abandonAge
}

func unlinked(*os.File) (bool, error) { return false, nil }
