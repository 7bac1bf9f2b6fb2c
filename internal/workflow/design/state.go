package design

import (
	"path"
	"time"

	"github.com/azero-dev/azero/internal/config"
	"github.com/azero-dev/azero/internal/workflow/governance"
	"github.com/azero-dev/azero/internal/workflow/implement"
)

// Name is the workflow's name in the store.
const Name = "design"

// Node names.
const (
	NodeLoadInput   = "load_input"             // the issue (or brief) into the trail
	NodePreflight   = "preflight"              // editor, repository, models, before any model call
	NodeMap         = "map_repository"         // the repository's map for the drafter
	NodeDraft       = "draft"                  // the drafter writes (or revises) the design
	NodeCheck       = "check"                  // the mechanical check of the Files Changed table (code, not a model)
	NodeEditDraft   = governance.GateDraft     // a gate: send / revise / manual
	NodeReview      = "review"                 // the reviewer reads what the human sent
	NodeEditVerdict = governance.GateVerdict   // a gate: approve (override over BLOCK) / revise / manual
	NodeCommit      = "commit"                 // the document and its trail, in one commit
	NodeManual      = "manual"                 // the human took over: the trail is completed, the run ends
	NodeImplement   = "prepare_implementation" // --implement: the implementation's run state, from the committed design
)

// ImplementPrefix names the implementation workflow's steps inside the
// design graph (--implement): implement/worktree, implement/red, ...
const ImplementPrefix = "implement/"

// MaxCheckReturns is how many times in a row a draft failing the
// mechanical check goes back to the drafter without a human: after that
// the human sees it, with the checker's findings.
const MaxCheckReturns = 3

// Defaults of the configurable directories, relative to the repository's
// root: design.lld_dir, and the trail's issue.audit_dir (as `azero issue`
// has it).
const (
	DefaultLLDDir   = "docs/lld"
	DefaultAuditDir = "docs/audit"
)

// Issue is the issue a design is for, as the tracker gave it.
type Issue struct {
	Number  int      `json:"number"`
	Title   string   `json:"title"`
	Body    string   `json:"body"`
	URL     string   `json:"url"`
	Labels  []string `json:"labels,omitempty"`
	State   string   `json:"state,omitempty"`
	Tracker string   `json:"tracker"` // "github OWNER/NAME", "local DIR"
	// Trail is the audit trail `azero issue` left when it filed the issue
	// (AuditDir/done/<n>-<slug>), and FiledBy that run; "" for an issue
	// filed otherwise.
	Trail   string `json:"trail,omitempty"`
	FiledBy string `json:"filed_by,omitempty"`
}

// Finding is one problem the mechanical check found in a draft.
type Finding struct {
	Line    int    `json:"line,omitempty"` // the row's line in the draft
	Path    string `json:"path,omitempty"`
	Rule    string `json:"rule"`
	Message string `json:"message"`
}

// ImplementPlan is how `--implement` implements the committed design: the
// implementation's flags, chosen when the run starts and kept for every
// resume.
type ImplementPlan struct {
	Coder    string             `json:"coder"` // provider:model (the scripted model when mocked)
	Runner   string             `json:"runner,omitempty"`
	TestCmd  string             `json:"test_cmd,omitempty"`
	Report   string             `json:"report,omitempty"`
	Context  []string           `json:"context,omitempty"`
	Settings implement.Settings `json:"settings"`
	Config   config.Implement   `json:"config"`
}

// Committed records the design a run committed.
type Committed struct {
	Path   string    `json:"lld_path"`  // slash-separated, relative to the root
	Dir    string    `json:"audit_dir"` // where the trail ended: AuditDir/done/<slug>
	Commit string    `json:"commit"`
	At     time.Time `json:"committed_at"`
}

// Record is the trail's last file (NNN-designed.json): what was committed
// and from what.
type Record struct {
	Path     string `json:"lld_path"`
	Title    string `json:"title"`
	Issue    *Issue `json:"issue,omitempty"`
	Brief    string `json:"brief_path,omitempty"`
	RunID    string `json:"run_id"`
	Verdict  string `json:"verdict,omitempty"` // the reviewer's own word on the last draft it read
	Override bool   `json:"override,omitempty"`
	// Dir is where the trail ends; At when the document was written.
	Dir string    `json:"audit_dir"`
	At  time.Time `json:"designed_at"`
}

// State is a run's state, saved after every node.
type State struct {
	// Slug keys the run and names its trail: design-<NNN>-<title> (or
	// design-<brief's name>).
	Slug string `json:"slug"`
	// The input: the issue, or a brief.
	Issue     *Issue `json:"issue,omitempty"`
	BriefPath string `json:"brief_path,omitempty"`
	Brief     string `json:"brief,omitempty"`
	Title     string `json:"title"`

	Root     string `json:"root"`      // the repository's top level
	AuditDir string `json:"audit_dir"` // slash-separated, relative to Root
	LLDPath  string `json:"lld_path"`  // where the approved design goes: LLDDir/NNN-slug.md
	Drafter  string `json:"drafter"`   // provider:model
	Reviewer string `json:"reviewer"`  // provider:model
	// MockScript is the scripted model's script when a role is mocked.
	MockScript string `json:"mock_script,omitempty"`

	// Loop is the draft-review loop shared with `azero issue`.
	governance.Loop

	// Map is the repository's map shown to the drafter, made once per
	// run (so that every draft and a resumed run see the same one).
	Map string `json:"map,omitempty"`

	// Findings are the mechanical check's problems with the current
	// draft (none: it passed); CheckedFile is the trail file checked.
	Findings    []Finding `json:"findings,omitempty"`
	CheckedFile string    `json:"checked_file,omitempty"`
	Checked     bool      `json:"checked,omitempty"`
	// Returns counts the drafts sent back to the drafter by the check
	// since the human last asked for one; CheckFeedback is the findings
	// the next draft must fix.
	Returns       int    `json:"check_returns,omitempty"`
	CheckFeedback string `json:"check_feedback,omitempty"`

	Committed *Committed `json:"committed,omitempty"`
	// Next is the command that implements the committed design.
	Next string `json:"next_command,omitempty"`

	// Implement is set for --implement: the run goes on into the
	// implementation workflow (mounted under ImplementPrefix) on the
	// committed design, whose state is Implementation.
	Implement      *ImplementPlan   `json:"implement_plan,omitempty"`
	Implementation *implement.State `json:"implementation,omitempty"`
}

// ActiveDir is where the trail lives until the design is committed.
func (s *State) ActiveDir() string { return path.Join(s.AuditDir, "active", s.Slug) }

// DoneDir is where the trail ends.
func (s *State) DoneDir() string { return path.Join(s.AuditDir, "done", s.Slug) }

// TrailDir is where the trail is now.
func (s *State) TrailDir() string {
	if s.Committed != nil && s.Committed.Dir != "" {
		return s.Committed.Dir
	}
	return s.ActiveDir()
}

// implementationOf is the mounted implementation's state: the lens of the
// mount, pure.
func implementationOf(s *State) *implement.State { return s.Implementation }
