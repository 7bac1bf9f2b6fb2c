package iostreams_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/testenv"
)

// zeros is an endless stdin.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestReadInputIsBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sparse := filepath.Join(dir, "huge.bin")
	if err := os.WriteFile(sparse, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(sparse, 200<<20); err != nil { // 200 MB, no blocks on disk
		t.Fatal(err)
	}
	exact := filepath.Join(dir, "exact.txt")
	if err := os.WriteFile(exact, bytes.Repeat([]byte("x"), 1<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	over := filepath.Join(dir, "over.txt")
	if err := os.WriteFile(over, bytes.Repeat([]byte("x"), 1<<10+1), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		input   string
		stdin   io.Reader
		limit   int64
		want    int      // bytes read, when no error
		wantErr []string // in the error
	}{
		{"/dev/zero", "/dev/zero", nil, 1 << 20, 0, []string{"/dev/zero is larger than 1 MiB", "the most azero reads", "/dev/zero never ends"}},
		{"/dev/zero at the default limit", "/dev/zero", nil, 0, 0, []string{"/dev/zero is larger than 32 MiB"}},
		{"sparse 200 MB file", sparse, nil, 0, 0, []string{sparse + " is larger than 32 MiB", "pass a smaller one"}},
		{"relative name", "huge.bin", nil, 0, 0, []string{"huge.bin is larger than 32 MiB"}},
		{"file at the limit", "exact.txt", nil, 1 << 10, 1 << 10, nil},
		{"file one byte over", "over.txt", nil, 1 << 10, 0, []string{"over.txt is larger than 1 KiB"}},
		{"endless stdin", "-", zeros{}, 1 << 20, 0, []string{"standard input sent more than 1 MiB", "check what is piped in"}},
		{"stdin at the limit", "-", bytes.NewReader(make([]byte, 1000)), 1000, 1000, nil},
		{"stdin one byte over", "-", bytes.NewReader(make([]byte, 1001)), 1000, 0, []string{"more than 1000 bytes"}},
		{"missing file", "nowhere.txt", nil, 0, 0, []string{"read nowhere.txt", "no such file"}},
		{"directory", ".", nil, 0, 0, []string{"read .", "is a directory"}},
		{"no name", "", nil, 0, 0, []string{"no file named"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, in, _, _ := iostreams.Test()
			if tt.stdin != nil {
				s.In = tt.stdin
			} else {
				in.WriteString("stdin is not read")
			}
			data, err := s.ReadInput(t.Context(), dir, tt.input, tt.limit)
			if tt.wantErr == nil {
				if err != nil || len(data) != tt.want {
					t.Fatalf("read %d bytes, %v; want %d", len(data), err, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("read %d bytes, want an error", len(data))
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			var tooLarge *iostreams.InputTooLargeError
			if strings.Contains(tt.wantErr[0], "than") != errors.As(err, &tooLarge) {
				t.Errorf("error %v: InputTooLargeError %v", err, tooLarge)
			}
		})
	}
}

func TestReadInputStdinKeepsWhatReadLineTook(t *testing.T) {
	t.Parallel()
	s, in, _, _ := iostreams.Test()
	in.WriteString("first line\nrest\nof it\n")
	if line, err := s.ReadLine(t.Context()); err != nil || line != "first line" {
		t.Fatalf("ReadLine = %q, %v", line, err)
	}
	data, err := s.ReadInput(t.Context(), "", "-", 0)
	if err != nil || string(data) != "rest\nof it\n" {
		t.Fatalf("ReadInput = %q, %v", data, err)
	}
}

// The first Ctrl-C cancels the command's context: a read that would last
// (an endless device, a pipe or FIFO nobody writes to) stops at once.
func TestReadInputStopsWhenCancelled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	idle, w := io.Pipe()
	t.Cleanup(func() { w.Close() })
	tests := []struct {
		name  string
		input string
		stdin io.Reader
		setup func(t *testing.T)
	}{
		{"/dev/zero under a huge limit", "/dev/zero", nil, nil},
		{"stdin nobody writes to", "-", idle, nil},
		{"endless stdin under a huge limit", "-", zeros{}, nil},
		{"FIFO with a silent writer", fifo, nil, func(t *testing.T) {
			// A writer (O_RDWR does not wait for a reader on Linux) lets
			// the reader's open return; it then sends nothing.
			f, err := os.OpenFile(fifo, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, _, _, _ := iostreams.Test()
			if tt.stdin != nil {
				s.In = tt.stdin
			}
			if tt.setup != nil {
				tt.setup(t)
			}
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() {
				_, err := s.ReadInput(ctx, dir, tt.input, 1<<50)
				done <- err
			}()
			time.Sleep(50 * time.Millisecond) // let the read get going
			cancel()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("after cancellation: %v, want context.Canceled", err)
				}
				if name := map[bool]string{true: "standard input", false: tt.input}[tt.input == "-"]; !strings.Contains(err.Error(), name) {
					t.Errorf("error %q does not name %s", err, name)
				}
			case <-time.After(testenv.Patience):
				t.Fatal("ReadInput went on after its context was cancelled")
			}
		})
	}
}
