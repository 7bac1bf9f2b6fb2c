//go:build !lean || temporalserver

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/rundoc"
	"github.com/azero-dev/azero/internal/shell"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/temporal"
	"github.com/azero-dev/azero/internal/workflow/implement"
	"github.com/azero-dev/azero/internal/workflow/issue"
)

// startTemporal starts a run on Temporal and follows it from this
// terminal, as the local engine drives one: it asks the run's questions
// here when there is a terminal, and stops with exit 3 at the first
// question when there is none (the run keeps waiting on Temporal).
func (f *Factory) startTemporal(ctx context.Context, te *temporalEngine, workflow, runID string, state any, meta map[string]string) (temporal.Status, error) {
	raw, err := json.Marshal(state)
	if err != nil {
		return temporal.Status{}, fmt.Errorf("encode state of %s: %w", workflow, err)
	}
	if err := te.client.Start(ctx, temporal.Input{RunID: runID, Workflow: workflow, State: raw, Meta: meta, Options: te.opts}); err != nil {
		return temporal.Status{}, err
	}
	if a, err := f.Audit(); err == nil {
		_ = a.Event(ctx, "run_created", runID, slog.String("workflow", workflow), slog.String("engine", "temporal"),
			slog.String("address", te.conn.Address))
	}
	cs := f.IO.ColorScheme()
	fmt.Fprintf(f.IO.ErrOut, "%s run %s started on Temporal at %s (task queue %s)\n", cs.Faint("azero:"), cs.Bold(runID), te.conn.Address, te.client.TaskQueue)
	return f.followTemporal(ctx, te, runID, 0)
}

// followTemporal shows a Temporal run's steps as they complete and answers
// its questions at this terminal until it ends or stops. The error maps
// to the exit code as the local engine's would.
func (f *Factory) followTemporal(ctx context.Context, te *temporalEngine, runID string, shown int) (temporal.Status, error) {
	cs := f.IO.ColorScheme()
	show := func(st temporal.Status) {
		// History is the last steps only; count from where it begins.
		first := st.Steps + countNotOK(st.History) - len(st.History)
		for i, h := range st.History {
			if first+i < shown {
				continue
			}
			switch h.Outcome {
			case "ok":
				fmt.Fprintf(f.IO.ErrOut, "%s %s %s\n", cs.Green("✓"), h.Node, cs.Faint(fmt.Sprintf("(%s on %s)", h.Finished.Sub(h.Started).Round(time.Millisecond), h.Worker)))
			case "moved":
				fmt.Fprintf(f.IO.ErrOut, "%s %s: %s; the run moves to another worker\n", cs.Yellow("⇄"), h.Node, h.Error)
			default:
				fmt.Fprintf(f.IO.ErrOut, "%s %s %s: %s\n", cs.Red("✗"), h.Node, h.Outcome, h.Error)
			}
		}
		shown = first + len(st.History)
	}
	for {
		st, err := te.client.Follow(ctx, runID, show)
		if err != nil {
			if ctx.Err() != nil {
				fmt.Fprintf(f.IO.ErrOut, "azero: stopped following run %s; it goes on on Temporal (see azero runs --engine temporal)\n", runID)
				return st, &flow.InterruptedError{RunID: runID, Node: st.Node, Resume: f.resumeCommand(runID, true)}
			}
			return st, err
		}
		switch {
		case st.Question != nil:
			if !f.IO.CanPrompt() {
				fmt.Fprint(f.IO.ErrOut, renderQuestion(*st.Question, cs))
				return st, &flow.WaitingError{RunID: runID, Node: st.Node, Cause: human.ErrNoTerminal, Resume: f.resumeCommand(runID, true)}
			}
			if err := f.answerTemporal(ctx, te, runID, *st.Question); err != nil {
				if ctx.Err() != nil {
					// Ctrl-C at the prompt: the question stays the run's,
					// answerable anywhere.
					return st, &flow.InterruptedError{RunID: runID, Node: st.Node, Waiting: true, Resume: f.resumeCommand(runID, true)}
				}
				return st, err
			}
		case st.Status == store.StatusWaiting:
			return st, &flow.WaitingError{RunID: runID, Node: st.Node, Cause: &human.NobodyError{Reason: st.Error}, Resume: f.resumeCommand(runID, true)}
		case st.Status == store.StatusFailed && !st.Ended:
			return st, &flow.NodeError{RunID: runID, Node: st.Node, Err: errors.New(st.Error)}
		case st.Status == store.StatusFailed && st.Node != flow.End:
			return st, fmt.Errorf("run %s failed at %s: %s", runID, st.Node, st.Error)
		case st.Status == store.StatusAborted && st.Node != flow.End:
			return st, fmt.Errorf("run %s aborted at %s: %s: %w", runID, st.Node, st.Error, flow.ErrAborted)
		default:
			return st, nil
		}
	}
}

