package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A release build stamps its version with -ldflags "-X main.version=..." (scripts/release.sh);
// the binary must print it. This builds the real binary the way the release script does.
func TestReleaseStampReachesVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the azero binary")
	}
	t.Parallel()
	exe := filepath.Join(t.TempDir(), "azero")
	const stamp = "v0.0.0-stamp-test"
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X main.version="+stamp, "-o", exe, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(exe, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("azero version: %v\n%s", err, out)
	}
	if want := "azero " + stamp + " (" + runtime.Version() + ")\n"; string(out) != want {
		t.Errorf("azero version printed %q, want %q", out, want)
	}
	if out, err := exec.Command(exe, "--version").CombinedOutput(); err != nil || !strings.Contains(string(out), stamp) {
		t.Errorf("azero --version printed %q (%v), want %s in it", out, err, stamp)
	}
}
