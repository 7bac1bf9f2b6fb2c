package issue

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/llm/provider"
	"github.com/azero-dev/azero/internal/prompt"
	"github.com/azero-dev/azero/internal/safewrite"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
	"github.com/azero-dev/azero/internal/tracker"
	"github.com/azero-dev/azero/internal/workflow/roles"
)

// person plays the human at the terminal for in-process runs: the engine's
// Answerer. It answers menus with choices in order, text with paragraphs
// in order, and runs an edit function per editor question. When the
// answers run out it behaves as if nobody were there (the run waits),
// which is what a test wants to see if it forgot one.
type person struct {
	mu         sync.Mutex
	choices    []string
	paragraphs []string
	confirms   []string
	edits      []func(t *testing.T, files []string)
	t          *testing.T

	questions []string
	reports   []string
	opened    [][]string
}

func (h *person) Answer(ctx context.Context, q human.Question) (human.Answer, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	a := human.Answer{Gate: q.Gate, Channel: human.ChannelTerminal}
	if q.Kind == human.Editor {
		files := make([]string, len(q.Files))
		for i, f := range q.Files {
			files[i] = f.Path
		}
		h.opened = append(h.opened, files)
		if len(h.edits) > 0 {
			var fn func(*testing.T, []string)
			fn, h.edits = h.edits[0], h.edits[1:]
			fn(h.t, files)
		}
		a.Files = map[string]string{}
		for _, f := range q.Files {
			b, err := os.ReadFile(f.Path)
			if err != nil {
				return a, err
			}
			a.Files[f.Name] = string(b)
		}
	}
	h.questions = append(h.questions, q.Prompt)
	h.reports = append(h.reports, q.Report)
	if len(h.choices) == 0 {
		return a, prompt.ErrNoAnswer
	}
	c := h.choices[0]
	h.choices = h.choices[1:]
	o, ok := q.Option(c)
	if !ok {
		h.t.Errorf("answer %q is not one of the offered choices %v (question %q)", c, q.Keys(), q.Prompt)
		return a, errors.New("bad answer")
	}
	a.Key = c
	if o.Text != "" {
		if len(h.paragraphs) == 0 {
			return a, prompt.ErrNoAnswer
		}
		a.Text, h.paragraphs = h.paragraphs[0], h.paragraphs[1:]
	}
	if o.Confirm != "" {
		if len(h.confirms) == 0 {
			return a, prompt.ErrNoAnswer
		}
		a.Confirm, h.confirms = h.confirms[0], h.confirms[1:]
	}
	return a, nil
}

