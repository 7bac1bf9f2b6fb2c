package safewrite

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// tempMarker names azero's temporary files: ".<name>.azero-tmp-<random>".
const tempMarker = ".azero-tmp-"

// maxTempBase keeps temporary names under NAME_MAX (255) for long names.
const maxTempBase = 180

// commit replaces (or creates) the target with data, atomically and
// durably, through an os.Root so nothing outside the root can be touched.
// expect is what the proposal was computed from; the target is checked
// against it just before the rename. On any error the target is untouched
// and the temporary file removed.
func commit(ctx context.Context, t target, data []byte, mode fs.FileMode, expect Snapshot) error {
	r, err := os.OpenRoot(t.Root)
	if err != nil {
		return fmt.Errorf("open project root: %w", err)
	}
	defer r.Close()
	dir, base := filepath.Dir(t.Rel), filepath.Base(t.Rel)
	if err := ensureDir(r, dir); err != nil {
		return err
	}
	removeLeftovers(r, dir)

	f, tmp, err := createTemp(r, dir, base)
	if err != nil {
		return fmt.Errorf("write %s: %w", t.Rel, err)
	}
	renamed := false
	defer func() {
		// Closing releases the lock that protects tmp from other
		// writers' cleanup; it is removed first when the write failed.
		if !renamed {
			_ = r.Remove(tmp) // best effort: a leftover is removed by the next write here
		}
		_ = f.Close() // the data was synced (or is being discarded)
	}()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", t.Rel, err)
	}
	if err := f.Chmod(mode); err != nil {
		return fmt.Errorf("set mode of %s: %w", t.Rel, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("flush %s: %w", t.Rel, err)
	}
	_, _, now, err := readIn(r, t)
	if err != nil {
		return err
	}
	if now != expect {
		return &StaleError{Path: t.Rel, Read: expect, Now: now}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := r.Rename(tmp, t.Rel); err != nil {
		return fmt.Errorf("replace %s: %w", t.Rel, err)
	}
	renamed = true
	if err := syncDir(r, dir); err != nil {
		return fmt.Errorf("%s was written but its directory could not be flushed to disk: %w", t.Rel, err)
	}
	return nil
}

// ensureDir creates dir (relative to r) and its missing parents, flushing
// each new entry's parent so the new directories survive a crash.
func ensureDir(r *os.Root, dir string) error {
	if dir == "." {
		return nil
	}
	fi, err := r.Stat(dir)
	if err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("%s exists and is not a directory", dir)
		}
		return nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("inspect %s: %w", dir, err)
	}
	existing := filepath.Dir(dir)
	for existing != "." {
		if _, err := r.Stat(existing); err == nil {
			break
		}
		existing = filepath.Dir(existing)
	}
	if err := r.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create directory %s: %w", dir, err)
	}
	for d := dir; d != existing && d != "."; d = filepath.Dir(d) {
		if err := syncDir(r, filepath.Dir(d)); err != nil {
			return err
		}
	}
	return nil
}

// syncDir flushes a directory so a rename or new entry in it is durable.
func syncDir(r *os.Root, dir string) error {
	d, err := r.Open(dir)
	if err != nil {
		return fmt.Errorf("open directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("flush directory %s: %w", dir, err)
	}
	return nil
}

// createTemp creates and locks a new temporary file next to base.
func createTemp(r *os.Root, dir, base string) (*os.File, string, error) {
	if len(base) > maxTempBase {
		base = base[:maxTempBase]
	}
	for range 10 {
		var rnd [8]byte
		if _, err := rand.Read(rnd[:]); err != nil {
			return nil, "", fmt.Errorf("random name: %w", err)
		}
		name := filepath.Join(dir, "."+base+tempMarker+hex.EncodeToString(rnd[:]))
		f, err := r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, "", fmt.Errorf("create temporary file: %w", err)
		}
		if err := lockFile(f, true); err != nil {
			f.Close()
			_ = r.Remove(name)
			return nil, "", fmt.Errorf("lock temporary file: %w", err)
		}
		// Another writer's cleanup may have taken the unlocked file in the
		// instant between creating and locking it: start over.
		if gone, err := unlinked(f); err != nil || gone {
			f.Close()
			continue
		}
		return f, name, nil
	}
	return nil, "", errors.New("could not create a temporary file")
}

// isTempName reports whether name is one of azero's temporary files.
func isTempName(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, tempMarker)
}

// removeLeftovers deletes temporary files in dir that no live writer
// holds: those of killed processes. It is best effort: a leftover that
// cannot be removed now harms nothing and is tried again next time.
func removeLeftovers(r *os.Root, dir string) {
	d, err := r.Open(dir)
	if err != nil {
		return
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return
	}
	for _, e := range entries {
		if !isTempName(e.Name()) || !e.Type().IsRegular() {
			continue
		}
		name := filepath.Join(dir, e.Name())
		f, err := r.OpenFile(name, os.O_RDONLY, 0)
		if err != nil {
			continue
		}
		if abandoned(f) {
			_ = r.Remove(name) // while holding the lock, so no writer is using it
		}
		f.Close()
	}
}
