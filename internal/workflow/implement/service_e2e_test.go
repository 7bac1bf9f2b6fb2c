package implement_test

// End-to-end tests of the implement workflow driven through the run
// service in this test's process, as every door drives it: a real git
// repository, the real test runner, the offline scripted coder, the
// store and the lineage in a temporary state directory, and no terminal
// (nobody can be asked; the run waits at the gate that needs someone).
// What the command adds (flags, exit codes, its --json document, a real
// terminal, processes killed) is tested in internal/cli.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/runs"
	"github.com/azero-dev/azero/internal/runs/runstest"
	"github.com/azero-dev/azero/internal/sandbox"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
)

func TestMain(m *testing.M) {
	// The sandbox's helper re-executes this binary.
	sandbox.Init()
	os.Exit(m.Run())
}

// service is one state directory of the run service, its environment
// that of an azero process under test: git isolated from the
// developer's configuration, none of their azero, model or editor
// settings, the scripted coder.
type service struct {
	t      *testing.T
	state  string
	env    *runs.Env
	events runstest.Events
}

func newService(t *testing.T, repo string, vars ...string) *service {
	t.Helper()
	state := t.TempDir()
	return &service{t: t, state: state, env: runstest.NewEnv(t, state, repo, vars...)}
}

// implement starts a run of design (a path in repo) as azero implement
// does, through the local engine, and drives it as far as it goes.
func (s *service) implement(repo, design string, req runs.ImplementRequest) (runs.Outcome, error) {
	s.t.Helper()
	cfg, err := s.env.Config(repo)
	if err != nil {
		s.t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(repo, design))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Repo, req.DesignPath, req.Design = repo, filepath.Join(repo, design), raw
	p, _, err := runs.PrepareImplement(s.t.Context(), s.env, cfg, req, runs.Terminal{Watch: s.events.Watch})
	if err != nil {
		return runs.Outcome{}, err
	}
	return runstest.Start(s.t, s.env, p)
}

// shown is what the run's events said, one text to a line.
func (s *service) shown() string { return s.events.String() }

// run returns the only run in the state directory and its history.
func (s *service) run() (store.Run, []store.Step) {
	s.t.Helper()
	st, err := store.Open(s.t.Context(), filepath.Join(s.state, store.FileName), store.Options{})
	if err != nil {
		s.t.Fatal(err)
	}
	defer st.Close()
	all, err := st.ListRuns(s.t.Context(), store.Filter{})
	if err != nil || len(all) != 1 {
		s.t.Fatalf("runs = %d, %v", len(all), err)
	}
	hist, err := st.History(s.t.Context(), all[0].ID)
	if err != nil {
		s.t.Fatal(err)
	}
	return all[0], hist
}

// coderScript writes a mock:scripted script with the coder's replies in
// turn order, and returns the variables that make it the coder.
func coderScript(t *testing.T, replies ...string) []string {
	return []string{"AZERO_MOCK_LLM=1", "AZERO_MOCK_SCRIPT=" + testenv.WriteScript(t, testenv.ModelScript("coder", replies...))}
}

// testsFailed reports whether err says tests that had to pass did not
// (the command's exit 5).
func testsFailed(err error) bool {
	var tf interface{ TestsFailed() bool }
	return errors.As(err, &tf) && tf.TestsFailed()
}

// failed reports whether err is a plain failure (the command's exit 1):
// not a run waiting, rejected, interrupted or failing its tests.
func failed(err error) bool {
	return err != nil && !waits(err) && !testsFailed(err) && !errors.Is(err, human.ErrAborted) &&
		!errors.Is(err, flow.ErrInterrupted) && !errors.Is(err, context.Canceled)
}

// waits reports whether err says the run waits for a human (exit 3).
func waits(err error) bool { return errors.Is(err, flow.ErrWaiting) || human.Needed(err) }

const calcDesign = "# 7 - Feature: multiply\n\n## 2.1 Files Changed\n\n| File | Change Type | Description |\n|---|---|---|\n" +
	"| `test_calc.py` | Add | tests for multiply |\n| `calc.py` | Modify | add multiply |\n"

const calcPy = "\"\"\"A small calculator.\"\"\"\n\n\ndef add(a, b):\n    return a + b\n"

