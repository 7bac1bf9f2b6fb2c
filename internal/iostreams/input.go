package iostreams

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// DefaultInputLimit is the most a command reads from one input by default
// (a content file, a model's reply, a design document): far above any
// text a human or a model writes, far below what would exhaust memory.
const DefaultInputLimit int64 = 32 << 20

// InputTooLargeError reports an input over its limit. Nothing of it is
// used.
type InputTooLargeError struct {
	Name  string // as given: a path, or "-" for standard input
	Limit int64  // bytes
}

func (e *InputTooLargeError) Error() string {
	if e.Name == "-" {
		return fmt.Sprintf("standard input sent more than %s, the most azero reads from one input: "+
			"check what is piped in (an endless stream such as yes or /dev/zero never ends)", formatBytes(e.Limit))
	}
	return fmt.Sprintf("%s is larger than %s, the most azero reads from one input: "+
		"check that it is the file you meant (a device such as /dev/zero never ends) and pass a smaller one", e.Name, formatBytes(e.Limit))
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ReadInput reads a whole named input: the file name (relative to dir
// unless absolute), or standard input (In) when name is "-". It refuses
// more than limit bytes (DefaultInputLimit when limit <= 0) with an
// *InputTooLargeError, whatever the input is (a huge file, /dev/zero, an
// endless pipe), and it stops as soon as ctx is done (the first Ctrl-C),
// returning an error wrapping ctx's. A read blocked on a pipe or terminal
// that never delivers is abandoned then, not waited for. Errors name the
// input. Standard input starts with what ReadLine already read and did
// not return; read it before asking questions on it, not during.
func (s *IOStreams) ReadInput(ctx context.Context, dir, name string, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = DefaultInputLimit
	}
	what := name
	if name == "-" {
		what = "standard input"
	}
	if name == "" {
		return nil, errors.New("read input: no file named (give a path, or - for standard input)")
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		data, err := s.readInput(ctx, dir, name, limit)
		done <- result{data, err}
	}()
	select {
	case <-ctx.Done():
		return nil, fmt.Errorf("read %s: %w", what, ctx.Err())
	case r := <-done:
		if r.err != nil {
			var tooLarge *InputTooLargeError
			if errors.As(r.err, &tooLarge) {
				return nil, r.err
			}
			return nil, fmt.Errorf("read %s: %w", what, r.err)
		}
		return r.data, nil
	}
}

func (s *IOStreams) readInput(ctx context.Context, dir, name string, limit int64) ([]byte, error) {
	if name == "-" {
		s.lineMu.Lock()
		// What ReadLine already took from In comes first.
		data := s.typed
		s.typed = nil
		s.lineMu.Unlock()
		return readLimited(ctx, s.In, data, name, limit)
	}
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	f, err := os.Open(path) // blocks on a FIFO until it has a writer
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Closing the file ends a read blocked on a FIFO.
	stop := context.AfterFunc(ctx, func() { f.Close() })
	defer stop()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	switch {
	case fi.IsDir():
		return nil, fmt.Errorf("%s is a directory, not a file", name)
	case fi.Mode().IsRegular() && fi.Size() > limit:
		return nil, &InputTooLargeError{Name: name, Limit: limit}
	}
	var data []byte
	if fi.Mode().IsRegular() {
		data = make([]byte, 0, fi.Size()+1)
	}
	return readLimited(ctx, f, data, name, limit)
}

// readLimited appends r's content to data until EOF, more than limit
// bytes, or ctx is done, checking ctx between reads so an endless input
// stops.
func readLimited(ctx context.Context, r io.Reader, data []byte, name string, limit int64) ([]byte, error) {
	const chunk = 64 << 10
	for {
		if int64(len(data)) > limit {
			return nil, &InputTooLargeError{Name: name, Limit: limit}
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if cap(data)-len(data) < chunk {
			data = append(data, make([]byte, chunk)...)[:len(data)]
		}
		want := min(int64(cap(data)-len(data)), limit+1-int64(len(data)))
		n, err := r.Read(data[len(data) : int64(len(data))+want])
		data = data[:len(data)+n]
		if errors.Is(err, io.EOF) {
			if int64(len(data)) > limit {
				return nil, &InputTooLargeError{Name: name, Limit: limit}
			}
			return data, nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, err
		}
	}
}
