package agenthook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/agenthook"
	"github.com/azero-dev/azero/internal/agenthook/hooktest"
	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/shellcmd"
	"github.com/azero-dev/azero/internal/testenv"
)

// TestMain isolates every git the tests and the hook start from the
// user's and the system's configuration.
func TestMain(m *testing.M) {
	for _, kv := range testenv.GitEnv(nil) {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	os.Exit(m.Run())
}

// run answers one payload in-process and returns stdout, the error and
// the audit log.
func run(t *testing.T, payload []byte, workDir string) (string, error, []map[string]any) {
	t.Helper()
	var logBuf bytes.Buffer
	h := &agenthook.Hook{Audit: audit.New(&logBuf, nil), WorkDir: workDir, Home: t.TempDir()}
	var out bytes.Buffer
	err := h.Run(t.Context(), bytes.NewReader(payload), &out)
	var events []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(logBuf.String()), "\n") {
		if line == "" {
			continue
		}
		var ev map[string]any
		if jerr := json.Unmarshal([]byte(line), &ev); jerr != nil {
			t.Fatalf("audit line is not JSON: %v: %s", jerr, line)
		}
		events = append(events, ev)
	}
	return out.String(), err, events
}

func TestRecordedPayloads(t *testing.T) {
	t.Parallel()
	covered := map[string]bool{}
	for _, c := range hooktest.Cases() {
		covered[c.Fixture] = true
		t.Run(strings.TrimSuffix(c.Fixture, filepath.Ext(c.Fixture)), func(t *testing.T) {
			t.Parallel()
			repo := hooktest.NewRepo(t)
			if c.Setup != nil {
				c.Setup(t, repo)
			}
			before := testenv.Git(t, repo, "status", "--porcelain", "--untracked-files=all")
			headBefore := testenv.Git(t, repo, "rev-parse", "HEAD")
			stdout, err, events := run(t, hooktest.Payload(t, c.Fixture, repo), repo)
			if c.Decision == hooktest.ExitBlock {
				var ev *agenthook.EventError
				if !errors.As(err, &ev) || stdout != "" {
					t.Fatalf("err = %v, stdout %q: want an *EventError and nothing printed", err, stdout)
				}
				return
			}
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			hooktest.Check(t, c, stdout)
			// The hook judges; it never changes the repository.
			if after := testenv.Git(t, repo, "status", "--porcelain", "--untracked-files=all"); after != before {
				t.Errorf("the hook changed the repository:\nbefore %s\nafter %s", before, after)
			}
			if h := testenv.Git(t, repo, "rev-parse", "HEAD"); h != headBefore {
				t.Errorf("HEAD moved from %s to %s", headBefore, h)
			}
			// Every decision is audited; no opinion is not.
			if c.Decision == "" {
				if len(events) != 0 {
					t.Errorf("no opinion was audited: %v", events)
				}
				return
			}
			if len(events) != 1 || events[0]["event"] != agenthook.EventDecision || events[0]["decision"] != c.Decision {
				t.Errorf("audit events = %v, want one %s with decision %s", events, agenthook.EventDecision, c.Decision)
			}
		})
	}
	for _, f := range hooktest.Fixtures(t) {
		if !covered[f] {
			t.Errorf("fixture %s has no expected decision in hooktest.Cases", f)
		}
	}
}

func TestOutsideFileIsNeverWritten(t *testing.T) {
	t.Parallel()
	repo := hooktest.NewRepo(t)
	stdout, err, _ := run(t, hooktest.Payload(t, "write_through_symlink.json", repo), repo)
	if err != nil || !strings.Contains(stdout, `"deny"`) {
		t.Fatalf("stdout %s, err %v", stdout, err)
	}
	target, err := filepath.EvalSymlinks(filepath.Join(repo, "link_out"))
	if err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(target); len(entries) != 0 {
		t.Errorf("something appeared outside the repository: %v", entries)
	}
}