func countNotOK(h []temporal.Step) int {
	n := 0
	for _, s := range h {
		if s.Outcome != "ok" {
			n++
		}
	}
	return n
}

// answerTemporal asks q at this terminal and sends the answer to the run
// as an Update. A refused answer (the workflow's validator, or an audit
// log that could not record it) is shown and the question asked again.
func (f *Factory) answerTemporal(ctx context.Context, te *temporalEngine, runID string, q human.Question) error {
	// Sealed with the answer key, the answer proves it was typed at
	// azero's terminal to the workers sharing that key; to the others it
	// came through Temporal.
	key, err := f.AnswerKey()
	if err != nil {
		return err
	}
	te.client.Key = key
	cs := f.IO.ColorScheme()
	fmt.Fprint(f.IO.ErrOut, renderQuestion(q, cs))
	local, cleanup, err := localFiles(q)
	if err != nil {
		return err
	}
	defer cleanup()
	// Another channel (the page of azero serve, another terminal) may
	// answer first: the prompt then stops, and the run goes on with that
	// answer.
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	elsewhere := make(chan string, 1)
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-actx.Done():
				return
			case <-tick.C:
			}
			st, err := te.client.Status(actx, runID)
			if err != nil || st.Question != nil && st.Question.ID == q.ID {
				continue
			}
			elsewhere <- answeredBy(st, q.Gate)
			cancel()
			return
		}
	}()
	a, err := f.Prompter().Answer(actx, local)
	if err != nil {
		select {
		case channel := <-elsewhere:
			fmt.Fprintf(f.IO.ErrOut, "\n%s %s was answered %s first; the run goes on with that answer\n", cs.Yellow("!"), q.Gate, channel)
			return nil
		default:
		}
		return err
	}
	cancel()
	a.Gate, a.QuestionID = q.Gate, q.ID
	a.Channel = human.ChannelTerminal
	a.By = answerer()
	a.At = f.Now().UTC()
	if _, err := human.Validate(q, a); err != nil {
		fmt.Fprintf(f.IO.ErrOut, "%s %v\n", cs.Red("refused:"), err)
		return nil
	}
	reply, err := te.client.Answer(ctx, runID, a)
	if err != nil {
		fmt.Fprintf(f.IO.ErrOut, "%s %v\n", cs.Red("refused:"), err)
		return nil
	}
	fmt.Fprintf(f.IO.ErrOut, "%s %s: %s\n", cs.Green("✓"), reply.Gate, reply.Decision)
	return nil
}

// answeredBy says where the last answer to gate came from ("on the web
// channel"), from the run's events.
func answeredBy(st temporal.Status, gate string) string {
	for i := len(st.Events) - 1; i >= 0; i-- {
		ev := st.Events[i]
		if ev.Kind != event.Answer || ev.Node != gate {
			continue
		}
		var a human.Answer
		if ev.Decode(&a) == nil && a.Channel != "" {
			return "on the " + a.Channel + " channel"
		}
	}
	return "elsewhere"
}

// answerer names who answers from this terminal, for the audit log.
func answerer() string {
	name := "someone"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	host, _ := os.Hostname()
	return "terminal of " + name + "@" + host
}

