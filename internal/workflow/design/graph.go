package design

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/repomap"
	"github.com/azero-dev/azero/internal/safewrite"
	"github.com/azero-dev/azero/internal/workflow/governance"
	"github.com/azero-dev/azero/internal/workflow/implement"
)

// Deps are what the nodes use. Nothing else is reached: no globals.
type Deps struct {
	Writer   *safewrite.Writer // every file write: trail, document, working copies
	Events   event.Sink        // messages for the human; nil discards
	Audit    *audit.Logger     // checks, reviews, overrides; nil discards
	Drafter  llm.Model
	Reviewer llm.Model
	Checks   *governance.Preflight
	// MaxOutput is, per role, the most output a retry of a cut-off reply
	// may ask for; 0 lets it double.
	MaxOutput map[llm.Role]int
	// StateDir holds the working copies the human edits and, with
	// --implement, the implementation's worktree.
	StateDir string
	// MapBudget bounds the repository's map in tokens (default
	// repomap.DefaultBudget); CountTokens counts them (default: azero's
	// estimator).
	MapBudget   int
	CountTokens func(string) int
	Now         func() time.Time
	// Implement builds the implementation's dependencies for its state, as
	// `azero implement` builds them (the coder, the runner, the sandbox,
	// the lineage): the steps of the mounted implementation run with them.
	// Nil: a run that reaches the implementation fails there, resumable
	// once it is given.
	Implement func(ctx context.Context, s *implement.State) (implement.Deps, error)
	// Prices checks the implementation's budget (implement.Prepare).
	Prices llm.PriceTable
}

func (d *Deps) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

// actor names the workflow in safewrite's records and in messages.
const actor = "azero design"

// Answers at the gates (governance's).
const (
	AnswerSend    = governance.AnswerSend
	AnswerApprove = governance.AnswerApprove
	AnswerRevise  = governance.AnswerRevise
	AnswerManual  = governance.AnswerManual
	// OverrideWord confirms committing a design over the reviewer's BLOCK.
	OverrideWord = governance.OverrideWord
)

// draftRoutes are where the draft gate leads.
func draftRoutes() governance.Routes {
	return governance.Routes{Pass: NodeReview, Revise: NodeDraft, Manual: NodeManual}
}

// verdictRoutes are where the verdict gate leads.
func verdictRoutes() governance.Routes {
	return governance.Routes{Pass: NodeCommit, Revise: NodeDraft, Manual: NodeManual}
}

// New builds the graph. Its shape does not depend on d, so New(Deps{})
// serves to create a run before its models are opened, and as the shape
// another engine routes with.
func New(d Deps) *flow.Graph[State] {
	if d.Events == nil {
		d.Events = event.Discard
	}
	if d.Checks != nil && d.Checks.Command == "" {
		d.Checks.Command = actor // what its messages tell the human to run again
	}
	inner := implement.Graph(implement.Deps{})
	n := &nodes{d: d, inner: inner, clerk: &governance.Clerk{Writer: d.Writer, Events: d.Events, Audit: d.Audit,
		MaxOutput: d.MaxOutput, StateDir: d.StateDir, Actor: actor}}
	g := flow.New[State](Name, NodeLoadInput).
		Node(NodeLoadInput, n.loadInput, NodePreflight).
		Node(NodePreflight, n.preflight, NodeMap).
		Node(NodeMap, n.mapRepository, NodeDraft).
		Node(NodeDraft, n.draft, NodeCheck).
		Node(NodeCheck, n.check, NodeDraft, NodeEditDraft).
		Gate(NodeEditDraft, n.askEditDraft, decideEditDraft, NodeReview, NodeDraft, NodeManual).
		Node(NodeReview, n.review, NodeEditVerdict).
		Gate(NodeEditVerdict, n.askEditVerdict, decideEditVerdict, NodeCommit, NodeDraft, NodeManual).
		Node(NodeCommit, n.commit, flow.End, NodeImplement, NodeEditVerdict).
		Node(NodeManual, n.manual, flow.End).
		Node(NodeImplement, n.prepareImplementation, ImplementPrefix+inner.Start()).
		MaxVisits(NodeDraft, 60).
		MaxSteps(300).
		Finish(func(s *State) error { return finish(s, inner) })
	return flow.Mount(g, flow.Mounted[State, implement.State]{Prefix: ImplementPrefix, Graph: inner, State: implementationOf,
		Exit: flow.End, Bind: n.bindImplementation})
}