// Replies of the scripted coder.
const (
	goodTests = "```python\nimport calc\n\n\ndef test_add():\n    assert calc.add(2, 3) == 5\n\n\ndef test_multiply():\n    assert calc.multiply(3, 4) == 12\n```\n"
	passTests = "```python\nimport calc\n\n\ndef test_add():\n    assert calc.add(2, 3) == 5\n```\n"
	syntaxBad = "```python\ndef test_multiply(:\n    pass\n```\n"
	goodCalc  = "```python\n\"\"\"A small calculator.\"\"\"\n\n\ndef add(a, b):\n    return a + b\n\n\ndef multiply(a, b):\n    return a * b\n```\n"
	badCalc   = "```python\n\"\"\"A small calculator.\"\"\"\n\n\ndef add(a, b):\n    return a + b\n\n\ndef multiply(a, b):\n    return a + b\n```\n"
)

// calcRepo is the user's checkout: the calculator committed, plus an
// uncommitted change and an untracked file that must survive everything.
func calcRepo(t *testing.T) string {
	t.Helper()
	dir := testenv.NewRepo(t, map[string]string{"calc.py": calcPy, "README.md": "# calc\n", "docs/design.md": calcDesign})
	testenv.WriteFiles(t, dir, map[string]string{"README.md": "# calc\n\nwork in progress\n", "notes.txt": "my notes\n"})
	return dir
}

// The run routes on the real runner's outcome: an invalid red goes back
// to the scaffold, a failing green back to the implementation, and the
// runner's own error is what the run shows; three failed implementations
// end the run (tests failed), cleaning up its branch and worktree and
// keeping the last attempt. The person's checkout is never touched.
func TestImplementRoutesOnTheRunner(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "pytest")
	brokenCalc := "```python\nimport decimal_not_installed_azero\n\n\ndef add(a, b):\n    return a + b\n```\n"
	tests := []struct {
		name    string
		replies []string
		waits   bool // the run stops for a human (else it fails: tests failed)
		path    string
		shows   string // a line of the runner's own error output the run shows
	}{
		{"TS-02 premature pass is rejected and re-scaffolded", []string{passTests, goodTests, goodCalc}, true,
			"worktree:ok baseline:ok scaffold:ok red:ok scaffold:ok red:ok implement:ok green:ok lint:ok diff_review:ok human_review:waiting", ""},
		{"syntax error in tests is re-scaffolded", []string{syntaxBad, goodTests, goodCalc}, true,
			"worktree:ok baseline:ok scaffold:ok red:ok scaffold:ok red:ok implement:ok green:ok lint:ok diff_review:ok human_review:waiting", "\n      ERROR test_calc.py"},
		{"a broken green shows the runner's error and is implemented again", []string{goodTests, brokenCalc, goodCalc}, true,
			"worktree:ok baseline:ok scaffold:ok red:ok implement:ok green:ok implement:ok green:ok lint:ok diff_review:ok human_review:waiting",
			"\n      E   ModuleNotFoundError: No module named 'decimal_not_installed_azero'"},
		{"TS-04 three failed implementations stop: tests failed", []string{goodTests, badCalc, badCalc, badCalc}, false,
			"worktree:ok baseline:ok scaffold:ok red:ok implement:ok green:ok implement:ok green:ok implement:ok green:ok cleanup:ok END:failed", ""},
		{"a failure then the fix goes green", []string{goodTests, badCalc, goodCalc}, true,
			"worktree:ok baseline:ok scaffold:ok red:ok implement:ok green:ok implement:ok green:ok lint:ok diff_review:ok human_review:waiting", ""},
		{"three scaffolds without a red escalate to the human", []string{passTests, passTests, passTests}, true,
			"worktree:ok baseline:ok scaffold:ok red:ok scaffold:ok red:ok scaffold:ok red:ok escalate:waiting", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			repo := calcRepo(t)
			s := newService(t, repo, coderScript(t, tt.replies...)...)
			before, beforeRefs := testenv.Checkout(t, repo), testenv.Refs(t, repo)
			out, err := s.implement(repo, "docs/design.md", runs.ImplementRequest{})
			if tt.waits && !waits(err) || !tt.waits && !testsFailed(err) {
				t.Fatalf("err = %v; want the run to %s\n%s", err, map[bool]string{true: "wait for a human", false: "fail its tests"}[tt.waits], s.shown())
			}
			r, hist := s.run()
			if got := testenv.NodePath(hist); got != tt.path {
				t.Errorf("path:\n got %s\nwant %s", got, tt.path)
			}
			if !strings.Contains(s.shown(), tt.shows) {
				t.Errorf("the run does not show the runner's error %q:\n%s", tt.shows, s.shown())
			}
			if after := testenv.Checkout(t, repo); after != before {
				t.Errorf("the user's checkout changed:\n%s\n---\n%s", before, after)
			}
			if out.RunID != r.ID {
				t.Fatalf("outcome of run %q, the store holds %q", out.RunID, r.ID)
			}
			if tt.waits && (out.Status != store.StatusWaiting || out.Resume != "azero resume "+r.ID) {
				t.Errorf("waiting run reported as %+v", out)
			}
			if !tt.waits {
				if got := testenv.Refs(t, repo); got != beforeRefs {
					t.Errorf("branches or worktrees left behind:\n%s", got)
				}
				if r.Status != store.StatusFailed || !strings.Contains(err.Error()+s.shown(), "tests still fail after 3") {
					t.Errorf("status %s, err %v, events:\n%s", r.Status, err, s.shown())
				}
				if _, err := os.Stat(filepath.Join(s.state, "worktrees", r.ID)); !os.IsNotExist(err) {
					t.Error("worktree left behind")
				}
				patches, _ := filepath.Glob(filepath.Join(s.state, "runs", r.ID, "*-attempt.patch"))
				if len(patches) != 1 {
					t.Errorf("the last attempt was not saved: %v", patches)
				}
			}
		})
	}
}

