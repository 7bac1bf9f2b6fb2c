package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/spf13/cobra"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/config"
	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/llm/provider"
	"github.com/azero-dev/azero/internal/safewrite"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/tracker"
	"github.com/azero-dev/azero/internal/workflow/issue"
	"github.com/azero-dev/azero/internal/workflow/roles"
)

// issueWorkflow names the governance workflow in workflows().
const issueWorkflow = issue.Name

// IssueOptions are the inputs of `azero issue`.
type IssueOptions struct {
	Brief    string
	Repo     string
	Tracker  string
	Drafter  string
	Reviewer string
	Resume   string
	JSON     bool
}

func newIssueCommand(f *Factory) *cobra.Command {
	return newIssueCommandWith(f, nil)
}

// newIssueCommandWith binds the flags; runF, when set, replaces the work
// (tests of the flags).
func newIssueCommandWith(f *Factory, runF func(*IssueOptions) error) *cobra.Command {
	opts := &IssueOptions{}
	cmd := &cobra.Command{
		Use:   "issue --brief FILE",
		Short: "Turn a brief into a drafted, human-edited, reviewed issue and file it",
		Long: trimLines(`
  Turn your notes (the brief) into an issue, with a human gate after every
  model (spec #62). No model output reaches another model, or the tracker,
  without you reading it in your editor first.

    load_brief    the slug is the brief's file name (governance-notes.md ->
                  governance-notes); the audit trail starts in
                  <audit_dir>/active/<slug>/001-brief.md. When the slug is
                  taken (that directory exists, or a run with it is
                  unfinished) you choose [R]esume / [N]ew name / [A]bort.
    preflight     before any model call: the editor is found, the tracker
                  answers and accepts the token (a real call), the repository
                  has a commit and does not ignore the audit directory
    draft         the drafter writes the issue from the brief, the built-in
                  template and the tracker's labels (read once; it may propose
                  a new one as 'new: NAME'); on a revision also your feedback
                  and the current draft
    edit_draft    your editor opens on the draft; then [S]end / [R]evise /
                  [M]anual (send: to the reviewer)
    review        the reviewer reads the draft with the review prompt built
                  into azero (no flag, config or file can replace it), and
                  checks it against the brief and your own words: your
                  feedback and the lines you added to the drafts
    edit_verdict  your editor opens on the draft and the verdict (remove from
                  the verdict what should not reach the drafter); then
                  [A]pprove / [R]evise / [M]anual
    file_issue    labels from the draft's **Labels:** line (missing ones are
                  created), title from its '# ' heading, the rest is the
                  body; on an error [R]etry / [E]dit / [A]bort. Then
                  NNN-filed.json, the trail moves to
                  <audit_dir>/done/<issue#>-<slug>/, and one commit
                  records exactly those files (and, for the local tracker,
                  the issue file); nothing else you changed or staged is
                  committed.

  Every file is numbered in event order (001-brief.md, 002-draft.md,
  003-draft-edited.md, 004-verdict.md, 005-feedback.txt, ...). Every gate
  decision is recorded in the audit log ($AZERO_STATE_DIR/audit.jsonl).

  Trackers: github (--repo OWNER/NAME or issue.repo in the config; token
  from GITHUB_TOKEN or GH_TOKEN, API root from GITHUB_API_URL) or local
  (numbered markdown files in issue.issues_dir, default docs/issues; its
  labels are those its issues use plus issue.labels). The default is
  --tracker, else issue.tracker, else github when a repository is
  configured, else local. The audit directory is issue.audit_dir (default
  docs/audit). Models: --drafter/--reviewer, else [models] in the config,
  else anthropic:claude-sonnet-4-5 and gemini:gemini-2.5-pro;
  AZERO_MOCK_LLM=1 uses the offline scripted model for both.

  Runs are checkpointed under their slug: briefs with different names run in
  parallel without touching each other. Without a terminal the run stops at
  its first gate (exit 3); continue it from a terminal with
  'azero issue --resume SLUG' or 'azero resume RUN'. A resumed run keeps the
  tracker and models it started with, and never files a second issue: the
  issue body carries a marker naming the run, which is looked for first.

  [M]anual at a gate ends the run as aborted (exit 4): nothing is filed and
  the files stay in <audit_dir>/active/<slug>/ for you to take over.
  [A]bort after a filing error exits 1 with the error; resuming the run
  asks again ([R]etry / [E]dit / [A]bort).`),
		Example: trimLines(`
  azero issue --brief notes/governance-notes.md
  azero issue --brief idea.md --tracker github --repo acme/widgets
  azero issue --brief idea.md --tracker local --json
  azero issue --resume governance-notes`),
		Args:        noArgs,
		Annotations: runExitCodes(ExitOK, ExitError, ExitUsage, ExitNeedsHuman, ExitRejected, ExitInterrupted),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Brief != "" && opts.Resume != "" {
				return usagef("--brief starts a new run and --resume continues one: give one of them")
			}
			if opts.Resume != "" && (opts.Tracker != "" || opts.Repo != "" || opts.Drafter != "" || opts.Reviewer != "") {
				return usagef("--resume continues a run with the tracker and models it started with: drop --tracker, --repo, --drafter and --reviewer")
			}
			if opts.Brief == "" && opts.Resume == "" {
				return usagef("--brief FILE is required: the notes to turn into an issue (or --resume SLUG to continue a run)")
			}
			switch opts.Tracker {
			case "", issue.TrackerGitHub, issue.TrackerLocal:
			default:
				return usagef("unknown tracker %q: use github or local", opts.Tracker)
			}
			if err := modelFlag("drafter", opts.Drafter); err != nil {
				return err
			}
			if err := modelFlag("reviewer", opts.Reviewer); err != nil {
				return err
			}
			if opts.Resume != "" && issue.CleanSlug(opts.Resume) != opts.Resume {
				return usagef("%q is not a slug: slugs are lower-case letters, digits and hyphens (see 'azero runs --workflow issue')", opts.Resume)
			}
			if runF != nil {
				return runF(opts)
			}
			return issueRun(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Brief, "brief", "", "the brief: your notes, in markdown; its file name is the run's slug")
	fl.StringVar(&opts.Repo, "repo", "", "the GitHub repository OWNER/NAME to file in (default: config issue.repo)")
	fl.StringVar(&opts.Tracker, "tracker", "", "github or local (default: config issue.tracker, else github when a repository is configured, else local)")
	fl.StringVar(&opts.Drafter, "drafter", "", "the drafter model as provider:model (default: config, else "+defaultModels[llm.RoleDrafter]+")")
	fl.StringVar(&opts.Reviewer, "reviewer", "", "the reviewer model as provider:model (default: config, else "+defaultModels[llm.RoleReviewer]+")")
	fl.StringVar(&opts.Resume, "resume", "", "continue the unfinished run of this slug")
	fl.BoolVar(&opts.JSON, "json", false, "print the outcome as JSON on stdout")
	addEngineFlags(cmd, f)
	return cmd
}

// maxBriefBytes bounds a brief: notes, not a book.
const maxBriefBytes = 1 << 20

// issueModels resolves the drafter and reviewer a new run will use (the
// scripted model when the run is mocked) and checks that their keys are
// present, before anything is written.
func issueModels(f *Factory, cfg config.Config, opts *IssueOptions) (drafter, reviewer provider.Status, err error) {
	env := f.providerEnv(cfg)
	var st [2]provider.Status
	for i, m := range []struct {
		role llm.Role
		flag string
	}{{llm.RoleDrafter, opts.Drafter}, {llm.RoleReviewer, opts.Reviewer}} {
		e := env
		e.Role = m.role
		st[i] = provider.Describe(roleModel(cfg, m.role, m.flag), e)
		if st[i].Err != nil {
			// A missing key names its variable; no file is written before this.
			return st[0], st[1], fmt.Errorf("%s model %s: %w", m.role, st[i].Configured, st[i].Err)
		}
	}
	return st[0], st[1], nil
}

func issueRun(ctx context.Context, f *Factory, opts *IssueOptions) error {
	top, err := gitx.TopLevel(ctx, f.WorkDir)
	if err != nil {
		return fmt.Errorf("azero issue keeps its audit trail in a git repository; run it inside one: %w", err)
	}
	cfg, err := f.runConfig(top)
	if err != nil {
		return err
	}
	if opts.Resume != "" {
		if te, err := f.temporalEngine(ctx, top); err != nil {
			return err
		} else if te != nil {
			defer te.Close()
			return resumeIssueTemporal(ctx, f, te, opts.Resume, opts.JSON)
		}
	}
	st, err := f.Store(ctx)
	if err != nil {
		return err
	}
	if opts.Resume != "" {
		r, ok, err := unfinishedIssueRun(ctx, st, opts.Resume)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("no unfinished issue run has the slug %q; see 'azero runs --workflow issue'", opts.Resume)
		}
		return resumeIssue(ctx, f, r, opts.JSON)
	}

	raw, err := f.IO.ReadInput(ctx, f.WorkDir, opts.Brief, maxBriefBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("brief file %s not found: pass the path of your notes with --brief", opts.Brief)
	case err != nil:
		return err
	}
	drafter, reviewer, err := issueModels(f, cfg, opts)
	if err != nil {
		return err
	}
	in := issue.Inputs{BriefPath: f.abs(opts.Brief), Brief: raw, Dir: top, Tracker: opts.Tracker,
		Repo: opts.Repo, Config: cfg.Issue, Drafter: effectiveModel(drafter), Reviewer: effectiveModel(reviewer)}
	if drafter.Mocked || reviewer.Mocked {
		in.MockScript = f.providerEnv(cfg).MockScript
	}
	s, err := issue.Prepare(ctx, in)
	if err != nil {
		var ie *issue.InputError
		if errors.As(err, &ie) {
			return &UsageError{Err: ie.Err}
		}
		return err
	}
	runID := store.NewID(f.Now())
	eng, err := f.engine(ctx)
	if err != nil {
		return err
	}
	deps, err := issueDeps(ctx, f, runID, s, eng)
	if err != nil {
		return err
	}
	// N1 before the run exists: a failed check leaves nothing behind.
	if err := deps.Checks.Run(ctx); err != nil {
		return err
	}
	printIssuePlan(f, s, drafter, reviewer, deps)

	g := issue.New(deps)
	meta := map[string]string{"slug": s.Slug, "brief": s.BriefPath, "repo": top, "tracker": deps.Tracker.Name(),
		"drafter": s.Drafter, "reviewer": s.Reviewer}
	if te, err := f.temporalEngine(ctx, top); err != nil {
		return err
	} else if te != nil {
		defer te.Close()
		return issueTemporal(ctx, f, te, runID, s, meta, opts.JSON)
	}
	// The run claims its slug (its key) as its first step.
	if _, err := flow.Create(ctx, eng, g, s, flow.CreateOptions{ID: runID, Meta: meta}); err != nil {
		return err
	}
	_, err = flow.Drive(ctx, eng, g, runID)
	return f.finishIssue(ctx, runID, s, err, opts.JSON)
}

