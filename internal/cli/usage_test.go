package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/testenv"
)

// runInProcess runs azero's command line in this process, with no
// terminal, in dir, and returns the exit code, stdout and stderr.
func runInProcess(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	io, _, out, errOut := iostreams.Test()
	env := map[string]string{"AZERO_STATE_DIR": t.TempDir(), "HOME": t.TempDir()}
	f := &Factory{IO: io, Getenv: func(k string) string { return env[k] }, Environ: func() []string { return nil },
		LookPath: exec.LookPath, WorkDir: dir, Now: time.Now, Version: "test"}
	code := Run(t.Context(), f, args)
	return code, out.String(), errOut.String()
}

// TestFlagValidationIsTheSameEverywhere: each mistake is a usage error
// (exit 2) with a message saying what to do, before any work.
func TestFlagValidationIsTheSameEverywhere(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"negative budget", []string{"implement", "--lld", "d.md", "--budget", "-1"}, "must not be negative"},
		{"negative budget at resume", []string{"resume", "x", "--budget", "-2"}, "must not be negative"},
		{"a budget that is not a number", []string{"implement", "--lld", "d.md", "--budget", "NaN"}, "must be an amount of USD"},
		{"an endless budget", []string{"implement", "--lld", "d.md", "--budget", "+Inf"}, "must be an amount of USD"},
		{"an endless budget at resume", []string{"resume", "x", "--budget", "Inf"}, "must be an amount of USD"},
		{"malformed --drafter", []string{"issue", "--brief", "a.md", "--drafter", ":x"}, `--drafter ":x": invalid model name`},
		{"malformed --reviewer", []string{"issue", "--brief", "a.md", "--reviewer", "nosuch:x"}, `unknown provider "nosuch"`},
		{"a negative limit", []string{"runs", "--limit", "-1"}, "--limit must be 0"},
		{"an unknown workflow", []string{"runs", "--workflow", "zzz"}, `unknown workflow "zzz"`},
		{"a negative selftest delay", []string{"selftest", "--delay", "-1s"}, "--delay must not be negative"},
		{"--force without --auto (implement)", []string{"implement", "--lld", "d.md", "--force"}, "--force only makes sense with --auto"},
		{"--force without --auto (write)", []string{"write", "x.py", "--content", "-", "--force"}, "--force only makes sense with --auto"},
		{"--brief with --resume", []string{"issue", "--brief", "a.md", "--resume", "a"}, "give one of them"},
		{"--resume with a model", []string{"issue", "--resume", "a", "--drafter", "openai:gpt-4.1"}, "drop --tracker"},
		{"malformed --coder", []string{"implement", "--lld", "d.md", "--coder", "gpt4"}, "provider:model"},
		{"completion of an unknown shell", []string{"completion", "tcsh"}, `unknown shell "tcsh"`},
		{"completion without a shell", []string{"completion"}, "name the shell"},
		{"help of an unknown command", []string{"help", "nosuch"}, `unknown command "nosuch"`},
		{"an unknown command", []string{"nosuch"}, "unknown command"},
		{"an unknown flag", []string{"runs", "--nosuch"}, "unknown flag"},
		{"an unknown status", []string{"runs", "--status", "zzz"}, "unknown status"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runInProcess(t, dir, tt.args...)
			if code != ExitUsage || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errOut, tt.want)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
		})
	}
	if code, out, _ := runInProcess(t, dir, "help", "runs"); code != ExitOK || !strings.Contains(out, "List runs") {
		t.Errorf("help of a command: exit %d, %q", code, out)
	}
}

// TestJSONErrorsAreOneDocument: with --json, a failing command prints one
// JSON object with the error on stdout, whatever failed.
func TestJSONErrorsAreOneDocument(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"runs", "show", "nosuch", "--json"},
		{"gate", "--json", "--repo", "/nonexistent/repo"},
		{"implement", "--json", "--lld", "missing.md"},
		{"implement", "--json", "--lld", "d.md", "--budget", "-1"},
		{"apply", "missing.py", "--edits", "missing.txt", "--json"},
		{"write", "x.py", "--content", "missing.txt", "--json"},
		{"runs", "--json", "--status", "zzz"},
		{"resume", "nosuch", "--json"},
		{"models", "ping", "nosuch", "--json"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			code, out, _ := runInProcess(t, dir, args...)
			if code == ExitOK {
				t.Fatalf("exit 0 for a failing command")
			}
			var doc map[string]any
			dec := json.NewDecoder(strings.NewReader(out))
			if err := dec.Decode(&doc); err != nil {
				t.Fatalf("stdout is not one JSON document: %v\n%s", err, out)
			}
			if dec.More() {
				t.Errorf("more than one JSON document:\n%s", out)
			}
			if msg, _ := doc["error"].(string); msg == "" {
				t.Errorf("no error in %s", out)
			}
		})
	}
}

