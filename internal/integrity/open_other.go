//go:build !unix

package integrity

// hashFile's open flags where the system has none of them: it still reads
// only what Stat says is a regular file.
const (
	oNoFollow = 0
	oNonBlock = 0
)
