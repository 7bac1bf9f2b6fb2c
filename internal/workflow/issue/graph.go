package issue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/azero-dev/azero/internal/gitx"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/safewrite"
	"github.com/azero-dev/azero/internal/tracker"
	"github.com/azero-dev/azero/internal/workflow/governance"
)

// Runs tells the workflow about the other runs of the store: who holds a
// slug, and claims one for this run (its key).
type Runs interface {
	// Holder returns the unfinished issue run other than self whose slug
	// is slug.
	Holder(ctx context.Context, slug, self string) (Holder, bool, error)
	// Claim makes slug this run's key.
	Claim(ctx context.Context, runID, slug string) error
}

// Holder describes the run holding a slug.
type Holder struct {
	RunID  string `json:"run_id"`
	Status string `json:"status"`
	Node   string `json:"node"`
}

// Deps are what the nodes use. Nothing else is reached: no globals.
type Deps struct {
	Writer   *safewrite.Writer // every file write: trail, working copies, local issues
	Events   event.Sink        // messages for the human; nil discards
	Audit    *audit.Logger     // which prompt reviewed which draft; nil discards
	Drafter  llm.Model
	Reviewer llm.Model
	Tracker  tracker.Tracker
	Checks   *Preflight
	Runs     Runs
	// MaxOutput is, per role, the most output a retry of a cut-off reply
	// may ask for (the model's maximum or the configured
	// max_output_tokens); 0 lets it double.
	MaxOutput map[llm.Role]int
	// StateDir holds the working copies the human edits
	// (StateDir/runs/<run>/edit/...), outside the repository, so an
	// unfinished edit never shows up in the user's git status.
	StateDir string
	Now      func() time.Time
}

func (d *Deps) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

func (d *Deps) say(ctx context.Context, tone event.Tone, format string, args ...any) {
	d.clerk().Say(ctx, tone, format, args...)
}

// clerk does the loop's I/O (package governance) with d.
func (d *Deps) clerk() *governance.Clerk {
	return &governance.Clerk{Writer: d.Writer, Events: d.Events, Audit: d.Audit, MaxOutput: d.MaxOutput,
		StateDir: d.StateDir, Actor: "azero issue"}
}

// Answers at the gates (spec 2.3, HumanDecision and ErrorRecovery).
const (
	AnswerSend    = governance.AnswerSend
	AnswerApprove = governance.AnswerApprove
	AnswerRevise  = governance.AnswerRevise
	AnswerManual  = governance.AnswerManual
	AnswerRetry   = "R"
	AnswerEdit    = "E"
	AnswerAbort   = "A"
	AnswerResume  = "R"
	AnswerNewName = "N"
	// OverrideWord confirms filing an issue over the reviewer's BLOCK.
	OverrideWord = governance.OverrideWord
)

// draftRoutes are where N3 leads: Send to the review, Revise back to the
// drafter, Manual ends the run.
func draftRoutes() governance.Routes {
	return governance.Routes{Pass: NodeReview, Revise: NodeDraft, Manual: NodeManual}
}

// verdictRoutes are where N5 leads: Approve to filing, Revise back to the
// drafter, Manual ends the run.
func verdictRoutes() governance.Routes {
	return governance.Routes{Pass: NodeFileIssue, Revise: NodeDraft, Manual: NodeManual}
}

// RouteAfterDraftEdit is N3's router: Send goes to the review, Revise back
// to the drafter, Manual ends the run.
func RouteAfterDraftEdit(choice string) (string, error) { return draftRoutes().AfterDraft(choice) }

// RouteAfterVerdictEdit is N5's router: Approve goes to filing, Revise back
// to the drafter, Manual ends the run.
func RouteAfterVerdictEdit(choice string) (string, error) {
	return verdictRoutes().AfterVerdict(choice)
}

