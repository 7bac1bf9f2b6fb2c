// Package coder holds the conversation with the coder model about one file
// (spec #324, "Diff-based Generation for Large File Modifications"): it
// chooses how to ask for the file (the whole file, or FIND/REPLACE blocks
// for a large one: SelectStrategy), builds the prompts (FullFilePrompt,
// BlocksPrompt), reads each reply through internal/edit, and asks again
// when a reply was cut off or cannot be used (Generate).
//
// Invariants:
//
//   - Generate never writes; the caller writes the content it returns
//     through internal/safewrite. On any error the file is as it was, and
//     the error says so (*GiveUpError).
//   - A reply cut off at the output limit is never applied. It is asked
//     for again, at most MaxTruncationRetries times, each time with more
//     room (up to GenerateInput.MaxOutput) or, for a whole-file rewrite of
//     an existing file, as edit blocks; a call that could only repeat the
//     last one is not made.
//   - A reply that cannot be used (it does not parse, a block fails to
//     apply or names another file, every block changes nothing, a whole
//     file swaps code for a placeholder) is sent back with the precise
//     error, at most MaxCorrections times; every error sent back is kept
//     in GenerateResult.Rejected.
//   - A stub of an existing file (GenerateInput.KeepExisting) may only
//     add: a reply that deletes or changes an existing line other than an
//     import or export list is sent back like any unusable reply, with
//     the lines it loses (KeepsExisting, *KeepError); every reply sent
//     back is told to GenerateInput.OnRejected as well, for the human.
//   - The model may say a file needs no change only when asked whether it
//     does (GenerateInput.MayKeep): NoChangeWord, the file as it is, or
//     blocks that change nothing; GenerateResult.Unchanged says so, and
//     GenerateResult.Prose keeps what the model said around its code.
//   - A reply's edit-block markers are never written into a file as text:
//     blocks for an existing file are applied as blocks (all or nothing,
//     edit.Apply), blocks for a new file are sent back.
//   - A whole new file keeps the shape of the one it replaces (line
//     endings, byte-order mark, final newline: edit.KeepFileShape).
//   - The prompts are pure functions of their input; the file's content
//     is quoted in a fence no line of it can close (edit.Fence).
//
// This package imports internal/edit and internal/llm; edit never imports
// it, so the text core stays usable without a model.
package coder
