// Package cli is azero's command line: one file per verb, each a thin layer
// over a library or workflow. Errors become exit codes in one place
// (ExitCode); data goes to stdout, everything for humans to stderr.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/azero-dev/azero/internal/iostreams"
)

// Main runs azero with the process's arguments and environment and returns
// the exit code.
func Main(version string) int {
	f, err := NewFactory(version)
	if err != nil {
		fmt.Fprintln(os.Stderr, "azero:", err)
		return ExitError
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		fmt.Fprintln(f.IO.ErrOut, "\n"+f.interruptNote())
		cancel()
		<-sigs
		os.Exit(ExitInterrupted)
	}()
	return Run(ctx, f, os.Args[1:])
}

// Run executes one command line and returns its exit code, printing the
// error, if any, to stderr, and with --json also as one JSON document on
// stdout ({"error": ..., "exit_code": N}) unless the command printed its
// own document.
func Run(ctx context.Context, f *Factory, args []string) int {
	defer f.Close()
	f.args = args
	out := &countingWriter{w: f.IO.Out}
	f.IO.Out = out
	root := rootFor(f, args)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	code := ExitCode(err)
	var status *ExitStatus
	if errors.As(err, &status) && status.Err == nil {
		// A program azero ran for the user said what it had to.
		return code
	}
	if err != nil {
		fmt.Fprintln(f.IO.ErrOut, "azero:", err)
		if code == ExitUsage {
			fmt.Fprintf(f.IO.ErrOut, "Run '%s --help' for usage.\n", helpPath(cmd))
		}
		if out.n == 0 && wantsJSON(cmd, args) {
			_ = writeJSON(f.IO.Out, map[string]any{"error": err.Error(), "exit_code": code})
		}
	}
	return code
}

// helpPath is the command whose help a usage error points to: the
// command that refused its arguments or flags, else (an unknown command,
// help of an unknown command) azero's.
func helpPath(cmd *cobra.Command) string {
	if cmd == nil || cmd.Name() == "help" && cmd.HasParent() {
		return "azero"
	}
	return cmd.CommandPath()
}

// wantsJSON reports whether the command line asked for --json, even when
// it failed before its flags were parsed.
func wantsJSON(cmd *cobra.Command, args []string) bool {
	if cmd != nil {
		if fl := cmd.Flags().Lookup("json"); fl != nil && fl.Changed {
			return true
		}
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "--json" || a == "--json=true" {
			return true
		}
	}
	return false
}

// countingWriter counts what a command wrote to stdout.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Command groups of azero --help, in gh's order: what a person comes for
// first (the workflows), then the capabilities each usable alone, the
// doors for other tools, and the runs and housekeeping.
const (
	groupWorkflows    = "workflows"
	groupCapabilities = "capabilities"
	groupIntegrations = "integrations"
	groupHousekeeping = "housekeeping"
)

var commandGroups = []cobra.Group{
	{ID: groupWorkflows, Title: "Workflows:"},
	{ID: groupCapabilities, Title: "Capabilities (each usable alone, from a hook or a script):"},
	{ID: groupIntegrations, Title: "Integrations:"},
	{ID: groupHousekeeping, Title: "Runs and housekeeping:"},
}

func init() {
	// azero --help lists each group's commands in the order below (the
	// workflow a person most likely wants first), not by name.
	cobra.EnableCommandSorting = false
}

// commandBuilders are azero's commands, by name, in the order of azero
// --help within their groups.
var commandBuilders = []struct {
	name  string
	group string
	build func(*Factory) *cobra.Command
}{
	{"implement", groupWorkflows, leaf(NewCmdImplement)},
	{"issue", groupWorkflows, leaf(NewCmdIssue)},
	{"design", groupWorkflows, leaf(NewCmdDesign)},
	{"demo", groupWorkflows, leaf(NewCmdDemo)},
	{"gate", groupCapabilities, leaf(NewCmdGate)},
	{"write", groupCapabilities, leaf(NewCmdWrite)},
	{"apply", groupCapabilities, leaf(NewCmdApply)},
	{"hook", groupIntegrations, NewCmdHook},
	{"mcp", groupIntegrations, leaf(NewCmdMCP)},
	{"serve", groupIntegrations, leaf(NewCmdServe)},
	{"worker", groupIntegrations, leaf(NewCmdWorker)},
	{"runs", groupHousekeeping, leaf(NewCmdRuns)},
	{"resume", groupHousekeeping, leaf(NewCmdResume)},
	{"models", groupHousekeeping, leaf(NewCmdModels)},
	{"selftest", groupHousekeeping, leaf(NewCmdSelftest)},
	{"docs", groupHousekeeping, leaf(NewCmdDocs)},
	{"version", groupHousekeeping, leaf(NewCmdVersion)},
	{"sandbox", groupCapabilities, leaf(NewCmdSandbox)},
}

