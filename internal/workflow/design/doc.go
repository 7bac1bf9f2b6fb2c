// Package design is the design workflow: an issue (read from the tracker
// `azero issue` files to, GitHub or local) or a brief becomes a low-level
// design document (an LLD, the shape `azero implement --lld` reads),
// drafted by a model for the repository it is mapped from, checked
// mechanically, read and edited by a human, reviewed by another model,
// approved by the human, and committed with its audit trail. It is to a
// design what package issue is to an issue, and runs the same
// draft-review loop (package governance).
//
// The graph (New):
//
//	load_input -> preflight -> map_repository -> draft -> check -> edit_draft (gate) -> review -> edit_verdict (gate) -> commit -> END
//
// with the loops check -> draft (a draft failing the mechanical check goes
// back with the checker's findings, at most MaxCheckReturns times in a
// row), edit_draft -> draft and edit_verdict -> draft (revise), commit ->
// edit_verdict (an approved design that fails the check), the gates' exits
// to manual -> END, and, with --implement, commit -> prepare_implementation
// -> the implementation workflow's graph mounted under ImplementPrefix
// (flow.Mount), in the same run.
//
// Invariants, each proven by a test:
//
//   - No draft reaches a human or the reviewer before the mechanical check
//     (Check: the lld package's Parse and Check, as implement runs them,
//     plus a test file, a code file and no secret-looking path): the only
//     way from draft is check. The checker is code; what it sends back to
//     the drafter is its findings.
//   - No model output reaches another model without a human reading it:
//     every path to review passes edit_draft, every path to commit or back
//     to the drafter after a review passes edit_verdict. The reviewer gets
//     the issue, the human's own words, the design as the human sent it and
//     the check of it, nothing else of a model's (no draft the check sent
//     back, no prose around a draft).
//   - The review prompt and the LLD template are compiled into the binary
//     (review.md, template.md): no flag, configuration key or file can
//     replace them.
//   - Only a design that passes the check is committed, and only after a
//     human approved it; over the reviewer's BLOCK only with the word
//     override typed (recorded in the audit log).
//   - The commit holds exactly the document and its trail, made with
//     `git commit --only` (governance.Commit): the user's other changes,
//     staged or not, stay as they were.
//   - The trail lives in the repository, AuditDir/active/<slug>/ then
//     done/<slug>/: the issue (with where its own trail is, when `azero
//     issue` filed it) or the brief, every draft, every check that failed,
//     the human's edits and feedback, the verdicts, and the record of the
//     design (NNN-designed.json).
//   - With --implement, the implementation runs in the same run, its
//     invariants intact: no path to its commit avoids red, green, the diff
//     review and the human review (the graph walks see the mounted steps),
//     its gates' decide functions stay pure, and a run killed inside it
//     resumes there.
//   - Every node is safe to repeat: a model reply saved in the trail is
//     used again, a trail file identical to the last is not written twice,
//     a document already written with the approved content is kept, and
//     the move and the commit are skipped when made.
package design
