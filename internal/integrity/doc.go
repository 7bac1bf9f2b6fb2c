// Package integrity checks that the code a run executed (the tests, the
// code they test, a conftest.py, a package.json script, a build.rs: all
// written by a model nobody has reviewed yet) did not reach past what it
// may change, so that azero's own decisions rest on what azero saw, not on
// what that code arranged. The checks hold even when the sandbox that
// confines the code fails or is off: they are azero's defence in depth.
//
//   - ReadGit fingerprints what of the shared git directory decides what
//     azero's git calls run and which commits the run's own refs name
//     (config, config.worktree, hooks/, info/, the alternates, the run's
//     work tree administrative files and its .git link, the run's branch),
//     reading files only, never running git: compared right after a run,
//     before azero's next git call, a difference stops the run
//     (*GitChangedError).
//   - ReadTree fingerprints a work tree, every entry, ignored files
//     included; Snapshot keeps its content so that Restore can put back
//     what a run changed: a run that changed the change never counts
//     (*TreeChange says what it changed).
//   - HashFiles and CheckFiles prove by hash that files (a change's
//     tests) are what they were (*FilesChangedError).
//   - CheckBranch proves that a run's branch and its work tree's HEAD are
//     where azero left them (*MovedError).
//
// The package is a library: it imports neither the workflow engine nor
// the store, and decides nothing about a run; its callers do.
package integrity
