package cli

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/rundoc"
	"github.com/azero-dev/azero/internal/runs"
	"github.com/azero-dev/azero/internal/store"
)

// RunsOptions are the inputs of `azero runs`.
type RunsOptions struct {
	RunDeps
	Now func() time.Time

	Workflow string
	Status   string
	Limit    int
	JSON     bool
}

// NewCmdRuns is `azero runs` and its subcommands; runF nil runs runsRun.
func NewCmdRuns(f *Factory, runF func(*RunsOptions) error) *cobra.Command {
	opts := &RunsOptions{RunDeps: f.runDeps(), Now: f.Now}
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List workflow runs",
		Long: trimLines(`
  List runs, newest first: id, workflow, status, the node where the run stands,
  and age. Status is one of running, waiting (stopped at a gate until a human
  answers), interrupted (stopped by a signal or a killed process; resumable),
  done, failed (resumable after fixing the cause) and aborted. A run whose
  stored row was changed outside azero is marked "not verified": what it
  shows is only what the row claims, and azero acts on none of it.`),
		Example:     "  azero runs\n  azero runs --status waiting --json\n  azero runs show 261122-k3x9qa",
		Args:        noArgs,
		Annotations: exitCodesAnnotation(ExitOK, ExitError, ExitUsage, ExitInterrupted),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.validate(); err != nil {
				return err
			}
			return run(cmd, runF, runsRun, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Workflow, "workflow", "", "only runs of this workflow")
	cmd.Flags().StringVar(&opts.Status, "status", "", "only runs with this status")
	cmd.Flags().IntVar(&opts.Limit, "limit", 50, "at most this many runs (0: all)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print as JSON")
	addEngineFlags(cmd, &opts.Engine)
	cmd.AddCommand(NewCmdRunsShow(f, nil), NewCmdRunsGC(f, nil))
	return cmd
}

// The documents of `azero runs --json` and `azero runs show --json` are
// built by the run service (internal/runs, over rundoc), so that the JSON
// API of `azero serve` prints the same.

func (opts *RunsOptions) validate() error {
	if opts.Limit < 0 {
		return usagef("--limit must be 0 (all runs) or more, got %d", opts.Limit)
	}
	if _, ok := runs.Catalog().Lookup(opts.Workflow); opts.Workflow != "" && !ok {
		return usagef("unknown workflow %q: use %s", opts.Workflow, strings.Join(runs.Catalog().Names(), ", "))
	}
	return nil
}

