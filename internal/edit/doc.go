// Package edit turns a model's reply into edit blocks and applies them to a
// file's text, exactly or not at all (spec #324, "Diff-based Generation for
// Large File Modifications").
//
// When a model must change a large file, asking it for the whole file
// truncates and loses code, so azero asks for FIND/REPLACE blocks instead
// (internal/coder holds that conversation with the model) and applies
// them here. This package never talks to a model: it is text in, text
// out, and imports nothing that does.
//
// Invariants:
//
//   - Apply never writes; callers write through internal/safewrite.
//     Apply is a pure function of its arguments: strings in, string out.
//     So are Parse, ExtractFile, KeepFileShape, Outline and IsLarge.
//   - All or nothing: when any block fails (not found, ambiguous, unevenly
//     indented, elided code, empty FIND), Apply returns the content it was
//     given, unchanged, and a typed error naming the block.
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
//
// Loose matches are safe and visible:
//
//   - A FIND found only with whitespace normalised re-indents REPLACE only
//     when the indentation differs by one uniform shift on every non-blank
//     FIND line (every line 4 spaces less indented than the file, say; blank
//     lines do not count). Reply and file indenting alike, the shift is one
//     prefix of whitespace added or removed; one with tabs and the other with
//     spaces, every line must convert with one tab width and then differ by
//     one number of columns, and that width must be the one REPLACE's new
//     lines step by when they all step alike (a slipped FIND line cannot
//     make up a width of its own).
//   - A FIND that no uniform shift explains, written at another width
//     than the file's (2 spaces a level against 4, spaces against tabs),
//     is applied when its levels map one to one onto the file's, deeper
//     for deeper (each FIND indentation matched one file indentation, and
//     no two FIND indentations matched the same one), and every non-blank
//     REPLACE line sits at one of those levels: REPLACE is re-indented
//     through the same map (IndentLevels). Finding the map and
//     re-indenting through it are separate pure functions.
//   - Anything else is an *IndentError that shows the file's lines to
//     copy into FIND, as they are, and which FIND lines slipped: a level
//     on two file levels, two levels on one, a REPLACE line at a level
//     FIND does not have. New code is never re-indented from a guess.
//   - Every Result says how its FIND was found (Match) and everything that
//     was overlooked to find it (Loose: indentation shift by N, tabs for
//     spaces, levels mapped, trailing or inner whitespace, blank lines
//     around FIND, line-number prefixes), so callers can show it on the terminal, record
//     it, and list it at the diff review (LooseMatches, Result.String).
//   - A FIND in which every non-blank line starts with a line-number prefix
//     ("12 | code", "12| code", "12→code", numbers rising), as models copy
//     from numbered views, is retried without the prefixes (and REPLACE
//     without those of its lines that carry one), but only when nothing
//     matched as written. Errors never show the file in that numbered form:
//     they show its lines in a code fence, to be copied exactly.
//   - A block whose replacement is the text already there has Status
//     NoChange, not Applied.
//
// Parsing (Parse):
//
//   - SEARCH/REPLACE markers have 5 marker characters or more, of any
//     length (git writes 7, Cline 11). A marker of 3 or 4 where the reply
//     meant one (a short SEARCH marker before a REPLACE marker, a short
//     divider or REPLACE marker in a block, a reply whose only markers are
//     short) is a *ParseError naming it (ErrMarkerLength). When a SEARCH
//     section holds several lines of '=' (a heading underline), the
//     divider is the first as long as the SEARCH marker, else the first
//     of 5 to 9, else the first. A second divider right before >>>>>>>
//     REPLACE (as long as the first, or of 5 to 9) is a *ParseError
//     (ErrExtraDivider), never content.
//   - The line above a SEARCH block is its file name only if it has a slash,
//     or a dot and an extension with a letter: "Done.", "etc.", "...",
//     "v2.0" are prose.
//   - A SEARCH block indented as a whole (in a list item) loses that
//     indentation; in a block whose SEARCH marker starts its line, only
//     markers that start their lines count, so an indented ======= in a
//     docstring is content. Other agents' spellings are read too:
//     "------- SEARCH" / "+++++++ REPLACE", "SEARCH>" / "REPLACE>", and a
//     ":start_line:N" header over "-------" at the top of SEARCH, which is
//     not a line to find.
//
// Outlines (Declarations, Outline): a file too large to show whole is
// shown as its outline, every top-level declaration and every member of
// a top-level type with its line number, read per language (Go, Python,
// JavaScript and TypeScript, Rust, Java, Kotlin, C#) with strings,
// comments and bodies told apart; tested against go/parser, Python's ast
// and the TypeScript compiler on real code. Other files get the lines that
// look like declarations. Declarations never panics and never fails.
//
// Whole-file replies (ExtractFullFile, ExtractFile): the file is the one
// fenced code block of the reply, or among several the one named for the
// file or alone in its language; a fence never closed (a reply cut off)
// is an error, never a partial file. KeepFileShape gives a whole new file
// the line endings, byte-order mark and final newline of the one it
// replaces, as Apply keeps them for blocks.
//
// Sizes (IsLarge): a file over LargeLines lines or LargeBytes bytes is
// large; it is changed with edit blocks and shown as its outline.
package edit
