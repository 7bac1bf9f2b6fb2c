//go:build unix

package filelock

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestLockExcludesAndDiesWithItsHolder(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "x.lock")
	release, err := Hold(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := Lock(f, false); !errors.Is(err, ErrHeld) {
		t.Fatalf("second lock: %v, want ErrHeld", err)
	}
	release()
	if err := Lock(f, false); err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)

	// A directory can be locked too (the local tracker's issues folder).
	release, err = Hold(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	release()

	// A lock held by a process that dies goes with it.
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("no flock command to hold the lock in another process")
	}
	cmd := exec.Command("flock", path, "sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // flock and its sleep, which inherits the lock
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	kill := func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	defer kill()
	for Lock(f, false) == nil { // not yet taken by the child
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		time.Sleep(10 * time.Millisecond)
	}
	kill()
	cmd.Wait()
	if err := Lock(f, true); err != nil {
		t.Fatalf("the dead process's lock stayed: %v", err)
	}
}
