package cli

// Tests of `azero gate`: the flags (NewCmdGate with a runF), and the
// real command end to end. End-to-end tests start this test binary as
// azero (main_test.go's TestMain runs cli.Main when AZERO_TEST_MAIN=1),
// with stdin from /dev/null or attached to a real pseudo-terminal.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/testenv"
)

func TestGateCommandFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		args  []string
		want  GateOptions
		usage bool
	}{
		{"defaults", nil, GateOptions{}, false},
		{"all review flags", []string{"--repo", "../svc", "--staged", "--json"}, GateOptions{Repo: "../svc", Staged: true, JSON: true}, false},
		{"hook", []string{"--install-hook", "--force"}, GateOptions{InstallHook: true, Force: true}, false},
		{"force alone skips nothing", []string{"--force"}, GateOptions{}, true},
		{"no auto flag", []string{"--auto"}, GateOptions{}, true},
		{"no yes flag", []string{"--yes"}, GateOptions{}, true},
		{"no arguments", []string{"somewhere"}, GateOptions{}, true},
		{"hook has no json", []string{"--install-hook", "--json"}, GateOptions{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, f, err := parseFlags(NewCmdGate, tt.args)
			if tt.usage {
				wantUsageError(t, err, got != nil)
				return
			}
			if err != nil || got == nil {
				t.Fatalf("err = %v", err)
			}
			if got.Repo != tt.want.Repo || got.Staged != tt.want.Staged || got.JSON != tt.want.JSON ||
				got.InstallHook != tt.want.InstallHook || got.Force != tt.want.Force {
				t.Errorf("options = %+v, want %+v", got, tt.want)
			}
			if got.IO != f.IO || got.Prompter == nil || got.WorkDir != "/work" {
				t.Errorf("dependencies not bound: %+v", got)
			}
		})
	}
}

// numberedLines returns n lines "prefix i".
func numberedLines(prefix string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s %d\n", prefix, i)
	}
	return b.String()
}

// replacedRepo recreates PR #165: a 270-line state.py replaced by 56
// lines, plus an unflagged small edit and a new file.
func replacedRepo(t *testing.T) string {
	repo := testenv.NewRepo(t, map[string]string{"src/state.py": numberedLines("field", 270), "small.py": numberedLines("s", 100)})
	testenv.WriteFiles(t, repo, map[string]string{
		"src/state.py": numberedLines("rewritten", 56),
		"small.py":     strings.Replace(numberedLines("s", 100), "s 50\n", "fifty\n", 1),
		"new file.py":  numberedLines("n", 7),
	})
	return repo
}

// gateDocument is `azero gate --json`'s output.
type gateDocument struct {
	Files []struct {
		FilePath       string  `json:"file_path"`
		LinesAdded     int     `json:"lines_added"`
		LinesDeleted   int     `json:"lines_deleted"`
		OriginalLines  int     `json:"original_lines"`
		ChangeRatio    float64 `json:"change_ratio"`
		ChangeType     string  `json:"change_type"`
		RequiresReview bool    `json:"requires_review"`
	} `json:"files"`
	Flagged       []string `json:"flagged_files"`
	Decision      string   `json:"decision"`
	Repository    string   `json:"repository"`
	HumanApproved bool     `json:"human_approved"`
}

func decode(t *testing.T, stdout string) gateDocument {
	t.Helper()
	var doc gateDocument
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("stdout is not one JSON document: %v\n%s", err, stdout)
	}
	var raw map[string]any
	json.Unmarshal([]byte(stdout), &raw)
	for _, key := range []string{"files", "flagged_files", "decision", "repository"} {
		if _, ok := raw[key]; !ok {
			t.Errorf("JSON lacks %q: %s", key, stdout)
		}
	}
	return doc
}

func gateDecisions(t *testing.T, stateDir string) []audit.Record {
	t.Helper()
	recs, err := audit.Read(filepath.Join(stateDir, audit.FileName))
	if err != nil {
		t.Fatal(err)
	}
	var out []audit.Record
	for _, r := range recs {
		if r["event"] == "gate_decision" {
			out = append(out, r)
		}
	}
	return out
}

