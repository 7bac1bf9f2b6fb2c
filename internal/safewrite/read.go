package safewrite

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/azero-dev/azero/internal/gitx"
)

// Snapshot identifies what a caller read: whether the file existed and
// the sha256 of its content. A later write with this Snapshot as
// Request.Base is refused if the file no longer matches it.
type Snapshot struct {
	Exists bool   `json:"exists"`
	SHA256 string `json:"sha256,omitempty"`
}

func (s Snapshot) describe() string {
	if !s.Exists {
		return "no file"
	}
	return "sha256 " + gitx.ShortID(s.SHA256)
}

// snapshotOf returns the Snapshot of content read from an existing file.
func snapshotOf(content []byte) Snapshot {
	return Snapshot{Exists: true, SHA256: sha256Hex(content)}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Read reads the file at path, confined to root exactly as a write would
// be, and returns its content and the Snapshot to pass as Request.Base to
// a later write. A file that does not exist is no error: it has no
// content and Snapshot{Exists: false}.
func Read(root, path string) ([]byte, Snapshot, error) {
	t, err := confine(root, path, true)
	if err != nil {
		return nil, Snapshot{}, err
	}
	content, _, snap, err := readTarget(t)
	return content, snap, err
}

// readTarget reads a confined target through an os.Root, so a symlink
// swapped in after confine cannot lead outside. It refuses directories
// and special files (reading a FIFO would block). mode is the file's
// permission bits, to keep on replace.
func readTarget(t target) ([]byte, fs.FileMode, Snapshot, error) {
	r, err := os.OpenRoot(t.Root)
	if err != nil {
		return nil, 0, Snapshot{}, fmt.Errorf("open project root: %w", err)
	}
	defer r.Close()
	return readIn(r, t)
}

func readIn(r *os.Root, t target) ([]byte, fs.FileMode, Snapshot, error) {
	fi, err := r.Lstat(t.Rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, Snapshot{}, nil
	}
	if err != nil {
		return nil, 0, Snapshot{}, fmt.Errorf("inspect %s: %w", t.Rel, err)
	}
	if !fi.Mode().IsRegular() {
		kind := "not a regular file"
		if fi.IsDir() {
			kind = "a directory"
		}
		return nil, 0, Snapshot{}, fmt.Errorf("%s is %s; azero writes regular files only", t.Rel, kind)
	}
	content, err := r.ReadFile(t.Rel)
	if err != nil {
		return nil, 0, Snapshot{}, fmt.Errorf("read %s: %w", t.Rel, err)
	}
	mode := fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	return content, mode, snapshotOf(content), nil
}
