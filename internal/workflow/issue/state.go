package issue

import (
	"fmt"
	"path"
	"time"
)

// Name is the workflow's name in the store.
const Name = "issue"

// Node names. The spec's N0-N6.
const (
	NodeClaimSlug     = "claim_slug"     // N0: is the slug free?
	NodeSlugCollision = "slug_collision" // N0, a gate: [R]esume / [N]ew name / [A]bort
	NodeLoadBrief     = "load_brief"     // N0
	NodePreflight     = "preflight"      // N1
	NodeDraft         = "draft"          // N2
	NodeEditDraft     = "edit_draft"     // N3, a gate
	NodeReview        = "review"         // N4
	NodeEditVerdict   = "edit_verdict"   // N5, a gate
	NodeFileIssue     = "file_issue"     // N6
	NodeFilingFailed  = "filing_failed"  // N6, a gate: [R]etry / [E]dit / [A]bort
	NodeManual        = "manual"         // the human took over: the trail is completed, the run ends
)

// Tracker kinds.
const (
	TrackerGitHub = "github"
	TrackerLocal  = "local"
)

// Defaults of the configurable directories (config issue.audit_dir and
// issue.issues_dir), relative to the repository root.
const (
	DefaultAuditDir  = "docs/audit"
	DefaultIssuesDir = "docs/issues"
)

// TrackerConfig says where the run files its issue. It is part of the
// state, so a resumed run files where it was meant to.
type TrackerConfig struct {
	Kind      string `json:"kind"`                 // github or local
	Repo      string `json:"repo,omitempty"`       // OWNER/NAME, github
	IssuesDir string `json:"issues_dir,omitempty"` // relative to the root, local
}

// Filed records the issue a run filed.
type Filed struct {
	Number  int       `json:"number"`
	URL     string    `json:"url"`
	Title   string    `json:"title"`
	Labels  []string  `json:"labels"`
	Created []string  `json:"labels_created,omitempty"` // labels that had to be created first
	Tracker string    `json:"tracker"`
	RunID   string    `json:"run_id"`
	Found   bool      `json:"found_existing,omitempty"` // found by its marker: filed by an earlier attempt
	At      time.Time `json:"filed_at"`
	Dir     string    `json:"audit_dir,omitempty"` // where the trail ended: AuditDir/done/<n>-<slug>
	Commit  string    `json:"commit,omitempty"`
}

// State is a run's state, saved after every node.
type State struct {
	Slug      string        `json:"slug"`
	BriefPath string        `json:"brief_path"`
	Brief     string        `json:"brief"`
	Root      string        `json:"root"`      // the repository's top level
	AuditDir  string        `json:"audit_dir"` // slash-separated, relative to Root
	Tracker   TrackerConfig `json:"tracker"`
	Drafter   string        `json:"drafter"`  // provider:model
	Reviewer  string        `json:"reviewer"` // provider:model
	// MockScript is the scripted model's script when a role is mocked.
	MockScript string `json:"mock_script,omitempty"`

	Iteration int `json:"iteration"` // times the human was shown a draft at N3
	Drafts    int `json:"drafts"`    // drafter replies
	Verdicts  int `json:"verdicts"`  // reviewer replies

	Draft      string `json:"draft"`       // the current draft, as the human last left it
	ModelDraft string `json:"model_draft"` // the drafter's last draft, before the human's edits
	// DraftWarning says why the drafter's last reply could not be cut
	// cleanly to the issue; the human reads it at the next gate.
	DraftWarning string `json:"draft_warning,omitempty"`
	DraftFile    string `json:"draft_file"`   // its trail file
	Verdict      string `json:"verdict"`      // the current verdict, as the human last left it
	VerdictFile  string `json:"verdict_file"` // its trail file

	// Feedback is the human's request for a revision, consumed by the next
	// draft; FeedbackVerdict the verdict that goes with it (set at N5).
	Feedback        string `json:"feedback,omitempty"`
	FeedbackVerdict string `json:"feedback_verdict,omitempty"`

	// HumanWords is what the human wrote themselves at the gates, in
	// order: their feedback and the lines they added to a draft. The
	// reviewer checks the draft against them as against the brief.
	HumanWords []HumanWords `json:"human_words,omitempty"`

	// Labels are the tracker's labels, read once, before the first draft
	// (LabelsRead); LabelsError says why they could not be read. The
	// drafter is told to use only these, or to propose a new one.
	Labels      []string `json:"labels,omitempty"`
	LabelsRead  bool     `json:"labels_read,omitempty"`
	LabelsError string   `json:"labels_error,omitempty"`

	// Manual is set when the human stopped the run for manual handling, at
	// the gate named by StoppedAt.
	Manual    bool   `json:"manual,omitempty"`
	StoppedAt string `json:"stopped_at,omitempty"`

	Filed *Filed `json:"filed,omitempty"`

	// Collision is set while the slug is taken (N0).
	Collision *Collision `json:"collision,omitempty"`
	// Pending are the records of the human's last answer, written to the
	// trail by the next node.
	Pending []PendingRecord `json:"pending,omitempty"`
	// ReviewerVerdict is the reviewer's own verdict word on the current
	// draft (before any edit by the human); Override is set when the human
	// filed over a BLOCK.
	ReviewerVerdict string `json:"reviewer_verdict,omitempty"`
	Override        bool   `json:"override,omitempty"`
	// FilingError is the last filing failure, asked about at filing_failed.
	FilingError string `json:"filing_error,omitempty"`
}

// Kinds of HumanWords.
const (
	WordsFeedback = "feedback" // the feedback asking for a revision
	WordsEdits    = "edits"    // the lines the human added to a draft in the editor
)

// HumanWords is one thing the human wrote at a gate: Text is their
// feedback, or the lines they added to draft #Draft (each marked "+",
// hunks apart; never a line of the model's).
type HumanWords struct {
	Gate    string `json:"gate"` // edit_draft or edit_verdict
	Kind    string `json:"kind"` // WordsFeedback or WordsEdits
	Draft   int    `json:"draft"`
	Verdict int    `json:"verdict,omitempty"` // the verdict read at edit_verdict
	Text    string `json:"text"`
}

// Collision is a slug already in use when the run tried to claim it.
type Collision struct {
	Slug   string  `json:"slug"`
	Why    string  `json:"why"`
	Holder *Holder `json:"holder,omitempty"`
	Choice string  `json:"choice,omitempty"`
	Typed  string  `json:"typed,omitempty"` // the new name the human typed, before cleaning
}

// PendingRecord is a trail file to write for the human's answer: After is
// the number of the trail's last entry when the question was asked.
type PendingRecord struct {
	Gate    string `json:"gate,omitempty"` // the gate that asked
	After   int    `json:"after"`
	Kind    string `json:"kind"`
	Content string `json:"content"`
}

// ActiveDir is where the trail lives until the issue is filed.
func (s *State) ActiveDir() string { return path.Join(s.AuditDir, "active", s.Slug) }

// DoneDir is where the trail of issue number n ends.
func (s *State) DoneDir(n int) string {
	return path.Join(s.AuditDir, "done", fmt.Sprintf("%d-%s", n, s.Slug))
}

// TrailDir is where the trail is now: done/ once filed, else active/.
func (s *State) TrailDir() string {
	if s.Filed != nil && s.Filed.Dir != "" {
		return s.Filed.Dir
	}
	return s.ActiveDir()
}
