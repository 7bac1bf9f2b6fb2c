package safewrite_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/safewrite"
	"github.com/azero-dev/azero/internal/testenv"
)

// project is a project root with a sibling directory that must never
// change: every attack test checks it afterwards.
type project struct {
	root, outside string
}

func newProject(t *testing.T) project {
	t.Helper()
	parent := t.TempDir()
	p := project{root: filepath.Join(parent, "project"), outside: filepath.Join(parent, "outside")}
	for _, d := range []string{p.root, p.outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(p.outside, "secret.txt"), "do not touch\n")
	return p
}

func (p project) path(rel string) string { return filepath.Join(p.root, rel) }

// tree lists every entry below dir with its content (files) or link
// target (symlinks), to compare before and after.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			dest, _ := os.Readlink(path)
			out[rel] = "-> " + dest
		case d.IsDir():
			out[rel] = "dir"
		default:
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			out[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (p project) assertOutsideUnchanged(t *testing.T, before map[string]string) {
	t.Helper()
	after := tree(t, p.outside)
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatalf("the directory outside the root changed:\nbefore %v\nafter  %v", before, after)
	}
	parent := filepath.Dir(p.root)
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "project" && e.Name() != "outside" {
			t.Fatalf("something was created next to the root: %s", e.Name())
		}
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// numbered returns n lines "<prefix> <i>".
func numbered(prefix string, from, n int) string {
	var b strings.Builder
	for i := from; i < from+n; i++ {
		fmt.Fprintf(&b, "%s %d\n", prefix, i)
	}
	return b.String()
}

// auditLog is an audit.Logger over a buffer with a decoder.
type auditLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
	log *audit.Logger
}

func newAuditLog() *auditLog {
	a := &auditLog{}
	a.log = audit.New(lockedWriter{a}, nil)
	return a
}

type lockedWriter struct{ a *auditLog }

func (w lockedWriter) Write(p []byte) (int, error) {
	w.a.mu.Lock()
	defer w.a.mu.Unlock()
	return w.a.buf.Write(p)
}

func (a *auditLog) records(t *testing.T) []map[string]any {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(a.buf.String()), "\n") {
		if line == "" {
			continue
		}
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

// approverFunc adapts a function to safewrite.Approver.
type approverFunc func(context.Context, safewrite.Proposal) (safewrite.Decision, error)

func (f approverFunc) Decide(ctx context.Context, p safewrite.Proposal) (safewrite.Decision, error) {
	return f(ctx, p)
}

// mustNotAsk fails the test if anyone is asked.
func mustNotAsk(t *testing.T) safewrite.Approver {
	return approverFunc(func(_ context.Context, p safewrite.Proposal) (safewrite.Decision, error) {
		t.Errorf("approval asked for %s although none is needed", p.Rel)
		return safewrite.Decision{}, fmt.Errorf("unexpected question")
	})
}

// newTerminal returns a real pseudo-terminal and streams on it: the
// approver reads and writes the tty end, the test types into the master end.
func newTerminal(t *testing.T, color bool) (*testenv.Terminal, *iostreams.IOStreams) {
	term := testenv.NewTerminal(t)
	return term, term.Streams(color)
}

func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.Contains(e.Name(), ".azero-tmp-") {
			out = append(out, e.Name())
		}
	}
	return out
}