func runsRun(ctx context.Context, opts *RunsOptions) error {
	eng, err := opts.openHere(ctx)
	if err != nil {
		return err
	}
	defer eng.Close()
	now := opts.Now()
	l, err := eng.List(ctx, runs.Query{Workflow: opts.Workflow, Status: opts.Status, Limit: opts.Limit})
	if err != nil {
		return err
	}
	if l.Engine == runs.Temporal {
		return printTemporalRuns(opts, l, now)
	}
	if opts.JSON {
		views := make([]rundoc.View, len(l.Runs))
		for i, v := range l.Runs {
			views[i] = v.View
		}
		return writeJSON(opts.IO.Out, map[string]any{"runs": views})
	}
	if len(l.Runs) == 0 {
		fmt.Fprintln(opts.IO.ErrOut, "No runs yet. Try: azero demo")
		return nil
	}
	defer opts.IO.StartPager()()
	cs := opts.IO.ColorSchemeOut()
	tw := tabwriter.NewWriter(opts.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tWORKFLOW\tSTATUS\tNODE\tAGE\tKEY")
	unverified := false
	for _, v := range l.Runs {
		status := colorStatus(cs, v.Status)
		if v.Unverified != "" {
			status, unverified = status+" "+cs.Red("(not verified)"), true
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", v.ID, v.Workflow, status, v.Node, rundoc.Age(now.Sub(v.CreatedAt)), v.Key)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if unverified {
		fmt.Fprintln(opts.IO.ErrOut, "Runs marked (not verified) have a stored row azero did not write, or cannot check: azero acts on none of them (see azero runs show RUN).")
	}
	return nil
}

// printTemporalRuns lists the runs on Temporal with where each stands, the
// worker holding it and the question it waits for.
func printTemporalRuns(opts *RunsOptions, l runs.Listing, now time.Time) error {
	if opts.JSON {
		return writeJSON(opts.IO.Out, map[string]any{"engine": runs.Temporal, "runs": l.Runs})
	}
	if len(l.Runs) == 0 {
		fmt.Fprintln(opts.IO.ErrOut, "No runs on Temporal yet. Try: azero demo --engine temporal")
		return nil
	}
	defer opts.IO.StartPager()()
	cs := opts.IO.ColorSchemeOut()
	tw := tabwriter.NewWriter(opts.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tWORKFLOW\tSTATUS\tNODE\tAGE\tWORKER\tQUESTION")
	for _, v := range l.Runs {
		q := ""
		if v.Question != nil {
			q = v.Question.Prompt + " (" + answerList(*v.Question) + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", v.ID, v.Workflow, colorStatus(cs, v.Status), v.Node, rundoc.Age(now.Sub(v.CreatedAt)), v.Worker, firstLine(q))
	}
	return tw.Flush()
}

func colorStatus(cs iostreams.ColorScheme, s store.Status) string {
	switch s {
	case store.StatusDone:
		return cs.Green(string(s))
	case store.StatusFailed, store.StatusAborted:
		return cs.Red(string(s))
	case store.StatusWaiting, store.StatusInterrupted:
		return cs.Yellow(string(s))
	}
	return cs.Cyan(string(s))
}

// NewCmdRunsShow is `azero runs show`; runF nil runs runsShowRun.
func NewCmdRunsShow(f *Factory, runF func(*RunsShowOptions) error) *cobra.Command {
	opts := &RunsShowOptions{RunDeps: f.runDeps()}
	cmd := &cobra.Command{
		Use:   "show RUN",
		Short: "Show a run's history, model calls and cost",
		Long: trimLines(`
  Show one run: where it stands, the question it is waiting for (its report
  and the answers it allows), every node it ran with outcome and duration,
  the model and the tokens and cost of its calls per node, and where its
  lineage is kept. With --events, everything the run reported, in order.
  RUN may be any unique prefix of the id.`),
		Args:        exactArgs(1, "a run id (see `azero runs`)"),
		Annotations: exitCodesAnnotation(ExitOK, ExitError, ExitUsage, ExitInterrupted),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ref = args[0]
			return run(cmd, runF, runsShowRun, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print as JSON")
	cmd.Flags().BoolVar(&opts.Events, "events", false, "also show every event the run reported")
	addEngineFlags(cmd, &opts.Engine)
	return cmd
}

// RunsShowOptions are the inputs of `azero runs show`.
type RunsShowOptions struct {
	RunDeps

	Ref    string // the run, or a unique prefix of its id
	JSON   bool
	Events bool
}

func runsShowRun(ctx context.Context, opts *RunsShowOptions) error {
	eng, err := opts.openHere(ctx)
	if err != nil {
		return err
	}
	defer eng.Close()
	shown, err := eng.Show(ctx, opts.Ref, opts.Events)
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(opts.IO.Out, shown.Document())
	}
	d := shown.Detail
	if shown.Engine == runs.Temporal {
		t := runText{engine: "on Temporal", resume: shown.Resume,
			columns: []string{"NODE", "OUTCOME", "DURATION", "NEXT", "WORKER", "ERROR"}, lineage: "the steps this machine ran"}
		if shown.Worker != "" {
			t.extra = append(t.extra, fmt.Sprintf("Worker:   %s (moved %d times)", shown.Worker, shown.Moves))
		}
		delete(d.Run.Meta, "worker") // the line above says it
		for _, h := range shown.Steps {
			t.rows = append(t.rows, []string{h.Node, h.Outcome, (time.Duration(h.DurationMS) * time.Millisecond).String(), h.Next, h.Worker, firstLine(h.Error)})
		}
		printRunDetail(opts.IO, d, t, opts.Events)
		return nil
	}
	rows := make([][]string, len(d.History))
	for i, h := range d.History {
		rows[i] = []string{h.Node, h.Outcome, h.Duration.Round(time.Millisecond).String(), h.Next, firstLine(h.Error)}
	}
	printRunDetail(opts.IO, d, runText{resume: shown.Resume, columns: []string{"NODE", "OUTCOME", "DURATION", "NEXT", "ERROR"}, rows: rows}, opts.Events)
	return nil
}

// runText is what the human form of `runs show` adds to a run's document
// on one engine: a note after the workflow, header lines, the command
// that answers its question, and the history's columns.
type runText struct {
	engine  string     // shown after the workflow ("on Temporal"); "" for the local engine
	extra   []string   // header lines after the times
	resume  string     // the command that answers the question; "" when none does
	columns []string   // the history's columns after #
	rows    [][]string // one per step
	lineage string     // what the lineage directory holds, when not everything
}

// printRunDetail prints one run for a human, through the pager: where it
// stands, its question in full, its steps, its model calls by node, its
// lineage, and with withEvents every event it reported.
func printRunDetail(io *iostreams.IOStreams, d rundoc.Detail, t runText, withEvents bool) {
	defer io.StartPager()()
	out := io.Out
	workflow := d.Run.Workflow
	if t.engine != "" {
		workflow += ", " + t.engine
	}
	fmt.Fprintf(out, "Run %s (%s): %s at %s\n", d.Run.ID, workflow, d.Run.Status, d.Run.Node)
	if d.Run.Unverified != "" {
		cs := io.ColorSchemeOut()
		fmt.Fprintf(out, "%s %s\nWhat follows is only what the row claims.\n", cs.Red("NOT VERIFIED:"), d.Run.Unverified)
	}
	if d.Run.Key != "" {
		fmt.Fprintf(out, "Key:      %s\n", d.Run.Key)
	}
	fmt.Fprintf(out, "Created:  %s\nUpdated:  %s\n", d.Run.CreatedAt.Format(time.RFC3339), d.Run.UpdatedAt.Format(time.RFC3339))
	for _, l := range t.extra {
		fmt.Fprintln(out, l)
	}
	keys := make([]string, 0, len(d.Run.Meta))
	for k := range d.Run.Meta {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(out, "%-9s %s\n", k+":", d.Run.Meta[k])
	}
	if d.Run.Error != "" {
		fmt.Fprintf(out, "Error:    %s\n", d.Run.Error)
	}
	if q := d.Question; q != nil {
		fmt.Fprintf(out, "\nWaiting at %s for an answer:\n", q.Gate)
		fmt.Fprint(out, renderQuestion(*q, io.ColorSchemeOut()))
		fmt.Fprintf(out, "%s\n  answers: %s\n", q.Prompt, answerList(*q))
		if t.resume != "" {
			fmt.Fprintf(out, "  answer it from a terminal with: %s\n", t.resume)
		}
	}
	fmt.Fprintln(out, "\nHistory:")
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  #\t"+strings.Join(t.columns, "\t"))
	for i, row := range t.rows {
		fmt.Fprintf(tw, "  %d\t%s\n", i+1, strings.Join(row, "\t"))
	}
	tw.Flush()
	if len(d.CostByNode) > 0 {
		fmt.Fprintln(out, "\nModel calls by node:")
		tw = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  NODE\tCALLS\tTOKENS IN\tTOKENS OUT\tCOST USD")
		for _, c := range d.CostByNode {
			fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%.4f\n", c.Node, c.Calls, c.InputTokens, c.OutputTokens, c.CostUSD)
		}
		fmt.Fprintf(tw, "  total\t%d\t\t\t%.4f\n", len(d.Calls), d.TotalUSD)
		tw.Flush()
	}
	if d.LineageDir != "" {
		label := "Lineage"
		if t.lineage != "" {
			label += " (" + t.lineage + ")"
		}
		fmt.Fprintf(out, "\n%s: %s\n", label, d.LineageDir)
	}
	if withEvents {
		fmt.Fprintln(out, "\nEvents:")
		cs := io.ColorSchemeOut()
		for _, ev := range d.Events {
			fmt.Fprintf(out, "%s %s", cs.Faint(ev.At.Format("15:04:05")), renderEvent(ev, cs))
		}
	}
}

// answerList names a question's answers for a human: "approve, reject" or
// "[S]end, [R]evise (needs text), [M]anual".
func answerList(q human.Question) string {
	parts := make([]string, len(q.Options))
	for i, o := range q.Options {
		parts[i] = o.Key
		if q.Kind == human.Menu || q.Kind == human.Editor {
			parts[i] = o.MenuLabel()
		}
		if o.Text != "" {
			parts[i] += " (with text)"
		}
		if o.Confirm != "" {
			parts[i] += " (confirmed by typing " + o.Confirm + ")"
		}
	}
	if q.Kind == human.Editor {
		names := make([]string, len(q.Files))
		for i, fl := range q.Files {
			names[i] = fl.Name
		}
		return "edit " + strings.Join(names, ", ") + ", then " + strings.Join(parts, ", ")
	}
	return strings.Join(parts, ", ")
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	if len(line) > 100 {
		line = line[:97] + "..."
	}
	return line
}