func TestImplementLargeFileWithEditBlocks(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "pytest")
	var big strings.Builder
	big.WriteString("\"\"\"Many helpers.\"\"\"\n")
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&big, "\n\ndef f%d():\n    return %d\n", i, i)
	}
	original := big.String()
	design := "# 9 - Feature: multiply in a big module\n\n## Files Changed\n\n| File | Change Type | Description |\n|---|---|---|\n" +
		"| `test_big.py` | Add | tests |\n| `big.py` | Modify | add multiply after f300 |\n"
	repo := testenv.NewRepo(t, map[string]string{"big.py": original, "docs/design.md": design})
	tests := "```python\nimport big\n\n\ndef test_multiply():\n    assert big.multiply(3, 4) == 12\n```\n"
	blocks := "### CHANGE 1: add multiply\nFIND:\n```python\ndef f300():\n    return 300\n```\n\nREPLACE WITH:\n```python\ndef f300():\n    return 300\n\n\ndef multiply(a, b):\n    return a * b\n```\n"
	s := newService(t, repo, coderScript(t, tests, blocks)...)
	if _, err := s.implement(repo, "docs/design.md", runs.ImplementRequest{}); !waits(err) {
		t.Fatalf("err = %v, want the run waiting\n%s", err, s.shown())
	}
	state := s.state
	r, hist := s.run()
	if got := testenv.NodePath(hist); !strings.Contains(got, "implement:ok green:ok lint:ok") {
		t.Fatalf("path %s", got)
	}
	got, err := os.ReadFile(filepath.Join(state, "worktrees", r.ID, "big.py"))
	if err != nil {
		t.Fatal(err)
	}
	if want := original + "\n\ndef multiply(a, b):\n    return a * b\n"; string(got) != want {
		t.Errorf("big.py was not edited exactly: %d bytes, want %d", len(got), len(want))
	}
	prompts, _ := filepath.Glob(filepath.Join(state, "runs", r.ID, "*-prompt-implement.md"))
	if len(prompts) != 1 {
		t.Fatalf("implement prompts: %v", prompts)
	}
	if p, _ := os.ReadFile(prompts[0]); !strings.Contains(string(p), "FIND") || strings.Count(string(p), "def f150():") != 1 {
		t.Errorf("the implement prompt does not ask for FIND/REPLACE blocks on the whole file")
	}
}

