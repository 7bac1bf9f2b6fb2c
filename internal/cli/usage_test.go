package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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

// TestLongOutputIsPagedOnATerminal: the long human output of `azero runs`,
// `runs show` and `apply --dry-run` goes through $AZERO_PAGER when stdout
// is a terminal; never when piped, never with --json.
func TestLongOutputIsPagedOnATerminal(t *testing.T) {
	t.Parallel()
	state, dir := t.TempDir(), t.TempDir()
	if res := runAzeroIn(t, state, dir, nil, "selftest", "--dir", dir, "--steps", "1", "--delay", "1ms"); res.code != ExitNeedsHuman {
		t.Fatalf("selftest: exit %d\n%s", res.code, res.stderr)
	}
	id := onlyRun(t, state).ID
	repo := testenv.NewRepo(t, map[string]string{"a.txt": "one\ntwo\n"})
	edits := filepath.Join(t.TempDir(), "edits.md")
	if err := os.WriteFile(edits, []byte("<<<<<<< SEARCH\ntwo\n=======\n2\n>>>>>>> REPLACE\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pager := []string{"AZERO_PAGER=sed 's/^/PAGED: /'", "PAGER=false", "NO_COLOR=1"}
	onTerminal := func(dir string, args ...string) string {
		screen := testenv.NewTerminal(t)
		cmd := exec.Command(os.Args[0], args...)
		cmd.Dir, cmd.Env = dir, azeroEnv(state, pager...)
		screen.Start(t, cmd)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, screen.Text())
		}
		<-screen.Drained()
		return screen.Text()
	}
	for _, tt := range []struct {
		dir  string
		args []string
		want string // a line of the output
	}{
		{dir, []string{"runs", "show", id}, "Run " + id},
		{dir, []string{"runs"}, id},
		{repo, []string{"apply", "a.txt", "--edits", edits, "--dry-run"}, "+2"},
	} {
		if got := onTerminal(tt.dir, tt.args...); !strings.Contains(got, "PAGED: ") || !strings.Contains(got, tt.want) {
			t.Errorf("%v on a terminal: not paged:\n%s", tt.args, got)
		}
		if got := onTerminal(tt.dir, append(tt.args, "--json")...); strings.Contains(got, "PAGED") || !strings.Contains(got, "{") {
			t.Errorf("%v --json on a terminal: paged:\n%s", tt.args, got)
		}
		res := runAzeroIn(t, state, tt.dir, pager, tt.args...)
		if res.code != 0 || strings.Contains(res.stdout, "PAGED") || !strings.Contains(res.stdout, tt.want) {
			t.Errorf("%v piped: exit %d, output paged (or lost): %q", tt.args, res.code, res.stdout)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "a.txt")); string(b) != "one\ntwo\n" {
		t.Errorf("--dry-run wrote a.txt: %q", b)
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
		{[]string{"runs", "--workflow", ""}, []string{"implement", "issue", "design", "selftest"}},
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

// TestColourConventions: colour goes to terminals only; CLICOLOR=0 turns
// it off, CLICOLOR_FORCE=1 turns it on when piped, and NO_COLOR wins over
// both. The gate's report (stderr) and `azero runs` (stdout) show it.
func TestColourConventions(t *testing.T) {
	t.Parallel()
	repo := testenv.NewRepo(t, map[string]string{"a.py": numberedLines("a", 20)})
	testenv.WriteFiles(t, repo, map[string]string{"a.py": strings.Replace(numberedLines("a", 20), "a 3\n", "three\n", 1)})
	state := t.TempDir()
	if res := runAzeroIn(t, state, t.TempDir(), nil, "selftest", "--dir", t.TempDir(), "--steps", "1", "--delay", "1ms"); res.code != ExitNeedsHuman {
		t.Fatalf("selftest: exit %d\n%s", res.code, res.stderr)
	}
	sgr := regexp.MustCompile(`\x1b\[[0-9;]*m`) // colour, not the progress line's erasing
	for _, tt := range []struct {
		name     string
		env      []string
		terminal bool
		colour   bool
	}{
		{"a terminal", nil, true, true},
		{"a terminal, CLICOLOR=0", []string{"CLICOLOR=0"}, true, false},
		{"a terminal, NO_COLOR", []string{"NO_COLOR=1"}, true, false},
		{"a terminal, CLICOLOR=1", []string{"CLICOLOR=1"}, true, true},
		{"piped", nil, false, false},
		{"piped, CLICOLOR=1", []string{"CLICOLOR=1"}, false, false},
		{"piped, CLICOLOR_FORCE=1", []string{"CLICOLOR_FORCE=1"}, false, true},
		{"piped, CLICOLOR_FORCE=1 over CLICOLOR=0", []string{"CLICOLOR=0", "CLICOLOR_FORCE=1"}, false, true},
		{"piped, NO_COLOR wins over CLICOLOR_FORCE=1", []string{"CLICOLOR_FORCE=1", "NO_COLOR=1"}, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var gate, runs string
			if tt.terminal {
				// stdin and stderr on a terminal, stdout too for runs. On a
				// terminal the gate always asks.
				s := startAzero(t, t.TempDir(), repo, tt.env, "gate")
				s.WaitFor(t, "to proceed", 1)
				s.Type(t, "reject")
				if code := s.exit(t); code != ExitRejected {
					t.Fatalf("gate: exit %d\n%s", code, s.Text())
				}
				gate = s.Text()
				screen := testenv.NewTerminal(t)
				cmd := exec.Command(os.Args[0], "runs")
				cmd.Dir, cmd.Env = t.TempDir(), azeroEnv(state, append([]string{"AZERO_PAGER=cat"}, tt.env...)...)
				screen.Start(t, cmd)
				if err := cmd.Wait(); err != nil {
					t.Fatal(err)
				}
				<-screen.Drained()
				runs = screen.Text()
			} else {
				res := runAzeroIn(t, t.TempDir(), repo, tt.env, "gate")
				gate = res.stderr
				runs = runAzeroIn(t, state, t.TempDir(), tt.env, "runs").stdout
			}
			if !strings.Contains(gate, "a.py") || !strings.Contains(runs, "waiting") {
				t.Fatalf("gate %q, runs %q", gate, runs)
			}
			if sgr.MatchString(gate) != tt.colour || sgr.MatchString(runs) != tt.colour {
				t.Errorf("colour in the gate's report %v, in runs %v; want %v\n%q\n%q", sgr.MatchString(gate), sgr.MatchString(runs), tt.colour, gate, runs)
			}
		})
	}
}
