// Package edit turns a model's reply into edit blocks and applies them to a
// file's text, exactly or not at all (spec #324, "Diff-based Generation for
// Large File Modifications").
//
// When a model must change a large file, asking it for the whole file
// truncates and loses code, so azero asks for FIND/REPLACE blocks instead
// (see SelectStrategy and BlocksPrompt) and applies them here.
//
// Invariants:
//
//   - Apply never writes; callers write through internal/safewrite.
//     Apply is a pure function of its arguments: strings in, string out.
//   - All or nothing: when any block fails (not found, ambiguous, elided
//     code, empty FIND), Apply returns the content it was given, unchanged,
//     and a typed error naming the block.
//   - Matching is by whole lines, never inside a line. A FIND must match
//     exactly one place: first exactly, and only if that finds nothing, with
//     whitespace normalised (see Whitespace). Either tier with two or more
//     matches is an *AmbiguousError.
//   - Blocks apply in order, each against the text as changed by the blocks
//     before it; Result line numbers refer to that text.
//   - Bytes the blocks do not replace are kept: a byte-order mark, the
//     file's line endings (a CRLF file stays CRLF), a missing final newline,
//     and every line of FIND that REPLACE repeats unchanged.
//   - A replacement that swaps real code for a placeholder such as
//     "// ... existing code ..." is refused (CheckElision) before anything
//     changes.
//   - Parse and Apply never panic, whatever the input.
package edit
