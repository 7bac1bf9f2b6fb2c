package issue

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/prompt"
	"github.com/azero-dev/azero/internal/safewrite"
	"github.com/azero-dev/azero/internal/tracker"
)

// Asker is the human at the terminal (prompt.Prompter). Without a terminal
// every method fails with an error whose NeedsHuman reports true, and the
// run waits at the gate.
type Asker interface {
	CanPrompt() bool
	Choose(ctx context.Context, question string, choices []prompt.Choice) (string, error)
	Paragraph(ctx context.Context, question string) (string, error)
	Edit(ctx context.Context, files ...string) error
}

// Deps are what the nodes use. Nothing else is reached: no globals.
type Deps struct {
	Asker    Asker
	Writer   *safewrite.Writer // every file write: trail, working copies, local issues
	Audit    *audit.Logger     // gate decisions; nil discards
	ErrOut   io.Writer         // messages for the human
	Color    iostreams.ColorScheme
	Drafter  llm.Model
	Reviewer llm.Model
	Tracker  tracker.Tracker
	Checks   *Preflight
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

func (d *Deps) say(format string, args ...any) {
	if d.ErrOut != nil {
		fmt.Fprintf(d.ErrOut, format, args...)
	}
}

// Choices at the gates (spec 2.3, HumanDecision and ErrorRecovery).
var (
	draftChoices   = []prompt.Choice{{Key: "S", Label: "Send"}, {Key: "R", Label: "Revise"}, {Key: "M", Label: "Manual"}}
	verdictChoices = []prompt.Choice{{Key: "A", Label: "Approve"}, {Key: "R", Label: "Revise"}, {Key: "M", Label: "Manual"}}
	errorChoices   = []prompt.Choice{{Key: "R", Label: "Retry"}, {Key: "E", Label: "Edit"}, {Key: "A", Label: "Abort"}}
)

// RouteAfterDraftEdit is N3's router: Send goes to the review, Revise back
// to the drafter, Manual ends the run.
func RouteAfterDraftEdit(choice string) (string, error) {
	switch choice {
	case "S":
		return NodeReview, nil
	case "R":
		return NodeDraft, nil
	case "M":
		return flow.End, nil
	}
	return "", fmt.Errorf("edit_draft: unknown choice %q", choice)
}

// RouteAfterVerdictEdit is N5's router: Approve goes to filing, Revise back
// to the drafter, Manual ends the run.
func RouteAfterVerdictEdit(choice string) (string, error) {
	switch choice {
	case "A":
		return NodeFileIssue, nil
	case "R":
		return NodeDraft, nil
	case "M":
		return flow.End, nil
	}
	return "", fmt.Errorf("edit_verdict: unknown choice %q", choice)
}

// New builds the graph. The graph's shape does not depend on d, so
// New(Deps{}) serves to create a run before its models are opened.
func New(d Deps) *flow.Graph[State] {
	n := &nodes{d: d}
	return flow.New[State](Name, NodeLoadBrief).
		Node(NodeLoadBrief, n.loadBrief, NodePreflight).
		Node(NodePreflight, n.preflight, NodeDraft).
		Node(NodeDraft, n.draft, NodeEditDraft).
		Gate(NodeEditDraft, n.editDraft, NodeReview, NodeDraft, flow.End).
		Node(NodeReview, n.review, NodeEditVerdict).
		Gate(NodeEditVerdict, n.editVerdict, NodeFileIssue, NodeDraft, flow.End).
		Node(NodeFileIssue, n.fileIssue, NodeEditVerdict, flow.End).
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

func finish(s *State) error {
	switch {
	case s.Manual:
		return &ManualError{Gate: s.StoppedAt, Dir: s.ActiveDir(), Iteration: s.Iteration, Drafts: s.Drafts, Verdicts: s.Verdicts}
	case s.Filed == nil:
		return errors.New("the run ended without filing an issue")
	}
	return nil
}

type nodes struct{ d Deps }

func (n *nodes) trail(ctx context.Context, s *State) Trail {
	return Trail{Root: s.Root, Dir: s.ActiveDir(), Writer: n.d.Writer, RunID: flow.RunID(ctx)}
}

// loadBrief is N0's part inside the run: copy the brief to 001-brief.md.
// (Reading the brief, the slug and the collision prompt happen before the
// run exists; see the cli.)
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
		return "", &PreflightError{"setup", errors.New("no pre-flight checks configured")}
	}
	if err := n.d.Checks.Run(ctx); err != nil {
		return "", err
	}
	return NodeDraft, nil
}