// TestLongOutputIsPagedOnATerminal: `azero runs show` goes through
// $AZERO_PAGER on a terminal, never when piped.
func TestLongOutputIsPagedOnATerminal(t *testing.T) {
	t.Parallel()
	state, dir := t.TempDir(), t.TempDir()
	if res := runAzeroIn(t, state, dir, nil, "selftest", "--dir", dir, "--steps", "1", "--delay", "1ms"); res.code != ExitNeedsHuman {
		t.Fatalf("selftest: exit %d\n%s", res.code, res.stderr)
	}
	id := onlyRun(t, state).ID
	pager := []string{"AZERO_PAGER=sed 's/^/PAGED: /'", "NO_COLOR=1"}
	// stdout on the terminal too.
	screen := testenv.NewTerminal(t)
	cmd := exec.Command(os.Args[0], "runs", "show", id)
	cmd.Dir, cmd.Env = dir, azeroEnv(state, pager...)
	screen.Start(t, cmd)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("runs show: %v\n%s", err, screen.Text())
	}
	<-screen.Drained()
	if !strings.Contains(screen.Text(), "PAGED: Run "+id) || !strings.Contains(screen.Text(), "PAGED: Waiting at approve") {
		t.Errorf("not paged on a terminal:\n%s", screen.Text())
	}
	res := runAzeroIn(t, state, dir, pager, "runs", "show", id)
	if res.code != 0 || strings.Contains(res.stdout, "PAGED") || !strings.Contains(res.stdout, "Run "+id) {
		t.Errorf("piped output was paged (or lost): %q", res.stdout)
	}
}

// TestCompletionOfValues: run ids (with what they are), roles, statuses,
// workflows and runners complete.
func TestCompletionOfValues(t *testing.T) {
	t.Parallel()
	state, dir := t.TempDir(), t.TempDir()
	if res := runAzeroIn(t, state, dir, nil, "selftest", "--dir", dir, "--steps", "1", "--delay", "1ms"); res.code != ExitNeedsHuman {
		t.Fatalf("selftest: exit %d", res.code)
	}
	id := onlyRun(t, state).ID
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"resume", ""}, []string{id + "\tselftest waiting at approve"}},
		{[]string{"runs", "show", id[:4]}, []string{id + "\tselftest waiting at approve"}},
		{[]string{"models", "ping", ""}, []string{"drafter", "reviewer", "coder"}},
		{[]string{"runs", "--status", "w"}, []string{"waiting"}},
		{[]string{"runs", "--workflow", ""}, []string{"implement", "issue", "selftest"}},
		{[]string{"implement", "--runner", "c"}, []string{"cargo"}},
		{[]string{"implement", "--coder", "mock"}, []string{"mock:scripted"}},
	} {
		res := runAzeroIn(t, state, dir, nil, append([]string{"__complete"}, tt.args...)...)
		lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
		got := lines[:len(lines)-1] // the last line is the directive
		for _, w := range tt.want {
			if !slices.Contains(got, w) {
				t.Errorf("complete %v = %q, want %q among them", tt.args, got, w)
			}
		}
	}
}

func TestRoffText(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`a\b`:           `a\eb`,
		".TH x\nok\n'q": "\\&.TH x\nok\n\\&'q",
		"mid.dot 'q'":   "mid.dot 'q'",
	} {
		if got := roffText(in); got != want {
			t.Errorf("roffText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestManPages(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "man1")
	code, _, errOut := runInProcess(t, t.TempDir(), "docs", "man", dir)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, page := range []string{"azero.1", "azero-implement.1", "azero-runs-show.1", "azero-gate.1"} {
		b, err := os.ReadFile(filepath.Join(dir, page))
		title := ".TH \"" + strings.ToUpper(strings.TrimSuffix(page, ".1")) + "\" \"1\""
		if err != nil || !strings.HasPrefix(string(b), title) || !strings.Contains(string(b), "\n.SH NAME\n") {
			t.Errorf("%s: %v\n%.200s", page, err, b)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "azero-implement.1")); !strings.Contains(string(b), "baseline") {
		t.Error("the implement page lacks the command's long help")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "azero-runs.1")); !strings.Contains(string(b), "\\fBazero-runs-show\\fP(1)") ||
		!strings.Contains(string(b), "\\fB\\-\\-status\\fP \\fIstring\\fP") {
		t.Errorf("the runs page lacks its subcommands or flags:\n%s", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "azero-help.1")); err == nil {
		t.Error("a page for the help command")
	}
	if code, _, _ := runInProcess(t, t.TempDir(), "docs"); code != ExitUsage {
		t.Errorf("docs without a kind: exit %d, want 2", code)
	}
}