// TestFailsClosed feeds the hook what it cannot judge: each must be a deny
// printed as JSON, never an error return (which would exit non-zero and
// let Claude Code run the tool).
func TestFailsClosed(t *testing.T) {
	t.Parallel()
	repo := hooktest.NewRepo(t)
	cases := []struct {
		name    string
		payload string
		reason  string
	}{
		{"empty stdin", ``, "not a JSON object"},
		{"array", `[1,2]`, "not a JSON object"},
		{"trailing data", `{"tool_name":"Write","tool_input":{}} {}`, "unexpected data"},
		{"no tool name", `{"hook_event_name":"PreToolUse"}`, "no tool_name"},
		{"tool input not an object", `{"tool_name":"Write","cwd":"` + repo + `","tool_input":"x"}`, "malformed"},
		{"bash without command", `{"tool_name":"Bash","cwd":"` + repo + `","tool_input":{}}`, "no command"},
		{"edit without old_string", `{"tool_name":"Edit","cwd":"` + repo + `","tool_input":{"file_path":"` + repo + `/big.py","new_string":"x"}}`, "lacks old_string"},
		{"multiedit without edits", `{"tool_name":"MultiEdit","cwd":"` + repo + `","tool_input":{"file_path":"` + repo + `/big.py","edits":[]}}`, "no edits"},
		{"relative cwd", `{"tool_name":"Write","cwd":"rel","tool_input":{"file_path":"a","content":"x"}}`, "not an absolute directory"},
		{"missing cwd directory", `{"tool_name":"Write","cwd":"/nonexistent/azero/dir","tool_input":{"file_path":"/nonexistent/azero/dir/a","content":"x"}}`, "could not check"},
		{"commit in a directory that is not a repository", `{"tool_name":"Bash","cwd":"` + repo + `","tool_input":{"command":"cd /nonexistent-azero && git commit -m x"}}`, "cannot analyse"},
		{"directory as file", `{"tool_name":"Write","cwd":"` + repo + `","tool_input":{"file_path":"` + repo + `/src","content":"x"}}`, "a directory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			stdout, err, events := run(t, []byte(tc.payload), "")
			if err != nil {
				t.Fatalf("Run returned %v; it must print a deny instead", err)
			}
			var a hooktest.Answer
			if jerr := json.Unmarshal([]byte(stdout), &a); jerr != nil {
				t.Fatalf("stdout is not JSON: %q", stdout)
			}
			if a.HookSpecificOutput.PermissionDecision != "deny" || !strings.Contains(a.HookSpecificOutput.PermissionDecisionReason, tc.reason) {
				t.Errorf("answer %+v, want deny mentioning %q", a.HookSpecificOutput, tc.reason)
			}
			if len(events) != 1 || events[0]["decision"] != "deny" {
				t.Errorf("audit = %v, want the deny recorded", events)
			}
		})
	}
}

func TestRelativeFilePathIsFromCwd(t *testing.T) {
	t.Parallel()
	repo := hooktest.NewRepo(t)
	payload := `{"hook_event_name":"PreToolUse","tool_name":"Write","cwd":"` + repo + `/src","tool_input":{"file_path":"state.py","content":"x\n"}}`
	stdout, err, _ := run(t, []byte(payload), "")
	if err != nil || !strings.Contains(stdout, `"ask"`) || !strings.Contains(stdout, "src/state.py (270 lines)") {
		t.Fatalf("stdout %s, err %v: want ask about src/state.py", stdout, err)
	}
}

// TestOutsideAnyRepositoryThereIsNoRoot: the project root is the git work
// tree holding cwd; with none (or with cwd inside .git) no write can be
// confined, so every file tool is denied, while a Bash command that
// commits nothing stays Claude Code's to decide.
func TestOutsideAnyRepositoryThereIsNoRoot(t *testing.T) {
	t.Parallel()
	repo := hooktest.NewRepo(t)
	for _, cwd := range []string{t.TempDir(), filepath.Join(repo, ".git"), filepath.Join(repo, ".git", "hooks")} {
		calls := []struct {
			tool  string
			input map[string]any
			want  string
		}{
			{"Write", map[string]any{"file_path": cwd + "/a.txt", "content": "x\n"}, "deny"},
			{"Write", map[string]any{"file_path": "pre-commit", "content": "exit 0\n"}, "deny"},
			{"Edit", map[string]any{"file_path": cwd + "/a.txt", "old_string": "", "new_string": "x\n"}, "deny"},
			{"MultiEdit", map[string]any{"file_path": cwd + "/a.txt", "edits": []map[string]any{{"old_string": "", "new_string": "x\n"}}}, "deny"},
			{"NotebookEdit", map[string]any{"notebook_path": cwd + "/a.ipynb", "new_source": "x"}, "deny"},
			{"Bash", map[string]any{"command": "ls -la"}, ""},
			{"Bash", map[string]any{"command": "git commit -m x"}, "deny"},
		}
		for _, c := range calls {
			in, _ := json.Marshal(map[string]any{"hook_event_name": "PreToolUse", "tool_name": c.tool, "cwd": cwd, "tool_input": c.input})
			stdout, err, _ := run(t, in, "")
			if err != nil {
				t.Fatal(err)
			}
			var reason []string
			if c.tool != "Bash" {
				reason = []string{"not inside a git work tree"}
			}
			hooktest.Check(t, hooktest.Case{Fixture: c.tool + " in " + cwd, Decision: c.want, Reason: reason}, stdout)
		}
		if _, err := os.Stat(filepath.Join(cwd, "a.txt")); err == nil {
			t.Errorf("the hook wrote %s", filepath.Join(cwd, "a.txt"))
		}
	}
}

