package implement

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/azero-dev/azero/internal/config"
	"github.com/azero-dev/azero/internal/contextload"
	"github.com/azero-dev/azero/internal/edit"
	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/lld"
	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/slug"
	"github.com/azero-dev/azero/internal/testrun"
)

// Inputs are what a human asks `azero implement` for: the flags as given
// (empty or zero when not given) and the configuration, which Prepare
// resolves (flags over config over built-ins).
type Inputs struct {
	// Design is the design document's path and content (read by the
	// caller, bounded).
	DesignPath string
	Design     []byte
	Issue      string   // "" takes the number the design names
	Dir        string   // a directory inside the repository
	Context    []string // files or directories sent as read-only context
	Runner     string   // "" takes the config's, else detects from the test files, then the project
	TestCmd    string   // "" takes the config's, else the runner's own command
	Report     string   // FORMAT:PATH of a report TestCmd writes (junit:build/report.xml); "" takes the config's
	// Coder is the model the run will use, as provider:model: the
	// scripted model when the run is mocked.
	Coder  string
	Prices llm.PriceTable // to check that a budget can be kept
	// Settings are the flags' (a Budget of 0 takes the config's).
	Settings Settings
	Config   config.Implement // the [implement] section of the configuration
	StateDir string           // where the worktree goes: StateDir/worktrees/RunID
	RunID    string
}

// resolved fills what the flags left out from the configuration.
func (in Inputs) resolved() Inputs {
	in.Runner = cmp.Or(in.Runner, in.Config.Runner)
	in.TestCmd = cmp.Or(in.TestCmd, in.Config.TestCmd)
	in.Report = cmp.Or(in.Report, in.Config.Report)
	if in.Settings.Budget == 0 && in.Config.Budget != nil {
		in.Settings.Budget = *in.Config.Budget
	}
	return in
}

// Plan is what Prepare found, for the human to read before any model
// call: what will be sent to the model.
type Plan struct {
	DesignTokens  int
	Context       []contextload.File
	ContextTokens int
	Modified      []string // the files of the change that exist and are shown to the model
	// Large are the Modified files over the large-file threshold: sent
	// whole when the model is asked to change them (it must copy their
	// lines into edit blocks), as an outline of their declarations in the
	// prompts for the other files.
	Large []string
}

