package runs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/config"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/llm/provider"
	"github.com/azero-dev/azero/internal/prompt"
	"github.com/azero-dev/azero/internal/rundoc"
	"github.com/azero-dev/azero/internal/safewrite"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/tracker"
	"github.com/azero-dev/azero/internal/workflow/issue"
	"github.com/azero-dev/azero/internal/workflow/roles"
)

// IssueWorkflow names the governance workflow (spec #62), whose runs are
// keyed by their slug.
const IssueWorkflow = issue.Name

// IssueTrackers are the trackers a governance run files to.
var IssueTrackers = []string{issue.TrackerGitHub, issue.TrackerLocal}

// IsSlug reports whether s is a slug as the governance workflow makes
// them: lower-case letters, digits and hyphens.
func IsSlug(s string) bool { return issue.CleanSlug(s) == s }

// checkAgain is a resumed governance run's Ready: the pre-flight checks
// again, in this process (its editor, its token), but not the models.
func checkAgain(ctx context.Context, checks *issue.Preflight, slug string, r store.Run, t Terminal) error {
	checks.Models = nil
	if err := checks.Run(ctx); err != nil {
		return err
	}
	t.note(fmt.Sprintf("Resuming run %s (slug %s) at %s.", r.ID, slug, r.Node))
	return nil
}

// issueWorkflow is the governance workflow: a brief turned into a
// drafted, human-edited, reviewed issue, filed.
func issueWorkflow() Workflow {
	return Define(Spec[issue.State, issue.Deps]{
		Name:  issue.Name,
		Graph: issue.New,
		Deps:  issueDeps,
		// The checks again (this process's editor and token); the models
		// are not checked again: a run resumed past its last model call
		// (at the verdict gate, at the filing) needs no key, and one that
		// still calls a model fails at that call, naming the key,
		// resumable.
		Ready: func(ctx context.Context, d issue.Deps, s *issue.State, r store.Run, t Terminal) error {
			return checkAgain(ctx, d.Checks, s.Slug, r, t)
		},
		Report:  reportIssue,
		Summary: func(s *issue.State) Summary { return Summary{Trail: trailOf(s)} },
		// The human chose, at the slug collision, to resume the run holding
		// the slug.
		HandOver: func(err error) (string, bool) {
			var handOver *issue.HandOverError
			if errors.As(err, &handOver) {
				return handOver.RunID, true
			}
			return "", false
		},
	})
}

// IssueRequest is a new governance run as a door asks for it: the flags
// as given (empty when not given), which the configuration completes.
type IssueRequest struct {
	// Repo is the repository's top level (where the audit trail goes);
	// BriefPath and Brief the brief's path and content (read by the door,
	// bounded).
	Repo      string
	BriefPath string
	Brief     []byte
	Tracker   string // github, local or "" (see issue.Prepare)
	GitHub    string // --repo OWNER/NAME
	Drafter   string
	Reviewer  string
}

// IssuePlan is what a new governance run sends where, for the person to
// read before anything is sent.
type IssuePlan struct {
	Slug              string
	Drafter, Reviewer provider.Status
	Tracker           string // the tracker it files to
	Editor            string // the editor its gates open
	AuditTrail        string // the trail's directory, in the repository
}

