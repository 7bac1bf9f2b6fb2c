package runs

import (
	"context"
	"errors"
	"fmt"

	"github.com/azero-dev/azero/internal/config"
	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/llm/provider"
	"github.com/azero-dev/azero/internal/sandbox"
	"github.com/azero-dev/azero/internal/shell"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testrun"
	"github.com/azero-dev/azero/internal/workflow/implement"
	"github.com/azero-dev/azero/internal/workflow/roles"
)

// implementWorkflow is the implementation workflow (spec #87): a design
// implemented test-first in a worktree of its own, under human review.
func implementWorkflow() Workflow {
	return Define(Spec[implement.State, implement.Deps]{
		Name:  implement.Name,
		Graph: implement.Graph,
		Deps:  implementDeps,
		Report: func(env *Env, s *implement.State, err error, o *Outcome) error {
			return reportImplement(s, err, o)
		},
		Summary: func(s *implement.State) Summary {
			return Summary{Change: true, Worktree: s.Worktree, Base: s.BaseCommit, Patch: s.Patch}
		},
		Worktree: func(s *implement.State) *Worktree {
			return &Worktree{Repo: s.Repo, Branch: s.Branch, Base: s.BaseCommit, Dir: &s.Worktree}
		},
		// An approved change that cannot be merged waits at its merge for
		// the user: retrying it at once changes nothing.
		Stops: func(err error) bool {
			var stopped *implement.MergeStoppedError
			return errors.As(err, &stopped)
		},
		Budget: func(env *Env, s *implement.State, usd float64) error {
			cfg, err := env.Config(s.Repo)
			if err != nil {
				return err
			}
			if err := s.SetBudget(usd, env.ProviderEnv(cfg).Prices); err != nil {
				return &RequestError{Err: err}
			}
			return nil
		},
	})
}

// ImplementRequest is a new implementation run as a door asks for it:
// the flags as given (empty when not given), which the configuration
// completes.
type ImplementRequest struct {
	// Repo is the repository's top level; DesignPath and Design the
	// design document's path and content (read by the door, bounded).
	Repo       string
	DesignPath string
	Design     []byte
	Issue      string
	Context    []string
	Runner     string
	TestCmd    string
	Report     string
	Coder      string
	Budget     float64
	Auto       bool
	Force      bool
	Sandbox    string // a sandbox.Mode, "" for the config's
	// MockScript, when set, makes the coder the offline scripted model
	// with this script (azero demo).
	MockScript string
}

// ImplementPlan is what a new implementation run sends where, for the
// person to read before anything is sent (the data policy).
type ImplementPlan struct {
	Coder         provider.Status
	DesignTokens  int
	Modified      []string // files of the change sent whole
	Large         []string // of those, the ones some prompts show as an outline
	Context       []string // context files, relative to the repository
	ContextTokens int
	Lineage       string           // where every prompt, response and test output is kept
	Sandbox       *sandbox.Sandbox // where the model's code runs
}

// PrepareImplement checks a new implementation run's inputs and model
// (before any model call: a design that cannot be implemented is reported
// first) and the sandbox its code will run in (no model is asked for code
// that nothing could confine), and makes the run, to be started and
// followed from t. Inputs that cannot be meant are a RequestError.
func PrepareImplement(ctx context.Context, env *Env, cfg config.Config, req ImplementRequest, t Terminal) (*Prepared, ImplementPlan, error) {
	penv := env.ProviderEnv(cfg)
	coder := req.Coder
	if coder == "" {
		coder = RoleModel(cfg, llm.RoleCoder, "")
	}
	mode, err := SandboxMode(req.Sandbox, cfg)
	if err != nil {
		return nil, ImplementPlan{}, err
	}
	settings := implement.Settings{Auto: req.Auto, Force: req.Force, Budget: req.Budget, Network: cfg.Sandbox.Network}
	if mode != sandbox.Auto {
		settings.Sandbox = string(mode)
	}
	switch {
	case req.MockScript != "":
		coder, settings.MockScript = llm.MockSpec, req.MockScript
	case penv.MockLLM:
		// The run records the model it really uses: resuming it later
		// without AZERO_MOCK_LLM must not switch models.
		coder, settings.MockScript = llm.MockSpec, penv.MockScript
	}
	penv.Role = llm.RoleCoder
	penv.MockLLM, penv.MockScript = false, settings.MockScript
	stateDir, err := env.StateDir()
	if err != nil {
		return nil, ImplementPlan{}, err
	}
	runID := store.NewID(env.now())
	state, plan, err := implement.Prepare(ctx, implement.Inputs{
		DesignPath: req.DesignPath, Design: req.Design, Issue: req.Issue, Dir: req.Repo, Context: req.Context,
		Runner: req.Runner, TestCmd: req.TestCmd, Report: req.Report, Coder: coder, Prices: penv.Prices,
		Settings: settings, Config: cfg.Implement, StateDir: stateDir, RunID: runID,
	})
	if err != nil {
		var ie *implement.InputError
		if errors.As(err, &ie) {
			return nil, ImplementPlan{}, &RequestError{Err: ie.Err}
		}
		return nil, ImplementPlan{}, err
	}
	status := provider.Describe(coder, penv)
	if status.Err != nil {
		return nil, ImplementPlan{}, status.Err
	}
	box, err := env.Sandbox(cfg, mode, settings.Network)
	if err != nil {
		return nil, ImplementPlan{}, err
	}
	pl := ImplementPlan{Coder: status, DesignTokens: plan.DesignTokens, Modified: plan.Modified, Large: plan.Large,
		ContextTokens: plan.ContextTokens, Lineage: roles.LineageDir(stateDir, runID), Sandbox: box}
	for _, c := range plan.Context {
		pl.Context = append(pl.Context, c.Rel)
	}
	wf, _ := Catalog().Lookup(implement.Name)
	meta := map[string]string{"repo": state.Repo, "lld": state.LLDPath, "branch": state.Branch, "coder": state.Coder, "runner": state.Runner}
	return &Prepared{ID: runID, wf: wf, state: state, key: state.Branch, meta: meta, term: t}, pl, nil
}