// TruncatedError reports a reply cut off at its token limit every time it
// was asked for. A truncated draft is never passed on as if complete.
type TruncatedError struct {
	Role      llm.Role
	Attempts  int
	MaxTokens int
}

func (e *TruncatedError) Error() string {
	return fmt.Sprintf("the %s's reply was cut off at its token limit %d times (last limit %d tokens); nothing was saved as a draft or verdict. Shorten the brief, or use a model with longer replies, then resume the run",
		e.Role, e.Attempts, e.MaxTokens)
}

// generate asks m and returns its complete reply. A truncated reply is
// asked again with twice the room; an empty or refused one is an error.
func (n *nodes) generate(ctx context.Context, m llm.Model, role llm.Role, req llm.Request) (string, error) {
	if m == nil {
		return "", fmt.Errorf("no %s model is open", role)
	}
	for attempt := 1; ; attempt++ {
		resp, err := m.Generate(ctx, req)
		if err != nil {
			return "", fmt.Errorf("%s (%s): %w", role, m.Name(), err)
		}
		switch {
		case resp.Truncated() || resp.Stop == llm.StopMaxTokens:
			if attempt >= maxReplyAttempts {
				return "", &TruncatedError{Role: role, Attempts: attempt, MaxTokens: req.MaxTokens}
			}
			n.d.say("The %s's reply was cut off at %d tokens; asking again with room for %d.\n", role, req.MaxTokens, 2*req.MaxTokens)
			req.MaxTokens *= 2
			continue
		case resp.Stop == llm.StopRefused:
			return "", fmt.Errorf("the %s (%s) declined to answer; reword the brief or feedback and resume the run", role, m.Name())
		case strings.TrimSpace(resp.Text) == "":
			return "", fmt.Errorf("the %s (%s) returned an empty reply; resume the run to ask again", role, m.Name())
		}
		return StripFence(resp.Text), nil
	}
}

// draft is N2: the drafter writes the first draft from the brief, or a
// revision from the feedback. A draft saved by an earlier attempt of this
// node (the run was killed before its checkpoint) is used again: the model
// is not called twice for one step.
func (n *nodes) draft(ctx context.Context, s *State) (string, error) {
	e, text, count, err := n.reply(ctx, s, KindDraft, func() (string, error) {
		what := "Drafting the issue"
		if s.Feedback != "" {
			what = "Revising the draft"
		}
		n.d.say("%s with %s...\n", what, modelName(n.d.Drafter))
		return n.generate(ctx, n.d.Drafter, llm.RoleDrafter, draftRequest(s))
	})
	if err != nil {
		return "", err
	}
	s.Draft, s.DraftFile = string(normalise(KindDraft, []byte(text))), e.Name
	s.Drafts = count
	s.Feedback, s.FeedbackVerdict = "", ""
	return NodeEditDraft, nil
}

// reply returns the model's reply for this step: the trail's last entry
// when it is of kind (an earlier attempt of the node saved it before the
// run was killed: the model is not asked twice for one step), else what
// ask returns, recorded in the trail. count is the number of entries of
// kind in the trail.
func (n *nodes) reply(ctx context.Context, s *State, kind string, ask func() (string, error)) (Entry, string, int, error) {
	t := n.trail(ctx, s)
	entries, err := t.Entries()
	if err != nil {
		return Entry{}, "", 0, err
	}
	if last, _ := Last(entries); last.Kind == kind {
		b, err := t.Read(last)
		return last, string(b), Count(entries, kind), err
	}
	text, err := ask()
	if err != nil {
		return Entry{}, "", 0, err
	}
	e, err := t.Record(ctx, kind, []byte(text))
	if err != nil {
		return Entry{}, "", 0, err
	}
	return e, text, Count(append(entries, e), kind), nil
}

