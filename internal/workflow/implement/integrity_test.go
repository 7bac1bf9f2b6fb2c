package implement

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/integrity"
	"github.com/azero-dev/azero/internal/testenv"
	"github.com/azero-dev/azero/internal/testrun"
)

// scriptedRunner is a test runner whose "tests" are fn: what the code a
// run executes may do, without a real runner's timing.
type scriptedRunner struct {
	fn func(dir string) testrun.Result
}

func (r scriptedRunner) Name() string { return "scripted" }

func (r scriptedRunner) Run(_ context.Context, dir string) (testrun.Result, error) {
	return r.fn(dir), nil
}

// memLineage keeps the lineage in memory.
type memLineage struct {
	mu    sync.Mutex
	files map[string]string
}

func (l *memLineage) Next(context.Context) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.files) + 1, nil
}

func (l *memLineage) Save(_ context.Context, name string, content []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.files[name] = string(content)
	return nil
}

// events keeps what the nodes showed.
type events struct {
	mu  sync.Mutex
	evs []event.Event
}

func (e *events) Emit(_ context.Context, ev event.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.evs = append(e.evs, ev)
}

func (e *events) text() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var b strings.Builder
	for _, ev := range e.evs {
		b.WriteString(ev.Text + "\n" + string(ev.Data) + "\n")
	}
	return b.String()
}

// guarded is a run in a real worktree on its branch, at the red or green
// gate, with a scripted runner, an audit log, a lineage and events.
type guarded struct {
	repo, log string
	s         State
	lineage   *memLineage
	events    *events
	d         Deps
}

func newGuarded(t *testing.T, fn func(dir string) testrun.Result) *guarded {
	t.Helper()
	repo := testenv.NewRepo(t, map[string]string{"calc.py": "def add(a, b):\n    return a + b\n", ".gitignore": "*.log\n"})
	base := strings.TrimSpace(testenv.Git(t, repo, "rev-parse", "HEAD"))
	wt := filepath.Join(t.TempDir(), "wt")
	if err := (gitx.Repo{Dir: repo}).AddWorktree(t.Context(), wt, "azero/7-multiply", base); err != nil {
		t.Fatal(err)
	}
	testenv.WriteFiles(t, wt, map[string]string{"test_calc.py": "import calc\n\n\ndef test_multiply():\n    assert calc.multiply(3, 4) == 12\n"})
	g := &guarded{repo: repo, log: filepath.Join(t.TempDir(), "audit.jsonl"), lineage: &memLineage{files: map[string]string{}}, events: &events{}}
	logger, err := audit.Open(g.log, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logger.Close() })
	g.d = Deps{Runner: scriptedRunner{fn}, Audit: logger, Lineage: g.lineage, Events: g.events,
		Secrets: []string{"correct-horse-battery-staple"}}
	g.s = State{Repo: repo, Worktree: wt, Branch: "azero/7-multiply", BaseBranch: "main", BaseCommit: base, Runner: testrun.KindPytest,
		Files: []FileSpec{{Path: "test_calc.py", Change: "Add", Test: true}, {Path: "calc.py", Change: "Modify"}}, Scaffolds: 1}
	return g
}

func (g *guarded) run(t *testing.T, node string) (string, error) {
	t.Helper()
	st, ok := Graph(g.d).Step(node)
	if !ok || st.Run == nil {
		t.Fatalf("%s is not a node", node)
	}
	return st.Run(flow.WithRun(t.Context(), "run-1", node), &g.s)
}

func (g *guarded) records(t *testing.T, name string) []audit.Record {
	t.Helper()
	return testenv.AuditLogEvents(t, g.log, name)
}

func failing(dir string) testrun.Result {
	return testrun.Result{Runner: "pytest", Outcome: testrun.Fail, ExitCode: 1, Failed: 1, Summary: "pytest exited 1 (fail): 1 failed", FailedTests: []string{"test_calc.py::test_multiply"}}
}

