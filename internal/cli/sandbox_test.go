package cli

import (
	"testing"

	"github.com/azero-dev/azero/internal/sandbox"
)

// testSandbox is a real sandbox for the tests that run a project's tests
// themselves, with this test binary as its helper (TestMain).
func testSandbox(t *testing.T) *sandbox.Sandbox {
	t.Helper()
	s, err := sandbox.New(sandbox.Config{Mode: sandbox.Auto, TempRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