// New builds the graph. The graph's shape does not depend on d, so
// New(Deps{}) serves to create a run before its models are opened.
//
// What the human answers at a gate is recorded in the audit trail by the
// node that follows (draft, review, file_issue, manual), which first
// writes the gate's pending records: a gate's decision is pure, so that
// any channel can answer it.
func New(d Deps) *flow.Graph[State] {
	if d.Events == nil {
		d.Events = event.Discard
	}
	if d.Checks != nil && d.Checks.Command == "" {
		d.Checks.Command = "azero issue" // what its messages tell the human to run again
	}
	n := &nodes{d: d, clerk: d.clerk()}
	return flow.New[State](Name, NodeClaimSlug).
		Node(NodeClaimSlug, n.claimSlug, NodeLoadBrief, NodeSlugCollision).
		Gate(NodeSlugCollision, n.askCollision, decideCollision, NodeClaimSlug, flow.End).
		Node(NodeLoadBrief, n.loadBrief, NodePreflight).
		Node(NodePreflight, n.preflight, NodeDraft).
		Node(NodeDraft, n.draft, NodeEditDraft).
		Gate(NodeEditDraft, n.askEditDraft, decideEditDraft, NodeReview, NodeDraft, NodeManual).
		Node(NodeReview, n.review, NodeEditVerdict).
		Gate(NodeEditVerdict, n.askEditVerdict, decideEditVerdict, NodeFileIssue, NodeDraft, NodeManual).
		Node(NodeFileIssue, n.fileIssue, flow.End, NodeFilingFailed).
		Gate(NodeFilingFailed, n.askFilingFailed, decideFilingFailed, NodeFileIssue, NodeEditVerdict, flow.End).
		Node(NodeManual, n.manual, flow.End).
		Finish(finish)
}

// ManualError ends a run the human took over at a gate. It wraps
// flow.ErrAborted: the run is recorded as aborted and the command exits 4.
type ManualError struct {
	Gate, Dir                   string
	Iteration, Drafts, Verdicts int
}

func (e *ManualError) Error() string {
	return fmt.Sprintf("stopped for manual handling at %s (iteration %d, %d drafts, %d verdicts): nothing was filed; the brief, drafts, feedback and verdicts stay in %s/",
		e.Gate, e.Iteration, e.Drafts, e.Verdicts, e.Dir)
}

// Unwrap makes ManualError match flow.ErrAborted.
func (e *ManualError) Unwrap() error { return flow.ErrAborted }

// CancelledError ends a run the human cancelled at the slug collision,
// before anything was created. It wraps flow.ErrAborted.
type CancelledError struct{ Slug string }

func (e *CancelledError) Error() string {
	return fmt.Sprintf("cancelled at the slug collision of %q: nothing was created or changed", e.Slug)
}

// Unwrap makes CancelledError match flow.ErrAborted.
func (e *CancelledError) Unwrap() error { return flow.ErrAborted }

// HandOverError ends a run whose human chose, at the slug collision, to
// resume the run already holding the slug. It wraps flow.ErrAborted; the
// caller continues RunID.
type HandOverError struct{ Slug, RunID string }

func (e *HandOverError) Error() string {
	return fmt.Sprintf("slug %q belongs to run %s, which the human chose to resume instead", e.Slug, e.RunID)
}

// Unwrap makes HandOverError match flow.ErrAborted.
func (e *HandOverError) Unwrap() error { return flow.ErrAborted }

func finish(s *State) error {
	switch {
	case s.Collision != nil && s.Collision.Choice == AnswerResume:
		return &HandOverError{Slug: s.Collision.Slug, RunID: s.Collision.Holder.RunID}
	case s.Collision != nil && s.Collision.Choice == AnswerAbort:
		return &CancelledError{Slug: s.Collision.Slug}
	case s.Manual:
		return &ManualError{Gate: s.StoppedAt, Dir: s.ActiveDir(), Iteration: s.Iteration, Drafts: s.Drafts, Verdicts: s.Verdicts}
	case s.Filed == nil:
		return errors.New("the run ended without filing an issue")
	}
	return nil
}

