package testenv

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// ProcessesWith lists the processes on the machine, other than the test's
// own, whose command line holds token: a test gives the processes it
// starts a token of its own, then looks for survivors by it.
func ProcessesWith(token string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && bytes.Contains(raw, []byte(token)) {
			out = append(out, pid)
		}
	}
	return out
}

// WaitGone waits, up to Patience, until no process has token in its
// command line, and fails the test with the survivors otherwise (what
// says what they outlived: "the run", "the sandbox").
func WaitGone(t testing.TB, token, what string) {
	t.Helper()
	deadline := time.Now().Add(Patience)
	for {
		pids := ProcessesWith(token)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes %v outlived %s", pids, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
