package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/agenthook/hooktest"
	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/shell"
)

// TestHookProcessRecordedPayloads runs every recorded Claude Code payload
// through the azero process, as Claude Code runs the hook: the payload on
// stdin, the decision on stdout, exit 0 (2 for another hook event).
func TestHookProcessRecordedPayloads(t *testing.T) {
	t.Parallel()
	for _, c := range hooktest.Cases() {
		t.Run(strings.TrimSuffix(c.Fixture, filepath.Ext(c.Fixture)), func(t *testing.T) {
			t.Parallel()
			repo := hooktest.NewRepo(t)
			if c.Setup != nil {
				c.Setup(t, repo)
			}
			state := t.TempDir()
			payload := string(hooktest.Payload(t, c.Fixture, repo))
			res := runAzeroInput(t, state, repo, nil, &payload, "hook", "claude-code")
			if c.Decision == hooktest.ExitBlock {
				if res.code != ExitUsage || res.stdout != "" || !strings.Contains(res.stderr, "answers PreToolUse only") {
					t.Fatalf("exit %d, stdout %q, stderr %q: want exit 2 with the reason on stderr", res.code, res.stdout, res.stderr)
				}
				return
			}
			if res.code != ExitOK {
				t.Fatalf("exit %d (stderr %s): the hook must always exit 0 with its decision", res.code, res.stderr)
			}
			hooktest.Check(t, c, res.stdout)
			if c.Decision == "" {
				return
			}
			recs, err := audit.Read(filepath.Join(state, audit.FileName))
			if err != nil {
				t.Fatal(err)
			}
			parsed := c.Fixture != "malformed.txt"
			if len(recs) != 1 || recs[0]["event"] != "agent_hook_decision" || recs[0]["decision"] != c.Decision || parsed && recs[0]["tool_use_id"] == "" {
				t.Errorf("audit records %v", recs)
			}
		})
	}
}

// TestHookInProcess answers through cli.Run with the payload on stdin.
func TestHookInProcess(t *testing.T) {
	t.Parallel()
	repo := hooktest.NewRepo(t)
	hooktest.StageGutBig(t, repo)
	io, in, out, errOut := iostreams.Test()
	in.Write(hooktest.Payload(t, "bash_commit_flagged.json", repo))
	env := map[string]string{"AZERO_STATE_DIR": t.TempDir()}
	f := &Factory{IO: io, Getenv: func(k string) string { return env[k] }, Environ: func() []string { return nil },
		LookPath: exec.LookPath, WorkDir: repo, Now: time.Now, Version: "test"}
	if code := Run(t.Context(), f, []string{"hook", "claude-code"}); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	hooktest.Check(t, hooktest.Case{Fixture: "bash_commit_flagged.json", Decision: "ask", Reason: []string{"big.py (200 -> 10 lines"}}, out.String())
}

