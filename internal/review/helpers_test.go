package review_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/prompt"
	"github.com/azero-dev/azero/internal/review"
	"github.com/azero-dev/azero/internal/testenv"
)

// TestMain isolates every git started by the tests and by the code under
// test from the user's and the system's configuration.
func TestMain(m *testing.M) {
	for _, kv := range testenv.GitEnv(nil) {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	code := m.Run()
	cleanupBenchRepo()
	os.Exit(code)
}

// numbered returns n lines "prefix 1" .. "prefix n".
func numbered(prefix string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s %d\n", prefix, i)
	}
	return b.String()
}

func write(t testing.TB, dir, name, content string) {
	t.Helper()
	testenv.WriteFiles(t, dir, map[string]string{name: content})
}

func remove(t testing.TB, dir, name string) {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

func analyze(t testing.TB, dir string, staged bool) []review.FileAnalysis {
	t.Helper()
	files, err := review.Analyze(t.Context(), dir, review.AnalyzeOptions{Staged: staged})
	if err != nil {
		t.Fatal(err)
	}
	// lines_after is derived; checked here once, then cleared so that
	// tests can compare whole analyses written without it.
	for i, f := range files {
		if f.AfterLines != f.LinesAfter() {
			t.Errorf("%s: AfterLines = %d, LinesAfter() = %d", f.FilePath, f.AfterLines, f.LinesAfter())
		}
		files[i].AfterLines = 0
	}
	return files
}

func byPath(files []review.FileAnalysis) map[string]review.FileAnalysis {
	m := map[string]review.FileAnalysis{}
	for _, f := range files {
		m[f.FilePath] = f
	}
	return m
}

// auditBuffer collects audit records in memory.
type auditBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (a *auditBuffer) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.buf.Write(p)
}

func (a *auditBuffer) records(t testing.TB) []audit.Record {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []audit.Record
	for _, line := range strings.Split(strings.TrimSpace(a.buf.String()), "\n") {
		if line == "" {
			continue
		}
		var r audit.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

func newAudit() (*audit.Logger, *auditBuffer) {
	b := &auditBuffer{}
	return audit.New(b, nil), b
}

// pipedGate is a gate whose streams are buffers: nobody can be asked.
func pipedGate() (*review.Gate, *bytes.Buffer, *auditBuffer) {
	io, _, _, errOut := iostreams.Test()
	logger, buf := newAudit()
	return &review.Gate{IO: io, Prompter: prompt.New(io, noEnv, exec.LookPath), Audit: logger}, errOut, buf
}

func noEnv(string) string { return "" }

// newTerminal returns a real pseudo-terminal and streams on it: the gate
// reads and writes the tty end, the test types into the master end.
func newTerminal(t *testing.T) (*testenv.Terminal, *iostreams.IOStreams) {
	term := testenv.NewTerminal(t)
	return term, term.Streams(false)
}
