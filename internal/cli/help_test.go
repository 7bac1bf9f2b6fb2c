package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/azero-dev/azero/internal/iostreams"
)

// azero --help groups the commands as gh does, workflows first, each
// group's commands in their order, with examples; no command is left in
// cobra's "Additional Commands".
func TestRootHelpGroupsTheCommands(t *testing.T) {
	t.Parallel()
	code, out, errOut := runInProcess(t, t.TempDir(), "--help")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := map[string][]string{
		"Workflows:": {"implement", "issue", "design", "demo"},
		"Capabilities (each usable alone, from a hook or a script):": {"gate", "write", "apply", "sandbox"},
		"Integrations:":          {"hook", "mcp", "serve", "worker"},
		"Runs and housekeeping:": {"runs", "resume", "models", "selftest", "docs", "version", "completion", "help"},
	}
	var order []string
	got := map[string][]string{}
	heading := ""
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasSuffix(line, ":") && !strings.HasPrefix(line, " "):
			heading = line
			order = append(order, heading)
		case heading != "" && strings.HasPrefix(line, "  ") && line != "":
			got[heading] = append(got[heading], strings.Fields(line)[0])
		}
	}
	groups := []string{"Workflows:", "Capabilities (each usable alone, from a hook or a script):", "Integrations:", "Runs and housekeeping:"}
	if i := slices.Index(order, groups[0]); i < 0 || !slices.Equal(order[i:i+4], groups) {
		t.Errorf("the headings are %q, want the groups in the order %q", order, groups)
	}
	for g, cmds := range want {
		if !slices.Equal(got[g], cmds) {
			t.Errorf("%s lists %v, want %v", g, got[g], cmds)
		}
	}
	if slices.Contains(order, "Additional Commands:") {
		t.Errorf("a command is in no group:\n%s", out)
	}
	examples := got["Examples:"]
	if len(examples) < 3 || slices.ContainsFunc(examples, func(s string) bool { return s != "azero" }) {
		t.Errorf("the examples are %v, want a few azero command lines:\n%s", examples, out)
	}
}

// A usage error points to the help of the command that was called
// wrongly, not azero's.
func TestUsageErrorPointsToTheCommandsHelp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		help string
	}{
		{[]string{"implement", "--nosuch"}, "azero implement"},
		{[]string{"implement"}, "azero implement"},
		{[]string{"runs", "show"}, "azero runs show"},
		{[]string{"runs", "gc", "extra"}, "azero runs gc"},
		{[]string{"completion", "tcsh"}, "azero completion"},
		{[]string{"docs"}, "azero docs"},
		{[]string{"nosuch"}, "azero"},
		{[]string{"help", "nosuch"}, "azero"},
		{[]string{"--nosuch"}, "azero"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			code, _, errOut := runInProcess(t, t.TempDir(), tt.args...)
			want := "Run '" + tt.help + " --help' for usage.\n"
			if code != ExitUsage || !strings.HasSuffix(errOut, want) {
				t.Errorf("exit %d, stderr %q; want 2 ending %q", code, errOut, want)
			}
		})
	}
}

// Every command lists the exit codes it can return (none falls back to
// the whole table): 0 (its help) and 2 (a flag it does not have) always;
// completion only 0, 1 and 2; only commands that drive runs say that 3
// and 130 leave a run checkpointed.
func TestEveryCommandListsItsOwnExitCodes(t *testing.T) {
	t.Parallel()
	io, _, _, _ := iostreams.Test()
	root := NewRootCommand(&Factory{IO: io, Getenv: func(string) string { return "" }, Environ: func() []string { return nil },
		LookPath: exec.LookPath, WorkDir: t.TempDir(), Now: time.Now, Version: "test"})
	root.InitDefaultHelpCmd()
	runCommands := []string{"azero implement", "azero issue", "azero design", "azero demo", "azero resume", "azero selftest"}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if !c.HasParent() || c.Hidden || strings.HasPrefix(c.Name(), "__") {
			return
		}
		path := c.CommandPath()
		list := c.Annotations["exitcodes"]
		if list == "" {
			t.Errorf("%s lists no exit codes of its own", path)
			return
		}
		codes := strings.Split(list, ",")
		if !slices.Contains(codes, "0") || !slices.Contains(codes, "2") {
			t.Errorf("%s lists %s: every command can exit 0 and 2", path, list)
		}
		if c.Name() == "completion" || c.Parent().Name() == "completion" {
			if list != "0,1,2" {
				t.Errorf("%s lists %s, want 0,1,2", path, list)
			}
		}
		help := exitCodeHelp(c)
		drives := slices.Contains(runCommands, path)
		for _, code := range []int{ExitNeedsHuman, ExitInterrupted} {
			if !slices.Contains(codes, strconv.Itoa(code)) {
				continue
			}
			if says := strings.Contains(help, "the run is checkpointed"); says != drives {
				t.Errorf("%s: says a run is checkpointed: %v, drives runs: %v\n%s", path, says, drives, help)
			}
		}
	}
	walk(root)
	code, out, _ := runInProcess(t, t.TempDir(), "completion", "--help")
	_, codesPart, _ := strings.Cut(out, "\nExit codes:\n")
	listed := regexp.MustCompile(`(?m)^\s+(\d+)  `).FindAllStringSubmatch(codesPart, -1)
	var nums []string
	for _, m := range listed {
		nums = append(nums, m[1])
	}
	if code != ExitOK || strings.Join(nums, ",") != "0,1,2" {
		t.Errorf("completion --help lists the exit codes %v, want 0, 1, 2:\n%s", nums, out)
	}
}

// Every man page has an EXIT STATUS section with the command's own codes
// and an ENVIRONMENT section with every variable of the README's table.
func TestManPagesHaveExitStatusAndEnvironment(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "man1")
	if code, _, errOut := runInProcess(t, t.TempDir(), "docs", "man", dir); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	pages, _ := filepath.Glob(filepath.Join(dir, "*.1"))
	if len(pages) < 20 {
		t.Fatalf("%d pages", len(pages))
	}
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		status, env, ok := strings.Cut(text, "\n.SH EXIT STATUS\n")
		if !ok || !strings.Contains(env, "\n.SH ENVIRONMENT\n") || strings.Index(status, ".SH DESCRIPTION") < 0 {
			t.Errorf("%s: no EXIT STATUS and ENVIRONMENT sections", filepath.Base(page))
			continue
		}
		for _, v := range []string{"AZERO_STATE_DIR", "XDG_CONFIG_HOME", "TEMPORAL_API_KEY", "NO_COLOR", "GITHUB_TOKEN (or GH_TOKEN)"} {
			if !strings.Contains(env, v) {
				t.Errorf("%s: the environment does not name %s", filepath.Base(page), v)
			}
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "azero-completion.1"))
	codes, _, _ := strings.Cut(strings.SplitN(string(b), "\n.SH EXIT STATUS\n", 2)[1], ".SH ENVIRONMENT")
	if got := regexp.MustCompile(`\\fB(\d+)\\fP`).FindAllStringSubmatch(codes, -1); len(got) != 3 || got[2][1] != "2" {
		t.Errorf("azero-completion.1's exit status lists %v, want 0, 1, 2:\n%s", got, codes)
	}
	b, _ = os.ReadFile(filepath.Join(dir, "azero-implement.1"))
	if !strings.Contains(string(b), "\\fB130\\fP\ninterrupted (SIGINT/SIGTERM); the run is checkpointed") {
		t.Errorf("azero-implement.1 lacks its exit code 130:\n%s", b)
	}
}