// localFiles gives an editor question's files working copies on this
// machine: the run's working copies are on the worker that asked.
func localFiles(q human.Question) (human.Question, func(), error) {
	if len(q.Files) == 0 {
		return q, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "azero-answer-")
	if err != nil {
		return q, nil, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	files := make([]human.File, len(q.Files))
	for i, fl := range q.Files {
		p := filepath.Join(dir, fmt.Sprintf("%d-%s", i, filepath.Base(fl.Name)))
		if err := os.WriteFile(p, []byte(fl.Content), 0o600); err != nil {
			cleanup()
			return q, nil, err
		}
		fl.Path = p
		files[i] = fl
	}
	q.Files = files
	return q, cleanup, nil
}

// temporalOutcome is the --json report of a Temporal run, shaped like the
// local engine's.
func (f *Factory) reportTemporal(st temporal.Status, result any, driveErr error, asJSON bool) error {
	if !asJSON {
		return driveErr
	}
	out := runOutcome{RunID: st.RunID, Workflow: st.Workflow, Status: st.Status, Node: st.Node, Error: st.Error, Result: result}
	if !st.Status.Finished() && st.Status != store.StatusRunning || st.Question != nil {
		out.Resume = f.resumeCommand(st.RunID, true)
		if out.Status == store.StatusRunning {
			out.Status = store.StatusWaiting
		}
	}
	out.failed(driveErr)
	if err := writeJSON(f.IO.Out, out); err != nil {
		return errors.Join(driveErr, err)
	}
	return driveErr
}

// judged gives a finished Temporal run the error its graph's Finish
// function gives it, so exit codes match the local engine's.
func judged(st temporal.Status, err error, judge func() error) error {
	if err != nil || st.Node != flow.End {
		return err
	}
	return judge()
}

// implementTemporal starts an implementation run on Temporal.
func implementTemporal(ctx context.Context, f *Factory, te *temporalEngine, runID string, state *implement.State, asJSON bool) error {
	meta := map[string]string{"repo": state.Repo, "lld": state.LLDPath, "branch": state.Branch, "coder": state.Coder, "runner": state.Runner}
	st, err := f.startTemporal(ctx, te, implement.Name, runID, state, meta)
	return f.reportImplementTemporal(st, err, asJSON)
}

func (f *Factory) reportImplementTemporal(st temporal.Status, err error, asJSON bool) error {
	var s implement.State
	if len(st.State) == 0 || json.Unmarshal(st.State, &s) != nil {
		return f.reportTemporal(st, nil, err, asJSON)
	}
	err = judged(st, err, func() error { return implement.Graph(implement.Deps{}).Judge(&s) })
	res := implementResult{Result: s.Result, Branch: s.Branch, Commit: s.Commit, Scaffolds: s.Scaffolds,
		Attempts: s.Implementations, Flagged: s.Flagged, GateDecision: s.GateDecision, Patch: s.Patch}
	for _, fs := range s.Files {
		res.Files = append(res.Files, fs.Path)
	}
	if !st.Ended && st.Status == store.StatusFailed && st.Node == implement.NodeMerge && s.Commit != "" {
		// Stopped at its merge (the checkout moved, or holds changes the
		// merge would touch): merged by hand, or by a resume.
		res.Result = implement.ResultMergeStopped
		res.MergeCommand = fmt.Sprintf("git -C %s merge %s", shell.Quote(s.Repo), s.Branch)
	}
	if err == nil && s.Result == implement.ResultMerged && !asJSON {
		fmt.Fprintf(f.IO.ErrOut, "\nMerged %s into %s (%s).\n", s.Branch, s.BaseBranch, gitx.ShortID(s.Commit))
	}
	return f.reportTemporal(st, res, err, asJSON)
}

// issueTemporal starts a governance run on Temporal.
func issueTemporal(ctx context.Context, f *Factory, te *temporalEngine, runID string, state *issue.State, meta map[string]string, asJSON bool) error {
	st, err := f.startTemporal(ctx, te, issue.Name, runID, state, meta)
	return f.reportIssueTemporal(st, err, asJSON)
}

// reportIssueTemporal reports a governance run on Temporal as the local
// engine does, from the state the run carries.
func (f *Factory) reportIssueTemporal(st temporal.Status, err error, asJSON bool) error {
	var s issue.State
	if len(st.State) == 0 || json.Unmarshal(st.State, &s) != nil {
		return f.reportTemporal(st, nil, err, asJSON)
	}
	err = judged(st, err, func() error { return issue.New(issue.Deps{}).Judge(&s) })
	res := issueResult{Slug: s.Slug, AuditDir: s.TrailDir(), Tracker: s.Tracker.Label(), Iteration: s.Iteration,
		Drafts: s.Drafts, Verdicts: s.Verdicts, Issue: s.Filed, Trail: []issue.Entry{}}
	if s.Filed == nil && !st.Ended {
		res.Resume = f.resumeCommand(st.RunID, true)
	}
	if entries, terr := (issue.Trail{Root: s.Root, Dir: s.TrailDir()}).Entries(); terr == nil && entries != nil {
		res.Trail = entries
	}
	return f.reportTemporal(st, res, err, asJSON)
}

// resumeIssueTemporal continues the unfinished governance run on Temporal
// whose slug is slug, as `azero issue --resume SLUG` does locally.
func resumeIssueTemporal(ctx context.Context, f *Factory, te *temporalEngine, slug string, asJSON bool) error {
	runs, err := te.client.List(ctx, 0)
	if err != nil {
		return err
	}
	for _, st := range runs {
		if st.Workflow == issue.Name && st.Meta["slug"] == slug && !st.Ended {
			return resumeTemporal(ctx, f, te, st.RunID, asJSON)
		}
	}
	return fmt.Errorf("no unfinished issue run on Temporal has the slug %q; see 'azero runs --engine temporal --workflow issue'", slug)
}

// resumeTemporal continues a Temporal run from this terminal: it answers
// the question the run waits for, or retries the node a failed run
// stopped at, then follows the run.
func resumeTemporal(ctx context.Context, f *Factory, te *temporalEngine, ref string, asJSON bool) error {
	r, err := (&temporal.Runs{Client: te.client}).FindRun(ctx, ref)
	if err != nil {
		return err
	}
	runID := r.ID
	st, err := te.client.Status(ctx, runID)
	if err != nil {
		return err
	}
	if st.Ended {
		return fmt.Errorf("run %s is already %s; nothing to resume", runID, st.Status)
	}
	if st.Question == nil && (st.Status == store.StatusFailed || st.Status == store.StatusWaiting) {
		if err := te.client.Resume(ctx, runID); err != nil {
			return err
		}
		fmt.Fprintf(f.IO.ErrOut, "Resuming run %s at %s on Temporal.\n", runID, st.Node)
	}
	shown := st.Steps + countNotOK(st.History)
	final, err := f.followTemporal(ctx, te, runID, shown)
	switch final.Workflow {
	case implement.Name:
		return f.reportImplementTemporal(final, err, asJSON)
	case issue.Name:
		return f.reportIssueTemporal(final, err, asJSON)
	}
	return f.reportTemporal(final, nil, err, asJSON)
}

// temporalView is a run on Temporal as `azero runs --engine temporal`
// lists it: the local engine's document, with the worker holding the run
// and the question it waits for.
type temporalView struct {
	rundoc.View
	Worker   string          `json:"worker,omitempty"`
	Question *human.Question `json:"question,omitempty"`
}

// runsTemporal lists the runs on Temporal with where each stands and the
// question it waits for.
func runsTemporal(ctx context.Context, f *Factory, te *temporalEngine, opts *RunsOptions) error {
	src := &temporal.Runs{Client: te.client, Fresh: time.Minute}
	now := f.Now()
	views, err := rundoc.List(ctx, src, rundoc.Filter{Workflow: opts.Workflow, Status: opts.Status, Limit: opts.Limit}, now)
	var bad *rundoc.ErrStatus
	if errors.As(err, &bad) {
		return usagef("%v", err)
	}
	if err != nil {
		return err
	}
	// The same list, read once (Fresh): the records behind the views.
	records, err := src.ListRuns(ctx, store.Filter{})
	if err != nil {
		return err
	}
	byID := map[string]store.Run{}
	for _, r := range records {
		byID[r.ID] = r
	}
	out := make([]temporalView, 0, len(views))
	for _, v := range views {
		r := byID[v.ID]
		q, err := rundoc.Question(r)
		if err != nil {
			return err
		}
		out = append(out, temporalView{View: v, Worker: r.Meta["worker"], Question: q})
	}
	if opts.JSON {
		return writeJSON(f.IO.Out, map[string]any{"engine": engineTemporal, "runs": out})
	}
	if len(out) == 0 {
		fmt.Fprintln(f.IO.ErrOut, "No runs on Temporal yet. Try: azero demo --engine temporal")
		return nil
	}
	defer f.IO.StartPager()()
	cs := f.IO.ColorSchemeOut()
	tw := tabwriter.NewWriter(f.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tWORKFLOW\tSTATUS\tNODE\tAGE\tWORKER\tQUESTION")
	for _, v := range out {
		q := ""
		if v.Question != nil {
			q = v.Question.Prompt + " (" + answerList(*v.Question) + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", v.ID, v.Workflow, colorStatus(cs, v.Status), v.Node, rundoc.Age(now.Sub(v.CreatedAt)), v.Worker, firstLine(q))
	}
	return tw.Flush()
}

// temporalDetail is one run on Temporal as `azero runs show --engine
// temporal --json` reports it: the local engine's document, with the
// worker of each step, the worker holding the run and its moves.
type temporalDetail struct {
	rundoc.Detail
	Engine  string          `json:"engine"`
	Worker  string          `json:"worker,omitempty"`
	Moves   int             `json:"moves"`
	Ended   bool            `json:"ended"`
	History []temporal.Step `json:"history"`
}

// runsShowTemporal shows one Temporal run: where it stands, its question
// in full, its steps with the worker of each, and its model calls.
func runsShowTemporal(ctx context.Context, f *Factory, te *temporalEngine, ref string, asJSON, withEvents bool) error {
	src := &temporal.Runs{Client: te.client, Fresh: time.Minute}
	r, err := src.FindRun(ctx, ref)
	if err != nil {
		return err
	}
	st, err := te.client.Status(ctx, r.ID)
	if err != nil {
		return err
	}
	dir, _ := f.RunDir(r.ID)
	d, err := rundoc.DetailOf(ctx, src, r, f.Now(), dir, withEvents)
	if err != nil {
		return err
	}
	doc := temporalDetail{Detail: d, Engine: engineTemporal, Worker: st.Holder.Identity, Moves: st.Moves, Ended: st.Ended, History: st.History}
	if doc.History == nil {
		doc.History = []temporal.Step{}
	}
	if asJSON {
		return writeJSON(f.IO.Out, doc)
	}
	t := runText{engine: "on Temporal", resume: f.resumeCommand(d.Run.ID, true),
		columns: []string{"NODE", "OUTCOME", "DURATION", "NEXT", "WORKER", "ERROR"}, lineage: "the steps this machine ran"}
	if doc.Worker != "" {
		t.extra = append(t.extra, fmt.Sprintf("Worker:   %s (moved %d times)", doc.Worker, doc.Moves))
	}
	delete(d.Run.Meta, "worker") // the line above says it
	for _, h := range doc.History {
		t.rows = append(t.rows, []string{h.Node, h.Outcome, (time.Duration(h.DurationMS) * time.Millisecond).String(), h.Next, h.Worker, firstLine(h.Error)})
	}
	printRunDetail(f, d, t, withEvents)
	return nil
}