func TestGateScenario140NoTerminalExits3(t *testing.T) {
	t.Parallel()
	repo := replacedRepo(t)
	state := t.TempDir()
	res := runAzeroIn(t, state, repo, nil, "gate", "--json")
	if res.code != ExitNeedsHuman {
		t.Fatalf("exit %d, want 3; stderr:\n%s", res.code, res.stderr)
	}
	doc := decode(t, res.stdout)
	if doc.Decision != "ABORTED_NON_INTERACTIVE" || len(doc.Flagged) != 1 || doc.Flagged[0] != "src/state.py" || len(doc.Files) != 3 {
		t.Fatalf("document = %+v", doc)
	}
	for _, f := range doc.Files {
		if f.FilePath == "src/state.py" && (f.ChangeType != "REPLACED" || f.OriginalLines != 270 || f.LinesAdded != 56 || !f.RequiresReview) {
			t.Errorf("state.py = %+v", f)
		}
		if f.FilePath == "new file.py" && (f.ChangeType != "NEW" || f.RequiresReview) {
			t.Errorf("new file = %+v", f)
		}
	}
	for _, want := range []string{"WARNING: REPLACED: src/state.py", "270 → 56", "need a human review"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, res.stderr)
		}
	}
	if strings.Contains(res.stderr, "\x1b") {
		t.Error("escape sequences written to a pipe")
	}
	recs := gateDecisions(t, state)
	if len(recs) != 1 || recs[0]["decision"] != "ABORTED_NON_INTERACTIVE" || recs[0]["time"] == nil {
		t.Errorf("audit = %v", recs)
	}
}

func TestGateNonInteractiveOutcomes(t *testing.T) {
	t.Parallel()
	clean := testenv.NewRepo(t, map[string]string{"a.py": numberedLines("a", 20)})
	small := testenv.NewRepo(t, map[string]string{"a.py": numberedLines("a", 20)})
	testenv.WriteFiles(t, small, map[string]string{"a.py": numberedLines("a", 21), "b.py": "new\n"})
	fresh := t.TempDir()
	testenv.Git(t, fresh, "init", "-q")
	outside := t.TempDir()
	tests := []struct {
		name     string
		dir      string
		env      []string
		args     []string
		code     int
		decision string
		stderr   string
	}{
		{"no changes", clean, nil, []string{"gate", "--json"}, ExitOK, "NOT_REQUIRED", "No changes"},
		{"nothing flagged", small, nil, []string{"gate", "--json"}, ExitOK, "NOT_REQUIRED", "2 files changed, 2 insertions(+)"},
		{"repo flag", outside, nil, []string{"gate", "--json", "--repo", small}, ExitOK, "NOT_REQUIRED", ""},
		{"flagged with auto-mode environment", replacedRepo(t), []string{"AZERO_AUTO=1", "CI=true", "AZERO_YES=1"}, []string{"gate", "--json"}, ExitNeedsHuman, "ABORTED_NON_INTERACTIVE", ""},
		{"staged only: nothing staged", replacedRepo(t), nil, []string{"gate", "--staged", "--json"}, ExitOK, "NOT_REQUIRED", "No changes"},
		{"not a repository", outside, nil, []string{"gate", "--json"}, ExitError, "", "git init"},
		{"no commits", fresh, nil, []string{"gate", "--json"}, ExitError, "", "first commit"},
		{"no commits, staged", fresh, nil, []string{"gate", "--staged", "--json"}, ExitOK, "NOT_REQUIRED", "No changes"},
		{"no auto flag", small, nil, []string{"gate", "--auto"}, ExitUsage, "", "unknown flag: --auto"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := runAzeroIn(t, t.TempDir(), tt.dir, tt.env, tt.args...)
			if res.code != tt.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", res.code, tt.code, res.stderr)
			}
			if tt.decision == "" {
				if tt.code != ExitUsage && !strings.Contains(res.stdout, `"error"`) || strings.Contains(res.stdout, `"decision"`) {
					t.Errorf("stdout = %q, want only the error document", res.stdout)
				}
			} else if doc := decode(t, res.stdout); doc.Decision != tt.decision {
				t.Errorf("decision %s, want %s", doc.Decision, tt.decision)
			}
			if !strings.Contains(res.stderr, tt.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.stderr, res.stderr)
			}
		})
	}
}

func TestGateHelp(t *testing.T) {
	t.Parallel()
	res := runAzeroIn(t, t.TempDir(), t.TempDir(), nil, "gate", "--help")
	if res.code != 0 {
		t.Fatalf("exit %d", res.code)
	}
	for _, want := range []string{
		"Exit codes:", "  0  success", "  1  error", "  2  usage error", "  3  human approval needed", "  4  rejected",
		"--no-verify", "does not depend on the hook", "No flag and no environment variable skips the review",
		"--install-hook", "--staged", "--json", "--repo",
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("help lacks %q:\n%s", want, res.stdout)
		}
	}
	if strings.Contains(res.stdout, "  5  tests failed") {
		t.Error("help lists exit code 5, which gate never returns")
	}
}

