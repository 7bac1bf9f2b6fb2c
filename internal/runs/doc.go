// Package runs is the run service: everything that starts, drives,
// answers, lists, shows or collects azero's runs goes through it, whatever
// door it comes from (the command line, the page and API of azero serve,
// the MCP server, a Temporal worker).
//
// It owns:
//   - Env, the one environment every run is built from: state and config
//     directories, the store, the audit log, the answer key, the provider
//     environment, the sandbox of a run, the writer, the notifications;
//   - the Catalog, the one list of workflows (Define): each entry says how
//     a run's dependencies are built from an Env, what its report and
//     summary are, its worktree, its budget. The local engine, the
//     Temporal worker, resume, the page and MCP all read it; adding a
//     workflow is one entry;
//   - Engine (start, drive, answer, list, show), implemented once over the
//     local store (flow + store + leases) and once over Temporal, and the
//     choice between them (Choose), with a lean build's hand-off to
//     azero-temporal;
//   - the one answer path (Answer): an answer from any door is checked
//     against its question (human.Parse, human.Validate), stamped with its
//     channel and a time never before the question was asked, sealed,
//     posted and audited once;
//   - continuation (Continuer): a run whose answer was accepted is driven
//     on by the service, after a crash and a restart too;
//   - the documents of runs and runs show, and garbage collection (GC).
//
// Invariants: nothing here prints to a terminal or reads one; what a
// person sees comes back as events, outcomes and documents that the doors
// render. Nothing happens at init: the catalog is built on first use.
// The package never imports a door (cli, web, mcpserver).
package runs
