// Package implement is azero's implementation workflow (spec #87 with
// #171, #173 and #324 wired in): given a design document, a model writes
// failing tests, then code, until the project's real test runner says
// green; a human sees the diff and approves the merge.
//
// The graph:
//
//	worktree -> baseline -> scaffold -> red -> implement -> green -> lint -> diff_review -> human_review -> commit -> merge -> cleanup -> END
//
// with the loops the specification routes on the runner's result (red:
// RouteRed, green: RouteGreen, lint: RouteLint), an escalate gate for
// what only a human can decide, and the write reviews of spec #173: when
// the coder returns a whole file that would replace an existing file of
// more than 100 lines, nothing of it is written in the round; the round
// ends at a gate that shows the diff and asks:
//
//	scaffold  -> scaffold_write_review -> scaffold_apply_writes -> red    (approve)
//	                                   -> scaffold                        (revise, with feedback)
//	revise    -> revise_write_review   -> revise_apply_writes   -> red    (approve)
//	                                   -> revise                          (revise, with feedback)
//	implement -> write_review          -> apply_writes          -> green  (approve)
//	                                   -> implement                       (revise, with feedback)
//	every write review                 -> cleanup                         (abort)
//
// The human review's revise answer sends the change back through the
// revise node (revise.go): every file of the change is asked whether and
// how it changes for the feedback, the test files first; revised tests go
// through red again before the code is asked:
//
//	human_review -> revise -> red -> implement -> green -> ...   (a test file changed)
//	             -> revise -> implement -> green -> ...          (no test file changed)
//
// The apply step writes exactly the content the human saw over exactly
// the content it replaces (anything else is refused as stale, and the
// round is done again from the current content). Invariants, each proven
// by a test:
//
//   - The model never decides whether tests passed: the red and green gates
//     route on the runner's outcome only.
//   - No path from the start to the commit avoids the red gate, the green
//     gate, the diff review gate or the human review (Graph.PathAvoiding).
//   - All generation and test runs happen in a git worktree on a new branch;
//     the user's checkout is untouched until the human approves, and then
//     only by a merge that leaves their uncommitted work intact.
//   - Every file write goes through safewrite, confined to the worktree;
//     a replacement of a file over 100 lines is written only after a human
//     approved that very content at a write review gate (whatever channel
//     answered), or with --auto --force.
//   - Nothing the executed code (tests, code, conftest.py) arranged is
//     trusted (integrity.go): a run that changed the shared git directory
//     ends the run before the next git call; a run that changed the
//     worktree is put back and never counts; the test files are those of
//     the valid red, the reviewed and committed change is the one the
//     green run tested, the branch is where azero left it, and the merge
//     merges exactly azero's commit.
//   - The tests are the referee's evidence: a test that passed at the
//     baseline and is missing or skipped at red or green, a test a
//     modified test file no longer declares, and any line a modified test
//     file loses are shown at the diff review, which then never passes
//     unattended (revise.go: eroded).
//   - What the model is shown of a test run is testrun's Feedback, cut
//     once with true counts; a stub of an existing file keeps its code;
//     every reply refused on the way is shown to the human.
//   - Every node is safe to repeat: a run killed anywhere resumes.
package implement

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/azero-dev/azero/internal/shell"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/coder"
	"github.com/azero-dev/azero/internal/edit"
	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/integrity"
	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/review"
	"github.com/azero-dev/azero/internal/safewrite"
	"github.com/azero-dev/azero/internal/sandbox"
	"github.com/azero-dev/azero/internal/testrun"
	"github.com/azero-dev/azero/internal/workflow/gates"
)

// Lineage saves the run's records (test output, patches) next to the
// model's prompts and responses.
type Lineage interface {
	Next(ctx context.Context) (int, error)
	Save(ctx context.Context, name string, content []byte) error
}

// Deps are what the nodes use. None of it is global: the same graph can
// run elsewhere with other implementations.
type Deps struct {
	Coder     llm.Model
	Writer    *safewrite.Writer
	Runner    testrun.Runner
	Lineage   Lineage
	Events    event.Sink    // what the human reads: steps, test results; nil discards
	Audit     *audit.Logger // loose matches and cut-off replies; nil discards
	MaxTokens int           // the first output limit of a coder call; default 8192
	// MaxOutput is the most output a retry of a cut-off reply may ask for
	// (the model's maximum or the configured max_output_tokens); 0 lets it
	// double.
	MaxOutput int
	Lint      func(ctx context.Context, dir, kind string, files []string, opts testrun.Options) (testrun.LintResult, error) // default testrun.Lint
	// Secrets are values scrubbed from every test run's output before it
	// is kept, shown or sent to the model (the provider keys azero holds;
	// the keys in the process's environment always are).
	Secrets []string
	// Sandbox confines the lint step (Runner's own sandbox confines the
	// tests), and every question the run asks says how (see confined);
	// Caches is the run's build cache layer, removed when the run ends.
	Sandbox *sandbox.Sandbox
	Caches  string
}