func modelName(m llm.Model) string {
	if m == nil {
		return "no model"
	}
	return m.Name()
}

// workCopy returns the path of a working copy the human edits, creating
// it with content unless it exists: a copy left by an attempt that was
// killed holds the human's unfinished edits, which a resume keeps.
func (n *nodes) workCopy(ctx context.Context, runID, dir, name, content string) (string, error) {
	rel := filepath.Join("runs", runID, "edit", dir, name)
	abs := filepath.Join(n.d.StateDir, rel)
	if _, err := os.Stat(abs); err == nil {
		return abs, nil
	}
	_, err := n.d.Writer.Write(ctx, safewrite.Request{Root: n.d.StateDir, Path: rel, Content: []byte(content),
		Base: &safewrite.Snapshot{Exists: false}, Mode: 0o600, Actor: "azero issue", RunID: runID})
	if err != nil {
		return "", fmt.Errorf("prepare %s for the editor: %w", name, err)
	}
	return abs, nil
}

// readBack reads what the human left in a working copy.
func readBack(p string) (string, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return "", fmt.Errorf("read back %s after editing: %w", filepath.Base(p), err)
	}
	return string(b), nil
}

func changed(before, after string) bool {
	return !bytes.Equal(normalise(KindDraft, []byte(before)), normalise(KindDraft, []byte(after)))
}

func numberOf(file string) string {
	if e, ok := ParseEntry(file); ok {
		return fmt.Sprintf("%03d", e.N)
	}
	return "000"
}

// decision records a gate decision in the audit log.
func (n *nodes) decision(ctx context.Context, s *State, gate, decision string, attrs ...slog.Attr) {
	all := append([]slog.Attr{
		slog.String("workflow", Name), slog.String("gate", gate), slog.String("decision", decision),
		slog.String("slug", s.Slug), slog.Int("iteration", s.Iteration),
		slog.Int("drafts", s.Drafts), slog.Int("verdicts", s.Verdicts),
	}, attrs...)
	n.d.Audit.Event(ctx, "gate_decision", flow.RunID(ctx), all...)
}

var decisionNames = map[string]string{"S": "send", "A": "approve", "R": "revise", "M": "manual", "E": "edit"}

// editDraft is N3, the gate between the drafter and the reviewer.
func (n *nodes) editDraft(ctx context.Context, s *State) (string, error) {
	if !n.d.Asker.CanPrompt() {
		return "", prompt.ErrNoTerminal
	}
	runID := flow.RunID(ctx)
	s.Iteration++
	p, err := n.workCopy(ctx, runID, "n3-"+numberOf(s.DraftFile), "draft.md", s.Draft)
	if err != nil {
		return "", err
	}
	n.d.say("\nOpening draft #%d (a copy of %s/%s) in your editor: read it, edit it if you like, save and close to continue.\n",
		s.Drafts, s.ActiveDir(), s.DraftFile)
	if err := n.d.Asker.Edit(ctx, p); err != nil {
		return "", err
	}
	edited, err := readBack(p)
	if err != nil {
		return "", err
	}
	t := n.trail(ctx, s)
	draftEdited := changed(s.Draft, edited)
	if draftEdited {
		e, err := t.Record(ctx, KindDraftEdited, []byte(edited))
		if err != nil {
			return "", err
		}
		s.Draft, s.DraftFile = string(normalise(KindDraftEdited, []byte(edited))), e.Name
		n.d.say("Your edits are recorded as %s.\n", e.Name)
	}
	cs := n.d.Color
	n.d.say("%s\n", cs.Bold(fmt.Sprintf("Iteration %d | Draft #%d", s.Iteration, s.Drafts)))
	choice, err := n.d.Asker.Choose(ctx, "Send this draft to the reviewer ("+modelName(n.d.Reviewer)+"), ask the drafter to revise it, or stop to handle it yourself?", draftChoices)
	if err != nil {
		return "", err
	}
	next, err := RouteAfterDraftEdit(choice)
	if err != nil {
		return "", err
	}
	attrs := []slog.Attr{slog.Bool("draft_edited", draftEdited), slog.String("draft_file", s.DraftFile)}
	switch choice {
	case "R":
		if err := n.askFeedback(ctx, s, t, ""); err != nil {
			return "", err
		}
	case "M":
		s.Manual, s.StoppedAt = true, NodeEditDraft
	}
	n.decision(ctx, s, NodeEditDraft, decisionNames[choice], attrs...)
	return next, nil
}