func TestUnchangedWriteOfLargeFileIsAllowed(t *testing.T) {
	t.Parallel()
	repo := hooktest.NewRepo(t)
	content, err := os.ReadFile(filepath.Join(repo, "big.py"))
	if err != nil {
		t.Fatal(err)
	}
	in, _ := json.Marshal(map[string]any{"tool_name": "Write", "cwd": repo, "tool_input": map[string]string{"file_path": repo + "/big.py", "content": string(content)}})
	if stdout, _, _ := run(t, in, ""); !strings.Contains(stdout, `"allow"`) || !strings.Contains(stdout, "already holds") {
		t.Errorf("rewriting identical content: %s", stdout)
	}
}

// TestCommitDecisions covers commit forms beyond the recorded payloads.
func TestCommitDecisions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		setup    func(testing.TB, string)
		command  string
		decision string
		reason   string
	}{
		{"nothing flagged staged, gut unstaged, plain commit", hooktest.GutStateUnstaged, "git commit -m x", "", ""},
		{"same with -a", hooktest.GutStateUnstaged, "git commit -a -m x", "ask", "src/state.py"},
		{"hooks path off", hooktest.StageSmallChange, "git -c core.hooksPath=/dev/null commit -m x", "ask", "core.hooksPath"},
		{"git dir elsewhere", hooktest.StageSmallChange, "GIT_DIR=/tmp/x/.git git commit -m x", "ask", "GIT_DIR"},
		{"unknown directory", hooktest.StageSmallChange, `cd "$SOMEWHERE" && git commit -m x`, "ask", "which repository"},
		{"computed flags", hooktest.StageSmallChange, `git commit $FLAGS`, "ask", "computed when the command runs"},
		{"alias from the repository", nil, "git ci -m x", "ask", "big.py"},
		{"first amend base is the empty tree", nil, "git commit --amend -m x", "", ""},
		{"two commits, second flagged", hooktest.StageSmallChange, "git commit -m a && rm big.py && git commit -am b", "ask", "runs `rm big.py` before this commit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			repo := hooktest.NewRepo(t)
			if tc.setup != nil {
				tc.setup(t, repo)
			}
			if tc.name == "alias from the repository" {
				testenv.Git(t, repo, "config", "alias.ci", "commit -a")
				hooktest.DeleteBigUnstaged(t, repo)
			}
			in, _ := json.Marshal(map[string]any{"hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": repo, "tool_input": map[string]string{"command": tc.command}})
			stdout, err, _ := run(t, in, "")
			if err != nil {
				t.Fatal(err)
			}
			hooktest.Check(t, hooktest.Case{Fixture: tc.name, Decision: tc.decision, Reason: nonEmpty(tc.reason)}, stdout)
		})
	}
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

func TestFirstCommitLosesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testenv.Git(t, dir, "init", "-q")
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, dir, "add", "a.txt")
	for _, tc := range []struct{ cmd, decision string }{{"git commit -m first", ""}, {"git commit --amend -m x", "deny"}} {
		in, _ := json.Marshal(map[string]any{"tool_name": "Bash", "cwd": dir, "tool_input": map[string]string{"command": tc.cmd}})
		stdout, _, _ := run(t, in, "")
		if tc.decision == "" && stdout != "" || tc.decision != "" && !strings.Contains(stdout, `"`+tc.decision+`"`) {
			t.Errorf("%s: %s, want %q", tc.cmd, stdout, tc.decision)
		}
	}
}

// TestResponseShape checks the exact documented JSON of each decision.
func TestResponseShape(t *testing.T) {
	t.Parallel()
	for _, d := range []agenthook.Decision{agenthook.Allow, agenthook.Deny, agenthook.Abstain, agenthook.Ask} {
		var b bytes.Buffer
		if err := (agenthook.Response{Decision: d, Reason: "r"}).Write(&b); err != nil {
			t.Fatal(err)
		}
		if d == agenthook.Abstain {
			if b.Len() != 0 {
				t.Errorf("abstain printed %q", b.String())
			}
			continue
		}
		want := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"` + string(d) + `","permissionDecisionReason":"r"}}` + "\n"
		if b.String() != want {
			t.Errorf("got %s want %s", b.String(), want)
		}
	}
}

// TestPanicIsADenial: even a crash inside a rule answers deny.
func TestPanicIsADenial(t *testing.T) {
	t.Parallel()
	repo := hooktest.NewRepo(t)
	var log bytes.Buffer
	h := &agenthook.Hook{Audit: audit.New(&log, nil), Aliases: func(context.Context) shellcmd.AliasResolver { panic("boom") }}
	var out bytes.Buffer
	if err := h.Run(t.Context(), bytes.NewReader(hooktest.Payload(t, "bash_commit_clean.json", repo)), &out); err != nil {
		t.Fatal(err)
	}
	hooktest.Check(t, hooktest.Case{Fixture: "panic", Decision: "deny", Reason: []string{"internal error: boom"}}, out.String())
	if !strings.Contains(log.String(), `"decision":"deny"`) {
		t.Errorf("the denial was not audited: %s", log.String())
	}
}