type nodes struct {
	d     Deps
	clerk *governance.Clerk
}

func (n *nodes) trail(ctx context.Context, s *State) Trail {
	return Trail{Root: s.Root, Dir: s.ActiveDir(), Writer: n.d.Writer, RunID: flow.RunID(ctx), Actor: "azero issue"}
}

// loadBrief is N0's last part: copy the brief to 001-brief.md.
func (n *nodes) loadBrief(ctx context.Context, s *State) (string, error) {
	t := n.trail(ctx, s)
	entries, err := t.Entries()
	if err != nil {
		return "", err
	}
	if Count(entries, KindBrief) == 0 {
		if _, err := t.Record(ctx, KindBrief, []byte(s.Brief)); err != nil {
			return "", err
		}
	}
	return NodePreflight, nil
}

func (n *nodes) preflight(ctx context.Context, s *State) (string, error) {
	if n.d.Checks == nil {
		return "", &PreflightError{Check: "setup", Err: errors.New("no pre-flight checks configured")}
	}
	if n.d.Checks.Tracker == nil {
		return "", &PreflightError{Check: "tracker", Err: errors.New("no tracker configured")}
	}
	if err := n.d.Checks.Run(ctx); err != nil {
		return "", err
	}
	return NodeDraft, nil
}

// TruncatedError reports a reply cut off at its token limit every time it
// was asked for (governance.TruncatedError).
type TruncatedError = governance.TruncatedError

// draft is N2: the drafter writes the first draft from the brief, or a
// revision from the feedback. A draft saved by an earlier attempt of this
// node (the run was killed before its checkpoint) is used again: the model
// is not called twice for one step.
func (n *nodes) draft(ctx context.Context, s *State) (string, error) {
	if err := n.clerk.Flush(ctx, n.trail(ctx, s), &s.Loop); err != nil {
		return "", err
	}
	if !s.LabelsRead {
		if err := n.readLabels(ctx, s); err != nil {
			return "", err
		}
	}
	asked, warn := false, ""
	e, text, count, err := n.clerk.Reply(ctx, n.trail(ctx, s), KindDraft, func() (string, error) {
		what := "Drafting the issue"
		if s.Feedback != "" {
			what = "Revising the draft"
		}
		n.d.say(ctx, event.Plain, "%s with %s...", what, modelName(n.d.Drafter))
		raw, err := n.clerk.Generate(ctx, n.d.Drafter, llm.RoleDrafter, draftRequest(s))
		// The prose around the issue stays in the lineage, with the reply.
		draft, _, warning := SplitDraft(raw)
		asked, warn = true, warning
		return draft, err
	})
	if err != nil {
		return "", err
	}
	if !asked {
		// A draft an earlier attempt of this node saved before the run was
		// killed: one that could not be cut was saved whole, and reading
		// it again gives its warning.
		_, _, warn = SplitDraft(text)
	}
	s.Draft, s.DraftFile = string(governance.Normalise(KindDraft, []byte(text))), e.Name
	s.ModelDraft, s.DraftWarning = s.Draft, warn
	s.Drafts = count
	s.Feedback, s.FeedbackVerdict = "", ""
	return NodeEditDraft, nil
}

// readLabels asks the tracker for its labels, once a run, for the
// drafter. It never fails the run: labels that cannot be read are
// recorded as unknown, and the drafter is told so.
func (n *nodes) readLabels(ctx context.Context, s *State) error {
	tr := n.d.Tracker
	if tr == nil {
		s.LabelsRead, s.LabelsError = true, "no tracker configured"
		return nil
	}
	labels, err := tr.Labels(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.Labels, s.LabelsRead, s.LabelsError = nil, true, err.Error()
		n.d.say(ctx, event.Warn, "Could not read the labels of %s: %v; the drafter is told that no labels are known.", tr.Name(), err)
		return nil
	}
	s.Labels, s.LabelsRead, s.LabelsError = labels, true, ""
	if len(labels) == 0 {
		n.d.say(ctx, event.Plain, "%s has no labels yet: the drafter is told to mark every label it names as new.", tr.Name())
	} else {
		n.d.say(ctx, event.Plain, "%s has %d labels: the drafter is told to use only those, or to mark a label as new.", tr.Name(), len(labels))
	}
	return nil
}

