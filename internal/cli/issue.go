package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/config"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/llm/provider"
	"github.com/azero-dev/azero/internal/prompt"
	"github.com/azero-dev/azero/internal/safewrite"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/tracker"
	"github.com/azero-dev/azero/internal/workflow/issue"
	"github.com/azero-dev/azero/internal/workflow/roles"
)

// issueWorkflow names the governance workflow in resumers().
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
    draft         the drafter writes the issue from the brief and the built-in
                  template (on a revision: your feedback, the current draft
                  and the template)
    edit_draft    your editor opens on the draft; then [S]end / [R]evise /
                  [M]anual (send: to the reviewer)
    review        the reviewer reads the draft with the review prompt built
                  into azero (no flag, config or file can replace it)
    edit_verdict  your editor opens on the draft and the verdict (remove from
                  the verdict what should not reach the drafter); then
                  [A]pprove / [R]evise / [M]anual
    file_issue    labels from the draft's **Labels:** line (missing ones are
                  created), title from its '# ' heading; on an error
                  [R]etry / [E]dit / [A]bort. Then NNN-filed.json, the
                  trail moves to <audit_dir>/done/<issue#>-<slug>/, and one
                  commit records exactly those files (and, for the local
                  tracker, the issue file); nothing else you changed or
                  staged is committed.

  Every file is numbered in event order (001-brief.md, 002-draft.md,
  003-draft-edited.md, 004-verdict.md, 005-feedback.txt, ...). Every gate
  decision is recorded in the audit log ($AZERO_STATE_DIR/audit.jsonl).

  Trackers: github (--repo OWNER/NAME or issue.repo in the config; token
  from GITHUB_TOKEN or GH_TOKEN, API root from GITHUB_API_URL) or local
  (numbered markdown files in issue.issues_dir, default docs/issues). The
  default is --tracker, else issue.tracker, else github when a repository is
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
  [A]bort after a filing error exits 1 with the error; the run can be
  resumed later to try filing again.`),
		Example: trimLines(`
  azero issue --brief notes/governance-notes.md
  azero issue --brief idea.md --tracker github --repo acme/widgets
  azero issue --brief idea.md --tracker local --json
  azero issue --resume governance-notes`),
		Args:        noArgs,
		Annotations: exitCodesAnnotation(ExitOK, ExitError, ExitUsage, ExitNeedsHuman, ExitRejected, ExitInterrupted),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Brief == "" && opts.Resume == "" {
				return usagef("--brief FILE is required: the notes to turn into an issue (or --resume SLUG to continue a run)")
			}
			switch opts.Tracker {
			case "", issue.TrackerGitHub, issue.TrackerLocal:
			default:
				return usagef("unknown tracker %q: use github or local", opts.Tracker)
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
	return cmd
}

// issueSettings are the choices a new run starts with.
type issueSettings struct {
	tracker             issue.TrackerConfig
	auditDir            string
	drafter, reviewer   string
	drafterS, reviewerS provider.Status
}

// repoRelDir validates a configured directory: relative, inside the
// repository, slash-separated.
func repoRelDir(key, dir string) (string, error) {
	d := path.Clean(filepath.ToSlash(dir))
	if d == "." || path.IsAbs(d) || d == ".." || strings.HasPrefix(d, "../") || filepath.IsAbs(dir) {
		return "", fmt.Errorf("config %s %q: must be a directory inside the repository, relative to its root", key, dir)
	}
	return d, nil
}

func resolveIssueSettings(f *Factory, cfg config.Config, opts *IssueOptions) (issueSettings, error) {
	var s issueSettings
	kind, repo := opts.Tracker, opts.Repo
	if kind == "" {
		kind = cfg.Issue.Tracker
	}
	if repo == "" && kind != issue.TrackerLocal {
		repo = cfg.Issue.Repo
	}
	if kind == "" {
		kind = issue.TrackerLocal
		if repo != "" {
			kind = issue.TrackerGitHub
		}
	}
	switch kind {
	case issue.TrackerGitHub:
		if repo == "" {
			return s, usagef("the github tracker needs the repository: pass --repo OWNER/NAME or set issue.repo in the config")
		}
		if o, n, ok := strings.Cut(repo, "/"); !ok || o == "" || n == "" || strings.Contains(n, "/") {
			return s, usagef("--repo %q: use OWNER/NAME", repo)
		}
		s.tracker = issue.TrackerConfig{Kind: kind, Repo: repo}
	case issue.TrackerLocal:
		if opts.Repo != "" {
			return s, usagef("--repo names a GitHub repository, but the tracker is local; add --tracker github")
		}
		dir := cfg.Issue.IssuesDir
		if dir == "" {
			dir = issue.DefaultIssuesDir
		}
		d, err := repoRelDir("issue.issues_dir", dir)
		if err != nil {
			return s, err
		}
		s.tracker = issue.TrackerConfig{Kind: kind, IssuesDir: d}
	}
	dir := cfg.Issue.AuditDir
	if dir == "" {
		dir = issue.DefaultAuditDir
	}
	d, err := repoRelDir("issue.audit_dir", dir)
	if err != nil {
		return s, err
	}
	s.auditDir = d

	env := f.providerEnv(cfg)
	s.drafter = roleModel(cfg, llm.RoleDrafter, opts.Drafter)
	s.reviewer = roleModel(cfg, llm.RoleReviewer, opts.Reviewer)
	for _, m := range []struct {
		role llm.Role
		spec string
		st   *provider.Status
	}{{llm.RoleDrafter, s.drafter, &s.drafterS}, {llm.RoleReviewer, s.reviewer, &s.reviewerS}} {
		e := env
		e.Role = m.role
		*m.st = provider.Describe(m.spec, e)
		if m.st.Err != nil {
			// A missing key names its variable; no file is written before this.
			return s, fmt.Errorf("%s model %s: %w", m.role, m.spec, m.st.Err)
		}
	}
	return s, nil
}

func issueRun(ctx context.Context, f *Factory, opts *IssueOptions) error {
	top, err := gitx.TopLevel(ctx, f.WorkDir)
	if err != nil {
		return fmt.Errorf("azero issue keeps its audit trail in a git repository; run it inside one: %w", err)
	}
	cfg, err := f.Config(top)
	if err != nil {
		return err
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

	// N0, before a run exists: the brief, its slug, the settings.
	raw, err := os.ReadFile(f.abs(opts.Brief))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("brief file %s not found: pass the path of your notes with --brief", opts.Brief)
	case err != nil:
		return fmt.Errorf("read the brief: %w", err)
	case strings.TrimSpace(string(raw)) == "":
		return fmt.Errorf("the brief %s is empty: write your notes first", opts.Brief)
	}
	slug := issue.SlugFromFile(opts.Brief)
	if slug == "" {
		return fmt.Errorf("cannot make a slug from the file name %q: rename the brief using letters, digits and hyphens", filepath.Base(opts.Brief))
	}
	set, err := resolveIssueSettings(f, cfg, opts)
	if err != nil {
		return err
	}

	slug, resume, err := settleSlug(ctx, f, st, top, set.auditDir, slug)
	switch {
	case err != nil:
		var ce *slugCollisionError
		if opts.JSON && errors.As(err, &ce) {
			_ = writeJSON(f.IO.Out, map[string]any{"workflow": issue.Name, "status": "needs_human", "slug": ce.Slug,
				"run_id": ce.RunID, "resume": "azero issue --resume " + ce.Slug, "error": err.Error()})
		}
		return err
	case resume != nil:
		return resumeIssue(ctx, f, *resume, opts.JSON)
	case slug == "":
		fmt.Fprintln(f.IO.ErrOut, "Aborted: nothing was created or changed.")
		if opts.JSON {
			return writeJSON(f.IO.Out, map[string]any{"workflow": issue.Name, "status": "not_started", "slug": issue.SlugFromFile(opts.Brief)})
		}
		return nil
	}

	briefPath, _ := filepath.Abs(f.abs(opts.Brief))
	runID := store.NewID(f.Now())
	s := &issue.State{Slug: slug, BriefPath: briefPath, Brief: string(raw), Root: top, AuditDir: set.auditDir,
		Tracker: set.tracker, Drafter: set.drafter, Reviewer: set.reviewer}
	deps, err := issueDeps(ctx, f, runID, s)
	if err != nil {
		return err
	}
	// N1 before the run exists: a failed check leaves nothing behind.
	if err := deps.Checks.Run(ctx); err != nil {
		return err
	}
	printIssuePlan(f, s, set, deps)

	eng, err := f.engine(ctx)
	if err != nil {
		return err
	}
	g := issue.New(deps)
	meta := map[string]string{"slug": slug, "brief": briefPath, "repo": top, "tracker": deps.Tracker.Name(),
		"drafter": s.Drafter, "reviewer": s.Reviewer}
	if _, err := flow.Create(ctx, eng, g, s, flow.CreateOptions{ID: runID, Key: slug, Meta: meta}); err != nil {
		return err
	}
	_, err = flow.Drive(ctx, eng, g, runID)
	return f.reportIssue(ctx, runID, s, err, opts.JSON)
}

// printIssuePlan says, before anything is sent, what goes where.
func printIssuePlan(f *Factory, s *issue.State, set issueSettings, d issue.Deps) {
	cs := f.IO.ColorScheme()
	w := f.IO.ErrOut
	where := func(st provider.Status) string {
		if st.Mocked || st.Spec.Provider == llm.ProviderMock {
			return st.Spec.String() + " (offline: nothing leaves this machine)"
		}
		return st.Spec.String() + " at " + st.Endpoint.String()
	}
	fmt.Fprintln(w, cs.Bold("azero issue "+s.Slug))
	fmt.Fprintf(w, "  drafter:     %s, receives the brief, the template and your feedback\n", where(set.drafterS))
	fmt.Fprintf(w, "  reviewer:    %s, receives the drafts you send\n", where(set.reviewerS))
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

// slugCollisionError stops a command that found its slug taken with
// nobody to ask what to do. It needs a human: exit 3.
type slugCollisionError struct {
	Slug, Dir, RunID string
}

func (e *slugCollisionError) Error() string {
	msg := fmt.Sprintf("slug %q is already in use (%s)", e.Slug, e.Dir)
	if e.RunID != "" {
		msg = fmt.Sprintf("slug %q is already in use by unfinished run %s", e.Slug, e.RunID)
	}
	msg += " and nobody can be asked to choose [R]esume / [N]ew name / [A]bort (no terminal)"
	if e.RunID != "" {
		return msg + fmt.Sprintf("; continue that run with: azero issue --resume %s (or azero resume %s), or rename the brief file", e.Slug, e.RunID)
	}
	return msg + "; rename the brief file, or move the directory away"
}

// NeedsHuman marks the collision as a question for a human.
func (e *slugCollisionError) NeedsHuman() bool { return true }

// settleSlug is N0's collision check. It returns the slug to use for a new
// run, or the run to resume, or "" and no run when the human aborted.
func settleSlug(ctx context.Context, f *Factory, st *store.Store, root, auditDir, slug string) (string, *store.Run, error) {
	p := f.Prompter()
	logger, err := f.Audit()
	if err != nil {
		return "", nil, err
	}
	record := func(decision string, slugs ...string) {
		logger.Event(ctx, "gate_decision", "", slog.String("workflow", issue.Name), slog.String("gate", "slug_collision"),
			slog.String("decision", decision), slog.String("slug", strings.Join(slugs, " -> ")))
	}
	for {
		dir := path.Join(auditDir, "active", slug)
		_, statErr := os.Stat(filepath.Join(root, filepath.FromSlash(dir)))
		run, hasRun, err := unfinishedIssueRun(ctx, st, slug)
		if err != nil {
			return "", nil, err
		}
		if statErr != nil && !hasRun {
			return slug, nil, nil
		}
		ce := &slugCollisionError{Slug: slug, Dir: dir}
		desc := fmt.Sprintf("Slug %q already exists in active/ (%s/).", slug, dir)
		if hasRun {
			ce.RunID = run.ID
			desc = fmt.Sprintf("Slug %q belongs to unfinished run %s (%s at %s).", slug, run.ID, effectiveStatus(st, run), run.Node)
		}
		if !p.CanPrompt() {
			return "", nil, ce
		}
		choices := []prompt.Choice{{Key: "N", Label: "New name"}, {Key: "A", Label: "Abort"}}
		if hasRun {
			choices = append([]prompt.Choice{{Key: "R", Label: "Resume"}}, choices...)
		} else {
			desc += " No run can be resumed from it (it was stopped for manual handling, or its state is gone)."
		}
		fmt.Fprintln(f.IO.ErrOut, desc)
		choice, err := p.Choose(ctx, "", choices)
		if err != nil {
			return "", nil, err
		}
		switch choice {
		case "R":
			record("resume", slug)
			return "", &run, nil
		case "A":
			record("abort", slug)
			return "", nil, nil
		}
		for {
			answer, err := p.Input(ctx, "Enter new slug:", false)
			if err != nil {
				return "", nil, err
			}
			next := issue.CleanSlug(answer)
			if next == "" {
				fmt.Fprintln(f.IO.ErrOut, "A slug needs letters or digits.")
				continue
			}
			if next != answer {
				fmt.Fprintf(f.IO.ErrOut, "Using %q.\n", next)
			}
			record("new_name", slug, next)
			slug = next
			break
		}
	}
}

// issueDeps builds what the workflow's nodes use for one run.
func issueDeps(ctx context.Context, f *Factory, runID string, s *issue.State) (issue.Deps, error) {
	w, err := f.writer(false, false)
	if err != nil {
		return issue.Deps{}, err
	}
	st, err := f.Store(ctx)
	if err != nil {
		return issue.Deps{}, err
	}
	logger, err := f.Audit()
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
	tr, err := issueTracker(f, s, w, runID)
	if err != nil {
		return issue.Deps{}, err
	}
	env := f.providerEnv(cfg)
	run := roles.Run{Store: st, Writer: w, StateDir: stateDir, RunID: runID, Env: env,
		Secrets: append(provider.Secrets(env), audit.SecretsFromEnv(f.Environ())...),
		Lineage: roles.NewLineage(w, stateDir, runID)}
	drafter, err := roles.Open(llm.RoleDrafter, s.Drafter, run)
	if err != nil {
		return issue.Deps{}, err
	}
	reviewer, err := roles.Open(llm.RoleReviewer, s.Reviewer, run)
	if err != nil {
		return issue.Deps{}, err
	}
	p := f.Prompter()
	return issue.Deps{
		Asker: p, Writer: w, Audit: logger, ErrOut: f.IO.ErrOut, Color: f.IO.ColorScheme(),
		Drafter: drafter, Reviewer: reviewer, Tracker: tr, StateDir: stateDir, Now: f.Now,
		Checks: &issue.Preflight{Editor: p.CheckEditor, Tracker: tr, Root: s.Root, AuditDir: s.AuditDir,
			Models: []llm.Model{drafter, reviewer}},
	}, nil
}

// issueTracker opens the tracker a run files to.
func issueTracker(f *Factory, s *issue.State, w *safewrite.Writer, runID string) (tracker.Tracker, error) {
	switch s.Tracker.Kind {
	case issue.TrackerGitHub:
		token := f.Getenv("GITHUB_TOKEN")
		if token == "" {
			token = f.Getenv("GH_TOKEN")
		}
		return tracker.NewGitHub(tracker.GitHubOptions{Repo: s.Tracker.Repo, Token: token, APIURL: f.Getenv("GITHUB_API_URL")})
	case issue.TrackerLocal:
		return &tracker.Local{Root: s.Root, Dir: s.Tracker.IssuesDir, Writer: w, RunID: runID}, nil
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
	deps, err := issueDeps(ctx, f, r.ID, &s)
	if err != nil {
		return err
	}
	if err := deps.Checks.Run(ctx); err != nil {
		return err
	}
	fmt.Fprintf(f.IO.ErrOut, "Resuming run %s (slug %s) at %s.\n", r.ID, s.Slug, r.Node)
	eng, err := f.engine(ctx)
	if err != nil {
		return err
	}
	_, err = flow.Drive(ctx, eng, issue.New(deps), r.ID)
	return f.reportIssue(ctx, r.ID, &s, err, asJSON)
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
	case errors.Is(driveErr, flow.ErrWaiting) || errors.Is(driveErr, flow.ErrInterrupted):
		fmt.Fprintf(f.IO.ErrOut, "The run is saved; continue it from a terminal with: azero issue --resume %s\n", s.Slug)
	case errors.As(driveErr, &nodeErr):
		fmt.Fprintf(f.IO.ErrOut, "The run is saved at %s; once the cause is fixed, continue it with: azero issue --resume %s\n", nodeErr.Node, s.Slug)
	}
	if !asJSON {
		return driveErr
	}
	res := issueResult{Slug: s.Slug, AuditDir: s.TrailDir(), Tracker: trackerLabel(s.Tracker), Iteration: s.Iteration,
		Drafts: s.Drafts, Verdicts: s.Verdicts, Issue: s.Filed, Trail: []issue.Entry{}}
	if s.Filed == nil && !errors.Is(driveErr, flow.ErrAborted) {
		res.Resume = "azero issue --resume " + s.Slug
	}
	if entries, err := (issue.Trail{Root: s.Root, Dir: s.TrailDir()}).Entries(); err == nil && entries != nil {
		res.Trail = entries
	}
	return f.reportRun(ctx, runID, res, driveErr, true)
}

func trackerLabel(t issue.TrackerConfig) string {
	switch t.Kind {
	case issue.TrackerGitHub:
		return "github " + t.Repo
	case issue.TrackerLocal:
		return "local " + t.IssuesDir
	}
	return t.Kind
}
