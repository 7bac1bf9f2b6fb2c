package runs

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"

	"github.com/azero-dev/azero/internal/config"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/llm/provider"
	"github.com/azero-dev/azero/internal/sandbox"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/tracker"
	"github.com/azero-dev/azero/internal/workflow/design"
	"github.com/azero-dev/azero/internal/workflow/governance"
	"github.com/azero-dev/azero/internal/workflow/implement"
	"github.com/azero-dev/azero/internal/workflow/issue"
)

// DesignWorkflow names the design workflow, whose runs are keyed by their
// slug (design-NNN-title).
const DesignWorkflow = design.Name

// designWorkflow is the design workflow: an issue (or a brief) turned into
// a drafted, mechanically checked, human-edited, reviewed design document,
// committed with its audit trail; with --implement the implementation
// workflow goes on in the same run.
func designWorkflow() Workflow {
	return Define(Spec[design.State, design.Deps]{
		Name:  design.Name,
		Graph: design.New,
		Deps:  designDeps,
		// The checks again (this process's editor); the models are not
		// checked again: a run resumed past its last model call needs no
		// key, and one that still calls a model fails at that call, naming
		// the key, resumable.
		Ready: func(ctx context.Context, d design.Deps, s *design.State, r store.Run, t Terminal) error {
			return checkAgain(ctx, d.Checks, s.Slug, r, t)
		},
		Report:  reportDesign,
		Summary: designSummary,
		// With --implement, the implementation's worktree, once it has one.
		Worktree: func(s *design.State) *Worktree {
			in := s.Implementation
			if in == nil {
				return nil
			}
			return &Worktree{Repo: in.Repo, Branch: in.Branch, Base: in.BaseCommit, Dir: &in.Worktree}
		},
		Stops: func(err error) bool {
			var stopped *implement.MergeStoppedError
			return errors.As(err, &stopped)
		},
		Budget: func(env *Env, s *design.State, usd float64) error {
			if s.Implementation == nil {
				return requestf("run %s has not started its implementation: --budget applies to it once it has", s.Slug)
			}
			cfg, err := env.Config(s.Root)
			if err != nil {
				return err
			}
			if err := s.Implementation.SetBudget(usd, env.ProviderEnv(cfg).Prices); err != nil {
				return &RequestError{Err: err}
			}
			return nil
		},
	})
}

// DesignRequest is a new design run as a door asks for it: the flags as
// given (empty when not given), which the configuration completes.
type DesignRequest struct {
	// Repo is the repository's top level (where the design and its trail
	// are committed).
	Repo string
	// Issue is the issue's number, read from the tracker Tracker and
	// GitHub choose as `azero issue` does; or BriefPath and Brief, a
	// problem statement that is not an issue (read by the door, bounded).
	Issue     int
	Tracker   string // github, local or ""
	GitHub    string // --repo OWNER/NAME
	BriefPath string
	Brief     []byte
	Drafter   string
	Reviewer  string
	// Implement goes on into the implementation of the committed design,
	// with these flags of `azero implement`.
	Implement *DesignImplement
}

// DesignImplement are the implementation's flags of a design run that
// goes on into it (--implement).
type DesignImplement struct {
	Coder   string
	Runner  string
	TestCmd string
	Report  string
	Context []string
	Budget  float64
	Auto    bool
	Sandbox string // a sandbox.Mode, "" for the config's
}

// DesignPlan is what a new design run sends where, for the person to read
// before anything is sent.
type DesignPlan struct {
	Slug              string
	Input             string // "issue #12 (local docs/issues): Title", or the brief's path
	FiledTrail        string // the trail azero issue left for the issue, if any
	Drafter, Reviewer provider.Status
	Editor            string
	AuditTrail        string // the trail's directory, in the repository
	LLDPath           string // where the approved design goes
	// Coder and Sandbox are set with --implement.
	Coder   *provider.Status
	Sandbox *sandbox.Sandbox
}

