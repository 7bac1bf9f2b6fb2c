package iostreams_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/azero-dev/azero/internal/iostreams"
)

// ReadRegularFile reads a regular file up to its limit and refuses, without
// opening them, a named pipe nobody writes to, a directory and a device,
// and a file over the limit.
func TestReadRegularFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	if err := os.WriteFile(at("ten"), []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(at("fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", at("zero")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		limit      int64
		want       string // content, or the error's kind
	}{
		{"at the limit", at("ten"), 10, "0123456789"},
		{"over the limit", at("ten"), 9, "too large"},
		{"a named pipe", at("fifo"), 10, "a named pipe"},
		{"a directory", dir, 10, "a directory"},
		{"a link to a device", at("zero"), 10, "a device"},
		{"missing", at("none"), 10, "not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			data, err := iostreams.ReadRegularFile(tt.path, tt.limit)
			var notRegular *iostreams.NotRegularError
			var tooLarge *iostreams.InputTooLargeError
			switch {
			case err == nil:
				if string(data) != tt.want {
					t.Errorf("read %q, want %q", data, tt.want)
				}
			case errors.As(err, &tooLarge):
				if tt.want != "too large" || tooLarge.Limit != tt.limit {
					t.Errorf("err = %v, want %s", err, tt.want)
				}
			case errors.As(err, &notRegular):
				if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.path) {
					t.Errorf("err = %v, want one naming %s as %s", err, tt.path, tt.want)
				}
			default:
				if !errors.Is(err, os.ErrNotExist) || tt.want != "not exist" {
					t.Errorf("err = %v, want %s", err, tt.want)
				}
			}
		})
	}
}
