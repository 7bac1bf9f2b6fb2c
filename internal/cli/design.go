package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/runs"
	"github.com/azero-dev/azero/internal/testrun"
)

// DesignOptions are the inputs of `azero design`.
type DesignOptions struct {
	RunDeps

	Issue    int
	Brief    string
	Tracker  string
	Repo     string
	Drafter  string
	Reviewer string
	Resume   string
	JSON     bool

	// Implement goes on into the implementation, with the flags below
	// (those of azero implement).
	Implement bool
	Coder     string
	Runner    string
	TestCmd   string
	Report    string
	Context   []string
	Budget    float64
	Auto      bool
	Sandbox   string
}

// NewCmdDesign is `azero design`; runF nil runs designRun.
func NewCmdDesign(f *Factory, runF func(*DesignOptions) error) *cobra.Command {
	opts := &DesignOptions{RunDeps: f.runDeps()}
	cmd := &cobra.Command{
		Use:   "design --issue N | --brief FILE",
		Short: "Turn an issue into a checked, human-edited, reviewed design document and commit it",
		Long: trimLines(`
  Turn an issue (or a brief) into the design document azero implement reads
  (an LLD with a Files Changed table), with a human gate after every model,
  as azero issue has. No draft reaches you or the reviewer before the
  mechanical check passes it, and no model output reaches another model, or
  your repository, without you reading it in your editor first.

    load_input      the issue read from the tracker (github or local, chosen
                    as azero issue chooses it: --tracker, --repo, [issue] in
                    the config); an issue azero issue filed links its audit
                    trail. The run's slug is design-NNN-title (NNN the issue's
                    number), the trail starts in <audit_dir>/active/<slug>/
    preflight       before any model call: the editor is found, the
                    repository has a commit and ignores neither the audit
                    directory nor the design directory
    map_repository  a map of the repository for the drafter, bounded in
                    tokens: the tracked files as a tree, the outline of the
                    files the issue names or whose names share its words, the
                    test layout and runner, AGENTS.md, CLAUDE.md or
                    CONVENTIONS.md when present
    draft           the drafter writes the design from the issue, the map and
                    azero's built-in LLD template (no flag or file replaces
                    it); on a revision also your feedback
    check           the Files Changed table is checked by the code azero
                    implement runs: Modify and Delete targets exist, Add
                    targets do not (a new directory is fine, none below a
                    file), no invented src/, lib/ or app/, every path inside
                    the repository and not secret-looking, a test file and a
                    code file listed. A failing draft goes back to the drafter
                    with the findings, without you, at most 3 times in a row;
                    then to you, with the findings
    edit_draft      your editor opens on the draft; then [S]end / [R]evise /
                    [M]anual
    review          the reviewer reads the design you sent with the review
                    prompt built into azero, against the issue and your own
                    words; it answers APPROVE or BLOCK with reasons
    edit_verdict    your editor opens on the design and the verdict; then
                    [A]pprove / [R]evise / [M]anual (approving over BLOCK
                    needs 'override' typed)
    commit          the design is checked again and written to
                    <lld_dir>/NNN-slug.md ([design] lld_dir, default
                    docs/lld); the trail moves to <audit_dir>/done/<slug>/;
                    one commit holds exactly those files: nothing else you
                    changed or staged is committed, nor does it block the
                    commit

  The run ends by printing the next command, azero implement --lld
  <lld_dir>/NNN-slug.md. With --implement it goes straight on into the
  implementation of the committed design in the same run (its history, its
  gates, its resume): the flags --coder, --runner, --test-cmd, --report,
  --context, --budget, --auto and --sandbox are azero implement's.

  Every gate is a question answered at the terminal, on the page of azero
  serve, through its API or on Temporal. Without a terminal the run stops at
  its first gate (exit 3); answer it from azero serve, or continue it from a
  terminal with 'azero design --resume SLUG' or 'azero resume RUN'.
  [M]anual at a gate ends the run as aborted (exit 4): nothing is committed
  and the files stay in <audit_dir>/active/<slug>/.

  Models: --drafter/--reviewer, else [models] in the config, else
  anthropic:claude-sonnet-4-5 and gemini:gemini-2.5-pro. AZERO_MOCK_LLM=1
  uses the offline scripted model, whose built-in replies make a valid
  design for a small repository; a script's replies use the roles drafter
  and reviewer.`),
		Example: trimLines(`
  azero design --issue 12
  azero design --issue 12 --tracker github --repo acme/widgets
  azero design --brief notes/cache-expiry.md --json
  azero design --issue 12 --implement --coder anthropic:claude-sonnet-4-5
  azero design --resume design-012-add-a-budget-flag
  AZERO_MOCK_LLM=1 azero design --issue 1 --tracker local`),
		Args:        noArgs,
		Annotations: runExitCodes(ExitOK, ExitError, ExitUsage, ExitNeedsHuman, ExitRejected, ExitTestsFailed, ExitInterrupted),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.validate(cmd); err != nil {
				return err
			}
			return run(cmd, runF, designRun, opts)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&opts.Issue, "issue", 0, "the number of the issue to design for, in the tracker")
	fl.StringVar(&opts.Brief, "brief", "", "a problem statement that is not an issue, in markdown; its file name names the design")
	fl.StringVar(&opts.Tracker, "tracker", "", "where the issue is: github or local (default: config issue.tracker, else github when a repository is configured, else local)")
	fl.StringVar(&opts.Repo, "repo", "", "the GitHub repository OWNER/NAME the issue is in (default: config issue.repo)")
	fl.StringVar(&opts.Drafter, "drafter", "", "the drafter model as provider:model (default: config, else "+runs.DefaultModel(llm.RoleDrafter)+")")
	fl.StringVar(&opts.Reviewer, "reviewer", "", "the reviewer model as provider:model (default: config, else "+runs.DefaultModel(llm.RoleReviewer)+")")
	fl.StringVar(&opts.Resume, "resume", "", "continue the unfinished design run of this slug")
	fl.BoolVar(&opts.JSON, "json", false, "print the outcome as JSON on stdout")
	fl.BoolVar(&opts.Implement, "implement", false, "go on into the implementation of the committed design, in the same run")
	fl.StringVar(&opts.Coder, "coder", "", "with --implement, the coder model as provider:model (default: config, else "+runs.DefaultModel(llm.RoleCoder)+")")
	fl.StringVar(&opts.Runner, "runner", "", "with --implement, the test runner: "+strings.Join(testrun.Kinds(), ", ")+" (default: config, else detected)")
	fl.StringVar(&opts.TestCmd, "test-cmd", "", "with --implement, the command that runs the tests")
	fl.StringVar(&opts.Report, "report", "", "with --implement and --test-cmd, the report it writes as FORMAT:PATH")
	fl.StringArrayVar(&opts.Context, "context", nil, "with --implement, a file or directory sent to the coder as context (repeatable)")
	fl.Float64Var(&opts.Budget, "budget", 0, "with --implement, stop before a coder call would take the implementation's cost over this many USD")
	fl.BoolVar(&opts.Auto, "auto", false, "with --implement, never ask about file writes (the reviews are still asked)")
	addSandboxFlag(cmd, &opts.Sandbox)
	addEngineFlags(cmd, &opts.Engine)
	return cmd
}

