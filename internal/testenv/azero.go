package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/store"
)

// AzeroEnviron is the environment of an azero under test, a process or
// the run service in a test's own: git isolated from the developer's
// configuration (GitEnv), a private state and config directory, and none
// of the developer's azero, editor, colour, model or GitHub settings;
// vars come last.
func AzeroEnviron(state string, vars ...string) []string {
	var env []string
	for _, kv := range GitEnv(os.Environ()) {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "AZERO_"), strings.HasPrefix(k, "GITHUB_"), k == "GH_TOKEN", k == "EDITOR", k == "VISUAL",
			k == "NO_COLOR", k == "TERM", strings.HasSuffix(k, "_API_KEY"), strings.HasSuffix(k, "_BASE_URL"):
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "AZERO_STATE_DIR="+state, "XDG_CONFIG_HOME="+filepath.Join(state, "config"))
	return append(env, vars...)
}

// Getenv looks a variable up in environ as os.Getenv does in the
// process's own (the last setting wins).
func Getenv(environ []string) func(string) string {
	vars := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	return func(k string) string { return vars[k] }
}

// ModelScript is a script of the offline scripted model (mock:scripted)
// giving role's replies in turn order.
func ModelScript(role string, replies ...string) string {
	var b strings.Builder
	for i, r := range replies {
		fmt.Fprintf(&b, "[[reply]]\nrole = %q\nturn = %d\ntext = '''\n%s'''\n\n", role, i+1, r)
	}
	return b.String()
}

// WriteScript writes a scripted model's script to a temporary file and
// returns its path (for AZERO_MOCK_SCRIPT).
func WriteScript(t testing.TB, script string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "script.toml")
	if err := os.WriteFile(p, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// AuditEvents returns the records of event in the audit log of the state
// directory state.
func AuditEvents(t testing.TB, state, event string) []audit.Record {
	t.Helper()
	return AuditLogEvents(t, filepath.Join(state, audit.FileName), event)
}

// AuditLogEvents returns the records of event in the audit log at path.
func AuditLogEvents(t testing.TB, path, event string) []audit.Record {
	t.Helper()
	recs, err := audit.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []audit.Record
	for _, r := range recs {
		if r["event"] == event {
			out = append(out, r)
		}
	}
	return out
}

// NthFile returns the content of the n-th file (from 1, in name order) of
// dir whose name ends with suffix: a run's lineage keeps its prompts and
// replies numbered.
func NthFile(t testing.TB, dir, suffix string, n int) string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, de := range des {
		if strings.HasSuffix(de.Name(), suffix) {
			if seen++; seen == n {
				b, err := os.ReadFile(filepath.Join(dir, de.Name()))
				if err != nil {
					t.Fatal(err)
				}
				return string(b)
			}
		}
	}
	t.Fatalf("no file #%d ending in %s in %s", n, suffix, dir)
	return ""
}

// NodePath is a run's path through its graph as its history records it,
// node:outcome for every step that ended ("worktree:ok baseline:ok ...").
func NodePath(hist []store.Step) string {
	var nodes []string
	for _, h := range hist {
		if h.Outcome != "started" && h.Outcome != "resumed" {
			nodes = append(nodes, h.Node+":"+h.Outcome)
		}
	}
	return strings.Join(nodes, " ")
}

// OpenState opens the store and the audit log of a fresh state directory,
// closed when the test ends, as azero keeps them (store.FileName,
// audit.FileName).
func OpenState(t testing.TB) (dir string, st *store.Store, log *audit.Logger) {
	t.Helper()
	dir = t.TempDir()
	st, err := store.Open(t.Context(), filepath.Join(dir, store.FileName), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	log, err = audit.Open(filepath.Join(dir, audit.FileName), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	return dir, st, log
}
