// Package governance holds what the governance workflows share: the
// draft-review loop of spec #62 that `azero issue` runs on an issue and
// `azero design` on a design document. A model drafts; a human reads and
// edits the draft and sends it on, asks for a revision or takes over; a
// reviewer model reads what the human sent; the human reads and edits the
// draft and the verdict and approves, asks for a revision or takes over.
// Everything is recorded in a numbered audit trail inside the repository,
// committed with the workflow's output in one commit.
//
// The pieces, each used by both workflows:
//
//   - Trail: the numbered audit trail (001-brief.md, 002-draft.md, ...),
//     in event order across loops, the next number derived from the files
//     present, every file written through safewrite and never over an
//     existing one.
//   - Loop: the loop's part of a run's state (embedded in each workflow's
//     State, so its JSON fields are the workflow's own): the draft and
//     verdict as the human last left them, the counts, the human's own
//     words, the records a gate's answer leaves for the next node.
//   - Clerk: the loop's I/O. It asks the models (a reply cut off at its
//     limit is asked again with more room, a reply saved in the trail is
//     used again instead of calling the model twice for one step), writes
//     the gates' answers to the trail (Flush), and builds the two editor
//     gates' questions (AskDraft, AskVerdict).
//   - DecideDraft and DecideVerdict: the two gates' routing, pure, so any
//     channel answers them on any engine (flow's purity check follows the
//     workflows' decide functions into this package).
//   - Commit: one commit of exactly the paths given, with `git commit
//     --only` under a lock, so the user's other changes, staged or not,
//     are never committed and never block it.
//   - The parsing of model replies: the draft cut out of prose around it
//     (SplitDraft), the verdict's word (VerdictWord), a fence wrapping a
//     whole reply (StripFence).
//
// Invariants (each workflow's tests prove them end to end):
//
//   - No model output reaches another model without a human reading it:
//     what a gate passes on is what the human left in the editor, and the
//     reviewer is shown only the human's own words (HumanWords: their
//     feedback and the lines they added, never a line of a model's).
//   - The trail is complete and ordered: a gate's answer is recorded by
//     the node after it (Flush), once, even when that node runs again.
//   - Approving over a blocking verdict needs the word override typed.
package governance
