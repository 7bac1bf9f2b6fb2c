// Package shellcmd reads a shell command line for the git commits it would
// run, without running it: CommitScanner.Commits parses the command as
// bash (mvdan.cc/sh) and follows it in execution order through && and ;
// chains, pipes, subshells, $(...), if and case branches, loops, functions,
// sh -c and eval, env, sudo, xargs, find -exec and similar wrappers, cd,
// pushd and git -C, and git aliases. For each `git commit` it reads git's
// own option grammar (-am, --message=..., --, -C with an argument) to say
// where git runs, whether the commit takes more than the index (-a, paths,
// -i/-o, --patch, an earlier git add in the command), whether it amends,
// and whether it turns the repository's hooks off (-n, --no-verify,
// -c core.hooksPath, GIT_CONFIG_* variables).
//
// internal/agenthook asks the diff gate about each commit found; this
// package knows nothing of the gate, the hook or the repository.
//
// Invariants:
//
//   - Commits never runs anything and does no I/O of its own; git
//     aliases are read only through the caller's AliasResolver.
//   - Doubt is reported, never dropped: a commit whose name, arguments,
//     directory or configuration are computed when the command runs, or
//     that comes from an alias it cannot read, is a Commit with Uncertain
//     set; a command it cannot parse (or that nests sh -c, eval and
//     aliases deeper than 8) but mentions both git and commit is an
//     uncertain Commit too.
//   - An option written first, before any argument, is read as that
//     option whatever follows (git's own rule; FuzzCommitArgs).
//   - A Commit's Dir is a clean absolute path, or "" when it cannot be
//     known; its Text is the command as written, at most 300 bytes and a
//     "…" (Shorten).
//   - Commits never panics, whatever the command (FuzzCommits).
package shellcmd
