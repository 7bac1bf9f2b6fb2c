package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/azero-dev/azero/internal/llm"
	azruns "github.com/azero-dev/azero/internal/runs"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testrun"
)

// statuses are the run statuses `azero runs --status` takes.
var statuses = []store.Status{store.StatusRunning, store.StatusWaiting, store.StatusInterrupted, store.StatusDone, store.StatusFailed, store.StatusAborted}

// completeValues teaches shell completion the values azero's arguments
// and flags take: run ids (with their workflow and status), roles,
// statuses, workflows, test runners and model names.
func completeValues(root *cobra.Command, env *azruns.Env) {
	find := func(path ...string) *cobra.Command {
		c, _, err := root.Find(path)
		if err != nil || c == root {
			return nil
		}
		return c
	}
	fixed := func(values ...string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return func(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
			var out []string
			for _, v := range values {
				if strings.HasPrefix(v, prefix) {
					out = append(out, v)
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		}
	}
	flag := func(cmd *cobra.Command, name string, fn func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective)) {
		if cmd != nil && cmd.Flags().Lookup(name) != nil {
			_ = cmd.RegisterFlagCompletionFunc(name, fn)
		}
	}
	if c := find("resume"); c != nil {
		c.ValidArgsFunction = completeRuns(env, true)
	}
	if c := find("runs", "show"); c != nil {
		c.ValidArgsFunction = completeRuns(env, false)
	}
	if c := find("models", "ping"); c != nil {
		c.ValidArgsFunction = func(_ *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return fixed(roleNames()...)(nil, nil, prefix)
		}
	}
	runs := find("runs")
	var sts []string
	for _, s := range statuses {
		sts = append(sts, string(s))
	}
	flag(runs, "status", fixed(sts...))
	flag(runs, "workflow", fixed(azruns.Catalog().Names()...))
	impl := find("implement")
	flag(impl, "runner", fixed(testrun.Kinds()...))
	models := fixed(modelNames()...)
	flag(impl, "coder", models)
	is := find("issue")
	flag(is, "drafter", models)
	flag(is, "reviewer", models)
	flag(is, "tracker", fixed(azruns.IssueTrackers...))
	de := find("design")
	flag(de, "drafter", models)
	flag(de, "reviewer", models)
	flag(de, "coder", models)
	flag(de, "tracker", fixed(azruns.IssueTrackers...))
	flag(de, "runner", fixed(testrun.Kinds()...))
}

// completeRuns completes run ids, newest first, described by workflow,
// status and node; only those that can continue when resumable is set.
func completeRuns(env *azruns.Env, resumable bool) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		eng, err := azruns.OpenLocal(cmd.Context(), env, azruns.Catalog())
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		defer eng.Close()
		l, err := eng.List(cmd.Context(), azruns.Query{Limit: 200})
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		var out []string
		for _, r := range l.Runs {
			if r.Unverified != "" || !strings.HasPrefix(r.ID, prefix) || resumable && r.Status.Finished() {
				continue
			}
			out = append(out, fmt.Sprintf("%s\t%s %s at %s", r.ID, r.Workflow, r.Status, r.Node))
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
	}
}

func roleNames() []string {
	out := make([]string, len(azruns.Roles))
	for i, r := range azruns.Roles {
		out[i] = string(r)
	}
	return out
}

// modelNames are the models azero knows a price for, and the scripted one.
func modelNames() []string {
	names := []string{llm.MockSpec}
	for name := range llm.DefaultPrices() {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