// PrepareDesign resolves a new design run's models (their keys present
// before anything is written), reads the issue from its tracker, makes the
// run's state and runs its pre-flight checks (editor, repository, the
// directories it commits to) before the run exists: a failed check leaves
// nothing behind. The run is started and followed from t.
func PrepareDesign(ctx context.Context, env *Env, cfg config.Config, req DesignRequest, t Terminal) (*Prepared, DesignPlan, error) {
	drafter, reviewer, err := issueModels(env, cfg, IssueRequest{Drafter: req.Drafter, Reviewer: req.Reviewer})
	if err != nil {
		return nil, DesignPlan{}, err
	}
	in := design.Inputs{Dir: req.Repo, Issue: req.Issue, BriefPath: req.BriefPath, Brief: req.Brief, Config: cfg,
		Drafter: effectiveModel(drafter), Reviewer: effectiveModel(reviewer)}
	penv := env.ProviderEnv(cfg)
	if drafter.Mocked || reviewer.Mocked {
		in.MockScript = penv.MockScript
	}
	if req.Issue > 0 {
		tc, err := issue.ResolveTracker(req.Tracker, req.GitHub, cfg.Issue)
		if err != nil {
			return nil, DesignPlan{}, requestError(err)
		}
		tr, err := openTracker(env, req.Repo, tc, cfg, nil, "")
		if err != nil {
			return nil, DesignPlan{}, err
		}
		rd, ok := tr.(tracker.Reader)
		if !ok {
			return nil, DesignPlan{}, fmt.Errorf("the %s tracker cannot read issues", tc.Label())
		}
		in.Reader, in.TrackerName = rd, tc.Label()
	} else if req.Tracker != "" || req.GitHub != "" {
		return nil, DesignPlan{}, requestf("--tracker and --repo say where to read --issue from: a brief needs neither")
	}
	var (
		coder *provider.Status
		box   *sandbox.Sandbox
	)
	if im := req.Implement; im != nil {
		p, st, b, err := designImplementPlan(env, cfg, im)
		if err != nil {
			return nil, DesignPlan{}, err
		}
		in.Implement, coder, box = p, &st, b
	}
	s, err := design.Prepare(ctx, in)
	if err != nil {
		return nil, DesignPlan{}, requestError(err)
	}
	runID := store.NewID(env.now())
	fe, err := env.flowEngine(ctx, t, "")
	if err != nil {
		return nil, DesignPlan{}, err
	}
	deps, err := designDeps(ctx, env, Run{ID: runID, Events: fe, Approver: t.Approver}, s)
	if err != nil {
		return nil, DesignPlan{}, err
	}
	// Before the run exists: a failed check leaves nothing behind.
	if err := deps.Checks.Run(ctx); err != nil {
		return nil, DesignPlan{}, err
	}
	plan := DesignPlan{Slug: s.Slug, Input: s.BriefPath, Drafter: drafter, Reviewer: reviewer, Editor: deps.Checks.EditorCommand(),
		AuditTrail: s.ActiveDir(), LLDPath: s.LLDPath, Coder: coder, Sandbox: box}
	meta := map[string]string{"slug": s.Slug, "repo": req.Repo, "lld": s.LLDPath, "drafter": s.Drafter, "reviewer": s.Reviewer}
	if is := s.Issue; is != nil {
		plan.Input = fmt.Sprintf("issue #%d (%s): %s", is.Number, is.Tracker, is.Title)
		plan.FiledTrail = is.Trail
		meta["issue"], meta["tracker"] = fmt.Sprint(is.Number), is.Tracker
	} else {
		meta["brief"] = s.BriefPath
	}
	if s.Implement != nil {
		meta["coder"] = s.Implement.Coder
	}
	wf, _ := Catalog().Lookup(design.Name)
	return &Prepared{ID: runID, wf: wf, state: s, key: s.Slug, meta: meta, term: t, fe: fe, graph: design.New(deps)}, plan, nil
}

// requestError makes a workflow's input error the service's RequestError.
func requestError(err error) error {
	var de *design.InputError
	if errors.As(err, &de) {
		return &RequestError{Err: de.Err}
	}
	var ie *issue.InputError
	if errors.As(err, &ie) {
		return &RequestError{Err: ie.Err}
	}
	return err
}