// effectiveModel is the model a role really uses: the scripted one when
// mocked.
func effectiveModel(st provider.Status) string {
	if st.Mocked {
		return llm.MockSpec
	}
	return st.Spec.String()
}

// finishIssue reports a driven issue run; a run whose human chose at the
// slug collision to resume the run holding the slug continues that run,
// and one cancelled there ends cleanly (spec #62, scenario 028: exit 0).
func (f *Factory) finishIssue(ctx context.Context, runID string, s *issue.State, driveErr error, asJSON bool) error {
	var (
		handOver  *issue.HandOverError
		cancelled *issue.CancelledError
	)
	switch {
	case errors.As(driveErr, &handOver):
		st, err := f.Store(ctx)
		if err != nil {
			return err
		}
		r, err := st.GetRun(ctx, handOver.RunID)
		if err != nil {
			return f.reportForged(ctx, st, "issue", err)
		}
		return resumeIssue(ctx, f, r, asJSON)
	case errors.As(driveErr, &cancelled):
		fmt.Fprintln(f.IO.ErrOut, "Aborted: nothing was created or changed.")
		if asJSON {
			return writeJSON(f.IO.Out, map[string]any{"workflow": issue.Name, "status": "not_started", "run_id": runID, "slug": cancelled.Slug})
		}
		return nil
	}
	return f.reportIssue(ctx, runID, s, driveErr, asJSON)
}

