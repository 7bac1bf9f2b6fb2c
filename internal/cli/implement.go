package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/config"
	"github.com/azero-dev/azero/internal/contextload"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/lld"
	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/llm/provider"
	"github.com/azero-dev/azero/internal/review"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testrun"
	"github.com/azero-dev/azero/internal/workflow/implement"
	"github.com/azero-dev/azero/internal/workflow/roles"
)

// ImplementOptions are the inputs of `azero implement`.
type ImplementOptions struct {
	LLD     string
	Issue   string
	Repo    string
	Context []string
	Runner  string
	TestCmd string
	Coder   string
	Budget  float64
	Auto    bool
	Force   bool
	JSON    bool

	// mockScript, when set, makes the coder the offline scripted model
	// with this script (azero demo).
	mockScript string
}

func newImplementCommand(f *Factory) *cobra.Command {
	opts := &ImplementOptions{}
	cmd := &cobra.Command{
		Use:   "implement --lld FILE",
		Short: "Implement a design document test-first, in an isolated worktree, under human review",
		Long: trimLines(`
  Implement the design document FILE with the coder model, test first:

    worktree   a new branch azero/<issue>-<slug> in its own git worktree; your
               checkout, uncommitted changes included, is not touched
    scaffold   the model writes the test files the design lists
    red        the real test runner must fail on assertions (a pass, a syntax
               error or no tests sends the model back, at most 3 times)
    implement  the model writes the code: whole files for new and small files,
               FIND/REPLACE blocks for files over 500 lines or 15,000 bytes
    green      the tests must pass (at most 3 implementation attempts, each
               given the test output)
    lint       go vet, or py_compile plus ruff/pyflakes when installed
    review     the diff review gate (type 'approve'), then your decision:
               'approve' merges into your branch, 'abort' cleans up

  Before any model call azero checks the inputs: the design's Files Changed
  table (Modify/Delete targets exist, Add targets have an existing directory,
  no invented src/, lib/ or app/ prefix) and every --context path (inside the
  repository, no secret files such as .env or *.pem, at most 100 KB each, at
  most 200,000 tokens in all). It then prints what will be sent to which model.

  Without a terminal the run stops at the first gate that needs you (exit 3);
  continue it with 'azero resume RUN'. Every prompt, response and test output
  is kept in the run's lineage ($AZERO_STATE_DIR/runs/RUN/).`),
		Example: "  azero implement --lld docs/lld/42-slugify.md --context pkg/util.go\n" +
			"  azero implement --lld design.md --runner pytest --coder openai:qwen2.5-coder --budget 1.50",
		Args:        noArgs,
		Annotations: exitCodesAnnotation(ExitOK, ExitError, ExitUsage, ExitNeedsHuman, ExitRejected, ExitTestsFailed, ExitInterrupted),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.LLD == "" {
				return usagef("--lld FILE is required: the design document to implement")
			}
			return implementRun(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.LLD, "lld", "", "the design document (markdown with a Files Changed table)")
	fl.StringVar(&opts.Issue, "issue", "", "the issue number (default: the one the design names)")
	fl.StringVar(&opts.Repo, "repo", "", "the repository (default: the one containing the working directory)")
	fl.StringArrayVar(&opts.Context, "context", nil, "a file or directory sent to the model as context (repeatable)")
	fl.StringVar(&opts.Runner, "runner", "", "test runner: pytest or go (default: config, else detected)")
	fl.StringVar(&opts.TestCmd, "test-cmd", "", "command that runs the tests instead of the runner's default (its exit code is read with the runner's conventions)")
	fl.StringVar(&opts.Coder, "coder", "", "the coder model as provider:model (default: config, else "+defaultModels[llm.RoleCoder]+")")
	fl.Float64Var(&opts.Budget, "budget", 0, "stop the run before a model call would take its cost over this many USD")
	fl.BoolVar(&opts.Auto, "auto", false, "never ask about file writes: refuse to replace a file over 100 lines unless --force (the diff review and the final approval are still asked)")
	fl.BoolVar(&opts.Force, "force", false, "with --auto, allow replacing files over 100 lines")
	fl.BoolVar(&opts.JSON, "json", false, "print the outcome as JSON")
	return cmd
}

var (
	slugChars   = regexp.MustCompile(`[^a-z0-9]+`)
	issuePrefix = regexp.MustCompile(`^\s*#?\d+\s*[-:]\s*`)                          // "87 - "
	kindPrefix  = regexp.MustCompile(`(?i)^(feature|bug|fix|chore|refactor)\s*:\s*`) // "Feature: "
)

// titleOf is a design's title without its issue number and kind.
func titleOf(title string) string {
	return strings.TrimSpace(kindPrefix.ReplaceAllString(issuePrefix.ReplaceAllString(title, ""), ""))
}

// slugOf makes a short branch-safe name from a title.
func slugOf(title string) string {
	title = strings.ToLower(titleOf(title))
	s := strings.Trim(slugChars.ReplaceAllString(title, "-"), "-")
	if len(s) > 40 {
		s = strings.TrimRight(s[:40], "-")
	}
	if s == "" {
		s = "change"
	}
	return s
}

func implementRun(ctx context.Context, f *Factory, opts *ImplementOptions) error {
	start := f.WorkDir
	if opts.Repo != "" {
		start = f.abs(opts.Repo)
	}
	top, err := gitx.TopLevel(ctx, start)
	if err != nil {
		return err
	}
	repo := gitx.Repo{Dir: top}
	if ok, err := repo.HasCommits(ctx); err != nil || !ok {
		return fmt.Errorf("%s has no commits yet: commit something first, azero works on a branch of HEAD", top)
	}
	cfg, err := f.Config(top)
	if err != nil {
		return err
	}

	// N0: everything is checked before any model sees anything.
	lldPath := f.abs(opts.LLD)
	raw, err := os.ReadFile(lldPath)
	if err != nil {
		return fmt.Errorf("read the design document: %w", err)
	}
	if len(raw) > contextload.MaxFileBytes {
		return fmt.Errorf("the design document %s is %d bytes, over the %d-byte limit", opts.LLD, len(raw), contextload.MaxFileBytes)
	}
	doc, err := lld.Parse(string(raw))
	if err != nil {
		return fmt.Errorf("%s: %w", opts.LLD, err)
	}
	checked, err := lld.Check(doc, top)
	if err != nil {
		return fmt.Errorf("%s: %w", opts.LLD, err)
	}
	files := make([]implement.FileSpec, 0, len(checked))
	var tests []string
	code := 0
	for _, fc := range checked {
		files = append(files, implement.FileSpec{Path: fc.Path, Change: fc.ChangeName, Test: fc.IsTest()})
		if fc.IsTest() {
			tests = append(tests, fc.Path)
		} else {
			code++
		}
	}
	if len(tests) == 0 || code == 0 {
		return fmt.Errorf("%s: the Files Changed table must list at least one test file (test_*.py, *_test.py, *_test.go) and one code file: azero implements test first", opts.LLD)
	}
	runner := opts.Runner
	if runner == "" {
		runner = cfg.Implement.Runner
	}
	if runner == "" {
		runner = testrun.DetectFiles(tests)
	}
	if runner == "" {
		if runner, err = testrun.Detect(top); err != nil {
			return err
		}
	}
	testCmd := opts.TestCmd
	if testCmd == "" {
		testCmd = cfg.Implement.TestCmd
	}
	if _, err := testrun.New(runner, testrun.Options{TestCmd: testCmd}); err != nil {
		return usagef("%v", err)
	}
	est := llm.NewEstimator()
	lldTokens := est.CountTokens(string(raw))
	ctxFiles, err := contextload.Load(top, opts.Context, contextload.Options{CountTokens: est.CountTokens, Reserved: lldTokens})
	if err != nil {
		return err
	}
	coder := opts.Coder
	if opts.mockScript != "" {
		coder = "mock:scripted"
	}
	if coder == "" {
		coder = roleModel(cfg, llm.RoleCoder, "")
	}
	env := f.providerEnv(cfg)
	if opts.mockScript != "" {
		env.MockLLM, env.MockScript = true, opts.mockScript
	}
	env.Role = llm.RoleCoder
	status := provider.Describe(coder, env)
	if status.Err != nil {
		return status.Err
	}
	budget := opts.Budget
	if budget == 0 && cfg.Implement.Budget != nil {
		budget = *cfg.Implement.Budget
	}

	// Where the run will work.
	branchBase, err := repo.CurrentBranch(ctx)
	if err != nil {
		return err
	}
	if branchBase == "" {
		return errors.New("your checkout is on a detached HEAD: check out the branch the change should be merged into")
	}
	head, err := repo.Head(ctx)
	if err != nil {
		return err
	}
	stateDir, err := f.StateDir()
	if err != nil {
		return err
	}
	issue := opts.Issue
	if issue == "" {
		issue = doc.Issue
	}
	runID := store.NewID(f.Now())
	branch := "azero/" + slugOf(doc.Title)
	if issue != "" {
		branch = "azero/" + issue + "-" + slugOf(doc.Title)
	}
	if exists, err := repo.BranchExists(ctx, branch); err != nil {
		return err
	} else if exists {
		branch += "-" + runID[len(runID)-6:]
	}
	state := &implement.State{
		Issue: issue, Title: titleOf(doc.Title),
		LLDPath: lldPath, LLD: string(raw), Repo: top, BaseBranch: branchBase, BaseCommit: head,
		Branch: branch, Worktree: filepath.Join(stateDir, "worktrees", runID),
		Runner: runner, TestCmd: testCmd, Files: files, Coder: coder,
	}
	ctxTokens := 0
	for _, c := range ctxFiles {
		state.Context = append(state.Context, implement.ContextFile{Path: c.Rel, Content: c.Content})
		ctxTokens += c.Tokens
	}
	printDataPolicy(f, status, opts.LLD, lldTokens, ctxFiles, ctxTokens, roles.LineageDir(stateDir, runID))

	eng, err := f.engine(ctx)
	if err != nil {
		return err
	}
	meta := map[string]string{"repo": top, "lld": lldPath, "branch": branch, "coder": coder, "runner": runner,
		"auto": strconv.FormatBool(opts.Auto), "force": strconv.FormatBool(opts.Force)}
	if budget > 0 {
		meta["budget"] = strconv.FormatFloat(budget, 'f', -1, 64)
	}
	if opts.mockScript != "" {
		meta["mock_script"] = opts.mockScript
	}
	deps, err := implementDeps(ctx, f, cfg, runID, state, meta)
	if err != nil {
		return err
	}
	g := implement.Graph(deps)
	if _, err := flow.Create(ctx, eng, g, state, flow.CreateOptions{ID: runID, Key: branch, Meta: meta}); err != nil {
		return err
	}
	final, err := flow.Drive(ctx, eng, g, runID)
	return f.reportImplement(ctx, runID, final, err, opts.JSON)
}

// printDataPolicy says, before anything is sent, what goes to which model.
func printDataPolicy(f *Factory, st provider.Status, lldName string, lldTokens int, ctxFiles []contextload.File, ctxTokens int, lineage string) {
	cs := f.IO.ColorScheme()
	w := f.IO.ErrOut
	fmt.Fprintln(w, cs.Bold("Data policy"))
	if st.Mocked || st.Spec.Provider == llm.ProviderMock {
		fmt.Fprintf(w, "  coder: %s, the offline scripted model: nothing leaves this machine.\n", st.Spec)
	} else {
		fmt.Fprintf(w, "  coder: %s at %s. Sent to it:\n", st.Spec, st.Endpoint)
		fmt.Fprintf(w, "    - the design document %s (%d tokens)\n", lldName, lldTokens)
		if len(ctxFiles) > 0 {
			names := make([]string, len(ctxFiles))
			for i, c := range ctxFiles {
				names[i] = c.Rel
			}
			fmt.Fprintf(w, "    - context files: %s (%d tokens)\n", strings.Join(names, ", "), ctxTokens)
		}
		fmt.Fprintln(w, "    - the files of the change as it writes them, and the output of your test runs")
		fmt.Fprintln(w, "  Nothing else is sent. Secret-looking files (.env*, *.pem, *.key, id_rsa*, *secret*, credentials) are refused.")
	}
	fmt.Fprintf(w, "  Every prompt, response and test output is kept in %s\n\n", lineage)
}

// implementDeps builds what the workflow's nodes use for one run.
func implementDeps(ctx context.Context, f *Factory, cfg config.Config, runID string, s *implement.State, meta map[string]string) (implement.Deps, error) {
	auto, _ := strconv.ParseBool(meta["auto"])
	force, _ := strconv.ParseBool(meta["force"])
	budget, _ := strconv.ParseFloat(meta["budget"], 64)
	w, err := f.writer(auto, force)
	if err != nil {
		return implement.Deps{}, err
	}
	st, err := f.Store(ctx)
	if err != nil {
		return implement.Deps{}, err
	}
	a, err := f.Audit()
	if err != nil {
		return implement.Deps{}, err
	}
	stateDir, err := f.StateDir()
	if err != nil {
		return implement.Deps{}, err
	}
	env := f.providerEnv(cfg)
	if script := meta["mock_script"]; script != "" {
		env.MockLLM, env.MockScript = true, script
	}
	lineage := roles.NewLineage(w, stateDir, runID)
	coder, err := roles.Open(llm.RoleCoder, s.Coder, roles.Run{Store: st, Writer: w, StateDir: stateDir, RunID: runID,
		Env: env, Budget: budget, Secrets: append(provider.Secrets(env), audit.SecretsFromEnv(f.Environ())...), Lineage: lineage})
	if err != nil {
		return implement.Deps{}, err
	}
	runner, err := testrun.New(s.Runner, testrun.Options{TestCmd: s.TestCmd})
	if err != nil {
		return implement.Deps{}, err
	}
	return implement.Deps{
		Coder:   coder,
		Writer:  w,
		Runner:  runner,
		Gate:    &review.Gate{IO: f.IO, Prompter: f.Prompter(), Audit: a, Now: f.Now},
		Asker:   f.Prompter(),
		Lineage: lineage,
		Audit:   a,
		Out:     f.IO.ErrOut,
		Color:   f.IO.ColorScheme(),
	}, nil
}

func resumeImplement(ctx context.Context, f *Factory, r store.Run, asJSON bool) error {
	eng, err := f.engine(ctx)
	if err != nil {
		return err
	}
	var s implement.State
	if err := decodeState(r, &s); err != nil {
		return err
	}
	cfg, err := f.Config(s.Repo)
	if err != nil {
		return err
	}
	deps, err := implementDeps(ctx, f, cfg, r.ID, &s, r.Meta)
	if err != nil {
		return err
	}
	final, err := flow.Drive(ctx, eng, implement.Graph(deps), r.ID)
	return f.reportImplement(ctx, r.ID, final, err, asJSON)
}

// implementResult is the workflow's part of --json output.
type implementResult struct {
	Result       string   `json:"result,omitempty"`
	Branch       string   `json:"branch"`
	Commit       string   `json:"commit,omitempty"`
	Files        []string `json:"files"`
	Scaffolds    int      `json:"scaffolds"`
	Attempts     int      `json:"implementation_attempts"`
	Flagged      []string `json:"flagged_files,omitempty"`
	GateDecision string   `json:"gate_decision,omitempty"`
	MergeCommand string   `json:"merge_command,omitempty"`
	Patch        string   `json:"patch,omitempty"`
}

func (f *Factory) reportImplement(ctx context.Context, runID string, s *implement.State, driveErr error, asJSON bool) error {
	var result any
	if s != nil {
		res := implementResult{Result: s.Result, Branch: s.Branch, Commit: s.Commit, Scaffolds: s.Scaffolds,
			Attempts: s.Implementations, Flagged: s.Flagged, GateDecision: s.GateDecision, Patch: s.Patch}
		for _, fs := range s.Files {
			res.Files = append(res.Files, fs.Path)
		}
		if s.Result == implement.ResultMergeStopped {
			res.MergeCommand = s.MergeCommand
		}
		result = res
		if driveErr == nil && s.Result == implement.ResultMerged && !asJSON {
			fmt.Fprintf(f.IO.ErrOut, "\nMerged %s into %s (%s).\n", s.Branch, s.BaseBranch, shortID(s.Commit))
		}
	}
	return f.reportRun(ctx, runID, result, driveErr, asJSON)
}

func shortID(id string) string {
	if len(id) > 10 {
		return id[:10]
	}
	return id
}