// designImplementPlan is how a design run with --implement will implement
// its design, settled as `azero implement` settles it (the coder, the
// scripted one when mocked; the sandbox the code will run in, which must
// be there before any model is asked), before the run starts.
func designImplementPlan(env *Env, cfg config.Config, im *DesignImplement) (*design.ImplementPlan, provider.Status, *sandbox.Sandbox, error) {
	penv := env.ProviderEnv(cfg)
	coder := im.Coder
	if coder == "" {
		coder = RoleModel(cfg, llm.RoleCoder, "")
	}
	mode, err := SandboxMode(im.Sandbox, cfg)
	if err != nil {
		return nil, provider.Status{}, nil, err
	}
	settings := implement.Settings{Auto: im.Auto, Budget: im.Budget, Network: cfg.Sandbox.Network}
	if mode != sandbox.Auto {
		settings.Sandbox = string(mode)
	}
	if penv.MockLLM {
		// The run records the model it really uses.
		coder, settings.MockScript = llm.MockSpec, penv.MockScript
	}
	penv.Role = llm.RoleCoder
	penv.MockLLM, penv.MockScript = false, settings.MockScript
	st := provider.Describe(coder, penv)
	if st.Err != nil {
		return nil, st, nil, fmt.Errorf("coder model %s: %w", st.Configured, st.Err)
	}
	box, err := env.Sandbox(cfg, mode, settings.Network)
	if err != nil {
		return nil, st, nil, err
	}
	return &design.ImplementPlan{Coder: coder, Runner: im.Runner, TestCmd: im.TestCmd, Report: im.Report, Context: im.Context,
		Settings: settings, Config: cfg.Implement}, st, box, nil
}

// designDeps builds what the workflow's nodes use for one run, from its
// state: the models it records, and, for the mounted implementation, what
// implementDeps builds for an implementation run.
func designDeps(ctx context.Context, env *Env, run Run, s *design.State) (design.Deps, error) {
	g, err := openGoverned(ctx, env, run, s.Root, s.Drafter, s.Reviewer, s.MockScript)
	if err != nil {
		return design.Deps{}, err
	}
	return design.Deps{
		Writer: g.w, Events: run.Events, Audit: g.audit, Drafter: g.drafter, Reviewer: g.reviewer, StateDir: g.stateDir, Now: env.Now,
		MaxOutput: g.maxOutput,
		Checks: &governance.Preflight{Editor: g.editor, Root: s.Root, AuditDir: s.AuditDir,
			Dirs: map[string]string{"design.lld_dir": path.Dir(s.LLDPath)}, Models: []llm.Model{g.drafter, g.reviewer}},
		Implement: func(ctx context.Context, in *implement.State) (implement.Deps, error) {
			return implementDeps(ctx, env, run, in)
		},
		Prices: g.prices,
	}, nil
}

// DesignResult is the design workflow's part of --json.
type DesignResult struct {
	Slug     string `json:"slug"`
	Issue    int    `json:"issue,omitempty"` // the issue's number
	IssueURL string `json:"issue_url,omitempty"`
	// IssueTrail is the trail `azero issue` left when it filed the issue.
	IssueTrail string `json:"issue_trail,omitempty"`
	Brief      string `json:"brief,omitempty"`
	LLDPath    string `json:"lld_path"`
	Commit     string `json:"commit,omitempty"`
	AuditDir   string `json:"audit_dir"`
	Iteration  int    `json:"iteration"`
	Drafts     int    `json:"drafts"`
	Verdicts   int    `json:"verdicts"`
	// CheckReturns counts the drafts the mechanical check sent back since
	// the human last asked for one; Findings are its problems with the
	// current draft.
	CheckReturns int              `json:"check_returns"`
	Findings     []design.Finding `json:"findings,omitempty"`
	// Next is the command that implements the committed design.
	Next   string             `json:"next_command,omitempty"`
	Resume string             `json:"resume_command,omitempty"`
	Trail  []governance.Entry `json:"trail"`
	// Implementation is the implementation's report, with --implement.
	Implementation *ImplementResult `json:"implementation,omitempty"`
}

