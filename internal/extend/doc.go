// Package extend merges new members into the types and classes of an
// existing Go or Python file: the structural merge behind safewrite's
// Extend strategy (spec #173, "Safe File Write with Merge Support").
//
// Go: methods of a type already in the file go after that type's last
// method (or after the type), fields of a struct and methods of an
// interface join it, imports join the import block, anything else is
// appended. It uses github.com/dave/dst, so every comment of both sources
// survives.
//
// Python: members of a class already in the file go at the end of that
// class, re-indented to its indentation; new imports join the existing
// ones (or go below the docstring, or above the first statement's
// comments, under a shebang); anything else is appended. The class ranges
// come from the target's own python3 (found on PATH, run in isolated mode,
// -I, with the embedded extend.py and the ast module), so the grammar is
// exactly the one the project runs.
//
// Invariants:
//
//   - Merge never writes and never touches the file system: bytes in,
//     bytes out. Callers write through internal/safewrite, which calls
//     Merge for the Extend strategy and judges the result like any other
//     write.
//   - Extend adds; it never replaces. A member, field or top-level name
//     that already exists in the file is an *Error, never a duplicate and
//     never an overwrite (init and _ in Go may repeat).
//   - Every refusal is an *Error naming the file and what to do instead:
//     a language other than Go and Python, a file or piece that does not
//     parse (with its line), another Go package, a Go type that is not
//     a struct or an interface, a Python class whose body is on its
//     header's line, python3 missing or too old.
//   - A Python merge is parsed again before it is returned: a merge that
//     would not parse is refused and nothing is changed. The piece takes
//     the file's line endings (a CRLF or CR file stays so); lines are
//     lines as internal/eol reads them, which is how Python reads them.
package extend