// printIssuePlan says, before anything is sent, what goes where.
func printIssuePlan(f *Factory, s *issue.State, drafter, reviewer provider.Status, d issue.Deps) {
	cs := f.IO.ColorScheme()
	w := f.IO.ErrOut
	where := func(st provider.Status) string {
		if st.Mocked || st.Spec.Provider == llm.ProviderMock {
			return llm.MockSpec + " (offline: nothing leaves this machine)"
		}
		return st.Spec.String() + " at " + st.Endpoint.String()
	}
	fmt.Fprintln(w, cs.Bold("azero issue "+s.Slug))
	fmt.Fprintf(w, "  drafter:     %s, receives the brief, the template and your feedback\n", where(drafter))
	fmt.Fprintf(w, "  reviewer:    %s, receives the brief and the drafts you send\n", where(reviewer))
	fmt.Fprintf(w, "  tracker:     %s\n", d.Tracker.Name())
	fmt.Fprintf(w, "  editor:      %s\n", d.Checks.EditorCommand())
	fmt.Fprintf(w, "  audit trail: %s/\n\n", s.ActiveDir())
}

// unfinishedIssueRun returns the newest issue run with this slug that can
// still continue.
func unfinishedIssueRun(ctx context.Context, st *store.Store, slug string) (store.Run, bool, error) {
	runs, err := st.ListRuns(ctx, store.Filter{Workflow: issue.Name, Key: slug})
	if err != nil {
		return store.Run{}, false, err
	}
	for _, r := range runs {
		if !r.Status.Finished() {
			return r, true, nil
		}
	}
	return store.Run{}, false, nil
}