// newLabels returns the labels the draft names that the tracker lacks:
// filing the draft creates them. Nil when the tracker's labels are not
// known.
func newLabels(s *State) []string {
	if !s.LabelsRead || s.LabelsError != "" {
		return nil
	}
	have := map[string]bool{}
	for _, l := range s.Labels {
		have[strings.ToLower(l)] = true
	}
	var out []string
	for _, l := range tracker.ParseLabels(s.Draft) {
		if !have[strings.ToLower(l)] {
			out = append(out, l)
		}
	}
	return out
}

// labelsReport tells the human at a gate which labels filing this draft
// would create.
func (n *nodes) labelsReport(s *State) string {
	created := newLabels(s)
	if len(created) == 0 {
		return ""
	}
	return fmt.Sprintf("Labels new to %s, created if this draft is filed: %s\n", trackerName(n.d.Tracker), strings.Join(created, ", "))
}

func modelName(m llm.Model) string {
	if m == nil {
		return "no model"
	}
	return m.Name()
}

// claimSlug is N0's collision check: the slug is free when no directory
// active/<slug> exists and no other unfinished run holds it; then the run
// takes it as its key. Otherwise the human chooses at slug_collision.
func (n *nodes) claimSlug(ctx context.Context, s *State) (string, error) {
	runID := flow.RunID(ctx)
	if prev := s.Collision; prev != nil && prev.Typed != "" && prev.Typed != s.Slug && s.Slug != "" {
		n.d.say(ctx, event.Plain, "Using %q.", s.Slug)
	}
	c := &Collision{Slug: s.Slug}
	if s.Slug == "" {
		c.Why = "the new name has no letter or digit"
		s.Collision = c
		return NodeSlugCollision, nil
	}
	_, statErr := os.Stat(filepath.Join(s.Root, filepath.FromSlash(s.ActiveDir())))
	var holder Holder
	held := false
	if n.d.Runs != nil {
		var err error
		if holder, held, err = n.d.Runs.Holder(ctx, s.Slug, runID); err != nil {
			return "", err
		}
	}
	switch {
	case held:
		c.Holder = &holder
		c.Why = fmt.Sprintf("Slug %q belongs to unfinished run %s (%s at %s).", s.Slug, holder.RunID, holder.Status, holder.Node)
	case statErr == nil:
		c.Why = fmt.Sprintf("Slug %q already exists in active/ (%s/). No run can be resumed from it (it was stopped for manual handling, or its state is gone).", s.Slug, s.ActiveDir())
	default:
		if n.d.Runs != nil {
			if err := n.d.Runs.Claim(ctx, runID, s.Slug); err != nil {
				return "", err
			}
		}
		s.Collision = nil
		return NodeLoadBrief, nil
	}
	s.Collision = c
	return NodeSlugCollision, nil
}

// askCollision asks [R]esume / [N]ew name / [A]bort (spec #62, N0).
func (n *nodes) askCollision(_ context.Context, s *State) (human.Question, error) {
	c := s.Collision
	if c == nil {
		return human.Question{}, errors.New("slug_collision: no collision recorded")
	}
	var opts []human.Option
	if c.Holder != nil {
		opts = append(opts, human.Option{Key: AnswerResume, Label: "Resume", Decision: "resume"})
	}
	opts = append(opts,
		human.Option{Key: AnswerNewName, Label: "New name", Decision: "new_name", Text: "Enter new slug:", OneLine: true},
		human.Option{Key: AnswerAbort, Label: "Abort", Decision: "abort"})
	facts := map[string]any{"workflow": Name, "slug": c.Slug}
	if c.Holder != nil {
		facts["holder_run"] = c.Holder.RunID
	}
	return human.Question{Kind: human.Menu, Title: c.Why, Prompt: "", Options: opts, Facts: facts}, nil
}