// TestGateOnATerminal drives the real command through a pseudo-terminal
// (scenarios 080, 090, 100, 110).
func TestGateOnATerminal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		env      []string
		answers  []string
		code     int
		decision string
		reasks   int
	}{
		{"080 approve", nil, []string{"approve"}, ExitOK, "APPROVED", 0},
		{"090 reject", nil, []string{"reject"}, ExitRejected, "REJECTED", 0},
		{"100 empty input asks again", nil, []string{"", "ok", "y", "approve"}, ExitOK, "APPROVED", 3},
		{"100 empty input then reject", nil, []string{"", "reject"}, ExitRejected, "REJECTED", 1},
		{"110 auto-mode environment still asks", []string{"AZERO_AUTO=1", "CI=true", "AZERO_YES=1"}, []string{"yes", "approve"}, ExitOK, "APPROVED", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			repo := replacedRepo(t)
			state := t.TempDir()
			screen := startOnTerminal(t, repo, azeroEnv(state, append(tt.env, "NO_COLOR=1")...), os.Args[0], "gate", "--json")
			screen.WaitFor(t, "Type 'approve' to proceed", 1)
			for i, a := range tt.answers {
				if i > 0 {
					screen.WaitFor(t, "in full", i)
				}
				screen.Type(t, a)
			}
			if code := screen.exit(t); code != tt.code {
				t.Fatalf("exit %d, want %d; screen:\n%s", code, tt.code, screen.Text())
			}
			text := screen.Text()
			if n := strings.Count(text, "in full"); n != tt.reasks {
				t.Errorf("asked again %d times, want %d", n, tt.reasks)
			}
			// The report came before the question.
			if w, q := strings.Index(text, "WARNING: REPLACED: src/state.py"), strings.Index(text, "Type 'approve'"); w < 0 || w > q {
				t.Errorf("report not shown before the question:\n%s", text)
			}
			doc := decode(t, screen.stdout.String())
			if doc.Decision != tt.decision || doc.HumanApproved != (tt.decision == "APPROVED") {
				t.Errorf("document = %+v, want %s", doc, tt.decision)
			}
			if recs := gateDecisions(t, state); len(recs) != 1 || recs[0]["decision"] != tt.decision {
				t.Errorf("audit = %v", recs)
			}
		})
	}
}

var sgr = regexp.MustCompile(`\x1b\[[0-9;]*m`)

func TestGateColourOnATerminal(t *testing.T) {
	t.Parallel()
	for _, noColor := range []bool{false, true} {
		t.Run(fmt.Sprintf("NO_COLOR=%v", noColor), func(t *testing.T) {
			t.Parallel()
			var env []string
			if noColor {
				env = append(env, "NO_COLOR=1")
			}
			screen := startOnTerminal(t, replacedRepo(t), azeroEnv(t.TempDir(), env...), os.Args[0], "gate")
			screen.WaitFor(t, "to proceed or", 1)
			screen.Type(t, "reject")
			screen.exit(t)
			// SGR sequences (colour, bold); the progress line's erase
			// sequence is not colour.
			coloured := sgr.MatchString(screen.Text())
			if coloured == noColor {
				t.Errorf("escape sequences present = %v with NO_COLOR=%v:\n%q", coloured, noColor, screen.Text())
			}
		})
	}
}

