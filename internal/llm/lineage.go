package llm

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// FileWriter writes one file durably; azero's single safe-write function implements it. It
// must create missing parent directories.
type FileWriter interface {
	WriteFile(ctx context.Context, path string, data []byte) error
}

// DirLineage is a [Lineage] in one directory (a run's folder under the state dir). It writes
// through a [FileWriter] and numbers each file after the highest "NNN-" prefix in the
// directory, read again on every Next: numbering continues after a restart, and several
// DirLineage values (one per role, or one for test output) may share a run's folder as long as
// each saves what it numbered before the next number is taken, which a sequential workflow
// does. A number taken but never saved is not reused within the process.
type DirLineage struct {
	dir string
	w   FileWriter

	mu   sync.Mutex
	last int
}

// NewDirLineage returns a lineage in dir writing through w.
func NewDirLineage(dir string, w FileWriter) *DirLineage {
	return &DirLineage{dir: dir, w: w}
}

// Dir returns the lineage's directory.
func (l *DirLineage) Dir() string { return l.dir }

// Next returns the next sequence number.
func (l *DirLineage) Next(context.Context) (int, error) {
	entries, err := os.ReadDir(l.dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("read lineage folder: %w", err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last = max(l.last, LastSeq(names)) + 1
	return l.last, nil
}

// Save writes content to dir/name.
func (l *DirLineage) Save(ctx context.Context, name string, content []byte) error {
	if name == "" || name != filepath.Base(name) || strings.HasPrefix(name, ".") {
		return fmt.Errorf("lineage file name %q must be a plain file name", name)
	}
	if err := l.w.WriteFile(ctx, filepath.Join(l.dir, name), content); err != nil {
		return fmt.Errorf("save lineage file %s: %w", name, err)
	}
	return nil
}

// LastSeq returns the highest sequence number among file names of the form "NNN-...",
// 0 when there is none.
func LastSeq(names []string) int {
	last := 0
	for _, name := range names {
		digits, _, ok := strings.Cut(name, "-")
		if !ok || digits == "" || len(digits) > 9 {
			continue
		}
		n, err := strconv.Atoi(digits)
		if err != nil || n < 0 || digits[0] == '+' {
			continue
		}
		last = max(last, n)
	}
	return last
}