// decideCollision routes the human's answer at the collision.
func decideCollision(s *State, _ human.Question, a human.Answer) (string, error) {
	c := s.Collision
	if c == nil {
		return "", errors.New("slug_collision: no collision recorded")
	}
	c.Choice = a.Key
	switch a.Key {
	case AnswerNewName:
		c.Typed = strings.TrimSpace(a.Text)
		s.Slug = CleanSlug(c.Typed)
		return NodeClaimSlug, nil
	case AnswerResume:
		if c.Holder == nil {
			return "", errors.New("slug_collision: no run to resume")
		}
	}
	return flow.End, nil
}

// askEditDraft is N3, the gate between the drafter and the reviewer: the
// human reads (and may edit) the draft, then sends it to the reviewer,
// asks for a revision with feedback, or stops.
func (n *nodes) askEditDraft(ctx context.Context, s *State) (human.Question, error) {
	return n.clerk.AskDraft(ctx, n.trail(ctx, s), &s.Loop, n.view(s))
}

// view is what the issue workflow adds to the gates' questions.
func (n *nodes) view(s *State) governance.View {
	v := governance.View{Workflow: Name, Slug: s.Slug, Drafter: modelName(n.d.Drafter), Reviewer: modelName(n.d.Reviewer),
		Approve: "File the issue on " + trackerName(n.d.Tracker), Overriding: "filing the issue anyway"}
	if l := n.labelsReport(s); l != "" {
		v.Notes = append(v.Notes, l)
	}
	return v
}

// decideEditDraft routes N3 and leaves the human's edits and feedback for
// the next node to record.
func decideEditDraft(s *State, q human.Question, a human.Answer) (string, error) {
	return governance.DecideDraft(&s.Loop, q, a, draftRoutes())
}

// review is N4: the reviewer reads the draft the human sent, with the
// built-in review prompt. A verdict saved by an earlier attempt of this
// node is used again.
func (n *nodes) review(ctx context.Context, s *State) (string, error) {
	if err := n.clerk.Flush(ctx, n.trail(ctx, s), &s.Loop); err != nil {
		return "", err
	}
	e, text, count, err := n.clerk.Reply(ctx, n.trail(ctx, s), KindVerdict, func() (string, error) {
		n.d.say(ctx, event.Plain, "Reviewing draft #%d with %s...", s.Drafts, modelName(n.d.Reviewer))
		raw, err := n.clerk.Generate(ctx, n.d.Reviewer, llm.RoleReviewer, reviewRequest(s))
		return StripVerdict(raw), err
	})
	if err != nil {
		return "", err
	}
	s.Verdict, s.VerdictFile = string(governance.Normalise(KindVerdict, []byte(text))), e.Name
	s.ReviewerVerdict = VerdictWord(text)
	s.Verdicts = count
	_ = n.d.Audit.Event(ctx, "issue_review", flow.RunID(ctx), slog.String("slug", s.Slug),
		slog.String("verdict_file", e.Name), slog.String("verdict", s.ReviewerVerdict),
		slog.String("model", modelName(n.d.Reviewer)), slog.String("review_prompt_sha256", ReviewPromptSHA256()))
	return NodeEditVerdict, nil
}