// implementFlags are the flags that only --implement uses.
var implementFlags = []string{"coder", "runner", "test-cmd", "report", "context", "budget", "auto", "sandbox"}

// validate refuses flag combinations that cannot be meant, before any
// work: usage errors (exit 2).
func (opts *DesignOptions) validate(cmd *cobra.Command) error {
	changed := func(names ...string) []string {
		var out []string
		for _, n := range names {
			if cmd.Flags().Changed(n) {
				out = append(out, "--"+n)
			}
		}
		return out
	}
	switch {
	case opts.Resume != "" && (opts.Issue != 0 || opts.Brief != ""):
		return usagef("--resume continues a run; --issue and --brief start one: give one of them")
	case opts.Resume != "":
		if given := changed(append([]string{"tracker", "repo", "drafter", "reviewer", "implement"}, implementFlags...)...); len(given) > 0 {
			return usagef("--resume continues a run with the tracker, models and plan it started with: drop %s", strings.Join(given, ", "))
		}
		if !runs.IsSlug(opts.Resume) {
			return usagef("%q is not a slug: slugs are lower-case letters, digits and hyphens (see 'azero runs --workflow design')", opts.Resume)
		}
		return nil
	case opts.Issue != 0 && opts.Brief != "":
		return usagef("give the issue (--issue N) or a brief (--brief FILE), not both")
	case opts.Issue < 0:
		return usagef("--issue %d: an issue's number is 1 or more", opts.Issue)
	case opts.Issue == 0 && opts.Brief == "":
		return usagef("--issue N or --brief FILE is required: what to design for (or --resume SLUG to continue a run)")
	case opts.Brief != "" && (opts.Tracker != "" || opts.Repo != ""):
		return usagef("--tracker and --repo say where --issue is read from: a brief needs neither")
	case opts.Tracker != "" && !slices.Contains(runs.IssueTrackers, opts.Tracker):
		return usagef("unknown tracker %q: use github or local", opts.Tracker)
	}
	if !opts.Implement {
		if given := changed(implementFlags...); len(given) > 0 {
			return usagef("%s only apply with --implement", strings.Join(given, ", "))
		}
	}
	for role, spec := range map[string]string{"drafter": opts.Drafter, "reviewer": opts.Reviewer, "coder": opts.Coder} {
		if err := modelFlag(role, spec); err != nil {
			return err
		}
	}
	return budgetFlag(opts.Budget)
}

