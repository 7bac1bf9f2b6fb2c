package design

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/config"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/llm/provider"
	"github.com/azero-dev/azero/internal/prompt"
	"github.com/azero-dev/azero/internal/safewrite"
	"github.com/azero-dev/azero/internal/sandbox"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
	"github.com/azero-dev/azero/internal/testrun"
	"github.com/azero-dev/azero/internal/tracker"
	"github.com/azero-dev/azero/internal/workflow/governance"
	"github.com/azero-dev/azero/internal/workflow/implement"
	"github.com/azero-dev/azero/internal/workflow/roles"
)

// seeds are the test binary's build-cache seeds, warmed by the first
// baseline of an implementation.
var seeds string

// TestMain lets the test binary be the sandbox's helper: the mounted
// implementation runs its tests confined, as azero does.
func TestMain(m *testing.M) {
	sandbox.Init()
	dir, err := os.MkdirTemp("", "azero-design-seeds-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	seeds = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// step is one answer of the test's human: at gate (a prefix of its name),
// the key, and what they do first in the editor, their feedback and the
// word they confirm with.
type step struct {
	gate    string
	key     string
	edit    func(t *testing.T, files map[string]string) // name -> path
	text    string
	confirm string
}

// human plays the person at the terminal for in-process runs: it answers
// each question with the next step, and behaves as if nobody were there
// once the steps run out (the run waits). It keeps every question.
type person struct {
	t     *testing.T
	mu    sync.Mutex
	steps []step
	asked []human.Question
}

func (h *person) Answer(ctx context.Context, q human.Question) (human.Answer, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.asked = append(h.asked, q)
	if len(h.steps) == 0 {
		return human.Answer{}, prompt.ErrNoAnswer
	}
	s := h.steps[0]
	if !strings.HasPrefix(q.Gate, s.gate) {
		h.t.Errorf("asked at %s, the test expected %s", q.Gate, s.gate)
		return human.Answer{}, prompt.ErrNoAnswer
	}
	h.steps = h.steps[1:]
	a := human.Answer{Gate: q.Gate, Key: s.key, Text: s.text, Confirm: s.confirm, Channel: human.ChannelTerminal}
	if q.Kind == human.Editor {
		paths := map[string]string{}
		for _, f := range q.Files {
			paths[f.Name] = f.Path
		}
		if s.edit != nil {
			s.edit(h.t, paths)
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
	return a, nil
}

// questions returns the questions asked at gates starting with prefix.
func (h *person) questions(prefix string) []human.Question {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []human.Question
	for _, q := range h.asked {
		if strings.HasPrefix(q.Gate, prefix) {
			out = append(out, q)
		}
	}
	return out
}

// replace returns an edit replacing old by new in the editor's file name.
func replace(name, old, new string) func(*testing.T, map[string]string) {
	return func(t *testing.T, files map[string]string) {
		b, err := os.ReadFile(files[name])
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), old) {
			t.Fatalf("%s lacks %q:\n%s", name, old, b)
		}
		if err := os.WriteFile(files[name], []byte(strings.Replace(string(b), old, new, 1)), 0o600); err != nil {
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
	audit    *audit.Logger
	script   string // the drafter's and reviewer's script ("": the built-in replies)
	coder    string // the coder's script
}

// newWorld makes a repository with files committed on main.
func newWorld(t *testing.T, files map[string]string, script string) *world {
	t.Helper()
	testenv.RequireTool(t, "git")
	root := testenv.NewRepo(t, files)
	testenv.Git(t, root, "config", "user.name", "azero test")
	testenv.Git(t, root, "config", "user.email", "test@azero.invalid")
	testenv.Git(t, root, "config", "commit.gpgsign", "false")
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	stateDir, st, logger := testenv.OpenState(t)
	w := &world{t: t, root: root, stateDir: stateDir, st: st, writer: &safewrite.Writer{}, audit: logger}
	w.eng = &flow.Engine{Store: st, Audit: logger}
	if script != "" {
		w.script = w.file("script.toml", script)
	}
	return w
}

// file writes a file of the state directory and returns its path.
func (w *world) file(name, content string) string {
	w.t.Helper()
	p := filepath.Join(w.stateDir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		w.t.Fatal(err)
	}
	return p
}

// local is the repository's local tracker.
func (w *world) local() *tracker.Local {
	return &tracker.Local{Root: w.root, Dir: "docs/issues", Writer: w.writer, RunID: "test"}
}

// fileIssue files an issue on the local tracker, as a person would.
func (w *world) fileIssue(title, body string) int {
	w.t.Helper()
	is, err := w.local().Create(w.t.Context(), tracker.Issue{Title: title, Body: body, Labels: []string{"enhancement"}})
	if err != nil {
		w.t.Fatal(err)
	}
	w.git("add", "docs/issues")
	w.git("commit", "-q", "-m", "file issue")
	return is.Number
}

// prepare prepares a run for issue n.
func (w *world) prepare(n int, plan *ImplementPlan) *State {
	w.t.Helper()
	s, err := Prepare(w.t.Context(), Inputs{Dir: w.root, Issue: n, Reader: w.local(), TrackerName: w.local().Name(),
		Drafter: "mock:scripted", Reviewer: "mock:scripted", Implement: plan})
	if err != nil {
		w.t.Fatal(err)
	}
	return s
}

// open opens a scripted model of role for runID, metered like the real
// ones (its calls and lineage recorded).
func (w *world) open(role llm.Role, script, runID string) llm.Model {
	w.t.Helper()
	env := provider.Env{Getenv: func(string) string { return "" }, MockLLM: true, MockScript: script}
	m, err := roles.Open(role, "mock:scripted", roles.Run{Store: w.st, Writer: w.writer, StateDir: w.stateDir, RunID: runID, Env: env,
		Lineage: roles.NewLineage(w.writer, w.stateDir, runID), Events: w.eng})
	if err != nil {
		w.t.Fatal(err)
	}
	return m
}

var (
	sandboxOnce sync.Once
	testSandbox *sandbox.Sandbox
	sandboxErr  error
)

// deps builds the run's dependencies, the implementation's included.
func (w *world) deps(runID string, h *person) Deps {
	w.t.Helper()
	drafter, reviewer := w.open(llm.RoleDrafter, w.script, runID), w.open(llm.RoleReviewer, w.script, runID)
	h.t = w.t
	w.eng.Answerer = h
	return Deps{
		Writer: w.writer, Events: w.eng, Audit: w.audit, Drafter: drafter, Reviewer: reviewer, StateDir: w.stateDir,
		Checks: &governance.Preflight{Editor: func() (string, error) { return "test-editor", nil }, Root: w.root, AuditDir: DefaultAuditDir,
			Dirs: map[string]string{"design.lld_dir": DefaultLLDDir}, Models: []llm.Model{drafter, reviewer}},
		Implement: func(ctx context.Context, in *implement.State) (implement.Deps, error) {
			sandboxOnce.Do(func() { testSandbox, sandboxErr = sandbox.New(sandbox.Config{}) })
			if sandboxErr != nil {
				return implement.Deps{}, sandboxErr
			}
			runner, err := testrun.New(in.Runner, testrun.Options{Checkout: in.Repo, Sandbox: testSandbox, Seeds: seeds})
			if err != nil {
				return implement.Deps{}, err
			}
			return implement.Deps{Coder: w.open(llm.RoleCoder, w.coder, runID), Writer: w.writer, Runner: runner,
				Lineage: roles.NewLineage(w.writer, w.stateDir, runID), Events: w.eng, Audit: w.audit, Sandbox: testSandbox}, nil
		},
	}
}

// start creates a run of s and drives it once.
func (w *world) start(s *State, h *person) (string, *State, error) {
	w.t.Helper()
	runID := store.NewID(time.Now())
	g := New(w.deps(runID, h))
	if _, err := flow.Create(w.t.Context(), w.eng, g, s, flow.CreateOptions{ID: runID, Key: s.Slug}); err != nil {
		w.t.Fatal(err)
	}
	final, err := flow.Drive(w.t.Context(), w.eng, g, runID)
	return runID, final, err
}

// resume drives an existing run again, with new dependencies as a new
// process would.
func (w *world) resume(ctx context.Context, runID string, h *person) (*State, error) {
	w.t.Helper()
	return flow.Drive(ctx, w.eng, New(w.deps(runID, h)), runID)
}

func (w *world) git(args ...string) string {
	w.t.Helper()
	return strings.TrimSpace(testenv.Git(w.t, w.root, args...))
}

func (w *world) read(rel string) string {
	w.t.Helper()
	b, err := os.ReadFile(filepath.Join(w.root, filepath.FromSlash(rel)))
	if err != nil {
		w.t.Fatal(err)
	}
	return string(b)
}

// names lists the trail's files in dir.
func (w *world) names(dir string) []string {
	w.t.Helper()
	entries, err := governance.Trail{Root: w.root, Dir: dir}.Entries()
	if err != nil {
		w.t.Fatal(err)
	}
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.Name
	}
	return out
}

// calls counts the run's model calls by role.
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

// prompts returns the run's prompts of a purpose, in order, from its
// lineage: what each model was sent.
func (w *world) prompts(runID, purpose string) []string {
	w.t.Helper()
	names, err := filepath.Glob(filepath.Join(roles.LineageDir(w.stateDir, runID), "*-prompt-"+purpose+".md"))
	if err != nil {
		w.t.Fatal(err)
	}
	slices.Sort(names)
	var out []string
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			w.t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

// auditEvents returns the audit log's records of event.
func (w *world) auditEvents(event string) []audit.Record {
	w.t.Helper()
	recs, err := audit.Read(filepath.Join(w.stateDir, audit.FileName))
	if err != nil {
		w.t.Fatal(err)
	}
	var out []audit.Record
	for _, r := range recs {
		if r["event"] == event {
			out = append(out, r)
		}
	}
	return out
}

// committed lists the files of commit id.
func (w *world) committed(id string) []string {
	w.t.Helper()
	files := strings.Fields(w.git("show", "--name-only", "--format=", id))
	slices.Sort(files)
	return files
}

// implementAccepts reports why implement's Prepare refuses the document at
// rel in the repository (nil: it accepts it).
func (w *world) implementAccepts(rel string) error {
	doc, err := os.ReadFile(filepath.Join(w.root, filepath.FromSlash(rel)))
	if err != nil {
		return err
	}
	_, _, err = implement.Prepare(w.t.Context(), implement.Inputs{DesignPath: filepath.Join(w.root, rel), Design: doc, Dir: w.root,
		Coder: "mock:scripted", Config: config.Implement{}, StateDir: w.t.TempDir(), RunID: "check-run"})
	return err
}