// askEditVerdict is N5, the gate between the reviewer and filing (or the
// drafter): the human reads, and may edit, the draft and the verdict, then
// approves filing, asks for a revision, or stops. Filing over the
// reviewer's BLOCK needs the word override typed as well.
func (n *nodes) askEditVerdict(ctx context.Context, s *State) (human.Question, error) {
	return n.clerk.AskVerdict(ctx, n.trail(ctx, s), &s.Loop, n.view(s))
}

// decideEditVerdict routes N5 and leaves the human's edits and feedback
// for the next node to record.
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

func trackerName(t tracker.Tracker) string {
	if t == nil {
		return "the tracker"
	}
	return t.Name()
}

// fileIssue is N6. Filing looks for the run's marker first, so a run
// killed after the tracker accepted its issue finds it instead of filing
// a second one. A failure goes to the filing_failed gate.
func (n *nodes) fileIssue(ctx context.Context, s *State) (string, error) {
	if err := n.clerk.Flush(ctx, n.trail(ctx, s), &s.Loop); err != nil {
		return "", err
	}
	runID := flow.RunID(ctx)
	filed, err := n.fileOnce(ctx, s, runID)
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		s.FilingError = err.Error()
		n.d.say(ctx, event.Bad, "Filing failed: %v\nThe audit trail stays in %s/.", err, s.ActiveDir())
		return NodeFilingFailed, nil
	}
	s.FilingError = ""
	if filed.Found {
		n.d.say(ctx, event.Plain, "Issue #%d was already filed by this run: %s", filed.Number, filed.URL)
	} else {
		n.d.say(ctx, event.Good, "Filed issue #%d: %s", filed.Number, filed.URL)
	}
	if err := n.finalise(ctx, s, &filed); err != nil {
		return "", fmt.Errorf("issue #%d is filed (%s), but its audit trail is not complete: %w; fix the cause and resume the run (it will not file again)",
			filed.Number, filed.URL, err)
	}
	s.Filed = &filed
	return flow.End, nil
}

// askFilingFailed asks what to do after a filing error: [R]etry, [E]dit
// the draft (back to the verdict gate), or [A]bort.
func (n *nodes) askFilingFailed(_ context.Context, s *State) (human.Question, error) {
	return human.Question{
		Kind:   human.Menu,
		Title:  "Filing failed: " + s.FilingError,
		Prompt: "Retry filing, edit the draft (back to the verdict gate), or abort?",
		Options: []human.Option{
			{Key: AnswerRetry, Label: "Retry", Decision: "retry"},
			{Key: AnswerEdit, Label: "Edit", Decision: "edit"},
			{Key: AnswerAbort, Label: "Abort", Decision: "abort"},
		},
		Facts: map[string]any{"workflow": Name, "slug": s.Slug, "error": s.FilingError},
	}, nil
}

// decideFilingFailed routes the answer after a filing error. An abort
// fails the run with the error (exit 1): nothing was filed, the files stay
// in active/, and resuming the run asks again.
func decideFilingFailed(s *State, _ human.Question, a human.Answer) (string, error) {
	switch a.Key {
	case AnswerRetry:
		return NodeFileIssue, nil
	case AnswerEdit:
		return NodeEditVerdict, nil
	}
	return "", fmt.Errorf("filing aborted; nothing was filed and the audit trail stays in %s/: %s", s.ActiveDir(), s.FilingError)
}