// leaf builds a command that runs its own work (runF nil).
func leaf[O any](newCmd func(*Factory, func(*O) error) *cobra.Command) func(*Factory) *cobra.Command {
	return func(f *Factory) *cobra.Command { return newCmd(f, nil) }
}

// commandGroup is the group of the command named name: the builders',
// else by what it is (a command another file registers, such as
// sandbox, is a capability).
func commandGroup(name string) string {
	for _, c := range commandBuilders {
		if c.name == name {
			return c.group
		}
	}
	if name == "sandbox" {
		return groupCapabilities
	}
	return groupHousekeeping
}

// grouped puts cmd in its group of azero --help.
func grouped(cmd *cobra.Command) *cobra.Command {
	cmd.GroupID = commandGroup(cmd.Name())
	return cmd
}

// NewRootCommand builds the command tree.
func NewRootCommand(f *Factory) *cobra.Command {
	root := newRoot(f.IO)
	root.Version = buildVersion(f.Version).Version
	for _, c := range commandBuilders {
		root.AddCommand(grouped(c.build(f)))
	}
	strictCompletion(root)
	completeValues(root, f.Env())
	return root
}

// rootFor builds what running args needs: for a command line naming one
// of azero's commands, the root and that command only (building the whole
// tree, completion included, measured a tenth of the start-up of azero
// version and the pre-commit gate); for anything else (help, completion,
// --version, a name to correct, docs, which reads every command) the whole
// tree.
func rootFor(f *Factory, args []string) *cobra.Command {
	if len(args) > 0 && args[0] != "docs" {
		for _, c := range commandBuilders {
			if c.name == args[0] {
				root := newRoot(f.IO)
				root.CompletionOptions.DisableDefaultCmd = true
				root.AddCommand(grouped(c.build(f)))
				return root
			}
		}
	}
	return NewRootCommand(f)
}

// newRoot is the root command without its subcommands.
func newRoot(io *iostreams.IOStreams) *cobra.Command {
	root := &cobra.Command{
		Use:   "azero",
		Short: "Let AI models write software under human governance",
		Long: trimLines(`
  azero is a referee between AI models and your repository. Models draft issues,
  write tests and code; azero runs the real test runner and routes on its exit
  code, keeps every change in an isolated git worktree, refuses to overwrite or
  gut files without approval, shows every diff before a commit and demands a
  typed 'approve', and records every decision in an audit log.

  State (runs, lineage, audit log) lives in $AZERO_STATE_DIR
  (default $XDG_STATE_HOME/azero, or ~/.local/state/azero). The variables
  azero reads are listed in the man pages (azero docs man DIR).`),
		Example: trimLines(`
    azero demo                                  # watch a model work under azero's referee, offline
    azero implement --lld docs/lld/42-slug.md   # a design implemented test-first, reviewed, merged
    azero gate --install-hook                   # the diff review on your own commits
    azero runs                                  # the runs; 'azero resume RUN' continues one`),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	for i := range commandGroups {
		root.AddGroup(&commandGroups[i])
	}
	root.SetCompletionCommandGroupID(groupHousekeeping)
	root.SetOut(io.Out)
	root.SetErr(io.ErrOut)
	root.SetIn(io.In)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &UsageError{Err: err} })
	root.CompletionOptions.HiddenDefaultCmd = false
	root.SetHelpCommand(newHelpCommand(root))
	root.SetHelpCommandGroupID(groupHousekeeping)
	defaultHelp := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		defaultHelp(c, args)
		fmt.Fprint(c.OutOrStdout(), exitCodeHelp(c))
	})
	return root
}