func TestGateInstallHook(t *testing.T) {
	t.Parallel()
	repo := testenv.NewRepo(t, map[string]string{"state.py": numberedLines("field", 270), "notes.md": "n\n"})
	state := t.TempDir()
	hook := filepath.Join(repo, ".git", "hooks", "pre-commit")

	res := runAzeroIn(t, state, repo, nil, "gate", "--install-hook")
	if res.code != 0 {
		t.Fatalf("install: exit %d\n%s", res.code, res.stderr)
	}
	fi, err := os.Stat(hook)
	if err != nil || fi.Mode().Perm()&0o111 == 0 {
		t.Fatalf("hook %v, %v; want an executable file", fi, err)
	}
	content, _ := os.ReadFile(hook)
	if !strings.Contains(string(content), "gate --staged") || !strings.Contains(string(content), "/dev/tty") || !strings.Contains(string(content), "--no-verify") {
		t.Errorf("hook content:\n%s", content)
	}
	if res := runAzeroIn(t, state, repo, nil, "gate", "--install-hook"); res.code != 0 || !strings.Contains(res.stderr, "already") {
		t.Errorf("second install: exit %d, %s", res.code, res.stderr)
	}

	// A foreign hook is kept unless --force.
	parent := t.TempDir()
	other := filepath.Join(parent, "other")
	testenv.Git(t, parent, "init", "-q", "other")
	foreign := filepath.Join(other, ".git", "hooks", "pre-commit")
	os.WriteFile(foreign, []byte("#!/bin/sh\nexit 0\n"), 0o644)
	if res := runAzeroIn(t, state, other, nil, "gate", "--install-hook"); res.code != ExitError || !strings.Contains(res.stderr, "--force") {
		t.Errorf("foreign hook: exit %d, %s", res.code, res.stderr)
	}
	if b, _ := os.ReadFile(foreign); string(b) != "#!/bin/sh\nexit 0\n" {
		t.Errorf("foreign hook changed without --force: %q", b)
	}
	if res := runAzeroIn(t, state, other, nil, "gate", "--install-hook", "--force"); res.code != 0 {
		t.Errorf("--force: exit %d, %s", res.code, res.stderr)
	}
	if fi, _ := os.Stat(foreign); fi.Mode().Perm()&0o111 == 0 {
		t.Errorf("replaced hook is not executable: %v", fi.Mode())
	}
	var wrote bool
	recs, _ := audit.Read(filepath.Join(state, audit.FileName))
	for _, r := range recs {
		if r["event"] == "file_write" && strings.HasSuffix(fmt.Sprint(r["path"]), "pre-commit") {
			wrote = true
		}
	}
	if !wrote {
		t.Errorf("hook writes were not audited through safewrite: %v", recs)
	}

	// The hook at work: a flagged commit without a terminal is refused...
	testenv.WriteFiles(t, repo, map[string]string{"state.py": numberedLines("rewritten", 56)})
	testenv.Git(t, repo, "add", "state.py")
	commit := withoutTerminal(exec.Command("git", "commit", "-m", "replace state"))
	commit.Dir = repo
	commit.Env = azeroEnv(state)
	commit.Stdin = nil
	out, err := commit.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "need a human review") {
		t.Fatalf("commit of a replaced file without a terminal: %v\n%s", err, out)
	}
	if n := strings.Count(testenv.Git(t, repo, "log", "--format=%H"), "\n"); n != 1 {
		t.Fatalf("%d commits, want the commit refused", n)
	}

	// ...and goes through when a human types approve on the terminal.
	screen := startOnTerminal(t, repo, azeroEnv(state, "NO_COLOR=1"), "git", "commit", "-m", "replace state")
	screen.WaitFor(t, "Type 'approve' to proceed", 1)
	if !strings.Contains(screen.Text(), "WARNING: REPLACED: state.py") {
		t.Errorf("hook did not show the report:\n%s", screen.Text())
	}
	screen.Type(t, "approve")
	if code := screen.exit(t); code != 0 {
		t.Fatalf("git commit exit %d:\n%s", code, screen.Text())
	}
	if n := strings.Count(testenv.Git(t, repo, "log", "--format=%H"), "\n"); n != 2 {
		t.Fatalf("%d commits after approve, want 2", n)
	}

	// An unflagged commit passes without a terminal.
	testenv.WriteFiles(t, repo, map[string]string{"notes.md": "n\nmore\n"})
	testenv.Git(t, repo, "add", "notes.md")
	commit = withoutTerminal(exec.Command("git", "commit", "-m", "notes"))
	commit.Dir = repo
	commit.Env = azeroEnv(state)
	if out, err := commit.CombinedOutput(); err != nil {
		t.Fatalf("unflagged commit: %v\n%s", err, out)
	}
}