func TestImplementGoStubsBeforeRed(t *testing.T) {
	t.Parallel()
	design := "# 11 - Feature: slugs\n\n## Files Changed\n\n| File | Change Type | Description |\n|---|---|---|\n" +
		"| `text/slug_test.go` | Add | tests |\n| `text/slug.go` | Add | Slugify |\n"
	repo := testenv.NewRepo(t, map[string]string{"go.mod": "module example.com/t\n\ngo 1.22\n", "text/text.go": "// Package text is text.\npackage text\n",
		"docs/design.md": design})
	tests := "```go\npackage text\n\nimport \"testing\"\n\nfunc TestSlugify(t *testing.T) {\n\tif got := Slugify(\"A B\"); got != \"a-b\" {\n\t\tt.Errorf(\"got %q\", got)\n\t}\n}\n```\n"
	stub := "```go\npackage text\n\n// Slugify is not implemented yet.\nfunc Slugify(s string) string { return \"\" }\n```\n"
	impl := "```go\npackage text\n\nimport \"strings\"\n\n// Slugify makes a slug.\nfunc Slugify(s string) string { return strings.ReplaceAll(strings.ToLower(s), \" \", \"-\") }\n```\n"
	s := newService(t, repo, coderScript(t, tests, stub, impl)...)
	if _, err := s.implement(repo, "docs/design.md", runs.ImplementRequest{}); !waits(err) {
		t.Fatalf("err = %v, want the run waiting\n%s", err, s.shown())
	}
	state := s.state
	r, hist := s.run()
	want := "worktree:ok baseline:ok scaffold:ok red:ok scaffold:ok red:ok implement:ok green:ok lint:ok diff_review:ok human_review:waiting"
	if got := testenv.NodePath(hist); got != want {
		t.Errorf("path:\n got %s\nwant %s", got, want)
	}
	var st struct {
		Red struct{ Outcome string } `json:"red"`
	}
	json.Unmarshal(r.State, &st)
	if st.Red.Outcome != "fail" {
		t.Errorf("the last red gate saw %q, want a real failure", st.Red.Outcome)
	}
	prompts, _ := filepath.Glob(filepath.Join(state, "runs", r.ID, "*-prompt-stub.md"))
	if len(prompts) != 1 {
		t.Fatalf("stub prompts: %v", prompts)
	}
	if p, _ := os.ReadFile(prompts[0]); !strings.Contains(string(p), "undefined: Slugify") {
		t.Error("the stub prompt does not show the build error")
	}
}

// TestImplementStopsWhenTheTestsCannotStart: an existing test that does
// not import stops the run at its baseline with pytest's own error, before
// any model call, leaving nothing behind.
func TestImplementStopsWhenTheTestsCannotStart(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "pytest")
	repo := testenv.NewRepo(t, map[string]string{"calc.py": calcPy, "docs/design.md": calcDesign,
		"test_old.py": "import requests_not_installed_azero\n\n\ndef test_old():\n    assert True\n"})
	before := testenv.Refs(t, repo)
	s := newService(t, repo, coderScript(t, goodTests, goodCalc)...)
	_, err := s.implement(repo, "docs/design.md", runs.ImplementRequest{})
	if !failed(err) {
		t.Fatalf("err = %v, want the run failed (an error, not tests failing)\n%s", err, s.shown())
	}
	for _, want := range []string{"ModuleNotFoundError: No module named 'requests_not_installed_azero'", "no model was asked"} {
		if !strings.Contains(err.Error()+s.shown(), want) {
			t.Errorf("neither the error nor the events say %q:\n%v\n%s", want, err, s.shown())
		}
	}
	state := s.state
	r, hist := s.run()
	if got := testenv.NodePath(hist); !strings.HasPrefix(got, "worktree:ok baseline:ok cleanup:ok") || strings.Contains(got, "scaffold") {
		t.Errorf("path %s", got)
	}
	if prompts, _ := filepath.Glob(filepath.Join(state, "runs", r.ID, "*-prompt-*")); len(prompts) != 0 {
		t.Errorf("the model was asked: %v", prompts)
	}
	if got := testenv.Refs(t, repo); got != before {
		t.Errorf("branches or worktrees left behind:\n%s", got)
	}
}
