package cli

// Tests of `azero gate`: the flags (newGateCommand with a runF), and the
// real command end to end. End-to-end tests start this test binary as
// azero (main_test.go's TestMain runs cli.Main when AZERO_TEST_MAIN=1),
// with stdin from /dev/null or attached to a real pseudo-terminal.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/iostreams"
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
			io, _, _, _ := iostreams.Test()
			f := &Factory{IO: io, Getenv: func(string) string { return "" }, LookPath: exec.LookPath, WorkDir: "/work", Now: time.Now}
			var got *GateOptions
			cmd := newGateCommand(f, func(o *GateOptions) error { got = o; return nil })
			cmd.SetArgs(tt.args)
			cmd.SetOut(io.Out)
			cmd.SetErr(io.ErrOut)
			err := cmd.Execute()
			if tt.usage {
				if code := ExitCode(err); code != ExitUsage || got != nil {
					t.Fatalf("err = %v (exit %d), ran = %v; want a usage error that runs nothing", err, code, got != nil)
				}
				return
			}
			if err != nil || got == nil {
				t.Fatalf("err = %v", err)
			}
			if got.Repo != tt.want.Repo || got.Staged != tt.want.Staged || got.JSON != tt.want.JSON ||
				got.InstallHook != tt.want.InstallHook || got.Force != tt.want.Force {
				t.Errorf("options = %+v, want %+v", got, tt.want)
			}
			if got.IO != io || got.Prompter == nil || got.WorkDir != "/work" {
				t.Errorf("dependencies not bound: %+v", got)
			}
		})
	}
}

// gateEnv is the environment of an azero (and git) started by a test.
func gateEnv(stateDir string, extra ...string) []string {
	env := testenv.GitEnv(os.Environ())
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "NO_COLOR=") && !strings.HasPrefix(kv, "AZERO_") {
			out = append(out, kv)
		}
	}
	out = append(out, "AZERO_TEST_MAIN=1", "AZERO_STATE_DIR="+stateDir, "XDG_CONFIG_HOME="+filepath.Join(stateDir, "config"), "TERM=xterm")
	return append(out, extra...)
}

type gateResult struct {
	code           int
	stdout, stderr string
	elapsed        time.Duration
}