// Prepare checks the inputs and builds a run's initial state, without
// calling any model or changing anything (N0 of spec #87): the design's
// Files Changed table (Modify/Delete targets exist, Add targets do not,
// no invented src/, lib/ or app/), at least one test and one code file, the runner,
// every context path (inside the repository, not a secret, within the
// size and token limits), a budget the model's price lets azero keep, and
// a branch name that is free.
func Prepare(ctx context.Context, in Inputs) (*State, Plan, error) {
	var plan Plan
	in = in.resolved()
	top, err := gitx.TopLevel(ctx, in.Dir)
	if err != nil {
		return nil, plan, err
	}
	repo := gitx.Repo{Dir: top}
	if ok, err := repo.HasCommits(ctx); err != nil || !ok {
		return nil, plan, fmt.Errorf("%s has no commits yet: commit something first, azero works on a branch of HEAD", top)
	}
	name := in.DesignPath
	if len(in.Design) > contextload.MaxFileBytes {
		return nil, plan, fmt.Errorf("the design document %s is %d bytes, over the %d-byte limit", name, len(in.Design), contextload.MaxFileBytes)
	}
	doc, err := lld.Parse(string(in.Design))
	if err != nil {
		return nil, plan, fmt.Errorf("%s: %w", name, err)
	}
	checked, err := lld.Check(doc, top)
	if err != nil {
		return nil, plan, fmt.Errorf("%s: %w", name, err)
	}
	files := make([]FileSpec, 0, len(checked))
	var tests []string
	code := 0
	for _, fc := range checked {
		files = append(files, FileSpec{Path: fc.Path, Change: fc.ChangeName, Test: fc.IsTest()})
		if fc.IsTest() {
			tests = append(tests, fc.Path)
		} else {
			code++
		}
		if fc.ChangeName == "Modify" {
			plan.Modified = append(plan.Modified, fc.Path)
			if data, err := os.ReadFile(filepath.Join(top, filepath.FromSlash(fc.Path))); err == nil && edit.IsLarge(data) {
				plan.Large = append(plan.Large, fc.Path)
			}
		}
	}
	if len(tests) == 0 || code == 0 {
		return nil, plan, fmt.Errorf("%s: the Files Changed table must list at least one test file (such as test_*.py, *_test.go, *.test.ts or tests/*.rs) and one code file: azero implements test first", name)
	}
	runner := in.Runner
	if runner == "" {
		if runner, err = testrun.DetectProject(top, tests); err != nil {
			if in.Report == "" {
				return nil, plan, err
			}
			// A command with its JUnit report needs no runner of azero's
			// (a Maven or Gradle project, say): the report decides.
			runner = testrun.KindJUnit
		}
	}
	if in.Report != "" && in.TestCmd == "" {
		return nil, plan, &InputError{Err: fmt.Errorf("--report %s needs --test-cmd: the command that writes the report", in.Report)}
	}
	if _, err := testrun.New(runner, testrun.Options{TestCmd: in.TestCmd, Report: in.Report}); err != nil {
		return nil, plan, &InputError{Err: err}
	}
	if err := checkBudget(in); err != nil {
		return nil, plan, err
	}
	est := llm.NewEstimator()
	plan.DesignTokens = est.CountTokens(string(in.Design))
	plan.Context, err = contextload.Load(ctx, top, in.Context, contextload.Options{CountTokens: est.CountTokens, Reserved: plan.DesignTokens})
	if err != nil {
		return nil, plan, err
	}

	base, err := repo.CurrentBranch(ctx)
	if err != nil {
		return nil, plan, err
	}
	if base == "" {
		return nil, plan, errors.New("your checkout is on a detached HEAD: check out the branch the change should be merged into")
	}
	head, err := repo.Head(ctx)
	if err != nil {
		return nil, plan, err
	}
	issue := in.Issue
	if issue == "" {
		issue = doc.Issue
	}
	branch := BranchName(issue, doc.Title)
	if exists, err := repo.BranchExists(ctx, branch); err != nil {
		return nil, plan, err
	} else if exists {
		branch += "-" + in.RunID[len(in.RunID)-min(6, len(in.RunID)):]
	}
	designPath, err := filepath.Abs(in.DesignPath)
	if err != nil {
		return nil, plan, err
	}
	s := &State{
		Issue: issue, Title: TitleOf(doc.Title),
		LLDPath: designPath, LLD: string(in.Design), Repo: top, BaseBranch: base, BaseCommit: head,
		Branch: branch, Worktree: filepath.Join(in.StateDir, "worktrees", in.RunID),
		Runner: runner, TestCmd: in.TestCmd, Report: in.Report, Files: files, Coder: in.Coder, Settings: in.Settings,
	}
	for _, c := range plan.Context {
		s.Context = append(s.Context, ContextFile{Path: c.Rel, Content: c.Content})
		plan.ContextTokens += c.Tokens
	}
	return s, plan, nil
}

// InputError marks inputs that are wrong as given (a usage error, exit 2).
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *InputError) Unwrap() error { return e.Err }

// checkBudget refuses a budget azero cannot keep: one for a model whose
// price it does not know (its calls would count as free).
func checkBudget(in Inputs) error {
	if in.Settings.Budget < 0 {
		return &InputError{Err: fmt.Errorf("--budget must not be negative (got %g)", in.Settings.Budget)}
	}
	if in.Settings.Budget == 0 {
		return nil
	}
	spec, err := llm.ParseSpec(in.Coder)
	if err != nil {
		return &InputError{Err: err}
	}
	if spec.Provider == llm.ProviderMock {
		return nil // the scripted model is free
	}
	if _, ok := in.Prices.Price(spec); !ok {
		return &InputError{Err: fmt.Errorf("a budget of %g USD needs the price of %s, which azero does not know, so its calls would count as free: "+
			"set it in your config as [prices.%q] with input = and output = in USD per million tokens (0 for a free local model), or run without a budget",
			in.Settings.Budget, spec, spec.String())}
	}
	return nil
}

// TitleOf is a design's title without its issue number and kind
// ("87 - Feature: Add X" is "Add X").
func TitleOf(title string) string { return slug.Title(title) }

// BranchName is the run's branch: azero/<issue>-<slug of the title>.
func BranchName(issue, title string) string {
	s := slug.Make(TitleOf(title), 40)
	if s == "" {
		s = "change"
	}
	if issue != "" {
		return "azero/" + issue + "-" + s
	}
	return "azero/" + s
}

// SetBudget gives a run a new budget in USD (0 removes it), refused like
// a budget at the start when azero does not know the model's price.
func (s *State) SetBudget(usd float64, prices llm.PriceTable) error {
	settings := s.Settings
	settings.Budget = usd
	if err := checkBudget(Inputs{Coder: s.Coder, Prices: prices, Settings: settings}); err != nil {
		return err
	}
	s.Settings = settings
	return nil
}
