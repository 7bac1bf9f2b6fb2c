// Package runstest drives the run service in a test's own process, as
// every door drives it: the environment of an azero under test, a local
// engine over a temporary state directory, and the events a drive
// reports, for the end-to-end tests of the workflows. Only tests import
// it.
package runstest

import (
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/runs"
	"github.com/azero-dev/azero/internal/testenv"
)

// NewEnv is the run service's environment of an azero under test working
// in dir, its state in state (testenv.AzeroEnviron), vars last. It is
// closed when the test ends.
func NewEnv(t testing.TB, state, dir string, vars ...string) *runs.Env {
	t.Helper()
	environ := testenv.AzeroEnviron(state, vars...)
	env := &runs.Env{Getenv: testenv.Getenv(environ), Environ: func() []string { return environ },
		LookPath: exec.LookPath, WorkDir: dir, Now: time.Now, Version: "test"}
	t.Cleanup(func() { env.Close() })
	return env
}

// Start starts the prepared run on the local engine over env's store and
// drives it as far as it goes.
func Start(t testing.TB, env *runs.Env, p *runs.Prepared) (runs.Outcome, error) {
	t.Helper()
	eng, err := runs.OpenLocal(t.Context(), env, runs.Catalog())
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	return eng.Start(t.Context(), p)
}

// Events keeps what a drive reports (its Watch), for a test to read.
type Events struct {
	mu   sync.Mutex
	list []event.Event
}

// Watch receives one event.
func (e *Events) Watch(ev event.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.list = append(e.list, ev)
}

// String is what the events said, one a line: kind, node and text.
func (e *Events) String() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var b strings.Builder
	for _, ev := range e.list {
		fmt.Fprintf(&b, "%s %s: %s\n", ev.Kind, ev.Node, ev.Text)
	}
	return b.String()
}
