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
//   - A node routes itself, as locally: it returns the next node, most
//     often what a pure router (implement.RouteRed, RouteGreen) says of
//     the result it got; the workflow follows it only when it is one of
//     the node's declared next nodes, so the graph stays a true map.
//   - A gate's ask runs as an activity ("azero.ask"); its decide runs in
//     workflow code, where it must be, being pure. The question is the
//     workflow's pending question (the "status" query, with the nonce
//     of this asking); the answer arrives as the "answer" Update, whose
//     validator runs human.Validate, so a wrong or partial word is
//     rejected before it reaches the workflow's history, with a
//     non-retryable error. What an Update claims of itself is not
//     trusted: the decision activity keeps its channel, who and from
//     where only when it carries a seal the worker's answer key verifies
//     for this asking (azero's terminal and page seal theirs, Client.Key);
//     any other answer came through Temporal: channel "temporal", by the
//     client's identity read from the Update's acceptance in the run's
//     history, the claim kept as claimed_channel. A question with an
//     Unattended answer passes unattended: on Temporal nobody sits at a
//     terminal, and gates set that answer only when nothing needs a human.
//   - Before a decision is acted on, an activity on a worker writes it to
//     that worker's audit log ("azero.decision", gate_decision with the
//     channel it verified, who answered, the client's identity and the
//     worker), and the workflow decides on the answer as recorded. If it cannot, the decision is
//     dropped and the question stays pending: gates fail closed.
//     The validator's refusals are typed (azero.NotAsked, azero.Answered,
//     azero.InvalidAnswer); Client.Answer maps them to store.ErrNotAsked,
//     store.ErrAnswered and ErrRefused. A question's id is its
//     fingerprint, as locally: an answer naming another id is refused.
//   - Step and visit limits hold as locally; a run whose history grows
//     long continues as new, carrying where it stands, its last steps and
//     its last events (what the engine and the activities reported).
//   - An error a Definition's Stops recognises (retrying cannot fix it)
//     stops the run at its node at once, resumable, instead of retrying.
//
// Runs presents the runs on a cluster as the store presents its own, so
// that the documents of package rundoc and the pages of package web (azero
// serve) describe and answer them; an answer posted there is the Update.
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
// A worker asked to stop lets the activities under way finish
// (WorkerConfig.StopTimeout) before it exits: a model call or a test run
// is not cut off, and the run's next step moves to another worker.
//
// A worker keeps, in its own store, a row for every Temporal run it works
// on (meta engine=temporal, leased while the worker lives), so nodes find
// the store they expect (model calls metered, the scripted model's turns
// counted): each node runs as an attempt named after its activity attempt
// and is checkpointed there when it completes, so a retried node asks the
// same turn again. The workflow carries the run's model calls, and a
// worker taking a run over first records the calls other workers made,
// so budgets and scripted turns hold across machines. That row is
// bookkeeping: the run is resumed and answered through Temporal only.
//
// The workflow never does I/O; activities do all of it with the
// dependencies the command layer builds per run (Registry).
package temporal