func designRun(ctx context.Context, opts *DesignOptions) error {
	top, err := gitx.TopLevel(ctx, opts.WorkDir)
	if err != nil {
		return fmt.Errorf("azero design commits the design and its audit trail to a git repository; run it inside one: %w", err)
	}
	cfg, err := opts.config(top)
	if err != nil {
		return err
	}
	if opts.Resume != "" {
		return opts.resumeSlug(ctx, cfg, runs.DesignWorkflow, opts.Resume, opts.JSON)
	}
	// A new run's checks report to this machine's store, whatever the
	// engine: a state directory that cannot hold it fails first.
	if _, err := opts.Env.Store(ctx); err != nil {
		return err
	}
	req := runs.DesignRequest{Repo: top, Issue: opts.Issue, Tracker: opts.Tracker, GitHub: opts.Repo,
		Drafter: opts.Drafter, Reviewer: opts.Reviewer}
	if opts.Brief != "" {
		raw, err := opts.IO.ReadInput(ctx, opts.WorkDir, opts.Brief, maxBriefBytes)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("brief file %s not found: pass the path of the problem statement with --brief", opts.Brief)
		case err != nil:
			return err
		}
		req.BriefPath, req.Brief = opts.Env.Abs(opts.Brief), raw
	}
	if opts.Implement {
		req.Implement = &runs.DesignImplement{Coder: opts.Coder, Runner: opts.Runner, TestCmd: opts.TestCmd, Report: opts.Report,
			Context: opts.Context, Budget: opts.Budget, Auto: opts.Auto, Sandbox: opts.Sandbox}
	}
	p, plan, err := runs.PrepareDesign(ctx, opts.Env, cfg, req, opts.Terminal())
	if err != nil {
		return err
	}
	printDesignPlan(opts.IO, plan)
	return opts.start(ctx, cfg, p, opts.JSON)
}

// printDesignPlan says, before anything is sent, what goes where.
func printDesignPlan(io *iostreams.IOStreams, p runs.DesignPlan) {
	cs := io.ColorScheme()
	w := io.ErrOut
	fmt.Fprintln(w, cs.Bold("azero design "+p.Slug))
	fmt.Fprintf(w, "  for:         %s\n", p.Input)
	if p.FiledTrail != "" {
		fmt.Fprintf(w, "  filed by:    azero issue, audit trail %s/\n", p.FiledTrail)
	}
	fmt.Fprintf(w, "  drafter:     %s, receives the issue, a map of the repository, the template and your feedback\n", modelWhere(p.Drafter))
	fmt.Fprintf(w, "  reviewer:    %s, receives the issue, your own words and the designs you send\n", modelWhere(p.Reviewer))
	if p.Coder != nil {
		fmt.Fprintf(w, "  coder:       %s, implements the committed design (--implement)\n", modelWhere(*p.Coder))
		if p.Sandbox != nil {
			fmt.Fprintf(w, "  sandbox:     %s\n", p.Sandbox.Describe())
		}
	}
	fmt.Fprintf(w, "  editor:      %s\n", p.Editor)
	fmt.Fprintf(w, "  audit trail: %s/\n", p.AuditTrail)
	fmt.Fprintf(w, "  design:      %s\n\n", p.LLDPath)
}