// TestGateHookReviewsTheFirstCommit: in a repository without commits the
// hook reviews the first commit (every file is NEW: nothing existing can
// be lost) instead of refusing it.
func TestGateHookReviewsTheFirstCommit(t *testing.T) {
	t.Parallel()
	newRepo := func(t *testing.T, state string) string {
		repo := t.TempDir()
		testenv.Git(t, repo, "init", "-q", "-b", "main")
		if res := runAzeroIn(t, state, repo, nil, "gate", "--install-hook"); res.code != 0 {
			t.Fatalf("install in an empty repository: exit %d\n%s", res.code, res.stderr)
		}
		testenv.WriteFiles(t, repo, map[string]string{"main.py": numberedLines("line", 300), "docs/readme.md": "# new\n"})
		testenv.Git(t, repo, "add", "-A")
		return repo
	}
	commits := func(t *testing.T, repo string) int {
		out, err := exec.Command("git", "-C", repo, "rev-list", "--count", "HEAD").Output()
		if err != nil {
			return 0 // no HEAD yet
		}
		n := 0
		fmt.Sscan(string(out), &n)
		return n
	}

	t.Run("without a terminal", func(t *testing.T) {
		t.Parallel()
		state := t.TempDir()
		repo := newRepo(t, state)
		commit := withoutTerminal(exec.Command("git", "commit", "-m", "first"))
		commit.Dir, commit.Env = repo, azeroEnv(state)
		out, err := commit.CombinedOutput()
		if err != nil {
			t.Fatalf("first commit through the hook: %v\n%s", err, out)
		}
		if commits(t, repo) != 1 {
			t.Fatal("no commit made")
		}
		for _, want := range []string{"main.py", "docs/readme.md", "2 files changed", "NOT_REQUIRED"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("hook output lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(string(out), "first commit yourself") {
			t.Errorf("the hook still refuses the first commit:\n%s", out)
		}
		if recs := gateDecisions(t, state); len(recs) != 1 || recs[0]["decision"] != "NOT_REQUIRED" || recs[0]["staged"] != true {
			t.Errorf("audit = %v", recs)
		}
	})
	for _, tt := range []struct {
		answer  string
		code    int
		commits int
	}{{"approve", 0, 1}, {"reject", 1, 0}} {
		t.Run("on a terminal, "+tt.answer, func(t *testing.T) {
			t.Parallel()
			state := t.TempDir()
			repo := newRepo(t, state)
			screen := startOnTerminal(t, repo, azeroEnv(state, "NO_COLOR=1"), "git", "commit", "-m", "first")
			screen.WaitFor(t, "Type 'approve' to proceed", 1)
			if text := screen.Text(); !strings.Contains(text, "main.py") || !strings.Contains(text, "300") {
				t.Errorf("the review does not show the new files:\n%s", text)
			}
			screen.Type(t, tt.answer)
			if code := screen.exit(t); code != tt.code {
				t.Fatalf("git commit exit %d, want %d:\n%s", code, tt.code, screen.Text())
			}
			if n := commits(t, repo); n != tt.commits {
				t.Errorf("%d commits after %s, want %d", n, tt.answer, tt.commits)
			}
		})
	}
}

// TestGateRefusesUnresolvedConflicts: in both modes a merge that stopped
// on conflicts fails the review (exit 1, no decision) saying to resolve
// them; `git diff HEAD` alone shows such a file as merely modified.
func TestGateRefusesUnresolvedConflicts(t *testing.T) {
	t.Parallel()
	repo := testenv.NewRepo(t, map[string]string{"app.py": numberedLines("line", 10)})
	testenv.Git(t, repo, "checkout", "-q", "-b", "theirs")
	testenv.WriteFiles(t, repo, map[string]string{"app.py": strings.Replace(numberedLines("line", 10), "line 5\n", "theirs\n", 1)})
	testenv.Git(t, repo, "commit", "-qam", "theirs")
	testenv.Git(t, repo, "checkout", "-q", "main")
	testenv.WriteFiles(t, repo, map[string]string{"app.py": strings.Replace(numberedLines("line", 10), "line 5\n", "ours\n", 1)})
	testenv.Git(t, repo, "commit", "-qam", "ours")
	merge := exec.Command("git", "merge", "theirs")
	merge.Dir, merge.Env = repo, testenv.GitEnv(os.Environ())
	if merge.Run() == nil {
		t.Fatal("the merge did not conflict")
	}
	for _, args := range [][]string{{"gate", "--json"}, {"gate", "--staged", "--json"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			state := t.TempDir()
			res := runAzeroIn(t, state, repo, nil, args...)
			if res.code != ExitError || strings.Contains(res.stdout, `"decision"`) || !strings.Contains(res.stdout, "unresolved merge conflicts") {
				t.Fatalf("exit %d, stdout %q; want 1, the error document and no decision\n%s", res.code, res.stdout, res.stderr)
			}
			for _, want := range []string{"app.py", "unresolved merge conflicts", "resolve the conflicts"} {
				if !strings.Contains(res.stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, res.stderr)
				}
			}
			if recs := gateDecisions(t, state); len(recs) != 0 {
				t.Errorf("a decision was recorded: %v", recs)
			}
		})
	}
}