// askFeedback asks what to change and records it for the drafter.
func (n *nodes) askFeedback(ctx context.Context, s *State, t Trail, verdict string) error {
	fb, err := n.d.Asker.Paragraph(ctx, "Enter feedback for the drafter ("+modelName(n.d.Drafter)+"):")
	if err != nil {
		return err
	}
	e, err := t.Record(ctx, KindFeedback, []byte(fb))
	if err != nil {
		return err
	}
	n.d.say("Feedback recorded as %s.\n", e.Name)
	s.Feedback, s.FeedbackVerdict = strings.TrimSpace(fb), verdict
	return nil
}

// review is N4: the reviewer reads the draft the human sent, with the
// built-in review prompt. A verdict saved by an earlier attempt of this
// node is used again.
func (n *nodes) review(ctx context.Context, s *State) (string, error) {
	e, text, count, err := n.reply(ctx, s, KindVerdict, func() (string, error) {
		n.d.say("Reviewing draft #%d with %s...\n", s.Drafts, modelName(n.d.Reviewer))
		return n.generate(ctx, n.d.Reviewer, llm.RoleReviewer, reviewRequest(s.Draft))
	})
	if err != nil {
		return "", err
	}
	s.Verdict, s.VerdictFile = string(normalise(KindVerdict, []byte(text))), e.Name
	s.Verdicts = count
	n.d.Audit.Event(ctx, "issue_review", flow.RunID(ctx), slog.String("slug", s.Slug),
		slog.String("verdict_file", e.Name), slog.String("verdict", VerdictWord(text)),
		slog.String("model", modelName(n.d.Reviewer)), slog.String("review_prompt_sha256", ReviewPromptSHA256()))
	return NodeEditVerdict, nil
}

// editVerdict is N5, the gate between the reviewer and filing (or the
// drafter): the human reads, and may edit, the draft and the verdict.
func (n *nodes) editVerdict(ctx context.Context, s *State) (string, error) {
	if !n.d.Asker.CanPrompt() {
		return "", prompt.ErrNoTerminal
	}
	runID := flow.RunID(ctx)
	dir := "n5-" + numberOf(s.VerdictFile)
	dp, err := n.workCopy(ctx, runID, dir, "draft.md", s.Draft)
	if err != nil {
		return "", err
	}
	vp, err := n.workCopy(ctx, runID, dir, "verdict.md", s.Verdict)
	if err != nil {
		return "", err
	}
	n.d.say("\nOpening the draft and verdict #%d (copies of %s/%s and %s) in your editor: edit either (remove from the verdict anything that should not reach the drafter), save and close to continue.\n",
		s.Verdicts, s.ActiveDir(), s.DraftFile, s.VerdictFile)
	if err := n.d.Asker.Edit(ctx, dp, vp); err != nil {
		return "", err
	}
	draft, err := readBack(dp)
	if err != nil {
		return "", err
	}
	verdict, err := readBack(vp)
	if err != nil {
		return "", err
	}
	t := n.trail(ctx, s)
	draftEdited, verdictEdited := changed(s.Draft, draft), changed(s.Verdict, verdict)
	if draftEdited {
		e, err := t.Record(ctx, KindDraftEdited, []byte(draft))
		if err != nil {
			return "", err
		}
		s.Draft, s.DraftFile = string(normalise(KindDraftEdited, []byte(draft))), e.Name
		n.d.say("Your edits to the draft are recorded as %s.\n", e.Name)
	}
	if verdictEdited {
		e, err := t.Record(ctx, KindVerdictEdited, []byte(verdict))
		if err != nil {
			return "", err
		}
		s.Verdict, s.VerdictFile = string(normalise(KindVerdictEdited, []byte(verdict))), e.Name
		n.d.say("Your edits to the verdict are recorded as %s.\n", e.Name)
	}
	cs := n.d.Color
	n.d.say("%s\n", cs.Bold(fmt.Sprintf("Iteration %d | Draft #%d | Verdict #%d", s.Iteration, s.Drafts, s.Verdicts)))
	switch w := VerdictWord(s.Verdict); w {
	case "":
		n.d.say("The verdict states no decision.\n")
	case "APPROVED", "APPROVE":
		n.d.say("Reviewer's verdict: %s\n", cs.Green(w))
	default:
		n.d.say("Reviewer's verdict: %s\n", cs.Red(w))
	}
	choice, err := n.d.Asker.Choose(ctx, "File the issue on "+trackerName(n.d.Tracker)+", ask the drafter to revise it, or stop to handle it yourself?", verdictChoices)
	if err != nil {
		return "", err
	}
	next, err := RouteAfterVerdictEdit(choice)
	if err != nil {
		return "", err
	}
	attrs := []slog.Attr{slog.Bool("draft_edited", draftEdited), slog.Bool("verdict_edited", verdictEdited),
		slog.String("verdict", VerdictWord(s.Verdict)), slog.String("draft_file", s.DraftFile), slog.String("verdict_file", s.VerdictFile)}
	switch choice {
	case "R":
		if err := n.askFeedback(ctx, s, t, s.Verdict); err != nil {
			return "", err
		}
	case "M":
		s.Manual, s.StoppedAt = true, NodeEditVerdict
	}
	n.decision(ctx, s, NodeEditVerdict, decisionNames[choice], attrs...)
	return next, nil
}

