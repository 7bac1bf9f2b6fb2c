package testrun_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/azero-dev/azero/internal/sandbox"
	"github.com/azero-dev/azero/internal/testrun"
)

// seeds are the test binary's build-cache seeds: one for all its tests,
// warmed by the first baseline run of each language (warmSeeds).
var seeds string

// TestMain lets the test binary be the sandbox's helper, and keeps one set
// of seeds for the whole binary.
func TestMain(m *testing.M) {
	sandbox.Init()
	dir, err := os.MkdirTemp("", "azero-testrun-seeds-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	seeds = dir
	if err := warmSeeds(); err != nil {
		fmt.Fprintln(os.Stderr, "warm the build-cache seeds:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// testMode is the sandbox mode the tests run in: auto (bubblewrap where it
// works), or what AZERO_TEST_SANDBOX names ("landlock" runs every test on
// the Landlock path).
func testMode(t testing.TB) sandbox.Mode {
	m, err := sandbox.ParseMode(os.Getenv("AZERO_TEST_SANDBOX"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var (
	sandboxOnce sync.Once
	testSandbox *sandbox.Sandbox
	sandboxErr  error
)

// sandboxed returns opts with the test binary's sandbox and seeds: every
// runner test runs its tools confined, as azero does.
func sandboxed(t testing.TB, opts testrun.Options) testrun.Options {
	t.Helper()
	sandboxOnce.Do(func() { testSandbox, sandboxErr = sandbox.New(sandbox.Config{Mode: testMode(t)}) })
	if sandboxErr != nil {
		t.Fatal(sandboxErr)
	}
	opts.Sandbox = testSandbox
	opts.Seeds = seeds
	return opts
}

// sandboxedWith is sandboxed with a sandbox of its own, configured by cfg
// (its mode is the tests').
func sandboxedWith(t testing.TB, cfg sandbox.Config, opts testrun.Options) testrun.Options {
	t.Helper()
	cfg.Mode = testMode(t)
	s, err := sandbox.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	opts.Sandbox = s
	opts.Seeds = seeds
	return opts
}

// warmSeeds runs one baseline of a small Go module, so the Go tests start
// warm as azero's runs do after their first baseline on a machine.
func warmSeeds() error {
	if _, err := exec.LookPath("go"); err != nil {
		return nil // the Go tests say go is missing
	}
	dir, err := os.MkdirTemp("", "azero-testrun-warm-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	files := map[string]string{"go.mod": "module example.com/warm\n\ngo 1.22\n",
		"warm_test.go": "package warm\n\nimport \"testing\"\n\nfunc TestWarm(t *testing.T) {}\n"}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	s, err := sandbox.New(sandbox.Config{})
	if err != nil {
		return err
	}
	r, err := testrun.New("go", testrun.Options{Sandbox: s, Seeds: seeds})
	if err != nil {
		return err
	}
	b, err := testrun.CheckBaseline(context.Background(), r, dir)
	if err != nil {
		return err
	}
	return b.Err()
}