// appendTo returns an edit appending text to the i-th file opened.
func appendTo(i int, text string) func(*testing.T, []string) {
	return func(t *testing.T, files []string) {
		f, err := os.OpenFile(files[i], os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(text); err != nil {
			t.Fatal(err)
		}
	}
}

// replaceFile returns an edit replacing the i-th file opened.
func replaceFile(i int, text string) func(*testing.T, []string) {
	return func(t *testing.T, files []string) {
		if err := os.WriteFile(files[i], []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// world is one repository, store and state directory for in-process runs.
type world struct {
	t        *testing.T
	root     string
	stateDir string
	st       *store.Store
	eng      *flow.Engine
	writer   *safewrite.Writer
	audit    *audit.Logger // $stateDir/audit.jsonl
	script   string
	// maxOutput is the drafter's and reviewer's output ceiling (0: none).
	maxOutput int
}

func newWorld(t *testing.T, script string) *world {
	t.Helper()
	testenv.RequireTool(t, "git")
	root := t.TempDir()
	testenv.Git(t, root, "init", "-q", "-b", "main")
	testenv.Git(t, root, "config", "user.name", "azero test")
	testenv.Git(t, root, "config", "user.email", "test@azero.invalid")
	testenv.Git(t, root, "config", "commit.gpgsign", "false")
	testenv.WriteFiles(t, root, map[string]string{"README.md": "project\n"})
	testenv.Git(t, root, "add", "README.md")
	testenv.Git(t, root, "commit", "-q", "-m", "init")
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	stateDir, st, logger := testenv.OpenState(t)
	w := &world{t: t, root: root, stateDir: stateDir, st: st, writer: &safewrite.Writer{}, audit: logger}
	w.eng = &flow.Engine{Store: st}
	if script != "" {
		w.script = filepath.Join(stateDir, "script.toml")
		if err := os.WriteFile(w.script, []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// deps opens the scripted models for runID, metered like the real ones.
func (w *world) deps(runID string, h *person, tr tracker.Tracker) Deps {
	w.t.Helper()
	env := provider.Env{Getenv: func(string) string { return "" }, MockLLM: true, MockScript: w.script}
	run := roles.Run{Store: w.st, Writer: w.writer, StateDir: w.stateDir, RunID: runID, Env: env,
		Lineage: roles.NewLineage(w.writer, w.stateDir, runID)}
	drafter, err := roles.Open(llm.RoleDrafter, "mock:scripted", run)
	if err != nil {
		w.t.Fatal(err)
	}
	reviewer, err := roles.Open(llm.RoleReviewer, "mock:scripted", run)
	if err != nil {
		w.t.Fatal(err)
	}
	h.t = w.t
	w.eng.Answerer = h
	return Deps{
		Writer: w.writer, Events: w.eng, Audit: w.audit, Drafter: drafter, Reviewer: reviewer, Tracker: tr, StateDir: w.stateDir,
		MaxOutput: map[llm.Role]int{llm.RoleDrafter: w.maxOutput, llm.RoleReviewer: w.maxOutput},
		Checks: &Preflight{Editor: func() (string, error) { return "test-editor", nil }, Tracker: tr,
			Root: w.root, AuditDir: DefaultAuditDir, Models: []llm.Model{drafter, reviewer}},
	}
}

func (w *world) local(runID string) *tracker.Local {
	return &tracker.Local{Root: w.root, Dir: DefaultIssuesDir, Writer: w.writer, RunID: runID}
}

func (w *world) state(slug, brief string) *State {
	return &State{Slug: slug, Brief: brief, Root: w.root, AuditDir: DefaultAuditDir,
		Tracker: TrackerConfig{Kind: TrackerLocal, IssuesDir: DefaultIssuesDir}, Drafter: "mock:scripted", Reviewer: "mock:scripted"}
}

// start creates a run and drives it once.
func (w *world) start(s *State, h *person, tr func(runID string) tracker.Tracker) (string, *State, error) {
	w.t.Helper()
	runID := store.NewID(time.Now())
	d := w.deps(runID, h, tr(runID))
	g := New(d)
	if _, err := flow.Create(w.t.Context(), w.eng, g, s, flow.CreateOptions{ID: runID, Key: s.Slug}); err != nil {
		w.t.Fatal(err)
	}
	final, err := flow.Drive(w.t.Context(), w.eng, g, runID)
	return runID, final, err
}

// resume drives an existing run again.
func (w *world) resume(runID string, h *person, tr tracker.Tracker) (*State, error) {
	w.t.Helper()
	return flow.Drive(w.t.Context(), w.eng, New(w.deps(runID, h, tr)), runID)
}

func (w *world) names(dir string) []string {
	w.t.Helper()
	entries, err := Trail{Root: w.root, Dir: dir}.Entries()
	if err != nil {
		w.t.Fatal(err)
	}
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.Name
	}
	return out
}

func (w *world) read(rel string) string {
	w.t.Helper()
	b, err := os.ReadFile(filepath.Join(w.root, filepath.FromSlash(rel)))
	if err != nil {
		w.t.Fatal(err)
	}
	return string(b)
}

func (w *world) calls(runID, role string) int {
	w.t.Helper()
	calls, err := w.st.Calls(w.t.Context(), runID)
	if err != nil {
		w.t.Fatal(err)
	}
	n := 0
	for _, c := range calls {
		if c.Role == role {
			n++
		}
	}
	return n
}

func (w *world) git(args ...string) string {
	w.t.Helper()
	return strings.TrimSpace(testenv.Git(w.t, w.root, args...))
}

// lineage returns the run's lineage files whose names end with suffix
// ("prompt-review.md"), in order.
func (w *world) lineage(runID, suffix string) []string {
	w.t.Helper()
	names, err := filepath.Glob(filepath.Join(roles.LineageDir(w.stateDir, runID), "*-"+suffix))
	if err != nil {
		w.t.Fatal(err)
	}
	slices.Sort(names)
	out := make([]string, len(names))
	for i, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			w.t.Fatal(err)
		}
		out[i] = string(b)
	}
	return out
}

// auditEvents returns the audit log's records of event.
func (w *world) auditEvents(event string) []audit.Record {
	w.t.Helper()
	return testenv.AuditEvents(w.t, w.stateDir, event)
}

func timeForTest() time.Time { return time.Now() }