// ManualError ends a run the human took over at a gate. It wraps
// flow.ErrAborted: the run is recorded as aborted and the command exits 4.
type ManualError struct {
	Gate, Dir                   string
	Iteration, Drafts, Verdicts int
}

func (e *ManualError) Error() string {
	return fmt.Sprintf("stopped for manual handling at %s (iteration %d, %d drafts, %d verdicts): nothing was committed; the issue, drafts, checks, feedback and verdicts stay in %s/",
		e.Gate, e.Iteration, e.Drafts, e.Verdicts, e.Dir)
}

// Unwrap makes ManualError match flow.ErrAborted.
func (e *ManualError) Unwrap() error { return flow.ErrAborted }

// finish judges a run that reached the end: the design committed, and with
// --implement the implementation's own judgement.
func finish(s *State, inner *flow.Graph[implement.State]) error {
	switch {
	case s.Manual:
		return &ManualError{Gate: s.StoppedAt, Dir: s.ActiveDir(), Iteration: s.Iteration, Drafts: s.Drafts, Verdicts: s.Verdicts}
	case s.Committed == nil:
		return errors.New("the run ended without committing a design")
	case s.Implement == nil:
		return nil
	case s.Implementation == nil:
		return fmt.Errorf("the design was committed (%s), but its implementation never started", s.LLDPath)
	}
	return inner.Judge(s.Implementation)
}

type nodes struct {
	d     Deps
	clerk *governance.Clerk
	inner *flow.Graph[implement.State]

	mu       sync.Mutex
	bound    *flow.Graph[implement.State] // the implementation built for boundKey
	boundKey string
}

func (n *nodes) trail(ctx context.Context, s *State) governance.Trail {
	return governance.Trail{Root: s.Root, Dir: s.ActiveDir(), Writer: n.d.Writer, RunID: flow.RunID(ctx), Actor: actor}
}

func modelName(m llm.Model) string {
	if m == nil {
		return "no model"
	}
	return m.Name()
}

// loadInput copies what the design is for into the trail's first file:
// the issue as read (with where its own trail is), or the brief.
func (n *nodes) loadInput(ctx context.Context, s *State) (string, error) {
	t := n.trail(ctx, s)
	entries, err := t.Entries()
	if err != nil {
		return "", err
	}
	kind, content := governance.KindBrief, s.Brief
	if s.Issue != nil {
		kind, content = governance.KindIssue, issueText(s.Issue)
		if s.Issue.Trail != "" {
			content += fmt.Sprintf("\n---\nFiled by azero run %s; its audit trail: %s/\n", s.Issue.FiledBy, s.Issue.Trail)
		}
	}
	if governance.Count(entries, kind) == 0 {
		if _, err := t.Record(ctx, kind, []byte(content)); err != nil {
			return "", err
		}
	}
	if s.Issue != nil && s.Issue.Trail != "" {
		n.clerk.Say(ctx, event.Plain, "Issue #%d was filed by azero run %s: its audit trail is %s/.", s.Issue.Number, s.Issue.FiledBy, s.Issue.Trail)
	}
	return NodePreflight, nil
}

func (n *nodes) preflight(ctx context.Context, s *State) (string, error) {
	if n.d.Checks == nil {
		return "", &governance.PreflightError{Check: "setup", Err: errors.New("no pre-flight checks configured")}
	}
	if err := n.d.Checks.Run(ctx); err != nil {
		return "", err
	}
	return NodeMap, nil
}

// mapRepository maps the repository for the drafter, once a run.
func (n *nodes) mapRepository(ctx context.Context, s *State) (string, error) {
	if s.Map != "" {
		return NodeDraft, nil
	}
	count := n.d.CountTokens
	if count == nil {
		count = llm.NewEstimator().CountTokens
	}
	runner := ""
	if p := s.Implement; p != nil {
		runner = p.Runner
		if runner == "" {
			runner = p.Config.Runner
		}
	}
	query := s.Title + "\n\n" + s.Brief
	if s.Issue != nil {
		query = s.Issue.Title + "\n\n" + s.Issue.Body
	}
	m, err := repomap.Build(ctx, s.Root, repomap.Options{Query: query, Budget: n.d.MapBudget, CountTokens: count, Runner: runner,
		Skip: []string{s.AuditDir}})
	if err != nil {
		return "", err
	}
	s.Map = m.Text()
	var outlined []string
	for _, o := range m.Outlines {
		outlined = append(outlined, o.Path)
	}
	what := "no file outlined"
	if len(outlined) > 0 {
		what = "outlines of " + strings.Join(outlined, ", ")
	}
	runnerSays := "no test runner detected"
	if m.Runner != "" {
		runnerSays = "tests run with " + m.Runner
	}
	n.clerk.Say(ctx, event.Plain, "Mapped the repository for the drafter (%d tokens): %d files, %s; %s.", count(s.Map), m.Files, what, runnerSays)
	return NodeDraft, nil
}

