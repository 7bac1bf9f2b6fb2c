package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"github.com/spf13/cobra"

	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/llm/provider"
	"github.com/azero-dev/azero/internal/runs"
)

// IssueOptions are the inputs of `azero issue`.
type IssueOptions struct {
	RunDeps

	Brief    string
	Repo     string
	Tracker  string
	Drafter  string
	Reviewer string
	Resume   string
	JSON     bool
}

// NewCmdIssue is `azero issue`; runF nil runs issueRun.
func NewCmdIssue(f *Factory, runF func(*IssueOptions) error) *cobra.Command {
	opts := &IssueOptions{RunDeps: f.runDeps()}
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
			if opts.Tracker != "" && !slices.Contains(runs.IssueTrackers, opts.Tracker) {
				return usagef("unknown tracker %q: use github or local", opts.Tracker)
			}
			if err := modelFlag("drafter", opts.Drafter); err != nil {
				return err
			}
			if err := modelFlag("reviewer", opts.Reviewer); err != nil {
				return err
			}
			if opts.Resume != "" && !runs.IsSlug(opts.Resume) {
				return usagef("%q is not a slug: slugs are lower-case letters, digits and hyphens (see 'azero runs --workflow issue')", opts.Resume)
			}
			return run(cmd, runF, issueRun, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Brief, "brief", "", "the brief: your notes, in markdown; its file name is the run's slug")
	fl.StringVar(&opts.Repo, "repo", "", "the GitHub repository OWNER/NAME to file in (default: config issue.repo)")
	fl.StringVar(&opts.Tracker, "tracker", "", "github or local (default: config issue.tracker, else github when a repository is configured, else local)")
	fl.StringVar(&opts.Drafter, "drafter", "", "the drafter model as provider:model (default: config, else "+runs.DefaultModel(llm.RoleDrafter)+")")
	fl.StringVar(&opts.Reviewer, "reviewer", "", "the reviewer model as provider:model (default: config, else "+runs.DefaultModel(llm.RoleReviewer)+")")
	fl.StringVar(&opts.Resume, "resume", "", "continue the unfinished run of this slug")
	fl.BoolVar(&opts.JSON, "json", false, "print the outcome as JSON on stdout")
	addEngineFlags(cmd, &opts.Engine)
	return cmd
}

// maxBriefBytes bounds a brief: notes, not a book.
const maxBriefBytes = 1 << 20

func issueRun(ctx context.Context, opts *IssueOptions) error {
	top, err := gitx.TopLevel(ctx, opts.WorkDir)
	if err != nil {
		return fmt.Errorf("azero issue keeps its audit trail in a git repository; run it inside one: %w", err)
	}
	cfg, err := opts.config(top)
	if err != nil {
		return err
	}
	if opts.Resume != "" {
		return opts.resumeSlug(ctx, cfg, runs.IssueWorkflow, opts.Resume, opts.JSON)
	}
	// A new run's checks report to this machine's store, whatever the
	// engine: a state directory that cannot hold it fails first.
	if _, err := opts.Env.Store(ctx); err != nil {
		return err
	}
	raw, err := opts.IO.ReadInput(ctx, opts.WorkDir, opts.Brief, maxBriefBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("brief file %s not found: pass the path of your notes with --brief", opts.Brief)
	case err != nil:
		return err
	}
	p, plan, err := runs.PrepareIssue(ctx, opts.Env, cfg, runs.IssueRequest{Repo: top, BriefPath: opts.Env.Abs(opts.Brief), Brief: raw,
		Tracker: opts.Tracker, GitHub: opts.Repo, Drafter: opts.Drafter, Reviewer: opts.Reviewer}, opts.Terminal())
	if err != nil {
		return err
	}
	printIssuePlan(opts.IO, plan)
	return opts.start(ctx, cfg, p, opts.JSON)
}

// modelWhere says where a model's calls go: the provider's endpoint, or
// nowhere for the offline scripted model.
func modelWhere(st provider.Status) string {
	if st.Mocked || st.Spec.Provider == llm.ProviderMock {
		return llm.MockSpec + " (offline: nothing leaves this machine)"
	}
	return st.Spec.String() + " at " + st.Endpoint.String()
}

// printIssuePlan says, before anything is sent, what goes where.
func printIssuePlan(io *iostreams.IOStreams, p runs.IssuePlan) {
	cs := io.ColorScheme()
	w := io.ErrOut
	fmt.Fprintln(w, cs.Bold("azero issue "+p.Slug))
	fmt.Fprintf(w, "  drafter:     %s, receives the brief, the template and your feedback\n", modelWhere(p.Drafter))
	fmt.Fprintf(w, "  reviewer:    %s, receives the brief and the drafts you send\n", modelWhere(p.Reviewer))
	fmt.Fprintf(w, "  tracker:     %s\n", p.Tracker)
	fmt.Fprintf(w, "  editor:      %s\n", p.Editor)
	fmt.Fprintf(w, "  audit trail: %s/\n\n", p.AuditTrail)
}
