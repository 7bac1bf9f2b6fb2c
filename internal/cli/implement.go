package cli

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/spf13/cobra"

	"github.com/azero-dev/azero/internal/contextload"
	"github.com/azero-dev/azero/internal/edit"
	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/runs"
	"github.com/azero-dev/azero/internal/testrun"
)

// ImplementOptions are the inputs of `azero implement`.
type ImplementOptions struct {
	RunDeps

	LLD     string
	Issue   string
	Repo    string
	Context []string
	Runner  string
	TestCmd string
	Report  string
	Coder   string
	Budget  float64
	Auto    bool
	Force   bool
	Sandbox string
	JSON    bool

	// mockScript, when set, makes the coder the offline scripted model
	// with this script (azero demo).
	mockScript string
}

// NewCmdImplement is `azero implement`; runF nil runs implementRun.
func NewCmdImplement(f *Factory, runF func(*ImplementOptions) error) *cobra.Command {
	opts := &ImplementOptions{RunDeps: f.runDeps()}
	cmd := &cobra.Command{
		Use:   "implement --lld FILE",
		Short: "Implement a design document test-first, in an isolated worktree, under human review",
		Long: trimLines(`
  Implement the design document FILE with the coder model, test first:

    worktree   a new branch azero/<issue>-<slug> in its own git worktree; your
               checkout, uncommitted changes included, is not touched
    baseline   your tests run once on the base commit: a suite that cannot even
               start (runner missing, import or build errors) stops the run
               with the runner's own error, before any model call
    scaffold   the model writes the test files the design lists
    red        the real test runner must fail on assertions (a pass, a syntax
               error or no tests sends the model back, at most 3 times)
    implement  the model writes the code: whole files for new and small files,
               FIND/REPLACE blocks for files over 500 lines or 15,000 bytes
    green      the tests must pass (at most 3 implementation attempts, each
               given the test output)
    lint       go vet; py_compile plus ruff/pyflakes; tsc or eslint; cargo
               clippy or check (each when installed)
    review     two questions, in order. The diff review (every file's diff):
               'approve' commits the change on the run's branch, 'reject'
               leaves only revise or abort next. Then the final review, which
               decides the merge: 'approve' merges the branch into yours,
               'revise' sends the change back to the coder with your feedback
               (while attempts remain), 'abort' drops it and cleans up. When
               nobody can be asked, a diff review with nothing flagged passes
               unattended, and the final review then shows the whole diff

  Test runners: go, pytest, node (node --test), vitest, jest, cargo, or any
  command writing JUnit XML (--test-cmd CMD --report junit:PATH). Red and
  green come from the runner's own report: a red has at least one failing
  assertion and no build or collection error; a green has every test passing
  and at least one test run.

  Before any model call azero checks the inputs: the design's Files Changed
  table (Modify/Delete targets exist, Add targets have an existing directory,
  no invented src/, lib/ or app/ prefix) and every --context path (inside the
  repository, no secret files such as .env or *.pem, at most 100 KB each, at
  most 200,000 tokens in all). It then prints what will be sent to which model.

  Without a terminal the run stops at the first gate that needs you (exit 3);
  continue it with 'azero resume RUN'. Every prompt, response and test output
  is kept in the run's lineage ($AZERO_STATE_DIR/runs/RUN/).

  Trying it without a model: AZERO_MOCK_LLM=1 (or --coder mock:scripted)
  makes the coder the offline scripted model, which answers from a TOML
  script set by AZERO_MOCK_SCRIPT=FILE or [mock] script = "FILE" in the
  config:

    [[reply]]
    role = "coder"
    turn = 1
    text = """
    ` + "```python" + `
    import calc

    def test_multiply():
        assert calc.multiply(2, 3) == 6
    ` + "```" + `
    """

  Each [[reply]] has role = "coder" (or drafter, reviewer), turn = N (the
  role's Nth call in the run, from 1) and text = the reply, written as the
  model would write it: one fenced code block with the whole file (prose
  around it is fine), or FIND/REPLACE blocks for a file over 500 lines.
  Turn order: the coder is called once per file, in the order of the
  design's table: the test files (scaffold); only when those tests do not
  build or import because what they test is missing (Go, Rust, a Python
  ImportError), each code file once more for compiling stubs; then the code
  files (implement). Every retry is the next turn: a reply sent back with
  its error, a reply cut off, new tests after an invalid red, new code after
  a failing green. A turn the script does not answer stops the run with an
  error naming it; a resumed run repeats the turn it was killed in.
  Optional keys: stop = "max_tokens" (a reply cut off at its limit) or
  "refused"; error = "rate_limited" (a failing call; also transient,
  overloaded, timeout, network, auth, bad_request, context_too_long,
  model_not_found) with retry_after = "2s".`),
		Example: "  azero implement --lld docs/lld/42-slugify.md --context pkg/util.go\n" +
			"  azero implement --lld design.md --runner pytest --coder openai:qwen2.5-coder --budget 1.50\n" +
			"  azero implement --lld design.md --test-cmd 'mvn -q test' --report junit:target/surefire-reports/\n" +
			"  AZERO_MOCK_LLM=1 AZERO_MOCK_SCRIPT=replies.toml azero implement --lld design.md",
		Args:        noArgs,
		Annotations: runExitCodes(ExitOK, ExitError, ExitUsage, ExitNeedsHuman, ExitRejected, ExitTestsFailed, ExitInterrupted),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.validate(); err != nil {
				return err
			}
			return run(cmd, runF, implementRun, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.LLD, "lld", "", "the design document (markdown with a Files Changed table)")
	fl.StringVar(&opts.Issue, "issue", "", "the issue number (default: the one the design names)")
	fl.StringVar(&opts.Repo, "repo", "", "the repository (default: the one containing the working directory)")
	fl.StringArrayVar(&opts.Context, "context", nil, "a file or directory sent to the model as context (repeatable)")
	fl.StringVar(&opts.Runner, "runner", "", "test runner: "+strings.Join(testrun.Kinds(), ", ")+" (default: config, else detected from the project)")
	fl.StringVar(&opts.TestCmd, "test-cmd", "", "command that runs the tests instead of the runner's default (its output is read with the runner's conventions, or from --report)")
	fl.StringVar(&opts.Report, "report", "", "with --test-cmd, the report it writes as FORMAT:PATH (junit:build/test-results.xml): any runner that writes JUnit XML")
	fl.StringVar(&opts.Coder, "coder", "", "the coder model as provider:model (default: config, else "+runs.DefaultModel(llm.RoleCoder)+")")
	fl.Float64Var(&opts.Budget, "budget", 0, "stop the run before a model call would take its cost over this many USD")
	fl.BoolVar(&opts.Auto, "auto", false, "never ask about file writes: refuse to replace a file over 100 lines unless --force (the diff review and the final approval are still asked)")
	fl.BoolVar(&opts.Force, "force", false, "with --auto, allow replacing files over 100 lines")
	fl.BoolVar(&opts.JSON, "json", false, "print the outcome as JSON")
	addSandboxFlag(cmd, &opts.Sandbox)
	addEngineFlags(cmd, &opts.Engine)
	return cmd
}

// validate refuses flag combinations that cannot be meant, before any
// work: usage errors (exit 2).
func (opts *ImplementOptions) validate() error {
	switch {
	case opts.LLD == "":
		return usagef("--lld FILE is required: the design document to implement")
	case opts.Force && !opts.Auto:
		return usagef("--force only makes sense with --auto (without --auto azero asks before replacing a large file)")
	}
	if err := budgetFlag(opts.Budget); err != nil {
		return err
	}
	return modelFlag("coder", opts.Coder)
}

// budgetFlag checks a --budget: an amount of USD, finite, 0 or more.
func budgetFlag(usd float64) error {
	switch {
	case math.IsNaN(usd) || math.IsInf(usd, 0):
		return usagef("--budget must be an amount of USD, got %g", usd)
	case usd < 0:
		return usagef("--budget must not be negative (got %g)", usd)
	}
	return nil
}

// modelFlag checks a --coder, --drafter or --reviewer: provider:model, or
// nothing (the config's, else the default).
func modelFlag(role, spec string) error {
	if spec == "" {
		return nil
	}
	if _, err := llm.ParseSpec(spec); err != nil {
		return usagef("--%s %q: %v", role, spec, err)
	}
	return nil
}

func implementRun(ctx context.Context, opts *ImplementOptions) error {
	start := opts.WorkDir
	if opts.Repo != "" {
		start = opts.Env.Abs(opts.Repo)
	}
	top, err := gitx.TopLevel(ctx, start)
	if err != nil {
		return err
	}
	cfg, err := opts.config(top)
	if err != nil {
		return err
	}
	design, err := opts.IO.ReadInput(ctx, opts.WorkDir, opts.LLD, contextload.MaxFileBytes)
	if err != nil {
		return err
	}
	p, plan, err := runs.PrepareImplement(ctx, opts.Env, cfg, runs.ImplementRequest{
		Repo: top, DesignPath: opts.Env.Abs(opts.LLD), Design: design, Issue: opts.Issue, Context: opts.Context,
		Runner: opts.Runner, TestCmd: opts.TestCmd, Report: opts.Report, Coder: opts.Coder, Budget: opts.Budget,
		Auto: opts.Auto, Force: opts.Force, Sandbox: opts.Sandbox, MockScript: opts.mockScript,
	}, opts.Terminal())
	if err != nil {
		return err
	}
	printDataPolicy(opts.IO, opts.LLD, plan)
	return opts.start(ctx, cfg, p, opts.JSON)
}

// printDataPolicy says, before anything is sent, what goes to which model.
// The scripted model is shown the same files, on this machine.
func printDataPolicy(io *iostreams.IOStreams, lldName string, plan runs.ImplementPlan) {
	cs := io.ColorScheme()
	w := io.ErrOut
	st := plan.Coder
	fmt.Fprintln(w, cs.Bold("Data policy"))
	if st.Mocked || st.Spec.Provider == llm.ProviderMock {
		fmt.Fprintf(w, "  coder: %s, the offline scripted model: nothing leaves this machine. Shown to it:\n", st.Spec)
	} else {
		fmt.Fprintf(w, "  coder: %s at %s. Sent to it:\n", st.Spec, st.Endpoint)
	}
	fmt.Fprintf(w, "    - the design document %s (%d tokens)\n", lldName, plan.DesignTokens)
	if len(plan.Modified) > 0 {
		fmt.Fprintf(w, "    - the current content of the files the change modifies, whole: %s\n", strings.Join(plan.Modified, ", "))
		if len(plan.Large) > 0 {
			fmt.Fprintf(w, "      (%s: over %d lines or %d bytes, so some prompts show only an outline of its declarations)\n",
				strings.Join(plan.Large, ", "), edit.LargeLines, edit.LargeBytes)
		}
	}
	if len(plan.Context) > 0 {
		fmt.Fprintf(w, "    - context files: %s (%d tokens)\n", strings.Join(plan.Context, ", "), plan.ContextTokens)
	}
	fmt.Fprintln(w, "    - the files of the change as it writes them, and the output of your test runs")
	fmt.Fprintln(w, "  Nothing else is sent. Secret-looking files (.env*, *.pem, *.key, id_rsa*, *secret*, credentials) are refused.")
	fmt.Fprintf(w, "  Every prompt, response and test output is kept in %s\n", plan.Lineage)
	box := plan.Sandbox
	line := "  The model's code runs in the " + box.Describe()
	if box.Off() || box.Network() {
		line = cs.Bold(line)
	}
	fmt.Fprintf(w, "%s\n\n", line)
}