// gateRunPiped runs azero in dir with stdin from /dev/null and stdout,
// stderr to pipes: nobody can be asked.
func gateRunPiped(t *testing.T, stateDir, dir string, env []string, args ...string) gateResult {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	cmd.Env = gateEnv(stateDir, env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	res := gateResult{stdout: out.String(), stderr: errOut.String(), elapsed: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("azero %v: %v", args, err)
	}
	return res
}

// gateScreen is the far end of a pseudo-terminal a process runs on.
type gateScreen struct {
	master *os.File
	mu     sync.Mutex
	buf    bytes.Buffer
	closed chan struct{}
}

func (s *gateScreen) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

func (s *gateScreen) waitFor(t *testing.T, text string, count int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Count(s.text(), text) >= count {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("terminal never showed %q %d times; screen:\n%s", text, count, s.text())
}

func (s *gateScreen) typeLine(t *testing.T, line string) {
	t.Helper()
	if _, err := s.master.Write([]byte(line + "\r")); err != nil {
		t.Fatal(err)
	}
}

// startOnTerminal starts name with args on a new pseudo-terminal (stdin,
// stderr and the controlling terminal; stdout goes to the returned buffer,
// as when --json output is piped).
func startOnTerminal(t *testing.T, dir string, env []string, name string, args ...string) (*gateScreen, *exec.Cmd, *bytes.Buffer) {
	t.Helper()
	master, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { master.Close() })
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = env
	var stdout bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, &stdout, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	s := &gateScreen{master: master, closed: make(chan struct{})}
	go func() {
		defer close(s.closed)
		b := make([]byte, 4096)
		for {
			n, err := master.Read(b)
			s.mu.Lock()
			s.buf.Write(b[:n])
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return s, cmd, &stdout
}

func exitCodeOf(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the process did not exit")
	}
	return -1
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
	res := gateRunPiped(t, state, repo, nil, "gate", "--json")
	if res.code != ExitNeedsHuman {
		t.Fatalf("exit %d, want 3; stderr:\n%s", res.code, res.stderr)
	}
	t.Logf("exit 3 after %v", res.elapsed)
	if res.elapsed > 10*time.Second {
		t.Errorf("took %v: it must not wait for input", res.elapsed)
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
		{"no auto flag", small, nil, []string{"gate", "--auto"}, ExitUsage, "", "unknown flag: --auto"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := gateRunPiped(t, t.TempDir(), tt.dir, tt.env, tt.args...)
			if res.code != tt.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", res.code, tt.code, res.stderr)
			}
			if tt.decision == "" {
				if res.stdout != "" {
					t.Errorf("stdout = %q, want nothing", res.stdout)
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
	res := gateRunPiped(t, t.TempDir(), t.TempDir(), nil, "gate", "--help")
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
			screen, cmd, stdout := startOnTerminal(t, repo, gateEnv(state, append(tt.env, "NO_COLOR=1")...), os.Args[0], "gate", "--json")
			screen.waitFor(t, "Type 'approve' to proceed", 1)
			for i, a := range tt.answers {
				if i > 0 {
					screen.waitFor(t, "in full", i)
				}
				screen.typeLine(t, a)
			}
			if code := exitCodeOf(t, cmd); code != tt.code {
				t.Fatalf("exit %d, want %d; screen:\n%s", code, tt.code, screen.text())
			}
			<-screen.closed
			text := screen.text()
			if n := strings.Count(text, "in full"); n != tt.reasks {
				t.Errorf("asked again %d times, want %d", n, tt.reasks)
			}
			// The report came before the question.
			if w, q := strings.Index(text, "WARNING: REPLACED: src/state.py"), strings.Index(text, "Type 'approve'"); w < 0 || w > q {
				t.Errorf("report not shown before the question:\n%s", text)
			}
			doc := decode(t, stdout.String())
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
			screen, cmd, _ := startOnTerminal(t, replacedRepo(t), gateEnv(t.TempDir(), env...), os.Args[0], "gate")
			screen.waitFor(t, "to proceed or", 1)
			screen.typeLine(t, "reject")
			exitCodeOf(t, cmd)
			<-screen.closed
			// SGR sequences (colour, bold); the progress line's erase
			// sequence is not colour.
			coloured := sgr.MatchString(screen.text())
			if coloured == noColor {
				t.Errorf("escape sequences present = %v with NO_COLOR=%v:\n%q", coloured, noColor, screen.text())
			}
		})
	}
}

func TestGateInstallHook(t *testing.T) {
	t.Parallel()
	repo := testenv.NewRepo(t, map[string]string{"state.py": numberedLines("field", 270), "notes.md": "n\n"})
	state := t.TempDir()
	hook := filepath.Join(repo, ".git", "hooks", "pre-commit")

	res := gateRunPiped(t, state, repo, nil, "gate", "--install-hook")
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
	if res := gateRunPiped(t, state, repo, nil, "gate", "--install-hook"); res.code != 0 || !strings.Contains(res.stderr, "already") {
		t.Errorf("second install: exit %d, %s", res.code, res.stderr)
	}

	// A foreign hook is kept unless --force.
	parent := t.TempDir()
	other := filepath.Join(parent, "other")
	testenv.Git(t, parent, "init", "-q", "other")
	foreign := filepath.Join(other, ".git", "hooks", "pre-commit")
	os.WriteFile(foreign, []byte("#!/bin/sh\nexit 0\n"), 0o644)
	if res := gateRunPiped(t, state, other, nil, "gate", "--install-hook"); res.code != ExitError || !strings.Contains(res.stderr, "--force") {
		t.Errorf("foreign hook: exit %d, %s", res.code, res.stderr)
	}
	if b, _ := os.ReadFile(foreign); string(b) != "#!/bin/sh\nexit 0\n" {
		t.Errorf("foreign hook changed without --force: %q", b)
	}
	if res := gateRunPiped(t, state, other, nil, "gate", "--install-hook", "--force"); res.code != 0 {
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
	commit := exec.Command("git", "commit", "-m", "replace state")
	commit.Dir = repo
	commit.Env = gateEnv(state)
	commit.Stdin = nil
	out, err := commit.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "need a human review") {
		t.Fatalf("commit of a replaced file without a terminal: %v\n%s", err, out)
	}
	if n := strings.Count(testenv.Git(t, repo, "log", "--format=%H"), "\n"); n != 1 {
		t.Fatalf("%d commits, want the commit refused", n)
	}

	// ...and goes through when a human types approve on the terminal.
	screen, cmd, _ := startOnTerminal(t, repo, gateEnv(state, "NO_COLOR=1"), "git", "commit", "-m", "replace state")
	screen.waitFor(t, "Type 'approve' to proceed", 1)
	if !strings.Contains(screen.text(), "WARNING: REPLACED: state.py") {
		t.Errorf("hook did not show the report:\n%s", screen.text())
	}
	screen.typeLine(t, "approve")
	if code := exitCodeOf(t, cmd); code != 0 {
		t.Fatalf("git commit exit %d:\n%s", code, screen.text())
	}
	if n := strings.Count(testenv.Git(t, repo, "log", "--format=%H"), "\n"); n != 2 {
		t.Fatalf("%d commits after approve, want 2", n)
	}

	// An unflagged commit passes without a terminal.
	testenv.WriteFiles(t, repo, map[string]string{"notes.md": "n\nmore\n"})
	testenv.Git(t, repo, "add", "notes.md")
	commit = exec.Command("git", "commit", "-m", "notes")
	commit.Dir = repo
	commit.Env = gateEnv(state)
	if out, err := commit.CombinedOutput(); err != nil {
		t.Fatalf("unflagged commit: %v\n%s", err, out)
	}
}