// draft writes the first draft, a draft the check sent back, or a
// revision the human asked for. A draft saved by an earlier attempt of
// this node (the run was killed before its checkpoint) is used again: the
// model is not called twice for one step.
func (n *nodes) draft(ctx context.Context, s *State) (string, error) {
	t := n.trail(ctx, s)
	if err := n.clerk.Flush(ctx, t, &s.Loop); err != nil {
		return "", err
	}
	asked, warn := false, ""
	e, text, count, err := n.clerk.Reply(ctx, t, governance.KindDraft, func() (string, error) {
		what := "Drafting the design"
		switch {
		case s.CheckFeedback != "":
			what = "Sending the draft back to be fixed"
		case s.Feedback != "":
			what = "Revising the design"
		}
		n.clerk.Say(ctx, event.Plain, "%s with %s...", what, modelName(n.d.Drafter))
		raw, err := n.clerk.Generate(ctx, n.d.Drafter, llm.RoleDrafter, draftRequest(s))
		// The prose around the design stays in the lineage, with the reply.
		d, _, warning := governance.SplitDraft(raw)
		asked, warn = true, warning
		return d, err
	})
	if err != nil {
		return "", err
	}
	if !asked {
		_, _, warn = governance.SplitDraft(text)
	}
	s.Draft, s.DraftFile = string(governance.Normalise(governance.KindDraft, []byte(text))), e.Name
	s.ModelDraft, s.DraftWarning = s.Draft, warn
	s.Drafts = count
	if s.CheckFeedback == "" {
		s.Returns = 0 // a draft the human asked for: its checks start over
	}
	s.Feedback, s.FeedbackVerdict, s.CheckFeedback = "", "", ""
	s.Findings, s.CheckedFile, s.Checked = nil, "", false
	return NodeCheck, nil
}

