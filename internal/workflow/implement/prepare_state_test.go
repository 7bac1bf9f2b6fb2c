package implement

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/config"
	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/testenv"
	"github.com/azero-dev/azero/internal/testrun"
)

const calcDesign = "# 7 - Feature: multiply numbers\n\n## Files Changed\n\n| File | Change Type | Description |\n|---|---|---|\n" +
	"| `calc.py` | Modify | add mul |\n| `test_calc.py` | Add | tests |\n"

func budget(usd float64) *float64 { return &usd }

// TestPrepareBuildsTheState builds a run's initial state from the inputs
// of `azero implement` as the command gives them (flags as typed, the
// config as read), without a process, a model or any change to the
// repository.
func TestPrepareBuildsTheState(t *testing.T) {
	t.Parallel()
	repo := testenv.NewRepo(t, map[string]string{"calc.py": "def add(a, b):\n    return a + b\n", "pkg/.keep": "", ".env": "KEY=x\n"})
	testenv.Git(t, repo, "branch", "azero/7-multiply-numbers-taken")
	tests := []struct {
		name  string
		in    Inputs
		check func(t *testing.T, s *State, p Plan)
		usage bool   // an InputError (exit 2)
		err   string // another error
	}{
		{name: "defaults", check: func(t *testing.T, s *State, p Plan) {
			if s.Runner != testrun.KindPytest || s.TestCmd != "" || s.Settings != (Settings{}) {
				t.Errorf("runner %q, test command %q, settings %+v", s.Runner, s.TestCmd, s.Settings)
			}
			if s.Issue != "7" || s.Title != "multiply numbers" || s.Branch != "azero/7-multiply-numbers" || s.BaseBranch != "main" {
				t.Errorf("issue %q title %q branch %q base %q", s.Issue, s.Title, s.Branch, s.BaseBranch)
			}
			if s.Repo != repo || s.BaseCommit != strings.TrimSpace(testenv.Git(t, repo, "rev-parse", "HEAD")) {
				t.Errorf("repo %q at %q", s.Repo, s.BaseCommit)
			}
			if len(s.Files) != 2 || s.Files[0] != (FileSpec{Path: "calc.py", Change: "Modify"}) || s.Files[1] != (FileSpec{Path: "test_calc.py", Change: "Add", Test: true}) {
				t.Errorf("files %+v", s.Files)
			}
			if len(p.Modified) != 1 || p.Modified[0] != "calc.py" || p.DesignTokens == 0 {
				t.Errorf("plan %+v", p)
			}
		}},
		{name: "typed settings from the flags", in: Inputs{Settings: Settings{Auto: true, Force: true, Budget: 0.75, MockScript: "replies.toml"}, Coder: llm.MockSpec},
			check: func(t *testing.T, s *State, p Plan) {
				if s.Settings != (Settings{Auto: true, Force: true, Budget: 0.75, MockScript: "replies.toml"}) || s.Coder != llm.MockSpec {
					t.Errorf("settings %+v coder %q", s.Settings, s.Coder)
				}
			}},
		{name: "the config fills what the flags leave out", in: Inputs{Config: config.Implement{Runner: "go", TestCmd: "make check", Report: "junit:out.xml", Budget: budget(2.5)}},
			check: func(t *testing.T, s *State, p Plan) {
				if s.Runner != testrun.KindGo || s.TestCmd != "make check" || s.Report != "junit:out.xml" || s.Settings.Budget != 2.5 {
					t.Errorf("runner %q test command %q report %q budget %v", s.Runner, s.TestCmd, s.Report, s.Settings.Budget)
				}
			}},
		{name: "flags win over the config", in: Inputs{Runner: "pytest", TestCmd: "pytest -x", Settings: Settings{Budget: 1},
			Config: config.Implement{Runner: "go", TestCmd: "make check", Budget: budget(2.5)}},
			check: func(t *testing.T, s *State, p Plan) {
				if s.Runner != testrun.KindPytest || s.TestCmd != "pytest -x" || s.Settings.Budget != 1 {
					t.Errorf("runner %q test command %q budget %v", s.Runner, s.TestCmd, s.Settings.Budget)
				}
			}},
		{name: "the issue given wins over the design's", in: Inputs{Issue: "12"}, check: func(t *testing.T, s *State, p Plan) {
			if s.Issue != "12" || s.Branch != "azero/12-multiply-numbers" {
				t.Errorf("issue %q branch %q", s.Issue, s.Branch)
			}
		}},
		{name: "a taken branch gets the run's suffix", in: Inputs{Issue: "7", Design: []byte(strings.Replace(calcDesign, "multiply numbers", "multiply numbers taken", 1))},
			check: func(t *testing.T, s *State, p Plan) {
				if s.Branch != "azero/7-multiply-numbers-taken-k3x9qa" {
					t.Errorf("branch %q", s.Branch)
				}
			}},
		{name: "context files", in: Inputs{Context: []string{"calc.py"}}, check: func(t *testing.T, s *State, p Plan) {
			if len(s.Context) != 1 || s.Context[0].Path != "calc.py" || !strings.Contains(s.Context[0].Content, "def add") || p.ContextTokens == 0 {
				t.Errorf("context %+v plan %+v", s.Context, p)
			}
		}},
		{name: "a secret as context", in: Inputs{Context: []string{".env"}}, err: ".env"},
		{name: "a negative budget", in: Inputs{Settings: Settings{Budget: -1}}, usage: true},
		{name: "a budget without a price", in: Inputs{Coder: "openai:my-local-model", Settings: Settings{Budget: 1}}, usage: true},
		{name: "a configured budget without a price", in: Inputs{Coder: "openai:my-local-model", Config: config.Implement{Budget: budget(1)}}, usage: true},
		{name: "a budget with a known price", in: Inputs{Coder: "openai:gpt-4.1", Settings: Settings{Budget: 1}}, check: func(t *testing.T, s *State, p Plan) {
			if s.Settings.Budget != 1 {
				t.Errorf("budget %v", s.Settings.Budget)
			}
		}},
		{name: "a report without its command", in: Inputs{Report: "junit:out.xml"}, usage: true},
		{name: "an unknown runner", in: Inputs{Runner: "maven"}, usage: true},
		{name: "no test file", in: Inputs{Design: []byte("# 8 - T\n## Files Changed\n| File | Change Type |\n|--|--|\n| `calc.py` | Modify |\n")}, err: "at least one test file"},
		{name: "a missing file to modify", in: Inputs{Design: []byte("# 8 - T\n## Files Changed\n| File | Change Type |\n|--|--|\n| `missing.py` | Modify |\n| `test_m.py` | Add |\n")}, err: "missing.py"},
		{name: "no design table", in: Inputs{Design: []byte("# 8 - T\n\nJust prose.\n")}, err: "Files Changed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := tt.in
			in.Dir = filepath.Join(repo, "pkg")
			in.DesignPath = filepath.Join(repo, "design.md")
			in.StateDir, in.RunID = t.TempDir(), "261122-k3x9qa"
			if in.Design == nil {
				in.Design = []byte(calcDesign)
			}
			if in.Coder == "" {
				in.Coder = "anthropic:claude-sonnet-4-5"
			}
			in.Prices = llm.DefaultPrices()
			s, p, err := Prepare(t.Context(), in)
			var ie *InputError
			switch {
			case tt.usage:
				if !errors.As(err, &ie) {
					t.Fatalf("err = %v, want an input error", err)
				}
			case tt.err != "":
				if err == nil || errors.As(err, &ie) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
			case err != nil:
				t.Fatal(err)
			default:
				if s.Worktree != filepath.Join(in.StateDir, "worktrees", in.RunID) || s.LLDPath != in.DesignPath || s.LLD != string(in.Design) {
					t.Errorf("worktree %q design %q", s.Worktree, s.LLDPath)
				}
				tt.check(t, s, p)
				// The state is stored as JSON: its settings come back as
				// the same typed values.
				b, err := json.Marshal(s)
				if err != nil {
					t.Fatal(err)
				}
				var back State
				if err := json.Unmarshal(b, &back); err != nil || back.Settings != s.Settings {
					t.Errorf("settings after the store: %+v, %v; want %+v", back.Settings, err, s.Settings)
				}
			}
		})
	}
	// Nothing was changed: no worktree, no branch, no file.
	if st := testenv.Git(t, repo, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Errorf("Prepare changed the checkout:\n%s", st)
	}
	if br := testenv.Git(t, repo, "branch", "--list", "azero/*"); strings.Count(br, "azero/") != 1 {
		t.Errorf("Prepare created branches:\n%s", br)
	}
}

func TestPrepareRefusesARepositoryItCannotBranchFrom(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	testenv.Git(t, empty, "init", "-q", "-b", "main")
	detached := testenv.NewRepo(t, map[string]string{"calc.py": "x = 1\n"})
	testenv.Git(t, detached, "checkout", "-q", "--detach")
	for dir, want := range map[string]string{empty: "no commits", detached: "detached HEAD", t.TempDir(): "git"} {
		_, _, err := Prepare(t.Context(), Inputs{DesignPath: "design.md", Design: []byte(calcDesign), Dir: dir, Coder: llm.MockSpec, StateDir: t.TempDir(), RunID: "r1"})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", dir, err, want)
		}
	}
}