// issueRuns answers the workflow's questions about other runs from the
// store.
type issueRuns struct{ st *store.Store }

func (r issueRuns) Holder(ctx context.Context, slug, self string) (issue.Holder, bool, error) {
	runs, err := r.st.ListRuns(ctx, store.Filter{Workflow: issue.Name, Key: slug})
	if err != nil {
		return issue.Holder{}, false, err
	}
	for _, run := range runs {
		if run.ID != self && !run.Status.Finished() {
			return issue.Holder{RunID: run.ID, Status: string(effectiveStatus(r.st, run)), Node: run.Node}, true, nil
		}
	}
	return issue.Holder{}, false, nil
}

func (r issueRuns) Claim(ctx context.Context, runID, slug string) error {
	return r.st.SetKey(ctx, runID, slug)
}

// issueDeps builds what the workflow's nodes use for one run. The nodes
// and the models report to events (the engine driving the run).
func issueDeps(ctx context.Context, f *Factory, runID string, s *issue.State, events event.Sink) (issue.Deps, error) {
	w, err := f.writer(false, false)
	if err != nil {
		return issue.Deps{}, err
	}
	st, err := f.Store(ctx)
	if err != nil {
		return issue.Deps{}, err
	}
	stateDir, err := f.StateDir()
	if err != nil {
		return issue.Deps{}, err
	}
	cfg, err := f.Config(s.Root)
	if err != nil {
		return issue.Deps{}, err
	}
	tr, err := issueTracker(f, s, cfg, w, runID)
	if err != nil {
		return issue.Deps{}, err
	}
	env := f.providerEnv(cfg)
	// The recorded models, whatever AZERO_MOCK_LLM says now.
	env.MockLLM, env.MockScript = false, s.MockScript
	run := roles.Run{Store: st, Writer: w, StateDir: stateDir, RunID: runID, Env: env,
		Secrets: append(provider.Secrets(env), audit.SecretsFromEnv(f.Environ())...),
		Lineage: roles.NewLineage(w, stateDir, runID), Events: events}
	// Opened by the pre-flight check or at their first call: a run resumed
	// past its last model call (at the filing, say) needs no key.
	drafter := llm.Lazy(s.Drafter, func() (llm.Model, error) { return roles.Open(llm.RoleDrafter, s.Drafter, run) })
	reviewer := llm.Lazy(s.Reviewer, func() (llm.Model, error) { return roles.Open(llm.RoleReviewer, s.Reviewer, run) })
	logger, err := f.Audit()
	if err != nil {
		return issue.Deps{}, err
	}
	p := f.Prompter()
	return issue.Deps{
		Writer: w, Events: events, Audit: logger, Drafter: drafter, Reviewer: reviewer, Tracker: tr, StateDir: stateDir, Now: f.Now,
		Runs: issueRuns{st: st},
		MaxOutput: map[llm.Role]int{
			llm.RoleDrafter:  maxOutput(cfg.Roles.Drafter, s.Drafter, env.Prices),
			llm.RoleReviewer: maxOutput(cfg.Roles.Reviewer, s.Reviewer, env.Prices),
		},
		Checks: &issue.Preflight{Editor: p.CheckEditor, Tracker: tr, Root: s.Root, AuditDir: s.AuditDir,
			Models: []llm.Model{drafter, reviewer}},
	}, nil
}

// issueTracker opens the tracker a run files to.
func issueTracker(f *Factory, s *issue.State, cfg config.Config, w *safewrite.Writer, runID string) (tracker.Tracker, error) {
	switch s.Tracker.Kind {
	case issue.TrackerGitHub:
		token := f.Getenv("GITHUB_TOKEN")
		if token == "" {
			token = f.Getenv("GH_TOKEN")
		}
		return tracker.NewGitHub(tracker.GitHubOptions{Repo: s.Tracker.Repo, Token: token, APIURL: f.Getenv("GITHUB_API_URL")})
	case issue.TrackerLocal:
		return &tracker.Local{Root: s.Root, Dir: s.Tracker.IssuesDir, Writer: w, RunID: runID, KnownLabels: cfg.Issue.Labels}, nil
	}
	return nil, fmt.Errorf("unknown tracker %q in the run's state", s.Tracker.Kind)
}