// PrepareIssue resolves a new governance run's models (their keys
// present before anything is written), makes its state, and runs its
// pre-flight checks (editor, tracker and token, repository) before the
// run exists: a failed check leaves nothing behind. The run is started
// and followed from t.
func PrepareIssue(ctx context.Context, env *Env, cfg config.Config, req IssueRequest, t Terminal) (*Prepared, IssuePlan, error) {
	drafter, reviewer, err := issueModels(env, cfg, req)
	if err != nil {
		return nil, IssuePlan{}, err
	}
	in := issue.Inputs{BriefPath: req.BriefPath, Brief: req.Brief, Dir: req.Repo, Tracker: req.Tracker,
		Repo: req.GitHub, Config: cfg.Issue, Drafter: effectiveModel(drafter), Reviewer: effectiveModel(reviewer)}
	if drafter.Mocked || reviewer.Mocked {
		in.MockScript = env.ProviderEnv(cfg).MockScript
	}
	s, err := issue.Prepare(ctx, in)
	if err != nil {
		var ie *issue.InputError
		if errors.As(err, &ie) {
			return nil, IssuePlan{}, &RequestError{Err: ie.Err}
		}
		return nil, IssuePlan{}, err
	}
	runID := store.NewID(env.now())
	fe, err := env.flowEngine(ctx, t, "")
	if err != nil {
		return nil, IssuePlan{}, err
	}
	deps, err := issueDeps(ctx, env, Run{ID: runID, Events: fe, Approver: t.Approver}, s)
	if err != nil {
		return nil, IssuePlan{}, err
	}
	// N1 before the run exists: a failed check leaves nothing behind.
	if err := deps.Checks.Run(ctx); err != nil {
		return nil, IssuePlan{}, err
	}
	plan := IssuePlan{Slug: s.Slug, Drafter: drafter, Reviewer: reviewer, Tracker: deps.Tracker.Name(),
		Editor: deps.Checks.EditorCommand(), AuditTrail: s.ActiveDir()}
	meta := map[string]string{"slug": s.Slug, "brief": s.BriefPath, "repo": req.Repo, "tracker": deps.Tracker.Name(),
		"drafter": s.Drafter, "reviewer": s.Reviewer}
	wf, _ := Catalog().Lookup(issue.Name)
	// The run claims its slug (its key) as its first step.
	return &Prepared{ID: runID, wf: wf, state: s, meta: meta, term: t, fe: fe, graph: issue.New(deps)}, plan, nil
}

// issueModels resolves the drafter and reviewer a new run will use (the
// scripted model when the run is mocked) and checks that their keys are
// present, before anything is written.
func issueModels(env *Env, cfg config.Config, req IssueRequest) (drafter, reviewer provider.Status, err error) {
	penv := env.ProviderEnv(cfg)
	var st [2]provider.Status
	for i, m := range []struct {
		role llm.Role
		flag string
	}{{llm.RoleDrafter, req.Drafter}, {llm.RoleReviewer, req.Reviewer}} {
		e := penv
		e.Role = m.role
		st[i] = provider.Describe(RoleModel(cfg, m.role, m.flag), e)
		if st[i].Err != nil {
			// A missing key names its variable; no file is written before this.
			return st[0], st[1], fmt.Errorf("%s model %s: %w", m.role, st[i].Configured, st[i].Err)
		}
	}
	return st[0], st[1], nil
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
			return issue.Holder{RunID: run.ID, Status: string(rundoc.Status(r.st, run)), Node: run.Node}, true, nil
		}
	}
	return issue.Holder{}, false, nil
}

func (r issueRuns) Claim(ctx context.Context, runID, slug string) error {
	return r.st.SetKey(ctx, runID, slug)
}

// governed is what the two governance workflows (issue, design) build
// alike for one run: its writer, store, state directory and config, its
// models (the recorded ones, whatever AZERO_MOCK_LLM says now: opened by
// the pre-flight check or at their first call, so a run resumed past its
// last model call needs no key), its audit log, the editor's check and
// the models' output bounds.
type governed struct {
	w         *safewrite.Writer
	st        *store.Store
	stateDir  string
	cfg       config.Config
	drafter   llm.Model
	reviewer  llm.Model
	audit     *audit.Logger
	editor    func() (string, error)
	maxOutput map[llm.Role]int
	prices    llm.PriceTable
}

