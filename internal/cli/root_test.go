package cli

import (
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/azero-dev/azero/internal/iostreams"
)

// TestRootForBuildsOnlyWhatRuns: a command line naming a command builds
// that command alone, whose help and flags are those of the whole tree;
// anything else builds the whole tree.
func TestRootForBuildsOnlyWhatRuns(t *testing.T) {
	t.Parallel()
	newF := func() (*Factory, func() string) {
		io, _, out, _ := iostreams.Test()
		f := &Factory{IO: io, Getenv: func(string) string { return "" }, Environ: func() []string { return nil },
			LookPath: exec.LookPath, WorkDir: t.TempDir(), Now: time.Now, Version: "test"}
		return f, out.String
	}
	full, _ := newF()
	var names []string
	for _, c := range NewRootCommand(full).Commands() {
		names = append(names, c.Name())
	}
	for _, c := range commandBuilders {
		if !slices.Contains(names, c.name) {
			t.Errorf("the whole tree has no %s", c.name)
		}
		if c.name == "docs" {
			continue
		}
		f, _ := newF()
		root := rootFor(f, []string{c.name, "--help"})
		if got := root.Commands(); len(got) != 1 || got[0].Name() != c.name {
			t.Errorf("rootFor(%s) built %d commands", c.name, len(got))
		}
		for _, sub := range []string{"", "show", "gc", "ping", "man", "claude-code"} {
			args := []string{c.name}
			if sub != "" {
				args = append(args, sub)
			}
			args = append(args, "--help")
			fl, fullOut := newF()
			ll, lazyOut := newF()
			root := NewRootCommand(fl)
			root.SetArgs(args)
			fullCmd, fullErr := root.ExecuteC()
			lazy := rootFor(ll, args)
			lazy.SetArgs(args)
			lazyCmd, lazyErr := lazy.ExecuteC()
			if path(fullCmd) != path(lazyCmd) || (fullErr == nil) != (lazyErr == nil) {
				t.Errorf("%v: ran %s (%v) in the whole tree, %s (%v) alone", args, path(fullCmd), fullErr, path(lazyCmd), lazyErr)
				continue
			}
			if fullOut() != lazyOut() {
				t.Errorf("%v: help differs:\n--- whole tree\n%s\n--- alone\n%s", args, fullOut(), lazyOut())
			}
		}
	}
	for _, args := range [][]string{nil, {"--version"}, {"help", "gate"}, {"completion", "bash"}, {"__complete", "resume", ""}, {"docs", "man", "x"}, {"gaet"}} {
		f, _ := newF()
		if got := len(rootFor(f, args).Commands()); got < len(commandBuilders) {
			t.Errorf("rootFor(%q) built %d commands, want the whole tree", args, got)
		}
	}
}

func path(c *cobra.Command) string {
	if c == nil {
		return ""
	}
	return c.CommandPath()
}