// resumeIssue continues an issue run: the checks again (this process's
// editor and token), then the graph from where it stopped.
func resumeIssue(ctx context.Context, f *Factory, r store.Run, asJSON bool) error {
	if r.Status.Finished() {
		return fmt.Errorf("run %s is already %s; nothing to resume", r.ID, r.Status)
	}
	var s issue.State
	if err := decodeState(r, &s); err != nil {
		return err
	}
	eng, err := f.engine(ctx)
	if err != nil {
		return err
	}
	deps, err := issueDeps(ctx, f, r.ID, &s, eng)
	if err != nil {
		return err
	}
	// The models are not checked again: a run resumed past its last model
	// call (at the verdict gate, at the filing) needs no key, and one that
	// still calls a model fails at that call, naming the key, resumable.
	deps.Checks.Models = nil
	if err := deps.Checks.Run(ctx); err != nil {
		return err
	}
	fmt.Fprintf(f.IO.ErrOut, "Resuming run %s (slug %s) at %s.\n", r.ID, s.Slug, r.Node)
	_, err = flow.Drive(ctx, eng, issue.New(deps), r.ID)
	return f.finishIssue(ctx, r.ID, &s, err, asJSON)
}

// issueResult is the workflow's part of --json output.
type issueResult struct {
	Slug      string        `json:"slug"`
	AuditDir  string        `json:"audit_dir"`
	Tracker   string        `json:"tracker"`
	Iteration int           `json:"iteration"`
	Drafts    int           `json:"drafts"`
	Verdicts  int           `json:"verdicts"`
	Issue     *issue.Filed  `json:"issue,omitempty"`
	Resume    string        `json:"resume_command,omitempty"`
	Trail     []issue.Entry `json:"trail"`
}

func (f *Factory) reportIssue(ctx context.Context, runID string, start *issue.State, driveErr error, asJSON bool) error {
	// The stored state is the truth: a node that stopped at a gate changed
	// only its in-memory copy.
	s := start
	if st, err := f.Store(ctx); err == nil {
		if r, err := st.GetRun(context.WithoutCancel(ctx), runID); err == nil {
			var stored issue.State
			if decodeState(r, &stored) == nil {
				s = &stored
			}
		}
	}
	var nodeErr *flow.NodeError
	switch {
	case (errors.Is(driveErr, flow.ErrWaiting) || errors.Is(driveErr, flow.ErrInterrupted)) && s.Collision != nil:
		fmt.Fprintf(f.IO.ErrOut, "%s\nThe run is saved before it created anything; answer its question from a terminal with: %s\n", s.Collision.Why, f.resumeCommand(runID, false))
		if s.Collision.Holder != nil {
			fmt.Fprintf(f.IO.ErrOut, "or continue the run holding the slug with: %s issue --resume %s\n", f.command(), s.Collision.Slug)
		}
	case errors.Is(driveErr, flow.ErrWaiting) || errors.Is(driveErr, flow.ErrInterrupted):
		fmt.Fprintf(f.IO.ErrOut, "The run is saved; continue it from a terminal with: %s issue --resume %s\n", f.command(), s.Slug)
	case errors.As(driveErr, &nodeErr):
		fmt.Fprintf(f.IO.ErrOut, "The run is saved at %s; once the cause is fixed, continue it with: %s issue --resume %s\n", nodeErr.Node, f.command(), s.Slug)
	}
	if !asJSON {
		return driveErr
	}
	res := issueResult{Slug: s.Slug, AuditDir: s.TrailDir(), Tracker: s.Tracker.Label(), Iteration: s.Iteration,
		Drafts: s.Drafts, Verdicts: s.Verdicts, Issue: s.Filed, Trail: []issue.Entry{}}
	if s.Filed == nil && !errors.Is(driveErr, flow.ErrAborted) {
		res.Resume = f.command() + " issue --resume " + s.Slug
	}
	if entries, err := (issue.Trail{Root: s.Root, Dir: s.TrailDir()}).Entries(); err == nil && entries != nil {
		res.Trail = entries
	}
	return f.reportRun(ctx, runID, res, driveErr, true)
}