// TopLevel is what a design run's --json document also has at its top:
// where the design is, its commit, its issue.
func (r DesignResult) TopLevel() map[string]any {
	top := map[string]any{"slug": r.Slug, "lld_path": r.LLDPath, "commit": r.Commit}
	if r.Issue > 0 {
		top["issue"] = r.Issue
	}
	if r.Next != "" {
		top["next_command"] = r.Next
	}
	return top
}

// reportDesign reports a design run from the state stored after its drive.
func reportDesign(env *Env, start *design.State, err error, o *Outcome) error {
	s := start
	var stored design.State
	if o.Stored(&stored) {
		s = &stored
	}
	if s == nil {
		return err
	}
	resume := env.command() + " design --resume " + s.Slug
	if o.Engine == Local {
		var nodeErr *flow.NodeError
		switch {
		case errors.Is(err, flow.ErrWaiting) || errors.Is(err, flow.ErrInterrupted):
			o.Notes = append(o.Notes, "The run is saved; continue it from a terminal with: "+resume)
		case errors.As(err, &nodeErr):
			o.Notes = append(o.Notes, fmt.Sprintf("The run is saved at %s; once the cause is fixed, continue it with: %s", nodeErr.Node, resume))
		}
	}
	res := DesignResult{Slug: s.Slug, Brief: s.BriefPath, LLDPath: s.LLDPath, AuditDir: s.TrailDir(), Iteration: s.Iteration,
		Drafts: s.Drafts, Verdicts: s.Verdicts, CheckReturns: s.Returns, Findings: s.Findings, Trail: []governance.Entry{}}
	if is := s.Issue; is != nil {
		res.Issue, res.IssueURL, res.IssueTrail = is.Number, is.URL, is.Trail
	}
	if c := s.Committed; c != nil {
		res.Commit = c.Commit
		res.Next = env.command() + " implement --lld " + s.LLDPath
	}
	finished := s.Committed != nil && (s.Implement == nil || o.Status.Finished())
	switch {
	case o.Engine == Temporal && !o.Ended && !finished:
		res.Resume = env.ResumeCommand(o.RunID, true)
	case o.Engine == Local && !o.Status.Finished() && !errors.Is(err, flow.ErrAborted):
		res.Resume = resume
	}
	if entries, terr := (governance.Trail{Root: s.Root, Dir: s.TrailDir()}).Entries(); terr == nil && entries != nil {
		res.Trail = entries
	}
	if s.Implementation != nil {
		var sub Outcome
		sub.Engine = o.Engine
		_ = reportImplement(s.Implementation, err, &sub)
		if r, ok := sub.Result.(ImplementResult); ok {
			res.Implementation = &r
		}
		if err == nil && sub.Done != "" {
			o.Done = fmt.Sprintf("Committed %s (%s); %s", s.LLDPath, gitx.ShortID(res.Commit), sub.Done)
		}
	} else if err == nil && s.Committed != nil {
		o.Done = fmt.Sprintf("Committed %s with its audit trail %s/ (%s).\nNext: %s", s.LLDPath, s.TrailDir(), gitx.ShortID(res.Commit), res.Next)
	}
	o.Result = res
	return err
}

// designSummary is what lists and pages show of a design run: its trail
// like an issue run's; with --implement, the implementation's change.
func designSummary(s *design.State) Summary {
	t := &Trail{Draft: s.Draft, Verdict: s.Verdict, ReviewerVerdict: s.ReviewerWord(), Iteration: s.Iteration,
		Drafts: s.Drafts, Verdicts: s.Verdicts}
	if s.Root != "" && s.AuditDir != "" && s.Slug != "" {
		t.Dir = filepath.Join(s.Root, filepath.FromSlash(s.TrailDir()))
	}
	sum := Summary{Trail: t}
	if in := s.Implementation; in != nil {
		sum.Change, sum.Worktree, sum.Base, sum.Patch = true, in.Worktree, in.BaseCommit, in.Patch
	}
	return sum
}