// Graph builds the implementation workflow over d.
func Graph(d Deps) *flow.Graph[State] {
	if d.MaxTokens == 0 {
		d.MaxTokens = 8192
	}
	if d.MaxOutput > 0 {
		d.MaxTokens = min(d.MaxTokens, d.MaxOutput)
	}
	if d.Lint == nil {
		d.Lint = testrun.Lint
	}
	if d.Events == nil {
		d.Events = event.Discard
	}
	n := &nodes{d: d}
	return flow.New[State](Name, NodeWorktree).
		Node(NodeWorktree, n.worktree, NodeBaseline).
		Node(NodeBaseline, n.baseline, NodeScaffold, NodeCleanup, flow.End).
		Node(NodeScaffold, n.scaffold, NodeRed, NodeScaffoldWriteReview).
		Gate(NodeScaffoldWriteReview, n.confined(n.askWriteReview), decideWriteReview, NodeScaffoldApplyWrites, NodeScaffold, NodeCleanup).
		Node(NodeScaffoldApplyWrites, n.applyScaffoldWrites, NodeRed, NodeScaffold).
		Node(NodeRed, n.red, NodeImplement, NodeScaffold, NodeRevise, NodeEscalate, flow.End).
		Node(NodeRevise, n.revise, NodeRed, NodeImplement, NodeReviseWriteReview).
		Gate(NodeReviseWriteReview, n.confined(n.askWriteReview), decideWriteReview, NodeReviseApplyWrites, NodeRevise, NodeCleanup).
		Node(NodeReviseApplyWrites, n.applyReviseWrites, NodeRed, NodeRevise).
		Node(NodeImplement, n.implement, NodeGreen, NodeWriteReview).
		Gate(NodeWriteReview, n.confined(n.askWriteReview), decideWriteReview, NodeApplyWrites, NodeImplement, NodeCleanup).
		Node(NodeApplyWrites, n.applyImplementWrites, NodeGreen, NodeImplement).
		Node(NodeGreen, n.green, NodeLint, NodeImplement, NodeCleanup, NodeEscalate, flow.End).
		Node(NodeLint, n.lint, NodeDiffGate, NodeImplement, flow.End).
		Gate(NodeEscalate, n.confined(n.askEscalate), decideEscalate, NodeRed, NodeGreen, NodeScaffold, NodeRevise, NodeCleanup).
		Gate(NodeDiffGate, n.confined(n.askDiffReview), decideDiffReview, NodeReview).
		Gate(NodeReview, n.confined(n.askReview), decideReview, NodeCommit, NodeRevise, NodeCleanup).
		Node(NodeCommit, n.commit, NodeMerge).
		Node(NodeMerge, n.merge, NodeCleanup).
		Node(NodeCleanup, n.cleanup, flow.End).
		// A revision may need a stub round of its own.
		MaxVisits(NodeScaffold, MaxScaffolds+3+MaxImplementations).
		MaxVisits(NodeRevise, MaxImplementations*MaxScaffolds).
		MaxVisits(NodeImplement, MaxImplementations+3).
		MaxSteps(200).
		Finish(finish)
}

type nodes struct{ d Deps }

// say tells the human something.
func (n *nodes) say(ctx context.Context, tone event.Tone, format string, args ...any) {
	kind := event.Info
	if tone == event.Warn {
		kind = event.Warning
	}
	n.d.Events.Emit(ctx, event.New(kind, tone, format, args...))
}

func (n *nodes) git(dir string) gitx.Repo { return gitx.Repo{Dir: dir} }

// worktree creates the isolated checkout on the run's branch (or finds the
// one a killed run left).
func (n *nodes) worktree(ctx context.Context, s *State) (string, error) {
	if err := n.git(s.Repo).AddWorktree(ctx, s.Worktree, s.Branch, s.BaseCommit); err != nil {
		return "", fmt.Errorf("create worktree: %w", err)
	}
	n.say(ctx, event.Plain, "worktree %s on branch %s", s.Worktree, s.Branch)
	switch linked, err := linkNodeModules(ctx, s.Repo, s.Worktree); {
	case err != nil:
		return "", err
	case linked == depsLinked:
		n.say(ctx, event.Plain, "the packages installed in your checkout (node_modules) are linked into the worktree")
	case linked == depsNotIgnored:
		n.say(ctx, event.Warn, "node_modules is not ignored by git, so the packages installed in your checkout are not linked into the worktree: add node_modules/ to .gitignore")
	}
	return NodeBaseline, nil
}

// baseline runs the project's tests once on the base commit, before any
// model call: a suite that cannot even start (a missing runner, existing
// tests that do not import or build) would make every red and green
// meaningless, so the run stops with the runner's own error.
func (n *nodes) baseline(ctx context.Context, s *State) (string, error) {
	if box := n.d.Sandbox; box != nil {
		// How the model's code will run, once in the record before any of
		// it does; every gate records it again with its decision.
		n.say(ctx, event.Plain, "%s", box.Describe())
		_ = n.d.Audit.Event(ctx, "sandbox", flow.RunID(ctx), slog.String("mechanism", box.Mechanism()),
			slog.Bool("network", box.Network()), slog.Bool("off", box.Off()))
	}
	var b testrun.Baseline
	out, err := n.watch(ctx, s, "the test run", "baseline", func(ctx context.Context) (err error) {
		b, err = testrun.CheckBaseline(ctx, n.d.Runner, s.Worktree)
		return err
	})
	if err != nil {
		return n.stopRun(ctx, s, err)
	}
	b.Problem = n.redactor().Scrub(b.Problem)
	if b.Result != nil {
		res := n.redact(*b.Result)
		b.Result = &res
		s.BaselineTests = res.Tests
		n.auditDisagreement(ctx, res, "baseline")
		if err := n.saveTests(ctx, res, "baseline"); err != nil {
			return "", err
		}
	}
	if !out.Counts() {
		// The base commit's own tests write into the project: azero could
		// not tell what the tests wrote from what the code did.
		b.Startable = false
		b.Problem = fmt.Sprintf("the tests change the files of the project when they run (%s): azero cannot tell that from a change the code made; make them write elsewhere (a temporary directory), commit, and start again", out.Changed)
	}
	if !b.Startable {
		s.Result, s.BaselineProblem = ResultBaselineBroken, b.Problem
		n.say(ctx, event.Bad, "the tests cannot run before any change, so no model is asked: %s", b.Problem)
		return NodeCleanup, nil
	}
	switch res := b.Result; {
	case res.Outcome == testrun.Fail:
		n.testResult(ctx, event.Warn, *res, "before any change: %s; these tests must pass too for a green", res.Summary)
	default:
		n.testResult(ctx, event.Plain, *res, "before any change: %s", res.Summary)
	}
	return NodeScaffold, nil
}