// fileOnce finds the run's issue or files it.
func (n *nodes) fileOnce(ctx context.Context, s *State, runID string) (Filed, error) {
	tr := n.d.Tracker
	if tr == nil {
		return Filed{}, errors.New("no tracker configured")
	}
	marker := tracker.Marker(runID)
	f := Filed{Tracker: tr.Name(), RunID: runID, At: n.d.now().UTC()}
	found, ok, err := tr.Find(ctx, marker)
	if err != nil {
		return Filed{}, err
	}
	if ok {
		f.Number, f.URL, f.Title, f.Labels, f.Found = found.Number, found.URL, found.Title, found.Labels, true
		if f.Labels == nil {
			f.Labels = tracker.ParseLabels(s.Draft)
		}
		return f, nil
	}
	title := tracker.ParseTitle(s.Draft)
	if title == "" {
		return Filed{}, errors.New("the draft has no title: its first heading must be a line '# Title'; choose Edit draft to add one")
	}
	labels := tracker.ParseLabels(s.Draft)
	// The labels the human passed with the draft are created (those the
	// draft proposed as new, and any other the tracker lacks), and which
	// ones is recorded: in filed.json and in the audit log.
	created, err := tr.EnsureLabels(ctx, labels)
	if len(created) > 0 {
		n.d.say(ctx, event.Plain, "Created labels on %s: %s", tr.Name(), strings.Join(created, ", "))
		f.Created = created
		_ = n.d.Audit.Event(ctx, "issue_labels_created", runID, slog.String("slug", s.Slug),
			slog.String("tracker", tr.Name()), slog.Any("labels", created))
	}
	if err != nil {
		return Filed{}, err
	}
	// The title and labels lines become the issue's title and labels: the
	// body does not repeat them.
	body := strings.TrimRight(tracker.Body(s.Draft), "\n")
	if strings.TrimSpace(body) != "" {
		body += "\n\n"
	}
	body += marker + "\n"
	is, err := tr.Create(ctx, tracker.Issue{Title: title, Body: body, Labels: labels})
	if err != nil {
		return Filed{}, err
	}
	f.Number, f.URL, f.Title, f.Labels = is.Number, is.URL, is.Title, labels
	if f.Title == "" {
		f.Title = title
	}
	if f.Labels == nil {
		f.Labels = []string{}
	}
	return f, nil
}

// finalise writes NNN-filed.json, moves the trail to done/<n>-<slug> and
// commits it, skipping whatever an earlier attempt already did.
func (n *nodes) finalise(ctx context.Context, s *State, f *Filed) error {
	runID := flow.RunID(ctx)
	active, done := s.ActiveDir(), s.DoneDir(f.Number)
	at := Trail{Root: s.Root, Dir: active, Writer: n.d.Writer, RunID: runID}
	dt := Trail{Root: s.Root, Dir: done, Writer: n.d.Writer, RunID: runID}
	switch {
	case at.Exists() && dt.Exists():
		return fmt.Errorf("both %s and %s exist; merge them by hand", active, done)
	case at.Exists():
		entries, err := at.Entries()
		if err != nil {
			return err
		}
		if Count(entries, KindFiled) == 0 {
			rec := *f
			rec.Dir = done
			b, err := json.MarshalIndent(rec, "", "  ")
			if err != nil {
				return err
			}
			if _, err := at.Record(ctx, KindFiled, append(b, '\n')); err != nil {
				return err
			}
		}
		if err := n.d.Writer.Move(ctx, s.Root, active, done, "azero issue", runID); err != nil {
			return fmt.Errorf("move the audit trail to %s: %w", done, err)
		}
	case !dt.Exists():
		return fmt.Errorf("the audit trail is missing: neither %s nor %s exists", active, done)
	}
	f.Dir = done
	paths := []string{done, active}
	if s.Tracker.Kind == TrackerLocal && f.URL != "" && !strings.Contains(f.URL, "://") {
		paths = append(paths, path.Clean(f.URL))
	}
	msg := fmt.Sprintf("docs(audit): issue #%d %s\n\nAudit trail of azero run %s (slug %s):\nthe brief, every draft, the human's edits and feedback, the\nreviewer's verdicts and the filing record.\n\nIssue: %s\n",
		f.Number, f.Title, runID, s.Slug, f.URL)
	id, err := governance.Commit(ctx, s.Root, paths, msg)
	if err != nil {
		return err
	}
	f.Commit = id
	n.d.say(ctx, event.Plain, "Audit trail moved to %s/ and committed (%s).", done, gitx.ShortID(id))
	return nil
}
