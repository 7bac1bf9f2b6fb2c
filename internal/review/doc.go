// Package review is azero's mandatory diff gate before a commit (spec
// #171, DESIGN.md "Diff gate"). It exists because a 270-line state.py was
// once replaced by 56 lines and committed without anyone seeing it.
//
// Analyze reports what a commit would take: tracked changes against HEAD
// plus untracked, not-ignored files (with Staged, the index against HEAD
// only; before the first commit, the index against the empty tree, so the
// first commit is reviewed too: every file is NEW). FormatReport renders a
// `git diff --stat` style summary and, for every flagged file, a WARNING
// banner with before/after line counts, why it was flagged in the words
// of what happened (lines replaced or lost, a deletion, only its line
// endings converted, a symbolic link pointed elsewhere, a submodule moved
// to another commit) and the file's real diff (capped at 500 lines).
// Gate.Run shows it and asks.
//
// Classification (spec #171, section 2.5; DESIGN.md):
//   - NEW: the file did not exist at HEAD. Reported, never flagged:
//     nothing existing is lost. change_ratio is 1.0 (all of it is new).
//   - DELETED: the file is gone. Always flagged; change_ratio is 1.0.
//   - REPLACED: more than half of the original lines were deleted and
//     something was added. Always flagged.
//   - MODIFIED: anything else. change_ratio is (added+deleted) /
//     (original_lines*2), capped at 1.0 (adding ten times a file's size
//     is no more than "all of it changed"); a file that had no lines and
//     now has some scores 1.0. Flagged when change_ratio > 0.5 and, as
//     issue 6 requires ("files that lose most of their content are
//     flagged"), when more than half of its lines were deleted: the
//     formula alone scores a file emptied completely at exactly 0.5.
//   - A test file (AnalyzeOptions.Tests says which paths are; a workflow
//     knows its change's): the tests are the referee's evidence, so a
//     MODIFIED one that loses any line (a row of a table test, an
//     assertion) is flagged, and its banner lists the lines it loses.
//   - A binary file (git's numstat prints "-"; an untracked file with a
//     NUL in its first 8000 bytes) has no line counts: a changed one is
//     REPLACED (its content cannot be reviewed line by line, so it is
//     treated as swapped out), a new one NEW, a removed one DELETED.
//
// Invariants:
//   - The analysis uses a constant number of git processes however many
//     files changed: one rev-parse (top level, HEAD, object format), one
//     `git diff --raw --numstat -z`, one `git cat-file --batch` stream fed
//     with blob ids (never paths) and, comparing the working tree, one
//     `git ls-files -t -z --others --unmerged` (untracked files and merge
//     conflicts); the diffs of flagged files come from one more `git diff`. Untracked
//     files, and the working tree's side of flagged files whose line
//     endings may be all that changed, are read from disk.
//   - Comparing the working tree, its side of a change is never asked of
//     git by id: git prints an id for a working-tree file it hashed to
//     pair a rename (`git mv a b`, then an edit of b) without storing the
//     object.
//   - Fail closed: any error while analysing is an error, never a pass.
//   - Unresolved merge conflicts in the index fail the analysis in every
//     mode (ErrConflicts): until they are resolved and added, what a
//     commit would take is not known. (Comparing the working tree, git's
//     diff shows a conflicted file as merely modified; the index says
//     otherwise.)
//   - There is no way to skip the gate: no option, no field, no
//     environment variable. Interactive: only a typed "approve" passes.
//     Non-interactive: nothing flagged passes (NOT_REQUIRED), anything
//     flagged fails at once (ABORTED_NON_INTERACTIVE, exit 3), never
//     waiting for input.
//   - Every decision is an audit event "gate_decision".
//   - Text from the repository (paths, diff lines) is shown with control
//     and format characters made visible, so a file cannot hide lines from
//     the reviewer with terminal escape sequences.
//
// AnalyzeOptions.To compares two stored trees instead (Base to To): what
// changed between two snapshots of a work tree, which FormatReport shows
// unjudged with ReportOptions.Unflagged.
//
// Renames: a file moved with `git mv` (or moved and added) is one change,
// the new path with its old path, counted against the old file's lines:
// MODIFIED or, when most of it changed, REPLACED, as git pairs them (`git
// diff -M`, half of the content similar). Rewritten beyond that, the old
// path is DELETED (flagged) and the new one NEW.
//
// Known limit: a file moved without `git add` shows as DELETED plus an
// untracked NEW file (git itself pairs the two only once both are staged).
package review