func trackerName(t tracker.Tracker) string {
	if t == nil {
		return "the tracker"
	}
	return t.Name()
}

// fileIssue is N6. Filing looks for the run's marker first, so a run
// killed after the tracker accepted its issue finds it instead of filing
// a second one. A failure asks Retry / Edit draft / Abort; an abort fails
// the run with the error (exit 1), its files staying in active/.
func (n *nodes) fileIssue(ctx context.Context, s *State) (string, error) {
	runID := flow.RunID(ctx)
	var filed Filed
	for {
		f, err := n.fileOnce(ctx, s, runID)
		if err == nil {
			filed = f
			break
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		cs := n.d.Color
		n.d.say("\n%s %v\nThe audit trail stays in %s/.\n", cs.Red("Filing failed:"), err, s.ActiveDir())
		choice, cerr := n.d.Asker.Choose(ctx, "Retry filing, edit the draft (back to the verdict gate), or abort?", errorChoices)
		if cerr != nil {
			return "", errors.Join(fmt.Errorf("filing failed: %w", err), cerr)
		}
		n.decision(ctx, s, NodeFileIssue, map[string]string{"R": "retry", "E": "edit", "A": "abort"}[choice], slog.String("error", err.Error()))
		switch choice {
		case "E":
			return NodeEditVerdict, nil
		case "A":
			return "", fmt.Errorf("filing aborted; nothing was filed and the audit trail stays in %s/: %w", s.ActiveDir(), err)
		}
		n.d.say("Retrying...\n")
	}
	if filed.Found {
		n.d.say("Issue #%d was already filed by this run: %s\n", filed.Number, filed.URL)
	} else {
		n.d.say("Filed issue #%d: %s\n", filed.Number, filed.URL)
	}
	if err := n.finalise(ctx, s, &filed); err != nil {
		return "", fmt.Errorf("issue #%d is filed (%s), but its audit trail is not complete: %w; fix the cause and resume the run (it will not file again)",
			filed.Number, filed.URL, err)
	}
	s.Filed = &filed
	return flow.End, nil
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
	created, err := tr.EnsureLabels(ctx, labels)
	if len(created) > 0 {
		n.d.say("Created labels on %s: %s\n", tr.Name(), strings.Join(created, ", "))
		f.Created = created
	}
	if err != nil {
		return Filed{}, err
	}
	body := strings.TrimRight(s.Draft, "\n") + "\n\n" + marker + "\n"
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
	id, err := commitPaths(ctx, s.Root, paths, msg)
	if err != nil {
		return err
	}
	f.Commit = id
	n.d.say("Audit trail moved to %s/ and committed (%s).\n", done, shortID(id))
	return nil
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
