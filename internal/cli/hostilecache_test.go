package cli

import (
	"os"
	"sync"
)

// The build cache seed every Go run of the suite copies: warm, so that a
// run does not build the standard library's test dependencies again.
var hostileCache struct {
	once sync.Once
	dir  string
	err  error
	// seeded is done once the seed holds the hostile tests' build.
	seeded sync.Once
	seedOK bool
}

func hostileCacheDir() string {
	hostileCache.once.Do(func() {
		hostileCache.dir, hostileCache.err = os.MkdirTemp("", "azero-hostile-cache-")
	})
	return hostileCache.dir
}

// removeHostileCache removes the suite's build cache when the test binary
// ends (TestMain).
func removeHostileCache() {
	if hostileCache.dir != "" {
		os.RemoveAll(hostileCache.dir)
	}
}
