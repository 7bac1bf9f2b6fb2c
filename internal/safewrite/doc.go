// Package safewrite is the one way azero changes files (spec #173, "Safe
// File Write with Merge Support"). Every write by any command or workflow
// goes through Writer.Write, Writer.Move or Writer.Remove: project files,
// new files in new directories (lineage, audit trails, local issues),
// directory moves and deletions.
//
// The bug behind it: a generated 56-line file silently replaced a 270-line
// one. The invariants below make that impossible.
//
// Confinement. A target is resolved component by component, following
// every symbolic link of every existing component (a symlinked file and a
// symlinked parent directory alike), and must then lie strictly inside the
// project root (itself resolved with filepath.EvalSymlinks). A relative
// path may not climb above the root with "..", even to come back. Any
// component named .git (in any case), in a relative path as given or in
// the resolved path below the root, is refused, as are the root itself, empty paths, NUL bytes and symlink
// loops. Refusals are *PathTraversalError naming the path. The I/O itself
// goes through an os.Root opened on the resolved root, so even a symlink
// swapped in between the check and the write cannot lead outside: nothing
// is ever created or opened for writing outside the root.
//
// Approval. Replacing an existing file of more than ApprovalLines (100)
// lines needs approval (100 lines do not, 101 do); so does Strategy "",
// which means replace for an existing file. The explicit merge strategies
// Append, Insert and Extend are a human's or a workflow's deliberate choice
// and never remove a line, so they need no approval, with one exception:
// when a merge would nevertheless change or drop an existing line of a
// file over the threshold (Extend reprints a Go file that was not gofmt'ed,
// for example), it needs approval like a replace. Edit content was derived
// from exactly the content read by FIND/REPLACE blocks (internal/edit); it
// needs no line-count approval but must carry a Base. A write that would
// leave the file byte for byte as it is needs no approval whatever its
// strategy: nothing is written and the Result says Unchanged.
//
// Lines end with "\n", "\r\n" or a lone "\r" (internal/eol): a 150-line
// file with classic Mac OS line endings is over the threshold like any
// other, and merges keep its line endings.
//
// Who approves: Force approves the explicit replace without asking. With
// Auto and without Force a write needing approval is refused: with nobody
// to ask the error reports NeedsHuman (exit 3), with a terminal it is a
// plain error telling the user to pass --force or drop --auto (exit 1).
// Otherwise the Approver decides; a write needing approval with no
// Approver fails with a NeedsHuman error, never a silent write. A human's
// cancel or reject is an error wrapping human.ErrAborted (exit 4).
//
// Staleness. Write never replaces content it did not read: the file is
// hashed again just before the rename and compared with what the proposal
// was computed from (and, with Request.Base, with what the caller read
// earlier). Any difference, including a file that appeared or vanished, is
// a *StaleError and nothing is written.
//
// Durability. The new content goes to a temporary file in the target's
// directory (".<name>.azero-tmp-<random>"), is fsynced, given the mode
// (an existing file keeps its mode; new files get Request.Mode, default
// 0644, exactly, regardless of umask), renamed over the target, and the
// directory is fsynced. On any error the original is untouched and the
// temporary file removed. A temporary file is locked (flock) while its
// writer lives, so the next write into a directory removes the leftovers
// of killed processes without ever touching a live writer's file.
// Ownership and hard links of a replaced file are not kept.
//
// Audit. Every write is an audit event "file_write" (moves "file_move",
// removals "file_remove") with path, strategy, actor, old and new line
// counts and sha256s (the old one is the content replaced); every refusal
// is "file_write_refused" with the operation and the reason.
//
// Propose and Read never write. The Extend strategy's structural merge
// of Go and Python is internal/extend's (Merge): this package decides
// whether the file may be extended (it must exist) and judges the merged
// content like any other write.
package safewrite
