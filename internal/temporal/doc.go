// Package temporal runs azero's flow graphs on Temporal, so that a team's
// runs survive a machine, workers can be added, and gates can be answered
// from anywhere.
//
// One workflow type per graph (named after the graph) drives the graph
// step by step, as flow's local engine does:
//
//   - Each node runs as an activity ("azero.node") with its timeouts and
//     retry policy declared at the call site; it heartbeats while it works
//     (model calls and test runs are long), and its state goes in and
//     comes out as JSON.
//   - A gate's ask runs as an activity ("azero.ask"); its decide and every
//     router run in workflow code, where they must be, being pure. The
//     question is the workflow's pending question (the "status" query);
//     the answer arrives as the "answer" Update, whose validator runs
//     human.Validate, so a wrong or partial word is rejected before it
//     reaches the workflow's history. A question with an Unattended
//     answer passes unattended: on Temporal nobody sits at a terminal, and
//     gates set that answer only when nothing needs a human.
//   - Before a decision is acted on, an activity on a worker writes it to
//     that worker's audit log ("azero.decision", gate_decision with the
//     channel, who answered and the worker). If it cannot, the decision is
//     dropped and the question stays pending: gates fail closed.
//   - Step and visit limits hold as locally; a run whose history grows
//     long continues as new, carrying where it stands.
//
// Worktree affinity: every worker polls the shared task queue and a task
// queue of its own. The first activity of a run goes to the shared queue;
// whoever takes it holds the run, and every later activity is sent to the
// holder's own queue with a schedule-to-start timeout. When the holder
// does not pick it up in time (it died, or was stopped), the run moves:
// the activity goes to the shared queue again, and the worker taking it
// recreates the worktree from the run's branch before it runs the node.
// Work not yet committed survives the move because every activity that
// ran in a worktree ends by snapshotting it (all files, untracked ones
// included) as a commit on refs/azero/snapshots/<run> in the repository;
// the new holder checks the branch out and lays the snapshot over it as
// uncommitted changes, exactly as the old worktree had them. The branch
// itself is never written by the engine.
//
// A worker keeps, in its own store, a row for every Temporal run it works
// on, so nodes find the store they expect (model calls metered, the
// scripted model's turns counted); the workflow carries the run's model
// calls, and a worker taking a run over first records the calls other
// workers made, so budgets and scripted turns hold across machines.
//
// The workflow never does I/O; activities do all of it with the
// dependencies the command layer builds per run (Registry).
package temporal
