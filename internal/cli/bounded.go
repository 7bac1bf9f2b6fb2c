package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// readBounded reads the file at path, what it is for the human (such as
// "the design document"), refusing more than limit bytes (an endless input
// such as /dev/zero included) and stopping when ctx is cancelled.
func readBounded(ctx context.Context, path, what string, limit int64) ([]byte, error) {
	fh, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s %s not found", what, path)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	defer fh.Close()
	var out []byte
	buf := make([]byte, 64<<10)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, err := fh.Read(buf)
		out = append(out, buf[:n]...)
		if int64(len(out)) > limit {
			return nil, fmt.Errorf("%s %s is over the %d-byte limit: pass a smaller file", what, path, limit)
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", what, err)
		}
	}
}
