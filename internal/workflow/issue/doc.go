// Package issue is the governance workflow (spec #62): a human's brief
// becomes a drafted, reviewed issue that is filed on a tracker, with two
// human gates and an audit trail committed to the repository.
//
// The graph (New) is N0 load_brief -> N1 preflight -> N2 draft ->
// N3 edit_draft (gate) -> N4 review -> N5 edit_verdict (gate) -> N6
// file_issue, with the loops N3 -> N2 and N5 -> N2 (revise) and N6 -> N5
// (edit after a failed filing). The draft-review loop's pieces (the trail,
// the two editor gates and their routing, the models' replies, the one
// commit) are package governance's, shared with the design workflow.
//
// Invariants:
//
//   - No model output reaches another model, or the tracker, without a
//     human reading it: every path from draft to review passes edit_draft,
//     and every path from review to file_issue or back to draft passes
//     edit_verdict (graph tests prove it with flow.PathAvoiding). What the
//     next model or the tracker receives is what the human left in the
//     editor, recorded in the trail when it differs from the model's text.
//   - The reviewer checks the draft against the brief and the human's own
//     words (HumanWords: their feedback at either gate, and the lines they
//     added to a draft, never the lines around or removed), so a fact the
//     human added is not taken for the drafter's invention. Nothing else
//     of the drafter's reaches it: no draft the human did not send, no
//     prose around a draft.
//   - The drafter is told the tracker's labels (read once a run; a tracker
//     that cannot list them is said to have none known, and the run goes
//     on) and marks a label it proposes as "new: NAME". Labels are created
//     only by file_issue, from the draft the human approved, and the ones
//     created are recorded in NNN-filed.json and the audit log.
//   - The review prompt is compiled into the binary (review.md, embedded):
//     no flag, configuration key or file can replace it (spec: "hard-coded
//     0701c").
//   - The models have no tools: azero sends them text and reads text back,
//     so they cannot reach the tracker, git or the file system. Only the
//     file_issue node files, with labels and title taken from the draft the
//     human approved (spec: "agent never has access to gh"). The filed
//     body leaves out the title and labels lines: they became the issue's
//     title and labels.
//   - The audit trail lives in the repository, in AuditDir/active/<slug>/,
//     as numbered files (001-brief.md, 002-draft.md, 003-feedback.txt, ...)
//     in event order across loops. The next number is derived from the files
//     present, never from a counter in memory, so restarts cannot reuse or
//     skip one. Every file is written through safewrite, never over an
//     existing file.
//   - Every node is safe to repeat (a run killed anywhere re-runs the node
//     that was running): a model reply already saved in the trail is used
//     again instead of calling the model twice; a trail file identical to
//     the last one is not written twice; filing looks for the run's marker
//     on the tracker before creating anything, so a run killed after the
//     tracker accepted its issue finds that issue instead of filing another;
//     the move to done/ and the commit are skipped when already made.
//   - Filing ends with one commit containing only the run's audit trail
//     (and, for the local tracker, the issue file it created), made with
//     `git commit --only`, so other staged or unstaged changes of the user
//     are never committed.
//   - Runs are keyed by slug: two briefs with different slugs share nothing
//     (runs, audit directories, working copies) and can run in parallel.
package issue
