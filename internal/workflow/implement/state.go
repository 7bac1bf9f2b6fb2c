package implement

import (
	"github.com/azero-dev/azero/internal/testrun"
)

// Name is the workflow's name in the store.
const Name = "implement"

// FileSpec is one file of the design's Files Changed table.
type FileSpec struct {
	Path   string `json:"path"`
	Change string `json:"change"` // Add, Modify or Delete
	Test   bool   `json:"test"`
}

// ContextFile is a file sent to the model as read-only context.
type ContextFile struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// Results a run can end with.
const (
	ResultMerged         = "merged"
	ResultAborted        = "aborted"
	ResultTestsFailed    = "tests_failed"
	ResultMergeStopped   = "merge_stopped"   // in --json only: the run waits at its merge (MergeStoppedError)
	ResultBaselineBroken = "baseline_broken" // the tests could not run before any change
	// ResultIntegrity (integrity.go): the code a run executed changed the
	// shared git directory; the run stopped there.
)

// State is an implementation run. Everything a node needs is here (or in
// the graph's dependencies), so a run killed at any point resumes from the
// store alone.
type State struct {
	// Inputs, fixed when the run is created.
	Issue      string        `json:"issue"`
	Title      string        `json:"title"`
	LLDPath    string        `json:"lld_path"`
	LLD        string        `json:"lld"`
	Repo       string        `json:"repo"`        // the user's checkout (its top level)
	BaseBranch string        `json:"base_branch"` // the branch checked out when the run began
	BaseCommit string        `json:"base_commit"`
	Branch     string        `json:"branch"`   // azero/<issue>-<slug>
	Worktree   string        `json:"worktree"` // where all generation and tests happen
	Runner     string        `json:"runner"`   // a testrun kind: go, pytest, node, vitest, jest, cargo, junit
	TestCmd    string        `json:"test_cmd,omitempty"`
	Report     string        `json:"report,omitempty"` // FORMAT:PATH of the report TestCmd writes
	Files      []FileSpec    `json:"files"`
	Context    []ContextFile `json:"context,omitempty"`
	Coder      string        `json:"coder"`
	Settings   Settings      `json:"settings"`

	// Progress.
	Scaffolds       int                 `json:"scaffolds"`       // scaffold rounds done
	Implementations int                 `json:"implementations"` // implementation rounds done
	Stubbed         bool                `json:"stubbed"`         // the last scaffold round wrote stubs
	Red             *testrun.Result     `json:"red,omitempty"`
	Green           *testrun.Result     `json:"green,omitempty"`
	TestOutput      string              `json:"test_output,omitempty"` // what the model is shown of the last test run (testrun.Result.Feedback)
	Lint            *testrun.LintResult `json:"lint,omitempty"`
	Escalation      string              `json:"escalation,omitempty"` // why the human was asked
	EscalatedFrom   string              `json:"escalated_from,omitempty"`
	Flagged         []string            `json:"flagged,omitempty"`
	GateDecision    string              `json:"gate_decision,omitempty"`
	Decision        string              `json:"decision,omitempty"` // the human's: approve or abort
	Commit          string              `json:"commit,omitempty"`
	MergeCommand    string              `json:"merge_command,omitempty"`
	Result          string              `json:"result,omitempty"`
	Patch           string              `json:"patch,omitempty"` // lineage file with the last attempt, when nothing was merged
	BaselineProblem string              `json:"baseline_problem,omitempty"`

	// TestHashes are the test files' sha256 after the last valid red: the
	// code step may not change them (checked at green, the reviews and the
	// commit).
	TestHashes map[string]string `json:"test_hashes,omitempty"`
	// TestedTree is the change's content (a git tree) as the last green run
	// tested it: what is reviewed and committed must be it.
	TestedTree string `json:"tested_tree,omitempty"`
	// IntegrityProblem says why the run stopped with ResultIntegrity.
	IntegrityProblem string `json:"integrity_problem,omitempty"`

	// BaselineTests are the tests the baseline run named, by outcome: a
	// test that passed there and is missing or skipped at red or green is
	// an eroded test, shown at the diff review (testrun.Eroded).
	BaselineTests *testrun.Tests `json:"baseline_tests,omitempty"`
	// Eroded are the tests the change loses, as the diff review listed
	// them (and a human approved, or the review rejected).
	Eroded []string `json:"eroded,omitempty"`

	// Feedback is the human's request for changes at the review, for the
	// next implementation; Revisions counts such requests.
	Feedback  string `json:"feedback,omitempty"`
	Revisions int    `json:"revisions,omitempty"`
	// Revising: a revision is under way (from the human's revise to the
	// next review): every file of the change is asked whether and how it
	// changes for Feedback, and may stay as it is. ReviseRounds counts the
	// rounds that asked for the test files in it (again when the revised
	// tests did not build); RevisedTests says a test file changed, so the
	// tests go through red again before the code is asked.
	Revising     bool `json:"revising,omitempty"`
	ReviseRounds int  `json:"revise_rounds,omitempty"`
	RevisedTests bool `json:"revised_tests,omitempty"`
	// Recoded: the code files were asked about the feedback in this
	// revision (a later implementation round is an ordinary one).
	Recoded bool `json:"recoded,omitempty"`
	// RevisionNotes say, file by file, what the coder answered to the
	// feedback (changed or not, and in its own words), for the next review.
	RevisionNotes []RevisionNote `json:"revision_notes,omitempty"`
	// ReviewedTree is the change's content (a git tree) as a human last
	// reviewed it: the next review shows what changed since, beside the
	// whole change.
	ReviewedTree string `json:"reviewed_tree,omitempty"`
	// LooseMatches are the edit blocks applied after a whitespace-tolerant
	// match, listed at the diff review.
	LooseMatches []LooseMatch `json:"loose_matches,omitempty"`

	// PendingWrites are the whole files the coder returned in the last
	// scaffold or implement round that would replace an existing file of
	// more than safewrite.ApprovalLines lines (spec #173): they are not
	// written until a human approves them at a write review gate.
	PendingWrites []PendingWrite `json:"pending_writes,omitempty"`
	// WritesChannel is where the human approved the pending writes (the
	// answer's channel), recorded with each write's approval.
	WritesChannel string `json:"writes_channel,omitempty"`
	// WriteFeedback is the human's request when they sent replacements
	// back at a write review, shown in every later prompt of the coder;
	// WriteFeedbackPaths are the files it was about.
	WriteFeedback      string   `json:"write_feedback,omitempty"`
	WriteFeedbackPaths []string `json:"write_feedback_paths,omitempty"`
	// Regenerate is the round the scaffold node must do again (PurposeStub
	// or PurposeScaffold) after a write review sent it back or its writes
	// went stale; "" lets the last red decide.
	Regenerate string `json:"regenerate,omitempty"`
}