// A red run whose code writes a conftest.py and rewrites the test file is
// no red: the worktree is put back, the run is Broken with what it
// changed, audited and shown, and the scaffold is done again.
func TestARunThatChangesTheChangeDoesNotCount(t *testing.T) {
	t.Parallel()
	g := newGuarded(t, func(dir string) testrun.Result {
		os.WriteFile(filepath.Join(dir, "conftest.py"), []byte("import pytest\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "test_calc.py"), []byte("def test_multiply():\n    assert True\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "run.log"), []byte("ignored, new\n"), 0o644)
		return failing(dir)
	})
	before, _ := os.ReadFile(filepath.Join(g.s.Worktree, "test_calc.py"))
	next, err := g.run(t, NodeRed)
	if err != nil || next != NodeScaffold {
		t.Fatalf("red: next %q, %v; want the scaffold again", next, err)
	}
	want := "the test run changed the worktree: test_calc.py modified, conftest.py added, run.log added; a run that changes the change never counts"
	if g.s.Red.Outcome != testrun.Broken || !strings.HasPrefix(g.s.Red.Summary, want) || g.s.TestHashes != nil {
		t.Errorf("red = %s %q, hashes %v", g.s.Red.Outcome, g.s.Red.Summary, g.s.TestHashes)
	}
	if after, _ := os.ReadFile(filepath.Join(g.s.Worktree, "test_calc.py")); string(after) != string(before) {
		t.Errorf("test_calc.py was not put back: %q", after)
	}
	for _, p := range []string{"conftest.py", "run.log"} {
		if _, err := os.Lstat(filepath.Join(g.s.Worktree, p)); err == nil {
			t.Errorf("%s the run wrote is still there", p)
		}
	}
	recs := g.records(t, "test_run_changed_worktree")
	if len(recs) != 1 || recs[0]["phase"] != "red" || !slices.Equal(toStrings(recs[0]["added"]), []string{"conftest.py", "run.log"}) ||
		!slices.Equal(toStrings(recs[0]["modified"]), []string{"test_calc.py"}) {
		t.Errorf("audit records %v", recs)
	}
	if !strings.Contains(g.events.text(), "put back as it was") || !strings.Contains(g.s.TestOutput, want) {
		t.Errorf("not shown or not told to the model:\n%s\n%s", g.events.text(), g.s.TestOutput)
	}
}

func toStrings(v any) []string {
	var out []string
	if l, ok := v.([]any); ok {
		for _, x := range l {
			out = append(out, x.(string))
		}
	}
	return out
}

