package issue

import (
	"fmt"
	"path"
	"time"

	"github.com/azero-dev/azero/internal/workflow/governance"
)

// Name is the workflow's name in the store.
const Name = "issue"

// Node names. The spec's N0-N6.
const (
	NodeClaimSlug     = "claim_slug"           // N0: is the slug free?
	NodeSlugCollision = "slug_collision"       // N0, a gate: [R]esume / [N]ew name / [A]bort
	NodeLoadBrief     = "load_brief"           // N0
	NodePreflight     = "preflight"            // N1
	NodeDraft         = "draft"                // N2
	NodeEditDraft     = governance.GateDraft   // N3, a gate: edit_draft
	NodeReview        = "review"               // N4
	NodeEditVerdict   = governance.GateVerdict // N5, a gate: edit_verdict
	NodeFileIssue     = "file_issue"           // N6
	NodeFilingFailed  = "filing_failed"        // N6, a gate: [R]etry / [E]dit / [A]bort
	NodeManual        = "manual"               // the human took over: the trail is completed, the run ends
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

	// Loop is the draft-review loop: the draft and verdict as the human
	// last left them, the counts, the human's own words, the records a
	// gate's answer leaves for the next node.
	governance.Loop

	// Labels are the tracker's labels, read once, before the first draft
	// (LabelsRead); LabelsError says why they could not be read. The
	// drafter is told to use only these, or to propose a new one.
	Labels      []string `json:"labels,omitempty"`
	LabelsRead  bool     `json:"labels_read,omitempty"`
	LabelsError string   `json:"labels_error,omitempty"`

	Filed *Filed `json:"filed,omitempty"`

	// Collision is set while the slug is taken (N0).
	Collision *Collision `json:"collision,omitempty"`
	// FilingError is the last filing failure, asked about at filing_failed.
	FilingError string `json:"filing_error,omitempty"`
}

// Kinds of HumanWords.
const (
	WordsFeedback = governance.WordsFeedback // the feedback asking for a revision
	WordsEdits    = governance.WordsEdits    // the lines the human added to a draft in the editor
)

// HumanWords is one thing the human wrote at a gate (governance.HumanWords).
type HumanWords = governance.HumanWords

// Collision is a slug already in use when the run tried to claim it.
type Collision struct {
	Slug   string  `json:"slug"`
	Why    string  `json:"why"`
	Holder *Holder `json:"holder,omitempty"`
	Choice string  `json:"choice,omitempty"`
	Typed  string  `json:"typed,omitempty"` // the new name the human typed, before cleaning
}

// PendingRecord is a trail file to write for the human's answer.
type PendingRecord = governance.PendingRecord

// Preflight is N1, the checks before any model is called
// (governance.Preflight).
type Preflight = governance.Preflight

// PreflightError says which pre-flight check failed.
type PreflightError = governance.PreflightError

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