// scaffold writes the tests, or, when the last red run could not build or
// import what the tests test, compiling stubs of the code files (or the
// round a write review sent back). A round that left whole-file
// replacements of large files unwritten goes to the write review instead
// of red.
func (n *nodes) scaffold(ctx context.Context, s *State) (string, error) {
	stubs := s.Red != nil && needsStubs(*s.Red) && !s.Stubbed
	switch s.Regenerate { // the round a write review sent back
	case PurposeStub:
		stubs = true
	case PurposeScaffold:
		stubs = false
	}
	again := scaffoldAgain(s)
	s.Regenerate, s.PendingWrites = "", nil
	s.Scaffolds++
	if stubs {
		s.Stubbed = true
		for _, f := range s.CodeFiles() {
			if f.Change == "Delete" {
				continue
			}
			// A stub of a file that exists only adds: its code stays.
			o := genOpts{keep: f.Change == "Modify", step: "stub " + f.Path}
			if _, err := n.generate(ctx, s, f, PurposeStub, stubText(s, f.Path, s.TestOutput, currentFiles(s, f.Path), o.keep), o); err != nil {
				return "", err
			}
		}
	} else {
		s.Stubbed = false
		for _, f := range s.TestFiles() {
			step := "tests: " + f.Path
			if again != "" {
				step = "tests again: " + f.Path + " (" + again + ")"
			}
			if _, err := n.generate(ctx, s, f, PurposeScaffold, scaffoldText(s, f.Path, currentFiles(s, f.Path)), genOpts{step: step}); err != nil {
				return "", err
			}
		}
	}
	if len(s.PendingWrites) > 0 {
		return NodeScaffoldWriteReview, nil
	}
	return NodeRed, nil
}

// implement writes (or deletes) the code files; a round that left
// whole-file replacements of large files unwritten goes to the write
// review instead of green.
func (n *nodes) implement(ctx context.Context, s *State) (string, error) {
	again := implementAgain(s)
	s.Implementations++
	s.PendingWrites = nil
	for _, f := range s.CodeFiles() {
		if f.Change == "Delete" {
			if err := n.d.Writer.Remove(ctx, s.Worktree, f.Path, "implement", flow.RunID(ctx)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return "", err
			}
			continue
		}
		o := genOpts{step: "code: " + f.Path, mayKeep: s.Revising}
		switch {
		case s.Revising && !s.Recoded:
			o.step = "revise " + f.Path + ": does it change for your feedback?"
		case again != "":
			o.step = "code again: " + f.Path + " (" + again + ")"
		}
		r, err := n.generate(ctx, s, f, PurposeImplement, implementText(s, f.Path, currentFiles(s, f.Path)), o)
		if err != nil {
			return "", err
		}
		if s.Revising {
			n.revisionNote(ctx, s, f.Path, r)
		}
	}
	if s.Revising {
		s.Recoded = true
	}
	if len(s.PendingWrites) > 0 {
		return NodeWriteReview, nil
	}
	return NodeGreen, nil
}

// genOpts say how one file of a round is asked for.
type genOpts struct {
	step    string // what the human reads when it is asked: "stub src/lib.rs"
	mayKeep bool   // the file may stay as it is (a revision asks whether it changes)
	keep    bool   // only additions: a stub of a file that exists keeps its code
}

// genResult is what came of one file.
type genResult struct {
	changed bool   // the coder changed it (false: it answered that the file stays)
	prose   string // what the coder said around its code
}

// generate asks the coder for one file and writes it, unless the file
// would replace an existing file of more than safewrite.ApprovalLines
// lines: that is kept in s.PendingWrites for a human to decide at a write
// review gate (with --auto it is refused, with --force written). Every
// reply refused on the way is shown to the human as it happens.
func (n *nodes) generate(ctx context.Context, s *State, f FileSpec, purpose, task string, o genOpts) (genResult, error) {
	existing, snap, err := safewrite.Read(s.Worktree, f.Path)
	if err != nil {
		return genResult{}, err
	}
	change := edit.Modify
	if f.Change == "Add" {
		change = edit.Add
	}
	if o.step == "" {
		o.step = purpose + " " + f.Path
	}
	n.say(ctx, event.Plain, "%s", o.step)
	runID := flow.RunID(ctx)
	res, err := coder.Generate(ctx, n.d.Coder, coder.GenerateInput{
		Change: change,
		Prompt: coder.PromptInput{Path: f.Path, LLD: s.LLD, Existing: string(existing), Tests: n.testsText(s, f)},
		System: systemText, Extra: task, MaxTokens: n.d.MaxTokens, MaxOutput: n.d.MaxOutput, Purpose: purpose,
		MayKeep: o.mayKeep, KeepExisting: o.keep,
		OnTruncated: func(cut, next int, blocks bool) {
			how := fmt.Sprintf("asking again with %d", next)
			if blocks {
				how += ", for edit blocks instead of the whole file"
			}
			n.say(ctx, event.Warn, "%s: reply cut off at %d tokens; %s", f.Path, cut, how)
			_ = n.d.Audit.Event(ctx, "reply_truncated", runID, slog.String("path", f.Path), slog.String("purpose", purpose),
				slog.Int("output_limit", cut), slog.Int("next_output_limit", next), slog.Bool("edit_blocks", blocks))
		},
		OnRejected: func(reason string) {
			n.say(ctx, event.Warn, "%s: the coder's reply was refused (%s), and sent back with the reason:\n%s", f.Path, purposeName(purpose), indentLines(firstLines(reason, 12), "      "))
			_ = n.d.Audit.Event(ctx, "edit_rejected", runID, slog.String("path", f.Path), slog.String("purpose", purpose), slog.String("error", reason))
		},
	})
	if err != nil {
		return genResult{}, err
	}
	out := genResult{changed: !res.Unchanged, prose: res.Prose}
	if res.Unchanged {
		return out, nil
	}
	if err := n.looseMatches(ctx, s, f.Path, purpose, res.Blocks); err != nil {
		return out, err
	}
	for _, r := range res.Blocks {
		if r.Status == edit.NoChange {
			n.say(ctx, event.Plain, "%s: %s (its REPLACE WITH is the text already there)", f.Path, r.String())
		}
	}
	req := safewrite.Request{Root: s.Worktree, Path: f.Path, Content: []byte(res.Content), Base: &snap,
		Actor: "implement:" + purpose, RunID: flow.RunID(ctx)}
	switch {
	case res.Strategy == coder.Blocks:
		req.Strategy = safewrite.Edit
	case f.Change == "Add" && snap.Exists:
		// An Add file holds only what this run wrote earlier; replacing it
		// loses nothing of the user's, so it is removed and written anew.
		if err := n.d.Writer.Remove(ctx, s.Worktree, f.Path, "implement:"+purpose, flow.RunID(ctx)); err != nil {
			return out, err
		}
		req.Base = &safewrite.Snapshot{Exists: false}
	}
	w := n.d.Writer
	if !w.Force && !w.Auto {
		p, err := safewrite.ProposeContext(ctx, req)
		if err != nil {
			return out, err
		}
		// A file that changed since it was read is left to Write, which
		// refuses it as stale.
		if p.RequiresApproval && p.Snapshot() == *req.Base {
			s.PendingWrites = append(s.PendingWrites, PendingWrite{Path: f.Path, Purpose: purpose, Content: res.Content,
				Strategy: string(p.Strategy), OldSHA256: p.Snapshot().SHA256, NewSHA256: sha256Hex(p.Result),
				OldLines: p.ExistingLines, NewLines: p.NewLines})
			n.say(ctx, event.Warn, "%s: the coder wrote the whole file, %s (-%d +%d): not written until you approve it at the write review",
				f.Path, replaceWarning(p), p.Deleted, p.Added)
			return out, nil
		}
	}
	_, err = w.Write(ctx, req)
	var refused *safewrite.ApprovalError
	if w.Auto && !w.Force && errors.As(err, &refused) {
		return out, &AutoRefusedError{Err: refused}
	}
	return out, err
}