// Purposes of the coder's rounds, as the lineage, the audit log and
// PendingWrite name them.
const (
	PurposeScaffold  = "scaffold"  // the tests
	PurposeStub      = "stub"      // compiling stubs of the code, before red
	PurposeImplement = "implement" // the code
	PurposeRevise    = "revise"    // the tests, for the human's feedback at the review
)

// RevisionNote is the coder's answer about one file to the human's
// feedback.
type RevisionNote struct {
	Path    string `json:"path"`
	Changed bool   `json:"changed"`
	Prose   string `json:"prose,omitempty"` // what the coder said, in its own words
}

// PendingWrite is a whole file the coder returned that replaces an
// existing file of more than safewrite.ApprovalLines lines, kept until a
// human decides. The approval binds to exactly this: the content it
// replaces (OldSHA256, as the coder's prompt showed it) and the content
// written (NewSHA256): if the file changed since, nothing is written.
type PendingWrite struct {
	Path      string `json:"path"`
	Purpose   string `json:"purpose"` // PurposeScaffold, PurposeStub or PurposeImplement
	Content   string `json:"content"` // what the coder returned, to write as Strategy says
	Strategy  string `json:"strategy"`
	OldSHA256 string `json:"old_sha256"` // of the file as read before the coder was asked
	NewSHA256 string `json:"new_sha256"` // of the file as it would be written
	OldLines  int    `json:"original_lines"`
	NewLines  int    `json:"lines_after"`
}

// LooseMatch is an edit block that matched its file only after whitespace
// normalisation.
type LooseMatch struct {
	Path string `json:"path"`
	What string `json:"what"` // which block, where, and how it was normalised
}

// Settings are how the human started the run; they hold for every resume.
type Settings struct {
	// Auto never asks about file writes: replacing a file over 100 lines
	// is refused unless Force. The diff review and the final approval are
	// still asked.
	Auto  bool `json:"auto,omitempty"`
	Force bool `json:"force,omitempty"`
	// Budget is the most the run may spend on model calls, in USD (0: no
	// limit).
	Budget float64 `json:"budget,omitempty"`
	// MockScript, when set, makes the coder the offline scripted model with
	// this script (azero demo).
	MockScript string `json:"mock_script,omitempty"`
	// Sandbox is how the model's code is confined (a sandbox.Mode: "" or
	// "auto", "landlock", "off"), and Network whether it may reach the
	// network: chosen when the run starts, kept for every resume.
	Sandbox string `json:"sandbox,omitempty"`
	Network bool   `json:"network,omitempty"`
}

// TestFiles returns the files the scaffold writes.
func (s *State) TestFiles() []FileSpec {
	var out []FileSpec
	for _, f := range s.Files {
		if f.Test && f.Change != "Delete" {
			out = append(out, f)
		}
	}
	return out
}

// CodeFiles returns the files the coder writes or deletes.
func (s *State) CodeFiles() []FileSpec {
	var out []FileSpec
	for _, f := range s.Files {
		if !f.Test {
			out = append(out, f)
		}
	}
	return out
}