// TestGateQuiet: --quiet shows only the flagged files and the question,
// passes a change with nothing flagged without a word, and still needs the
// typed approve for a flagged one; --install-hook --quiet writes a hook
// that runs it.
func TestGateQuiet(t *testing.T) {
	t.Parallel()
	t.Run("nothing flagged on a terminal", func(t *testing.T) {
		t.Parallel()
		state := t.TempDir()
		small := testenv.NewRepo(t, map[string]string{"a.py": numberedLines("a", 20)})
		testenv.WriteFiles(t, small, map[string]string{"a.py": numberedLines("a", 21)})
		screen := startOnTerminal(t, small, azeroEnv(state, "NO_COLOR=1"), os.Args[0], "gate", "--quiet")
		if code := screen.exit(t); code != 0 {
			t.Fatalf("exit %d\n%s", code, screen.Text())
		}
		if text := strings.TrimSpace(strings.ReplaceAll(screen.Text(), "\x1b[K", "")); strings.Contains(text, "a.py") || strings.Contains(text, "approve") {
			t.Errorf("quiet printed %q", text)
		}
		if recs := gateDecisions(t, state); len(recs) != 1 || recs[0]["decision"] != "NOT_REQUIRED" || recs[0]["quiet"] != true {
			t.Errorf("audit = %v", recs)
		}
	})
	t.Run("flagged on a terminal", func(t *testing.T) {
		t.Parallel()
		state := t.TempDir()
		screen := startOnTerminal(t, replacedRepo(t), azeroEnv(state, "NO_COLOR=1"), os.Args[0], "gate", "--quiet")
		screen.WaitFor(t, "Type 'approve' to proceed", 1)
		text := screen.Text()
		if !strings.Contains(text, "WARNING: REPLACED: src/state.py") || strings.Contains(text, "small.py") || strings.Contains(text, "files changed") {
			t.Errorf("quiet must show the flagged file only:\n%s", text)
		}
		screen.Type(t, "reject")
		if code := screen.exit(t); code != ExitRejected {
			t.Fatalf("exit %d", code)
		}
	})
	t.Run("the hook", func(t *testing.T) {
		t.Parallel()
		repo := testenv.NewRepo(t, map[string]string{"a.py": "a\n"})
		if res := runAzeroIn(t, t.TempDir(), repo, nil, "gate", "--install-hook", "--quiet"); res.code != 0 {
			t.Fatalf("exit %d\n%s", res.code, res.stderr)
		}
		hook, err := os.ReadFile(filepath.Join(repo, ".git", "hooks", "pre-commit"))
		if err != nil || !strings.Contains(string(hook), "gate --staged --quiet") {
			t.Errorf("hook = %s (%v)", hook, err)
		}
	})
}