// exitStatus is one code a command can return, with its meaning.
type exitStatus struct {
	Code int
	Text string
}

// commandExitCodes are the exit codes c can return: those its
// "exitcodes" annotation lists ("0,1,3"), worded for a command that
// drives runs when its "runs" annotation says so; the root lists them
// all.
func commandExitCodes(c *cobra.Command) []exitStatus {
	want := map[int]bool{}
	if list := c.Annotations["exitcodes"]; list != "" {
		for _, s := range strings.Split(list, ",") {
			if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
				want[n] = true
			}
		}
	}
	runs := c.Annotations["runs"] != "" || !c.HasParent()
	var out []exitStatus
	for _, ec := range exitCodes {
		if len(want) == 0 || want[ec.code] {
			text := ec.text
			if runs {
				text += ec.run
			}
			out = append(out, exitStatus{ec.code, text})
		}
	}
	return out
}

// exitCodeHelp renders the exit codes a command can return.
func exitCodeHelp(c *cobra.Command) string {
	var b strings.Builder
	b.WriteString("\nExit codes:\n")
	for _, ec := range commandExitCodes(c) {
		fmt.Fprintf(&b, "  %3d  %s\n", ec.Code, ec.Text)
	}
	return b.String()
}

// exitCodesAnnotation builds the annotation commandExitCodes reads: every
// code the command can return. Every command can return 0 and 2 (its
// --help, a flag it does not have).
func exitCodesAnnotation(codes ...int) map[string]string {
	sort.Ints(codes)
	s := make([]string, len(codes))
	for i, c := range codes {
		s[i] = strconv.Itoa(c)
	}
	return map[string]string{"exitcodes": strings.Join(s, ",")}
}

// runExitCodes is exitCodesAnnotation for a command that drives runs:
// exit 3 and 130 leave the run checkpointed.
func runExitCodes(codes ...int) map[string]string {
	a := exitCodesAnnotation(codes...)
	a["runs"] = "checkpointed"
	return a
}

// writeJSON prints one JSON document.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// noArgs rejects positional arguments as a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("%s takes no arguments, got %q", cmd.CommandPath(), args)
	}
	return nil
}

// exactArgs requires n positional arguments, as a usage error.
func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s needs %s", cmd.CommandPath(), names)
		}
		return nil
	}
}

// newHelpCommand is `azero help [COMMAND]`: an unknown command is a usage
// error (exit 2), not a help page.
func newHelpCommand(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:         "help [command]",
		Short:       "Help about any command",
		Annotations: exitCodesAnnotation(ExitOK, ExitUsage),
		RunE: func(cmd *cobra.Command, args []string) error {
			target, rest, err := root.Find(args)
			if err != nil || target == nil || len(rest) > 0 {
				return usagef("unknown command %q: see 'azero --help' for the commands", strings.Join(args, " "))
			}
			return target.Help()
		},
	}
}

// strictCompletion makes `azero completion SHELL` refuse an unknown shell
// (exit 2) instead of printing its help.
func strictCompletion(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		var shells []string
		for _, sub := range c.Commands() {
			shells = append(shells, sub.Name())
		}
		// It prints a script: it fails only writing it, or called wrongly.
		c.Annotations = exitCodesAnnotation(ExitOK, ExitError, ExitUsage)
		for _, sub := range c.Commands() {
			sub.Annotations = exitCodesAnnotation(ExitOK, ExitError, ExitUsage)
		}
		c.Args = func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown shell %q: azero completes for %s", args[0], strings.Join(shells, ", "))
			}
			return nil
		}
		c.RunE = func(cmd *cobra.Command, args []string) error {
			return usagef("name the shell: azero completion %s", strings.Join(shells, "|"))
		}
	}
}

// run does a command's work, xRun with its options, or, when a test gave
// one, runF instead.
func run[O any](cmd *cobra.Command, runF func(*O) error, xRun func(context.Context, *O) error, opts *O) error {
	if runF != nil {
		return runF(opts)
	}
	return xRun(cmd.Context(), opts)
}