// firstLines keeps the first n lines of s, saying how many more there are.
func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) <= n {
		return strings.Join(lines, "\n")
	}
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n… (%d more lines)", len(lines)-n)
}

func indentLines(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// replaceWarning is safewrite's warning on a replacement.
func replaceWarning(p safewrite.Proposal) string {
	if p.Warning != "" {
		return p.Warning
	}
	return fmt.Sprintf("about to replace %d lines with %d lines", p.ExistingLines, p.NewLines)
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// AutoRefusedError is a whole-file replacement of a file over 100 lines
// that the run's --auto setting refused. It is not a question for a
// human: the setting holds on every resume, so the run fails instead of
// waiting for an answer nobody could give.
type AutoRefusedError struct{ Err *safewrite.ApprovalError }

func (e *AutoRefusedError) Error() string {
	return fmt.Sprintf("the coder wrote %s whole, replacing %d lines with %d lines, and this run was started with --auto, which never replaces a file over %d lines: "+
		"start it again with --auto --force to allow that, or without --auto to review such a replacement at the write review gate",
		e.Err.Path, e.Err.ExistingLines, e.Err.NewLines, safewrite.ApprovalLines)
}

// Unwrap makes AutoRefusedError match safewrite.ErrNeedsApproval.
func (e *AutoRefusedError) Unwrap() error { return e.Err }

// NeedsHuman is false: no answer can lift the run's own setting.
func (e *AutoRefusedError) NeedsHuman() bool { return false }

// looseMatches shows, records (lineage, audit log) and keeps for the diff
// review every edit block that matched its file only loosely.
func (n *nodes) looseMatches(ctx context.Context, s *State, path, purpose string, blocks []edit.Result) error {
	loose := edit.LooseMatches(blocks)
	if len(loose) == 0 {
		return nil
	}
	var b strings.Builder
	for _, r := range loose {
		what := r.String()
		n.say(ctx, event.Warn, "%s: %s", path, what)
		_ = n.d.Audit.Event(ctx, "loose_match", flow.RunID(ctx), slog.String("path", path), slog.String("purpose", purpose), slog.String("match", what))
		fmt.Fprintf(&b, "%s: %s\n", path, what)
		s.LooseMatches = append(s.LooseMatches, LooseMatch{Path: path, What: what})
	}
	if n.d.Lineage == nil {
		return nil
	}
	seq, err := n.d.Lineage.Next(ctx)
	if err != nil {
		return err
	}
	return n.d.Lineage.Save(ctx, fmt.Sprintf("%03d-loose-matches-%s.txt", seq, purpose), []byte(b.String()))
}

// currentFiles reads the change's Modify targets other than the file being
// written (whose content its own prompt shows) from the worktree. A code
// file's prompt shows the test files whole already (testsText), so they
// are not repeated.
func currentFiles(s *State, except string) []CurrentFile {
	code := slices.ContainsFunc(s.Files, func(f FileSpec) bool { return f.Path == except && !f.Test })
	var out []CurrentFile
	for _, f := range s.Files {
		if f.Change != "Modify" || f.Path == except || (code && f.Test) {
			continue
		}
		content, _, err := safewrite.Read(s.Worktree, f.Path)
		if err != nil || content == nil {
			continue
		}
		cf := CurrentFile{Path: f.Path, Content: string(content), Bytes: len(content), Lines: strings.Count(string(content), "\n")}
		if edit.IsLarge(content) {
			cf.Content, cf.Outline = edit.Outline(f.Path, string(content)), true
		}
		out = append(out, cf)
	}
	return out
}

// testsText gives the coder the current test files (none for a test file
// itself, which is being written).
func (n *nodes) testsText(s *State, current FileSpec) string {
	if current.Test {
		return ""
	}
	var b strings.Builder
	for _, f := range s.TestFiles() {
		content, _, err := safewrite.Read(s.Worktree, f.Path)
		if err != nil || content == nil {
			continue
		}
		fmt.Fprintf(&b, "### %s\n%s\n\n", f.Path, fence(string(content)))
	}
	return b.String()
}

// runTests runs the project's tests in the worktree, watched (see
// integrity.go), and records the output, scrubbed of secrets, in the
// lineage. A run that changed the shared git directory is a
// *integrity.GitChangedError (stopRun).
func (n *nodes) runTests(ctx context.Context, s *State, phase string) (testrun.Result, error) {
	var res testrun.Result
	out, err := n.watch(ctx, s, "the test run", phase, func(ctx context.Context) (err error) {
		res, err = n.d.Runner.Run(ctx, s.Worktree)
		return err
	})
	var ge *integrity.GitChangedError
	switch {
	case errors.As(err, &ge):
		return testrun.Result{}, err
	case err != nil:
		return testrun.Result{}, fmt.Errorf("run tests: %w", err)
	}
	res = n.redact(changedTheChange(res, "the test run", out))
	n.auditDisagreement(ctx, res, phase)
	s.TestOutput = res.Feedback()
	return res, n.saveTests(ctx, res, phase)
}

// saveTests keeps a test run's output in the run's lineage.
func (n *nodes) saveTests(ctx context.Context, res testrun.Result, phase string) error {
	if n.d.Lineage == nil {
		return nil
	}
	seq, err := n.d.Lineage.Next(ctx)
	if err != nil {
		return err
	}
	return n.d.Lineage.Save(ctx, fmt.Sprintf("%03d-tests-%s.txt", seq, phase),
		[]byte(fmt.Sprintf("$ %s\nexit %d, %s, %s\n\n%s", strings.Join(res.Command, " "), res.ExitCode, res.Outcome, res.Duration.Round(time.Millisecond), res.Output)))
}

// red is the gate before any code: the new tests must fail on assertions.
func (n *nodes) red(ctx context.Context, s *State) (string, error) {
	res, err := n.runTests(ctx, s, "red")
	if err != nil {
		return n.stopRun(ctx, s, err)
	}
	s.Red = &res
	if s.Revising && s.RevisedTests {
		return n.revisedRed(ctx, s, res)
	}
	next := RouteRed(res.Outcome, s.Scaffolds)
	switch next {
	case NodeImplement:
		if err := recordTests(s); err != nil {
			return "", err
		}
		n.testResult(ctx, event.Bad, res, "red: %s", res.Summary)
	case NodeScaffold:
		n.testResult(ctx, event.Warn, res, "not a valid red: %s; next: %s", res.Summary, redNext(res))
	case NodeEscalate:
		n.testResult(ctx, event.Warn, res, "not a valid red: %s", res.Summary)
		s.Escalation = fmt.Sprintf("the tests are not a valid red after %d scaffold(s): %s", s.Scaffolds, res.Summary)
		s.EscalatedFrom = NodeRed
	}
	return next, nil
}

// green is the gate after the code: every test must pass.
func (n *nodes) green(ctx context.Context, s *State) (string, error) {
	if err := n.checkTests(ctx, s, "before the green run"); err != nil {
		return "", err
	}
	res, err := n.runTests(ctx, s, "green")
	if err != nil {
		return n.stopRun(ctx, s, err)
	}
	if why := missingTests(s.Red, res); why != "" {
		res = notAllRan(res, why)
	}
	s.Green = &res
	next := RouteGreen(res.Outcome, s.Implementations)
	switch next {
	case NodeLint:
		if err := recordTested(ctx, s); err != nil {
			return "", err
		}
		n.testResult(ctx, event.Good, res, "green: %s", res.Summary)
		s.TestOutput = ""
	case NodeImplement:
		n.testResult(ctx, event.Bad, res, "still failing (%d of %d attempts): %s", s.Implementations, MaxImplementations, res.Summary)
	case NodeCleanup:
		n.testResult(ctx, event.Bad, res, "tests still fail after %d implementation attempts: %s", s.Implementations, res.Summary)
		s.Result = ResultTestsFailed
	case NodeEscalate:
		n.testResult(ctx, event.Warn, res, "the test runner failed: %s", res.Summary)
		s.Escalation = "the test runner failed: " + res.Summary
		s.EscalatedFrom = NodeGreen
	}
	return next, nil
}

func (n *nodes) changedFiles(s *State) []string {
	var out []string
	for _, f := range s.Files {
		if f.Change != "Delete" {
			out = append(out, f.Path)
		}
	}
	return out
}

// lint runs the static checks; findings go back to the coder while
// attempts remain, then to the human with the diff.
func (n *nodes) lint(ctx context.Context, s *State) (string, error) {
	var res testrun.LintResult
	out, err := n.watch(ctx, s, "the lint step", "lint", func(ctx context.Context) (err error) {
		res, err = n.d.Lint(ctx, s.Worktree, s.Runner, n.changedFiles(s), testrun.Options{Checkout: s.Repo, Sandbox: n.d.Sandbox, Caches: n.d.Caches})
		return err
	})
	if err != nil {
		return n.stopRun(ctx, s, err)
	}
	res = n.redactLint(res)
	if !out.Counts() {
		res.Passed = false
		res.Output = fmt.Sprintf("azero: the lint step changed the worktree: %s; put back as it was\n\n%s", out.Changed, res.Output)
	}
	s.Lint = &res
	for _, note := range res.Notes {
		n.say(ctx, event.Warn, "lint: %s", note) // a check that could not run
	}
	switch {
	case res.Passed && len(res.Tools) == 0:
		n.say(ctx, event.Warn, "lint: no static check ran")
	case res.Passed:
		n.say(ctx, event.Plain, "lint clean (%s)", strings.Join(res.Tools, ", "))
	default:
		n.say(ctx, event.Warn, "lint findings:\n%s", tail(res.Output, 20))
	}
	return RouteLint(res.Passed, s.Implementations), nil
}

// testResult reports a test run to the human; a run that could not run
// its tests shows the runner's own error lines.
func (n *nodes) testResult(ctx context.Context, tone event.Tone, res testrun.Result, format string, args ...any) {
	ev := event.New(event.TestResult, tone, format, args...)
	if res.Outcome == testrun.Broken && len(res.Errors) > 0 {
		shown := res.Errors[:min(len(res.Errors), 12)]
		ev.Text += "\n      " + strings.Join(shown, "\n      ")
		if more := len(res.Errors) - len(shown) + res.MoreErrors; more > 0 {
			ev.Text += fmt.Sprintf("\n      ... %d more in the run's lineage", more)
		}
	}
	// The names of every test stay with the run's state, not in each event.
	res.Tests = nil
	n.d.Events.Emit(ctx, ev.WithData(res))
}

// Answers of the escalation menu.
const (
	AnswerRerun      = "R"
	AnswerRescaffold = "S"
	AnswerAbortMenu  = "A"
)

// askEscalate asks the human what to do when the rules cannot decide.
func (n *nodes) askEscalate(ctx context.Context, s *State) (human.Question, error) {
	opts := []human.Option{{Key: AnswerRerun, Label: "Rerun the tests", Decision: "RERUN"}}
	if s.EscalatedFrom == NodeRed {
		opts = append(opts, human.Option{Key: AnswerRescaffold, Label: "Scaffold again", Decision: "RESCAFFOLD"})
	}
	opts = append(opts, human.Option{Key: AnswerAbortMenu, Label: "Abort", Decision: "ABORTED"})
	q := human.Question{Kind: human.Menu, Title: "NEEDS YOU: " + s.Escalation, Prompt: "What now?", Options: opts,
		Facts: map[string]any{"about": s.Escalation}}
	if s.TestOutput != "" {
		q.Report = s.TestOutput
	}
	return q, nil
}

// decideEscalate routes the human's answer at the escalation.
func decideEscalate(s *State, _ human.Question, a human.Answer) (string, error) {
	switch a.Key {
	case AnswerRerun:
		return s.EscalatedFrom, nil
	case AnswerRescaffold:
		s.Scaffolds = 0
		s.Stubbed = false
		if s.Revising && s.RevisedTests {
			// The revised tests again, not the tests from scratch.
			s.ReviseRounds = 0
			return NodeRevise, nil
		}
		return NodeScaffold, nil
	}
	s.Decision, s.Result = AnswerAbort, ResultAborted
	return NodeCleanup, nil
}

// askDiffReview is the mandatory diff review (spec #171) of the change in
// the worktree, with every file's diff: the reviewer approves a change
// nobody has seen yet.
func (n *nodes) askDiffReview(ctx context.Context, s *State) (human.Question, error) {
	if err := n.checkChange(ctx, s, "at the diff review"); err != nil {
		return human.Question{}, err
	}
	o, err := n.reviewOptions(ctx, s)
	if err != nil {
		return human.Question{}, err
	}
	q, err := gates.Review(ctx, s.Worktree, o)
	if err != nil {
		return q, err
	}
	// What the report shows is what was tested, not something written
	// while it was made.
	if err := n.checkTested(ctx, s, "at the diff review"); err != nil {
		return human.Question{}, err
	}
	q.Report += looseMatchNote(s)
	q.Facts[factTree] = o.Now
	return q, nil
}

// factTree is the fact of a review question naming the tree it showed.
const factTree = "tree"

// decideDiffReview records the review: whatever was decided, the human
// review comes next; a rejection is offered only revise or abort there.
// A human's answer records the tree they reviewed.
func decideDiffReview(s *State, q human.Question, a human.Answer) (string, error) {
	s.Flagged, s.GateDecision = gates.Flagged(q), string(gates.Decision(a))
	s.Eroded = gates.Eroded(q)
	if tree, ok := q.Facts[factTree].(string); ok && tree != "" && a.Channel != human.ChannelUnattended {
		s.ReviewedTree = tree
	}
	return NodeReview, nil
}

// Answers of the human review, typed in full.
const (
	AnswerApprove = "approve"
	AnswerRevise  = "revise"
	AnswerAbort   = "abort"
)

// askReview is the final human decision: approve merges, revise sends the
// change back to the coder with the human's feedback (while implementation
// attempts remain), abort cleans up. A change the diff review rejected can
// only be revised or aborted.
func (n *nodes) askReview(ctx context.Context, s *State) (human.Question, error) {
	if err := n.checkChange(ctx, s, "at the human review"); err != nil {
		return human.Question{}, err
	}
	var b strings.Builder
	o, err := n.reviewOptions(ctx, s)
	if err != nil {
		return human.Question{}, err
	}
	if s.GateDecision != string(review.Approved) && s.GateDecision != string(review.Rejected) {
		// Nobody saw the change at the diff review (it passed unattended):
		// show all of it before asking.
		c, err := gates.DescribeWith(ctx, s.Worktree, o)
		if err != nil {
			return human.Question{}, err
		}
		b.WriteString(c.Report)
		b.WriteString(looseMatchNote(s))
		b.WriteString("\n")
	} else {
		b.WriteString(o.Notes)
		if len(s.Eroded) > 0 {
			fmt.Fprintf(&b, "  tests lost (shown at the diff review): %s\n", strings.Join(s.Eroded, "; "))
		}
	}
	if s.Green != nil {
		fmt.Fprintf(&b, "  tests: %s\n", s.Green.Summary)
	}
	if s.Lint != nil && !s.Lint.Passed {
		b.WriteString("  lint: findings remain (shown above)\n")
	}
	fmt.Fprintf(&b, "  files: %s\n", strings.Join(n.changedFiles(s), ", "))
	fmt.Fprintf(&b, "  branch %s would merge into %s of %s\n", s.Branch, s.BaseBranch, s.Repo)
	// The diff review before it decided the commit (#171); this question
	// decides the merge (#87), and says so.
	q := human.Question{Kind: human.Word, Title: "Final review: the merge", Report: b.String(),
		Prompt: fmt.Sprintf("Merge %s into %s?", s.Branch, s.BaseBranch), Facts: map[string]any{"about": s.Branch, factTree: o.Now}}
	revise := human.Option{Key: AnswerRevise, Label: "to send it back to the coder with your feedback", Decision: "REVISE",
		Text: "What should the coder change?"}
	canRevise := s.Implementations < MaxImplementations
	if s.GateDecision == string(review.Rejected) {
		q.Title = "The diff was rejected at the review"
		q.Prompt = "Send it back to the coder, or abort?"
		if !canRevise {
			q.Prompt = fmt.Sprintf("All %d implementation attempts are spent: abort?", MaxImplementations)
		}
	} else {
		q.Options = append(q.Options, human.Option{Key: AnswerApprove, Label: "to merge it", Decision: "APPROVED"})
	}
	if canRevise {
		q.Options = append(q.Options, revise)
	}
	q.Options = append(q.Options, human.Option{Key: AnswerAbort, Label: "to drop it (nothing is merged)", Decision: "ABORTED"})
	return q, nil
}

// looseMatchNote lists the edit blocks that matched the file only after
// whitespace normalisation, for the reviewer to check.
func looseMatchNote(s *State) string {
	if len(s.LooseMatches) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nEdit blocks that matched only loosely (check these places):\n")
	for _, m := range s.LooseMatches {
		fmt.Fprintf(&b, "  %s: %s\n", m.Path, m.What)
	}
	return b.String()
}

// decideReview routes the human's final decision: revise sends the
// change back to the coder, file by file (revise.go).
func decideReview(s *State, q human.Question, a human.Answer) (string, error) {
	switch a.Key {
	case AnswerApprove:
		s.Decision = AnswerApprove
		return NodeCommit, nil
	case AnswerRevise:
		s.Feedback = strings.TrimSpace(a.Text)
		s.Revisions++
		s.GateDecision, s.Flagged, s.Eroded = "", nil, nil
		if tree, ok := q.Facts[factTree].(string); ok && tree != "" {
			s.ReviewedTree = tree
		}
		s.Revising, s.ReviseRounds, s.RevisedTests, s.Recoded, s.RevisionNotes = true, 0, false, false, nil
		// The revision may need stubs of its own.
		s.Stubbed = false
		return NodeRevise, nil
	}
	s.Decision, s.Result = AnswerAbort, ResultAborted
	return NodeCleanup, nil
}

// trailer marks the run's commit, so a repeated commit node finds it.
func trailer(runID string) string { return "Azero-Run: " + runID }

// commit records the approved change on the run's branch: exactly the
// change the green run tested and the human reviewed, on the base commit.
func (n *nodes) commit(ctx context.Context, s *State) (string, error) {
	runID := flow.RunID(ctx)
	wt := n.git(s.Worktree)
	head, err := wt.Head(ctx)
	if err != nil {
		return "", err
	}
	if head != s.BaseCommit {
		// A commit node run again finds its own commit; anything else on
		// the branch was not made by azero.
		own, err := n.ownCommit(ctx, s, head)
		if err != nil {
			return "", err
		}
		if !own {
			return "", n.checkBranch(ctx, s, "at the commit", s.BaseCommit)
		}
		if err := n.checkBranch(ctx, s, "at the commit", head); err != nil {
			return "", err
		}
		s.Commit = head
		return NodeMerge, nil
	}
	if err := n.checkChange(ctx, s, "at the commit"); err != nil {
		return "", err
	}
	if _, err := wt.Run(ctx, "add", "-A"); err != nil {
		return "", err
	}
	title := s.Title
	if title == "" {
		title = "implement the design"
	}
	msg := fmt.Sprintf("%s\n\nImplemented by azero from the design %s; tests green, diff reviewed and approved by a human.\n\n", title, designName(s))
	if s.Issue != "" {
		msg += fmt.Sprintf("Refs #%s\n", s.Issue)
	}
	msg += trailer(runID) + "\n"
	if _, err := wt.Run(ctx, "commit", "--quiet", "--no-verify", "-m", msg); err != nil {
		return "", fmt.Errorf("commit on %s: %w", s.Branch, err)
	}
	if s.Commit, err = wt.Head(ctx); err != nil {
		return "", err
	}
	if own, err := n.ownCommit(ctx, s, s.Commit); err != nil || !own {
		if err == nil {
			err = n.checkTested(ctx, s, "in the commit")
		}
		if err == nil {
			err = fmt.Errorf("the commit %s on %s is not the change that was tested and reviewed: inspect it", gitx.ShortID(s.Commit), s.Branch)
		}
		return "", err
	}
	n.say(ctx, event.Plain, "committed %s on %s", gitx.ShortID(s.Commit), s.Branch)
	return NodeMerge, nil
}

// ownCommit reports whether commit is this run's: one commit whose only
// parent is the base, carrying the run's trailer, holding exactly the
// content the green run tested (a commit made behind azero's back with a
// copied trailer holds something else, or it is what was reviewed).
func (n *nodes) ownCommit(ctx context.Context, s *State, commit string) (bool, error) {
	out, err := n.git(s.Worktree).Run(ctx, "log", "-1", "--format=%P%n%T%n%B", commit)
	if err != nil {
		return false, err
	}
	parents, rest, _ := strings.Cut(string(out), "\n")
	tree, msg, _ := strings.Cut(rest, "\n")
	return parents == s.BaseCommit && (s.TestedTree == "" || tree == s.TestedTree) &&
		strings.Contains(msg, trailer(flow.RunID(ctx))), nil
}

// designName names the design in a commit message: its path in the
// repository, or its file name when it lives elsewhere (never an absolute
// path of the user's machine).
func designName(s *State) string {
	if rel, err := filepath.Rel(s.Repo, s.LLDPath); err == nil && !strings.HasPrefix(rel, "..") && !filepath.IsAbs(rel) {
		return filepath.ToSlash(rel)
	}
	return filepath.Base(s.LLDPath)
}

// merge brings the commit into the branch the user had checked out, only
// when that cannot touch their uncommitted work; otherwise it fails with
// the branch kept and the exact command to finish by hand: the run stays
// resumable at the merge, which a resume tries again (after the user
// cleaned up, or finds done when they merged by hand).
func (n *nodes) merge(ctx context.Context, s *State) (string, error) {
	repo := n.git(s.Repo)
	s.MergeCommand = fmt.Sprintf("git -C %s merge %s", shell.Quote(s.Repo), s.Branch)
	stop := func(why string) (string, error) {
		n.say(ctx, event.Warn, "not merged: %s\n  finish by hand with: %s\n  or clear the way and resume the run to merge", why, s.MergeCommand)
		return "", &MergeStoppedError{Branch: s.Branch, Reason: why, Command: s.MergeCommand, RunID: flow.RunID(ctx)}
	}
	if merged, err := repo.IsAncestor(ctx, s.Commit, "HEAD"); err == nil && merged {
		s.Result = ResultMerged
		return NodeCleanup, nil
	}
	if err := n.checkBranch(ctx, s, "at the merge", s.Commit); err != nil {
		return "", err
	}
	cur, err := repo.CurrentBranch(ctx)
	if err != nil {
		return "", err
	}
	if cur != s.BaseBranch {
		return stop(fmt.Sprintf("your checkout is on %q now, not %q", cur, s.BaseBranch))
	}
	dirty, err := repo.DirtyPaths(ctx)
	if err != nil {
		return "", err
	}
	changed, err := repo.ChangedPaths(ctx, s.BaseCommit, s.Commit)
	if err != nil {
		return "", err
	}
	if both := intersect(dirty, changed); len(both) > 0 {
		return stop(fmt.Sprintf("you have uncommitted changes to %s, which the merge would touch", strings.Join(both, ", ")))
	}
	// Exactly the approved commit, whatever the branch's name says now.
	if _, err := repo.Run(ctx, "merge", "--ff-only", "--quiet", s.Commit); err != nil {
		if _, err := repo.Run(ctx, "merge", "--no-edit", "--no-verify", "--quiet", "-m", "Merge branch '"+s.Branch+"'", s.Commit); err != nil {
			// Leave the checkout exactly as it was.
			_, _ = repo.Run(context.WithoutCancel(ctx), "merge", "--abort")
			return stop("the merge conflicts with commits made since the run began")
		}
	}
	s.Result = ResultMerged
	n.say(ctx, event.Good, "merged %s into %s", s.Branch, s.BaseBranch)
	return NodeCleanup, nil
}

func intersect(a, b []string) []string {
	set := map[string]bool{}
	for _, x := range a {
		set[x] = true
	}
	var out []string
	for _, x := range b {
		if set[x] {
			out = append(out, x)
		}
	}
	return out
}

// cleanup removes the worktree and the branch in every ending (a merged
// branch only when git agrees it is merged).
func (n *nodes) cleanup(ctx context.Context, s *State) (string, error) {
	repo := n.git(s.Repo)
	if s.Result != ResultMerged && s.Patch == "" {
		if err := n.savePatch(ctx, s); err != nil {
			n.say(ctx, event.Warn, "could not save the attempt: %v", err)
		}
	}
	if err := repo.RemoveWorktree(ctx, s.Worktree); err != nil {
		return "", fmt.Errorf("remove worktree: %w", err)
	}
	if n.d.Caches != "" {
		if err := os.RemoveAll(n.d.Caches); err != nil {
			n.say(ctx, event.Warn, "the run's build cache layer %s was not removed: %v (azero runs gc removes it)", n.d.Caches, err)
		}
	}
	switch s.Result {
	case ResultMerged:
		if err := repo.DeleteBranch(ctx, s.Branch, false); err != nil {
			n.say(ctx, event.Warn, "branch %s kept: %v", s.Branch, err)
		}
	default:
		if err := repo.DeleteBranch(ctx, s.Branch, true); err != nil {
			return "", err
		}
	}
	return flow.End, nil
}

// savePatch keeps the last attempt in the lineage, so nothing the model
// wrote is lost when a run ends without a merge.
func (n *nodes) savePatch(ctx context.Context, s *State) error {
	if n.d.Lineage == nil {
		return nil
	}
	if _, err := os.Stat(s.Worktree); err != nil {
		return nil
	}
	wt := n.git(s.Worktree)
	if _, err := wt.Run(ctx, "add", "-A"); err != nil {
		return err
	}
	patch, err := wt.Run(ctx, append([]string{"diff", "--cached", "--binary"}, gitx.PatchArgs...)...)
	if err != nil || len(patch) == 0 {
		return err
	}
	seq, err := n.d.Lineage.Next(ctx)
	if err != nil {
		return err
	}
	name := fmt.Sprintf("%03d-attempt.patch", seq)
	if err := n.d.Lineage.Save(ctx, name, patch); err != nil {
		return err
	}
	s.Patch = name
	return nil
}

// MergeStoppedError reports an approved change that could not be merged
// automatically; the run waits at its merge for a resume.
type MergeStoppedError struct{ Branch, Reason, Command, RunID string }

func (e *MergeStoppedError) Error() string {
	return fmt.Sprintf("approved and committed on %s, but not merged: %s; finish with: %s, or clear the way and run: azero resume %s",
		e.Branch, e.Reason, e.Command, e.RunID)
}

// BaselineError ends a run whose project's tests could not run before any
// change; no model was asked.
type BaselineError struct{ Problem string }

func (e *BaselineError) Error() string {
	return fmt.Sprintf("%v (no model was asked, nothing was changed): %s; fix this in your repository, commit, and start again",
		testrun.ErrBaseline, e.Problem)
}

// Unwrap makes BaselineError match testrun.ErrBaseline.
func (e *BaselineError) Unwrap() error { return testrun.ErrBaseline }

// finish judges the run at its end.
func finish(s *State) error {
	switch s.Result {
	case ResultMerged:
		return nil
	case ResultBaselineBroken:
		return &BaselineError{Problem: s.BaselineProblem}
	case ResultIntegrity:
		return &IntegrityError{Problem: s.IntegrityProblem}
	case ResultTestsFailed:
		res := testrun.Result{}
		if s.Green != nil {
			res = *s.Green
		}
		return &testrun.FailedError{Result: res, Reason: fmt.Sprintf("tests still fail after %d implementation attempts (the last attempt is saved in the run's lineage as %s)", s.Implementations, s.Patch)}
	default:
		return fmt.Errorf("%s (the last attempt is saved in the run's lineage as %s): %w", abortReason(s), s.Patch, flow.ErrAborted)
	}
}

func abortReason(s *State) string {
	if s.GateDecision == string(review.Rejected) {
		return "the diff was rejected at the review gate"
	}
	return "aborted by the human"
}