// openGoverned builds a governance run's common dependencies from the
// repository root and the models its state records.
func openGoverned(ctx context.Context, env *Env, run Run, root, drafterSpec, reviewerSpec, mockScript string) (governed, error) {
	var g governed
	var err error
	if g.w, err = env.Writer(false, false, run.Approver); err != nil {
		return g, err
	}
	if g.st, err = env.Store(ctx); err != nil {
		return g, err
	}
	if g.stateDir, err = env.StateDir(); err != nil {
		return g, err
	}
	if g.cfg, err = env.Config(root); err != nil {
		return g, err
	}
	penv := env.ProviderEnv(g.cfg)
	penv.MockLLM, penv.MockScript = false, mockScript
	r := roles.Run{Store: g.st, Writer: g.w, StateDir: g.stateDir, RunID: run.ID, Env: penv, Secrets: env.secrets(penv),
		Lineage: roles.NewLineage(g.w, g.stateDir, run.ID), Events: run.Events}
	g.drafter = llm.Lazy(drafterSpec, func() (llm.Model, error) { return roles.Open(llm.RoleDrafter, drafterSpec, r) })
	g.reviewer = llm.Lazy(reviewerSpec, func() (llm.Model, error) { return roles.Open(llm.RoleReviewer, reviewerSpec, r) })
	if g.audit, err = env.Audit(); err != nil {
		return g, err
	}
	// The gates open the editor of whoever answers; a process that
	// cannot find one refuses before any model call.
	g.editor = prompt.New(nil, env.Getenv, env.LookPath).CheckEditor
	g.maxOutput = map[llm.Role]int{
		llm.RoleDrafter:  maxOutput(g.cfg.Roles.Drafter, drafterSpec, penv.Prices),
		llm.RoleReviewer: maxOutput(g.cfg.Roles.Reviewer, reviewerSpec, penv.Prices),
	}
	g.prices = penv.Prices
	return g, nil
}

// issueDeps builds what the workflow's nodes use for one run. The nodes
// and the models report to run.Events.
func issueDeps(ctx context.Context, env *Env, run Run, s *issue.State) (issue.Deps, error) {
	g, err := openGoverned(ctx, env, run, s.Root, s.Drafter, s.Reviewer, s.MockScript)
	if err != nil {
		return issue.Deps{}, err
	}
	tr, err := issueTracker(env, s, g.cfg, g.w, run.ID)
	if err != nil {
		return issue.Deps{}, err
	}
	return issue.Deps{
		Writer: g.w, Events: run.Events, Audit: g.audit, Drafter: g.drafter, Reviewer: g.reviewer, Tracker: tr, StateDir: g.stateDir, Now: env.Now,
		Runs: issueRuns{st: g.st}, MaxOutput: g.maxOutput,
		Checks: &issue.Preflight{Editor: g.editor, Tracker: tr, Root: s.Root, AuditDir: s.AuditDir,
			Models: []llm.Model{g.drafter, g.reviewer}},
	}, nil
}

// issueTracker opens the tracker a run files to.
func issueTracker(env *Env, s *issue.State, cfg config.Config, w *safewrite.Writer, runID string) (tracker.Tracker, error) {
	return openTracker(env, s.Root, s.Tracker, cfg, w, runID)
}

// openTracker opens the tracker tc names: GitHub with the environment's
// token, or the local tracker's files in the repository root, written
// with w for run runID (nil: the tracker is only read).
func openTracker(env *Env, root string, tc issue.TrackerConfig, cfg config.Config, w *safewrite.Writer, runID string) (tracker.Tracker, error) {
	switch tc.Kind {
	case issue.TrackerGitHub:
		token := env.Getenv("GITHUB_TOKEN")
		if token == "" {
			token = env.Getenv("GH_TOKEN")
		}
		return tracker.NewGitHub(tracker.GitHubOptions{Repo: tc.Repo, Token: token, APIURL: env.Getenv("GITHUB_API_URL")})
	case issue.TrackerLocal:
		return &tracker.Local{Root: root, Dir: tc.IssuesDir, Writer: w, RunID: runID, KnownLabels: cfg.Issue.Labels}, nil
	}
	return nil, fmt.Errorf("unknown tracker %q in the run's state", tc.Kind)
}