// A run that plants configuration in the shared git directory stops the
// run there: no clean-up (which runs git), the problem kept, audited.
func TestARunThatChangesTheGitDirectoryStopsTheRun(t *testing.T) {
	t.Parallel()
	var repo string
	g := newGuarded(t, func(dir string) testrun.Result {
		f, _ := os.OpenFile(filepath.Join(repo, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
		f.WriteString("[core]\n\tfsmonitor = /tmp/evil\n")
		f.Close()
		return failing(dir)
	})
	repo = g.repo
	next, err := g.run(t, NodeRed)
	if err != nil || next != flow.End {
		t.Fatalf("red: next %q, %v; want the end", next, err)
	}
	if g.s.Result != ResultIntegrity || !strings.Contains(g.s.IntegrityProblem, "the test run changed .git/config of your repository: azero stopped before running any git command") {
		t.Fatalf("state %s: %q", g.s.Result, g.s.IntegrityProblem)
	}
	var ie *IntegrityError
	if err := finish(&g.s); !errors.As(err, &ie) || ie.Problem != g.s.IntegrityProblem {
		t.Errorf("finish = %v", err)
	}
	if recs := g.records(t, "git_dir_changed"); len(recs) != 1 || !slices.Contains(toStrings(recs[0]["paths"]), ".git/config") {
		t.Errorf("audit records %v", recs)
	}
	// The graph declares it.
	if !slices.Contains(Graph(Deps{}).Next(NodeRed), flow.End) {
		t.Error("red cannot end the run")
	}
}

// The test files of a valid red are checked at the green run: changed
// since (by anything: the code step writes only code files), the run
// stops naming them.
func TestTestFilesAreCheckedByHash(t *testing.T) {
	t.Parallel()
	g := newGuarded(t, failing)
	if next, err := g.run(t, NodeRed); err != nil || next != NodeImplement {
		t.Fatalf("red: %q, %v", next, err)
	}
	if len(g.s.TestHashes) != 1 || g.s.TestHashes["test_calc.py"] == "" {
		t.Fatalf("hashes %v", g.s.TestHashes)
	}
	testenv.WriteFiles(t, g.s.Worktree, map[string]string{"test_calc.py": "def test_multiply():\n    assert True\n"})
	g.s.Implementations = 1
	_, err := g.run(t, NodeGreen)
	var fe *integrity.FilesChangedError
	if !errors.As(err, &fe) || !slices.Equal(fe.Paths, []string{"test_calc.py"}) || !strings.Contains(err.Error(), "the test files changed since the red run") {
		t.Fatalf("green = %v", err)
	}
	if recs := g.records(t, "test_files_changed"); len(recs) != 1 {
		t.Errorf("audit records %v", recs)
	}
}

// What a run printed is scrubbed of the secrets azero knows before the
// lineage, the events, the state or the model see it.
func TestTestOutputIsScrubbed(t *testing.T) {
	t.Parallel()
	const secret = "correct-horse-battery-staple"
	g := newGuarded(t, func(dir string) testrun.Result {
		r := failing(dir)
		r.Output = "found in /proc/1/environ: PAYMENTS_TOKEN=" + secret + "\n"
		r.Failures = []testrun.Failure{{Test: "test_calc.py::test_multiply", Message: "AssertionError: " + secret}}
		r.Errors = []string{"E   " + secret}
		return r
	})
	if _, err := g.run(t, NodeRed); err != nil {
		t.Fatal(err)
	}
	var kept strings.Builder
	for _, c := range g.lineage.files {
		kept.WriteString(c)
	}
	kept.WriteString(g.s.TestOutput + g.events.text() + g.s.Red.Failures[0].Message + strings.Join(g.s.Red.Errors, ""))
	if strings.Contains(kept.String(), secret) || !strings.Contains(kept.String(), audit.Redacted) {
		t.Errorf("the secret is kept:\n%s", kept.String())
	}
}

// The reviews and the commit refuse a branch that moved by anything but
// azero, and a worktree that is not what the green run tested; the
// commit node run again finds only its own commit.
func TestReviewsAndCommitCheckTheBranchAndTheTestedChange(t *testing.T) {
	t.Parallel()
	g := newGuarded(t, func(dir string) testrun.Result {
		return testrun.Result{Runner: "pytest", Outcome: testrun.Pass, Passed: 1, Summary: "1 passed"}
	})
	wt := g.s.Worktree
	testenv.WriteFiles(t, wt, map[string]string{"calc.py": "def add(a, b):\n    return a + b\n\n\ndef multiply(a, b):\n    return a * b\n"})
	if err := recordTests(&g.s); err != nil {
		t.Fatal(err)
	}
	g.s.Implementations = 1
	if next, err := g.run(t, NodeGreen); err != nil || next != NodeLint || g.s.TestedTree == "" {
		t.Fatalf("green: %q, %v, tested %q", next, err, g.s.TestedTree)
	}
	graph := Graph(g.d)
	ctx := flow.WithRun(t.Context(), "run-1", NodeDiffGate)
	if _, err := graph.Ask(ctx, NodeDiffGate, &g.s); err != nil {
		t.Fatalf("diff review of the tested change: %v", err)
	}

	// Written after the green run.
	testenv.WriteFiles(t, wt, map[string]string{"calc.py": "import os\n"})
	_, err := graph.Ask(ctx, NodeReview, &g.s)
	var tc *TestedChangedError
	if !errors.As(err, &tc) || !slices.Equal(tc.Paths, []string{"calc.py"}) {
		t.Fatalf("human review of a changed worktree = %v", err)
	}
	testenv.WriteFiles(t, wt, map[string]string{"calc.py": "def add(a, b):\n    return a + b\n\n\ndef multiply(a, b):\n    return a * b\n"})

	// A commit behind azero's back, carrying the run's trailer.
	testenv.Git(t, wt, "commit", "-q", "--allow-empty", "-m", "forged\n\n"+trailer("run-1"))
	hidden := strings.TrimSpace(testenv.Git(t, wt, "rev-parse", "HEAD"))
	for _, gate := range []string{NodeDiffGate, NodeReview} {
		var me *integrity.MovedError
		if _, err := graph.Ask(ctx, gate, &g.s); !errors.As(err, &me) {
			t.Errorf("%s with a hidden commit = %v", gate, err)
		}
	}
	var me *integrity.MovedError
	if _, err := g.run(t, NodeCommit); !errors.As(err, &me) || me.Head != hidden {
		t.Fatalf("commit with a hidden commit = %v", err)
	}
	if recs := g.records(t, "branch_moved"); len(recs) < 3 {
		t.Errorf("audit records %v", recs)
	}

	// Put back: the commit node commits exactly the tested change, and
	// finds that commit again when it runs again.
	testenv.Git(t, wt, "reset", "-q", "--soft", g.s.BaseCommit)
	if next, err := g.run(t, NodeCommit); err != nil || next != NodeMerge {
		t.Fatalf("commit: %q, %v", next, err)
	}
	commit := g.s.Commit
	if tree := strings.TrimSpace(testenv.Git(t, wt, "rev-parse", commit+"^{tree}")); tree != g.s.TestedTree {
		t.Errorf("committed tree %s, tested %s", tree, g.s.TestedTree)
	}
	g.s.Commit = ""
	if next, err := g.run(t, NodeCommit); err != nil || next != NodeMerge || g.s.Commit != commit {
		t.Fatalf("commit again: %q, %v, %s", next, err, g.s.Commit)
	}

	// The merge merges that commit, not what the branch names now.
	testenv.Git(t, wt, "commit", "-q", "--allow-empty", "-m", "after azero's commit")
	if _, err := g.run(t, NodeMerge); !errors.As(err, &me) {
		t.Fatalf("merge with the branch moved on = %v", err)
	}
	testenv.Git(t, wt, "reset", "-q", "--hard", commit)
	if next, err := g.run(t, NodeMerge); err != nil || next != NodeCleanup {
		t.Fatalf("merge: %q, %v", next, err)
	}
	if head := strings.TrimSpace(testenv.Git(t, g.repo, "rev-parse", "HEAD")); head != commit {
		t.Errorf("main is at %s, want azero's commit %s", head, commit)
	}
}