// check is the mechanical check of the drafter's draft, before any human
// or the reviewer sees it: a draft that fails goes back to the drafter
// with the findings, up to MaxCheckReturns times in a row, then to the
// human with them. The findings are recorded in the trail.
func (n *nodes) check(ctx context.Context, s *State) (string, error) {
	findings := Check(s.Draft, s.Root)
	s.Findings, s.CheckedFile, s.Checked = findings, s.DraftFile, true
	runID := flow.RunID(ctx)
	if len(findings) == 0 {
		_ = n.d.Audit.Event(ctx, "design_check", runID, slog.String("slug", s.Slug), slog.String("draft_file", s.DraftFile), slog.Bool("passed", true))
		n.clerk.Say(ctx, event.Good, "Draft #%d passed the mechanical check of its Files Changed table.", s.Drafts)
		return NodeEditDraft, nil
	}
	text := FindingsText(findings)
	rec, err := n.trail(ctx, s).Record(ctx, governance.KindCheck, []byte(fmt.Sprintf("The mechanical check of %s:\n\n%s", s.DraftFile, text)))
	if err != nil {
		return "", err
	}
	back := s.Returns < MaxCheckReturns
	_ = n.d.Audit.Event(ctx, "design_check", runID, slog.String("slug", s.Slug), slog.String("draft_file", s.DraftFile), slog.Bool("passed", false),
		slog.Int("problems", len(findings)), slog.String("check_file", rec.Name), slog.Bool("sent_back", back))
	if back {
		s.Returns++
		s.CheckFeedback = text
		n.clerk.Say(ctx, event.Warn, "Draft #%d fails the mechanical check (%d %s, recorded as %s): it goes back to the drafter (%d of %d).",
			s.Drafts, len(findings), plural(len(findings), "problem"), rec.Name, s.Returns, MaxCheckReturns)
		return NodeDraft, nil
	}
	n.clerk.Say(ctx, event.Bad, "Draft #%d still fails the mechanical check after %d returns to the drafter (%s): you decide at the draft gate.",
		s.Drafts, MaxCheckReturns, rec.Name)
	return NodeEditDraft, nil
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// view is what the design workflow adds to the gates' questions.
func (n *nodes) view(s *State) governance.View {
	approve := "Commit the design to " + s.LLDPath + " with its audit trail"
	if s.Implement != nil {
		approve += " and implement it"
	}
	return governance.View{Workflow: Name, Slug: s.Slug, Drafter: modelName(n.d.Drafter), Reviewer: modelName(n.d.Reviewer),
		Approve: approve, Overriding: "committing the design anyway", Facts: map[string]any{"lld_path": s.LLDPath}}
}

// askEditDraft is the gate between the drafter (and the check) and the
// reviewer: the human reads the draft, with the check's findings when it
// still fails, edits it if they like, and sends it, asks for a revision
// or stops.
func (n *nodes) askEditDraft(ctx context.Context, s *State) (human.Question, error) {
	v := n.view(s)
	switch {
	case len(s.Findings) > 0:
		v.Warnings = append(v.Warnings, fmt.Sprintf("this draft fails azero's mechanical check of its Files Changed table, after %d returns to the drafter; fix the table in the editor, or ask for a revision:\n%s",
			s.Returns, strings.TrimRight(FindingsText(s.Findings), "\n")))
		v.Facts["check"], v.Facts["check_problems"] = "failed", len(s.Findings)
	case s.Checked:
		v.Notes = append(v.Notes, "azero's mechanical check of the Files Changed table passed.")
		v.Facts["check"] = "passed"
	}
	return n.clerk.AskDraft(ctx, n.trail(ctx, s), &s.Loop, v)
}

// decideEditDraft routes the draft gate; the next node records the human's
// edits and feedback.
func decideEditDraft(s *State, q human.Question, a human.Answer) (string, error) {
	return governance.DecideDraft(&s.Loop, q, a, draftRoutes())
}

// review has the reviewer read the design the human sent, with the
// built-in review prompt, and the check of it as the human left it. A
// verdict saved by an earlier attempt of this node is used again.
func (n *nodes) review(ctx context.Context, s *State) (string, error) {
	t := n.trail(ctx, s)
	if err := n.clerk.Flush(ctx, t, &s.Loop); err != nil {
		return "", err
	}
	findings := Check(s.Draft, s.Root)
	e, text, count, err := n.clerk.Reply(ctx, t, governance.KindVerdict, func() (string, error) {
		n.clerk.Say(ctx, event.Plain, "Reviewing draft #%d with %s...", s.Drafts, modelName(n.d.Reviewer))
		raw, err := n.clerk.Generate(ctx, n.d.Reviewer, llm.RoleReviewer, reviewRequest(s, findings))
		return governance.StripVerdict(raw), err
	})
	if err != nil {
		return "", err
	}
	s.Verdict, s.VerdictFile = string(governance.Normalise(governance.KindVerdict, []byte(text))), e.Name
	s.ReviewerVerdict = governance.VerdictWord(text)
	s.Verdicts = count
	_ = n.d.Audit.Event(ctx, "design_review", flow.RunID(ctx), slog.String("slug", s.Slug),
		slog.String("verdict_file", e.Name), slog.String("verdict", s.ReviewerVerdict),
		slog.String("model", modelName(n.d.Reviewer)), slog.String("review_prompt_sha256", ReviewPromptSHA256()))
	return NodeEditVerdict, nil
}

// askEditVerdict is the gate between the reviewer and the commit (or the
// drafter): the human reads, and may edit, the design and the verdict,
// then approves, asks for a revision, or stops. Approving over the
// reviewer's BLOCK needs the word override typed as well. A design that
// fails the mechanical check is shown with its findings: it is committed
// only once it passes.
func (n *nodes) askEditVerdict(ctx context.Context, s *State) (human.Question, error) {
	v := n.view(s)
	if findings := Check(s.Draft, s.Root); len(findings) > 0 {
		v.Warnings = append(v.Warnings, "this design fails azero's mechanical check of its Files Changed table, and is committed only once it passes: fix the table in the editor before approving, or ask for a revision:\n"+
			strings.TrimRight(FindingsText(findings), "\n"))
		v.Facts["check"], v.Facts["check_problems"] = "failed", len(findings)
	} else {
		v.Facts["check"] = "passed"
	}
	return n.clerk.AskVerdict(ctx, n.trail(ctx, s), &s.Loop, v)
}

// decideEditVerdict routes the verdict gate; the next node records the
// human's edits and feedback.
func decideEditVerdict(s *State, q human.Question, a human.Answer) (string, error) {
	return governance.DecideVerdict(&s.Loop, q, a, verdictRoutes())
}

// manual records what the human answered at the gate where they stopped,
// so the trail they take over is complete.
func (n *nodes) manual(ctx context.Context, s *State) (string, error) {
	if err := n.clerk.Flush(ctx, n.trail(ctx, s), &s.Loop); err != nil {
		return "", err
	}
	return flow.End, nil
}

// commit checks the approved design once more, as the human left it, and
// commits it with its trail: the document at LLDPath, the trail moved to
// done/, in one commit of exactly those files. A design that fails the
// check goes back to the verdict gate with the findings.
func (n *nodes) commit(ctx context.Context, s *State) (string, error) {
	t := n.trail(ctx, s)
	if s.Committed == nil {
		if err := n.clerk.Flush(ctx, t, &s.Loop); err != nil {
			return "", err
		}
		if findings := Check(s.Draft, s.Root); len(findings) > 0 {
			text := FindingsText(findings)
			rec, err := t.Record(ctx, governance.KindCheck, []byte("The mechanical check of the approved design, "+s.DraftFile+":\n\n"+text))
			if err != nil {
				return "", err
			}
			s.Findings = findings
			n.clerk.Say(ctx, event.Bad, "The design you approved fails the mechanical check (%s); nothing was committed: back to the verdict gate.\n%s", rec.Name, text)
			return NodeEditVerdict, nil
		}
		if s.Override {
			_ = n.d.Audit.Event(ctx, "design_override", flow.RunID(ctx), slog.String("slug", s.Slug), slog.String("verdict", s.ReviewerWord()),
				slog.String("verdict_file", s.VerdictFile))
		}
		if err := n.finalise(ctx, s); err != nil {
			return "", err
		}
	}
	s.Next = "azero implement --lld " + s.LLDPath
	n.clerk.Say(ctx, event.Good, "Committed %s with its audit trail %s/ (%s).", s.LLDPath, s.Committed.Dir, gitx.ShortID(s.Committed.Commit))
	if s.Implement != nil {
		return NodeImplement, nil
	}
	n.clerk.Say(ctx, event.Plain, "Implement it with: %s", s.Next)
	return flow.End, nil
}

// finalise writes the document and the trail's record, moves the trail to
// done/ and commits them, skipping whatever an earlier attempt did.
func (n *nodes) finalise(ctx context.Context, s *State) error {
	runID := flow.RunID(ctx)
	active, done := s.ActiveDir(), s.DoneDir()
	at := governance.Trail{Root: s.Root, Dir: active, Writer: n.d.Writer, RunID: runID, Actor: actor}
	dt := governance.Trail{Root: s.Root, Dir: done, Writer: n.d.Writer, RunID: runID, Actor: actor}
	if err := n.writeDocument(ctx, s, runID); err != nil {
		return err
	}
	now := n.d.now().UTC()
	switch {
	case at.Exists() && dt.Exists():
		return fmt.Errorf("both %s and %s exist; merge them by hand", active, done)
	case at.Exists():
		entries, err := at.Entries()
		if err != nil {
			return err
		}
		if governance.Count(entries, governance.KindDesigned) == 0 {
			rec := Record{Path: s.LLDPath, Title: s.Title, Issue: s.Issue, Brief: s.BriefPath, RunID: runID,
				Verdict: s.ReviewerWord(), Override: s.Override, Dir: done, At: now}
			b, err := json.MarshalIndent(rec, "", "  ")
			if err != nil {
				return err
			}
			if _, err := at.Record(ctx, governance.KindDesigned, append(b, '\n')); err != nil {
				return err
			}
		}
		if err := n.d.Writer.Move(ctx, s.Root, active, done, actor, runID); err != nil {
			return fmt.Errorf("move the audit trail to %s: %w", done, err)
		}
	case !dt.Exists():
		return fmt.Errorf("the audit trail is missing: neither %s nor %s exists", active, done)
	}
	id, err := governance.Commit(ctx, s.Root, []string{s.LLDPath, done, active}, commitMessage(s, runID))
	if err != nil {
		return err
	}
	s.Committed = &Committed{Path: s.LLDPath, Dir: done, Commit: id, At: now}
	return nil
}

// writeDocument writes the approved design at LLDPath, never over another
// file: one an earlier attempt wrote with this content is kept.
func (n *nodes) writeDocument(ctx context.Context, s *State, runID string) error {
	doc := governance.Normalise(governance.KindDraft, []byte(s.Draft))
	full := filepath.Join(s.Root, filepath.FromSlash(s.LLDPath))
	if old, err := os.ReadFile(full); err == nil {
		if bytes.Equal(old, doc) {
			return nil
		}
		return fmt.Errorf("%s appeared while the design was drafted, with other content: move it away and resume the run to commit the approved design", s.LLDPath)
	}
	_, err := n.d.Writer.Write(ctx, safewrite.Request{Root: s.Root, Path: s.LLDPath, Content: doc,
		Base: &safewrite.Snapshot{Exists: false}, Actor: actor, RunID: runID})
	if err != nil {
		return fmt.Errorf("write the design to %s: %w", s.LLDPath, err)
	}
	return nil
}

func commitMessage(s *State, runID string) string {
	var b strings.Builder
	if s.Issue != nil {
		fmt.Fprintf(&b, "docs(lld): design for issue #%d %s\n\n", s.Issue.Number, s.Title)
	} else {
		fmt.Fprintf(&b, "docs(lld): design %s\n\n", s.Title)
	}
	fmt.Fprintf(&b, "The design document %s and the audit trail of azero run %s\n(slug %s): what it was designed for, every draft and mechanical check,\nthe human's edits and feedback, the reviewer's verdicts and the record.\n", s.LLDPath, runID, s.Slug)
	if s.Issue != nil {
		fmt.Fprintf(&b, "\nIssue: %s\n", s.Issue.URL)
		if s.Issue.Trail != "" {
			fmt.Fprintf(&b, "Issue trail: %s\n", s.Issue.Trail)
		}
	}
	return b.String()
}

// prepareImplementation makes the implementation's run state from the
// committed design (--implement), as `azero implement --lld` would: its
// checks (the design's table, a runner, the budget) and its branch and
// worktree. It is made once.
func (n *nodes) prepareImplementation(ctx context.Context, s *State) (string, error) {
	next := ImplementPrefix + n.inner.Start()
	if s.Implementation != nil {
		return next, nil
	}
	p := s.Implement
	if p == nil {
		return "", errors.New("the run was not asked to implement the design")
	}
	full := filepath.Join(s.Root, filepath.FromSlash(s.LLDPath))
	doc, err := os.ReadFile(full)
	if err != nil {
		return "", fmt.Errorf("read the committed design: %w", err)
	}
	number := ""
	if s.Issue != nil {
		number = strconv.Itoa(s.Issue.Number)
	}
	st, plan, err := implement.Prepare(ctx, implement.Inputs{DesignPath: full, Design: doc, Issue: number, Dir: s.Root,
		Context: p.Context, Runner: p.Runner, TestCmd: p.TestCmd, Report: p.Report, Coder: p.Coder, Prices: n.d.Prices,
		Settings: p.Settings, Config: p.Config, StateDir: n.d.StateDir, RunID: flow.RunID(ctx)})
	if err != nil {
		return "", fmt.Errorf("the design is committed (%s), but its implementation cannot start: %w; fix the cause and resume the run, or run %s", s.LLDPath, err, s.Next)
	}
	s.Implementation = st
	n.clerk.Say(ctx, event.Plain, "Implementing %s on branch %s with %s, tests run with %s: the coder is sent the design (%d tokens) and the files it changes.",
		s.LLDPath, st.Branch, st.Coder, st.Runner, plan.DesignTokens)
	return next, nil
}

// bindImplementation builds the implementation graph with the dependencies
// of the run's implementation state, once for each state that needs other
// ones (the same run keeps them).
func (n *nodes) bindImplementation(ctx context.Context, in *implement.State) (*flow.Graph[implement.State], error) {
	if n.d.Implement == nil {
		return nil, errors.New("this process cannot run the implementation (no implementation dependencies): resume the run with azero")
	}
	key, err := json.Marshal([]any{in.Repo, in.Worktree, in.Runner, in.TestCmd, in.Report, in.Coder, in.Settings})
	if err != nil {
		return nil, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.bound != nil && n.boundKey == string(key) {
		return n.bound, nil
	}
	deps, err := n.d.Implement(ctx, in)
	if err != nil {
		return nil, err
	}
	n.bound, n.boundKey = implement.Graph(deps), string(key)
	return n.bound, nil
}