// implementDeps builds what the workflow's nodes use for one run, from
// the run's state: the model it records, the settings it started with.
// The nodes and the model report to run.Events.
func implementDeps(ctx context.Context, env *Env, run Run, s *implement.State) (implement.Deps, error) {
	cfg, err := env.Config(s.Repo)
	if err != nil {
		return implement.Deps{}, err
	}
	// The write reviews of the graph ask about whole-file replacements of
	// large files at a gate, where the terminal, the web page and a
	// Temporal Update can answer and a run without a terminal waits with
	// its question stored; nothing asks in the middle of a node, so a
	// write reaching the writer unapproved is refused.
	w, err := env.Writer(s.Settings.Auto, s.Settings.Force, nil)
	if err != nil {
		return implement.Deps{}, err
	}
	st, err := env.Store(ctx)
	if err != nil {
		return implement.Deps{}, err
	}
	stateDir, err := env.StateDir()
	if err != nil {
		return implement.Deps{}, err
	}
	penv := env.ProviderEnv(cfg)
	// The recorded model, whatever AZERO_MOCK_LLM says now.
	penv.MockLLM, penv.MockScript = false, s.Settings.MockScript
	lineage := roles.NewLineage(w, stateDir, run.ID)
	// Opened at its first call: a run resumed past its last model call
	// (at the merge) needs no key. A new run checked the key already.
	coder := llm.Lazy(s.Coder, func() (llm.Model, error) {
		return roles.Open(llm.RoleCoder, s.Coder, roles.Run{Store: st, Writer: w, StateDir: stateDir, RunID: run.ID,
			Env: penv, Budget: s.Settings.Budget, Secrets: env.secrets(penv), Lineage: lineage, Events: run.Events})
	})
	// Every test and lint process of the run is confined, as the run
	// recorded when it started; its build caches are a layer of its own.
	box, err := env.Sandbox(cfg, sandbox.Mode(s.Settings.Sandbox), s.Settings.Network)
	if err != nil {
		return implement.Deps{}, err
	}
	caches := runCaches(stateDir, run.ID)
	runner, err := testrun.New(s.Runner, testrun.Options{TestCmd: s.TestCmd, Report: s.Report, Checkout: s.Repo, Sandbox: box, Caches: caches})
	if err != nil {
		return implement.Deps{}, err
	}
	a, err := env.Audit()
	if err != nil {
		return implement.Deps{}, err
	}
	return implement.Deps{Coder: coder, Writer: w, Runner: runner, Lineage: lineage, Events: run.Events, Audit: a,
		MaxOutput: maxOutput(cfg.Roles.Coder, s.Coder, penv.Prices), Sandbox: box, Caches: caches,
		Secrets: env.secrets(penv)}, nil
}

// ImplementResult is the implementation workflow's part of --json.
type ImplementResult struct {
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

// reportImplement reports an implementation run from the state its drive
// left (s; nil when it never started).
func reportImplement(s *implement.State, err error, o *Outcome) error {
	if s == nil {
		return err
	}
	res := ImplementResult{Result: s.Result, Branch: s.Branch, Commit: s.Commit, Scaffolds: s.Scaffolds,
		Attempts: s.Implementations, Flagged: s.Flagged, GateDecision: s.GateDecision, Patch: s.Patch}
	for _, fs := range s.Files {
		res.Files = append(res.Files, fs.Path)
	}
	var stopped *implement.MergeStoppedError
	switch {
	case errors.As(err, &stopped):
		res.Result, res.MergeCommand = implement.ResultMergeStopped, stopped.Command
	case o.Engine == Temporal && !o.Ended && o.Status == store.StatusFailed && o.Node == implement.NodeMerge && s.Commit != "":
		// Stopped at its merge (the checkout moved, or holds changes the
		// merge would touch): merged by hand, or by a resume.
		res.Result = implement.ResultMergeStopped
		res.MergeCommand = fmt.Sprintf("git -C %s merge %s", shell.Quote(s.Repo), s.Branch)
	}
	o.Result = res
	if err == nil && s.Result == implement.ResultMerged {
		o.Done = fmt.Sprintf("Merged %s into %s (%s).", s.Branch, s.BaseBranch, gitx.ShortID(s.Commit))
	}
	return err
}