// IssueResult is the governance workflow's part of --json.
type IssueResult struct {
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

// reportIssue reports a governance run: a run cancelled at the slug
// collision ends cleanly (spec #62, scenario 028: exit 0) with a
// document of its own; a saved one says how it goes on.
func reportIssue(env *Env, start *issue.State, err error, o *Outcome) error {
	var cancelled *issue.CancelledError
	if errors.As(err, &cancelled) {
		o.Notes = append(o.Notes, "Aborted: nothing was created or changed.")
		o.Doc = map[string]any{"workflow": issue.Name, "status": "not_started", "run_id": o.RunID, "slug": cancelled.Slug}
		return nil
	}
	// The stored state is the truth: a node that stopped at a gate
	// changed only its in-memory copy.
	s := start
	var stored issue.State
	if o.Stored(&stored) {
		s = &stored
	}
	if s == nil {
		return err
	}
	if o.Engine == Local {
		var nodeErr *flow.NodeError
		resume := env.ResumeCommand(o.RunID, false)
		switch {
		case (errors.Is(err, flow.ErrWaiting) || errors.Is(err, flow.ErrInterrupted)) && s.Collision != nil:
			o.Notes = append(o.Notes, fmt.Sprintf("%s\nThe run is saved before it created anything; answer its question from a terminal with: %s", s.Collision.Why, resume))
			if s.Collision.Holder != nil {
				o.Notes = append(o.Notes, fmt.Sprintf("or continue the run holding the slug with: %s issue --resume %s", env.command(), s.Collision.Slug))
			}
		case errors.Is(err, flow.ErrWaiting) || errors.Is(err, flow.ErrInterrupted):
			o.Notes = append(o.Notes, fmt.Sprintf("The run is saved; continue it from a terminal with: %s issue --resume %s", env.command(), s.Slug))
		case errors.As(err, &nodeErr):
			o.Notes = append(o.Notes, fmt.Sprintf("The run is saved at %s; once the cause is fixed, continue it with: %s issue --resume %s", nodeErr.Node, env.command(), s.Slug))
		}
	}
	res := IssueResult{Slug: s.Slug, AuditDir: s.TrailDir(), Tracker: s.Tracker.Label(), Iteration: s.Iteration,
		Drafts: s.Drafts, Verdicts: s.Verdicts, Issue: s.Filed, Trail: []issue.Entry{}}
	switch {
	case o.Engine == Temporal && s.Filed == nil && !o.Ended:
		res.Resume = env.ResumeCommand(o.RunID, true)
	case o.Engine == Local && s.Filed == nil && !errors.Is(err, flow.ErrAborted):
		res.Resume = env.command() + " issue --resume " + s.Slug
	}
	if entries, terr := (issue.Trail{Root: s.Root, Dir: s.TrailDir()}).Entries(); terr == nil && entries != nil {
		res.Trail = entries
	}
	o.Result = res
	return err
}

// trailOf is a governance run's drafts and verdicts, and the files of its
// audit trail.
func trailOf(s *issue.State) *Trail {
	t := &Trail{Draft: s.Draft, Verdict: s.Verdict, ReviewerVerdict: s.ReviewerVerdict, Iteration: s.Iteration,
		Drafts: s.Drafts, Verdicts: s.Verdicts}
	if s.Filed != nil {
		t.Filed = &Filed{Number: s.Filed.Number, URL: s.Filed.URL}
	}
	if s.Root != "" && s.AuditDir != "" && s.Slug != "" {
		t.Dir = filepath.Join(s.Root, filepath.FromSlash(s.TrailDir()))
	}
	return t
}

// Files lists the files of a trail's directory, sorted.
func (t *Trail) Files() []string {
	if t == nil || t.Dir == "" {
		return nil
	}
	var names []string
	entries, _ := os.ReadDir(t.Dir)
	for _, e := range entries {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names
}