// TestHookFailsClosedWithoutAuditLog: a decision nobody can record is a
// deny, still printed as JSON with exit 0.
func TestHookFailsClosedWithoutAuditLog(t *testing.T) {
	t.Parallel()
	repo := hooktest.NewRepo(t)
	blocker := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	payload := string(hooktest.Payload(t, "write_small_file.json", repo))
	res := runAzeroInput(t, filepath.Join(blocker, "state"), repo, nil, &payload, "hook", "claude-code")
	if res.code != ExitOK {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	hooktest.Check(t, hooktest.Case{Fixture: "write_small_file.json", Decision: "deny", Reason: []string{"audit log"}}, res.stdout)
}

// TestHookPanicIsADenial: a crash outside the rules (here opening the
// audit log) still prints a deny and returns nil, so the process exits 0
// with JSON rather than 2 with a stack trace.
func TestHookPanicIsADenial(t *testing.T) {
	t.Parallel()
	io, in, out, _ := iostreams.Test()
	in.WriteString(`{"tool_name":"Write","tool_input":{"file_path":"/x","content":"x"}}`)
	opts := &HookOptions{IO: io, Getenv: func(string) string { return "" },
		Audit: func() (*audit.Logger, error) { panic("log exploded") }}
	if err := hookRun(t.Context(), opts); err != nil {
		t.Fatalf("hookRun returned %v", err)
	}
	hooktest.Check(t, hooktest.Case{Fixture: "panic", Decision: "deny", Reason: []string{"internal error: log exploded"}}, out.String())
}

func TestHookInstall(t *testing.T) {
	t.Parallel()
	t.Run("repository", func(t *testing.T) {
		t.Parallel()
		repo := hooktest.NewRepo(t)
		settings := filepath.Join(repo, ".claude", "settings.json")
		if err := os.WriteFile(settings, []byte(`{"model": "opus", "hooks": {"PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "prettier --write"}]}]}}`), 0o644); err != nil {
			t.Fatal(err)
		}
		state := t.TempDir()
		res := runAzeroIn(t, state, filepath.Join(repo, "src"), nil, "hook", "claude-code", "--install")
		if res.code != ExitOK || !strings.Contains(res.stderr, "Installed azero's PreToolUse hook in "+settings) {
			t.Fatalf("exit %d: %s", res.code, res.stderr)
		}
		got := readFile(t, settings)
		exe, _ := filepath.EvalSymlinks(os.Args[0])
		for _, want := range []string{`"model": "opus"`, "prettier --write", `"PreToolUse"`, shell.QuotePOSIX(exe) + " hook claude-code", `"onFailure": "block"`, `"matcher": "Write|Edit|MultiEdit|NotebookEdit|Bash"`} {
			if !strings.Contains(got, want) {
				t.Errorf("settings lack %s:\n%s", want, got)
			}
		}
		recs, err := audit.Read(filepath.Join(state, audit.FileName))
		if err != nil || len(recs) != 1 || recs[0]["event"] != "file_write" || recs[0]["path"] != ".claude/settings.json" {
			t.Errorf("the install was not written through safewrite: %v %v", recs, err)
		}
		again := runAzeroIn(t, state, repo, nil, "hook", "claude-code", "--install")
		if again.code != ExitOK || !strings.Contains(again.stderr, "nothing changed") || readFile(t, settings) != got {
			t.Errorf("second install: exit %d %s", again.code, again.stderr)
		}
	})
	t.Run("settings of more than 100 lines, no terminal", func(t *testing.T) {
		t.Parallel()
		// A long permission list is common; the merge keeps all of it, so
		// it needs no approval (which nobody could give here).
		repo := hooktest.NewRepo(t)
		settings := filepath.Join(repo, ".claude", "settings.json")
		var allow []string
		for i := range 150 {
			allow = append(allow, fmt.Sprintf("%q", fmt.Sprintf("Bash(make target%d)", i)))
		}
		before := "{\n  \"permissions\": {\n    \"allow\": [\n      " + strings.Join(allow, ",\n      ") + "\n    ]\n  },\n  \"model\": \"opus\"\n}\n"
		if err := os.WriteFile(settings, []byte(before), 0o644); err != nil {
			t.Fatal(err)
		}
		state := t.TempDir()
		res := runAzeroIn(t, state, repo, nil, "hook", "claude-code", "--install")
		if res.code != ExitOK {
			t.Fatalf("exit %d: %s", res.code, res.stderr)
		}
		var doc struct {
			Permissions struct{ Allow []string } `json:"permissions"`
			Model       string                   `json:"model"`
			Hooks       map[string]any           `json:"hooks"`
		}
		if err := json.Unmarshal([]byte(readFile(t, settings)), &doc); err != nil {
			t.Fatal(err)
		}
		if len(doc.Permissions.Allow) != 150 || doc.Permissions.Allow[149] != "Bash(make target149)" || doc.Model != "opus" || doc.Hooks["PreToolUse"] == nil {
			t.Errorf("settings after install: %+v", doc)
		}
		recs, err := audit.Read(filepath.Join(state, audit.FileName))
		if err != nil || len(recs) != 1 || recs[0]["event"] != "file_write" {
			t.Errorf("audit %v %v", recs, err)
		}
	})
	t.Run("user", func(t *testing.T) {
		t.Parallel()
		home := t.TempDir()
		res := runAzeroIn(t, t.TempDir(), t.TempDir(), []string{"HOME=" + home}, "hook", "claude-code", "--install", "--user")
		if res.code != ExitOK {
			t.Fatalf("exit %d: %s", res.code, res.stderr)
		}
		var doc map[string]any
		if err := json.Unmarshal([]byte(readFile(t, filepath.Join(home, ".claude", "settings.json"))), &doc); err != nil {
			t.Fatal(err)
		}
		if _, ok := doc["hooks"].(map[string]any)["PreToolUse"]; !ok {
			t.Errorf("user settings %v", doc)
		}
	})
	t.Run("claude config dir", func(t *testing.T) {
		t.Parallel()
		dir := filepath.Join(t.TempDir(), "claude-config")
		res := runAzeroIn(t, t.TempDir(), t.TempDir(), []string{"HOME=/nonexistent", "CLAUDE_CONFIG_DIR=" + dir}, "hook", "claude-code", "--install", "--user")
		if res.code != ExitOK || !strings.Contains(readFile(t, filepath.Join(dir, "settings.json")), "hook claude-code") {
			t.Fatalf("exit %d: %s", res.code, res.stderr)
		}
	})
	t.Run("outside a repository", func(t *testing.T) {
		t.Parallel()
		res := runAzeroIn(t, t.TempDir(), t.TempDir(), nil, "hook", "claude-code", "--install")
		if res.code != ExitError || !strings.Contains(res.stderr, "--user") {
			t.Fatalf("exit %d: %s", res.code, res.stderr)
		}
	})
	t.Run("broken settings are left alone", func(t *testing.T) {
		t.Parallel()
		repo := hooktest.NewRepo(t)
		settings := filepath.Join(repo, ".claude", "settings.json")
		if err := os.WriteFile(settings, []byte(`{"hooks": [`), 0o644); err != nil {
			t.Fatal(err)
		}
		res := runAzeroIn(t, t.TempDir(), repo, nil, "hook", "claude-code", "--install")
		if res.code != ExitError || readFile(t, settings) != `{"hooks": [` {
			t.Fatalf("exit %d: %s", res.code, res.stderr)
		}
	})
}

func TestHookCommandFlags(t *testing.T) {
	t.Parallel()
	opts, _, err := parseFlags(NewCmdHookClaudeCode, []string{"--install", "--user"})
	if err != nil || opts == nil || !opts.Install || !opts.User {
		t.Fatalf("opts %+v err %v", opts, err)
	}
	opts, _, err = parseFlags(NewCmdHookClaudeCode, []string{"--user"})
	wantUsageError(t, err, opts != nil)
	opts, _, err = parseFlags(NewCmdHookClaudeCode, []string{"extra"})
	wantUsageError(t, err, opts != nil)
}

func TestHookHelpListsExitCodes(t *testing.T) {
	t.Parallel()
	res := runAzeroIn(t, t.TempDir(), t.TempDir(), nil, "hook", "claude-code", "--help")
	if res.code != ExitOK || !strings.Contains(res.stdout, "Exit codes:") || !strings.Contains(res.stdout, "PreToolUse") {
		t.Fatalf("exit %d:\n%s", res.code, res.stdout)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