// TestGateAsksThroughTheControllingTerminal: a hook framework (pre-commit,
// lefthook, husky) runs the gate with its standard streams on pipes from a
// shell on a terminal. azero asks through that terminal (/dev/tty), as
// git's prompts do: the report and the question on the terminal, the
// decision's line on stderr, only a typed approve passing, input typed
// before the question flushed.
func TestGateAsksThroughTheControllingTerminal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		ahead    []string // typed before azero starts
		answer   string
		code     int
		decision string
		stderr   string
	}{
		{"approve", nil, "approve", ExitOK, "APPROVED", "Diff review: APPROVED by the human at the terminal (asked through /dev/tty)."},
		{"reject", nil, "reject", ExitRejected, "REJECTED", "changes rejected at the diff review"},
		{"approve typed ahead is flushed", []string{"approve", "approve"}, "reject", ExitRejected, "REJECTED", "changes rejected"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			state := t.TempDir()
			s := newSession(t)
			for _, line := range tt.ahead {
				s.Type(t, line)
			}
			if len(tt.ahead) > 0 {
				s.WaitFor(t, tt.ahead[len(tt.ahead)-1]+"\r\n", 1)
			}
			s.runBehindPipes(t, replacedRepo(t), azeroEnv(state, "NO_COLOR=1"), os.Args[0], "gate", "--json")
			s.WaitFor(t, "Type 'approve' to proceed", 1)
			s.Type(t, tt.answer)
			if code := s.exit(t); code != tt.code {
				t.Fatalf("exit %d, want %d\nterminal:\n%s\nstderr:\n%s", code, tt.code, s.Text(), s.stderr.String())
			}
			text := s.Text()
			if w, q := strings.Index(text, "WARNING: REPLACED: src/state.py"), strings.Index(text, "Type 'approve'"); w < 0 || w > q {
				t.Errorf("the report is not on the terminal before the question:\n%s", text)
			}
			if strings.Contains(text, `"decision"`) {
				t.Errorf("the JSON document went to the terminal, not to stdout:\n%s", text)
			}
			stderr := s.stderr.String()
			if !strings.Contains(stderr, tt.stderr) || strings.Contains(stderr, "WARNING") || strings.Contains(stderr, "Type 'approve'") {
				t.Errorf("stderr = %q: want the outcome %q and neither the report nor the question", stderr, tt.stderr)
			}
			if n := strings.Count(strings.TrimSpace(stderr), "\n"); n != 0 {
				t.Errorf("stderr has %d lines, want the one-line outcome: %q", n+1, stderr)
			}
			if doc := decode(t, s.stdout.String()); doc.Decision != tt.decision {
				t.Errorf("decision %s, want %s", doc.Decision, tt.decision)
			}
			if recs := gateDecisions(t, state); len(recs) != 1 || recs[0]["decision"] != tt.decision || recs[0]["channel"] != "terminal" {
				t.Errorf("audit = %v", recs)
			}
		})
	}
	t.Run("no controlling terminal", func(t *testing.T) {
		t.Parallel()
		state, repo := t.TempDir(), replacedRepo(t)
		testenv.Git(t, repo, "add", "src/state.py")
		// runAzeroIn starts azero in a session of its own: no terminal.
		res := runAzeroIn(t, state, repo, nil, "gate", "--staged", "--json")
		if res.code != ExitNeedsHuman {
			t.Fatalf("exit %d, want 3\n%s", res.code, res.stderr)
		}
		for _, want := range []string{"no controlling terminal", "run git commit itself from a terminal", "not remembered"} {
			if !strings.Contains(res.stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, res.stderr)
			}
		}
		if doc := decode(t, res.stdout); doc.Decision != "ABORTED_NON_INTERACTIVE" {
			t.Errorf("decision %s", doc.Decision)
		}
	})
	t.Run("a terminal a full-screen program holds", func(t *testing.T) {
		t.Parallel()
		// An agent's interface (Claude Code's, in raw mode) ran the
		// command: the keys typed there are its own, not answers.
		state := t.TempDir()
		s := newSession(t)
		s.MakeRaw(t)
		s.runBehindPipes(t, replacedRepo(t), azeroEnv(state, "NO_COLOR=1"), os.Args[0], "gate", "--json")
		if code := s.exit(t); code != ExitNeedsHuman {
			t.Fatalf("exit %d, want 3\n%s\n%s", code, s.Text(), s.stderr.String())
		}
		if strings.Contains(s.Text(), "WARNING") {
			t.Errorf("the report was written on a terminal nobody can answer on:\n%s", s.Text())
		}
		if !strings.Contains(s.stderr.String(), "raw mode") {
			t.Errorf("stderr does not say why nobody was asked:\n%s", s.stderr.String())
		}
		if doc := decode(t, s.stdout.String()); doc.Decision != "ABORTED_NON_INTERACTIVE" {
			t.Errorf("decision %s", doc.Decision)
		}
	})
	t.Run("hang-up is no consent", func(t *testing.T) {
		t.Parallel()
		state := t.TempDir()
		s := newSession(t).runBehindPipes(t, replacedRepo(t), azeroEnv(state, "NO_COLOR=1"), os.Args[0], "gate")
		s.WaitFor(t, "Type 'approve' to proceed", 1)
		s.Type(t, "\x04") // Ctrl-D: the end of input
		if code := s.exit(t); code != ExitNeedsHuman {
			t.Fatalf("exit %d, want 3\n%s\n%s", code, s.Text(), s.stderr.String())
		}
		if recs := gateDecisions(t, state); len(recs) != 1 || recs[0]["decision"] != "ABORTED_NON_INTERACTIVE" {
			t.Errorf("audit = %v", recs)
		}
	})
}
