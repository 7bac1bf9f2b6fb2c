package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/azero-dev/azero/internal/agenthook/hooktest"
	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/testenv"
)

// mcpSession starts `azero mcp` (the program at exe) in dir and connects
// the SDK's client to it over the command transport.
func mcpSession(t *testing.T, exe, dir, state string, env []string, elicit func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error), args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(exe, append([]string{"mcp"}, args...)...)
	cmd.Dir = dir
	cmd.Env = azeroEnv(state, env...)
	opts := &mcp.ClientOptions{ElicitationHandler: elicit}
	client := mcp.NewClient(&mcp.Implementation{Name: "cli-test", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(t.Context(), testenv.Patience)
	t.Cleanup(cancel)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to azero mcp: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestMCPProcess drives `azero mcp` as a separate process, the way an MCP
// client starts it, with the user answering the approval question.
func TestMCPProcess(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		answer  *mcp.ElicitResult // nil: the client has no elicitation
		written bool
		errText string
	}{
		{"approved", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "approve"}}, true, ""},
		{"declined", &mcp.ElicitResult{Action: "decline"}, false, "declined"},
		{"no elicitation", nil, false, "does not support elicitation"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			repo := hooktest.NewRepo(t)
			state := t.TempDir()
			var asked atomic.Int32
			var elicit func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)
			if tc.answer != nil {
				elicit = func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked.Add(1)
					if !strings.Contains(req.Params.Message, "src/state.py (270 lines)") {
						t.Errorf("question %q", req.Params.Message)
					}
					return tc.answer, nil
				}
			}
			cs := mcpSession(t, os.Args[0], filepath.Join(repo, "src"), state, nil, elicit)
			res := callTool(t, cs, "azero_write", map[string]any{"path": "src/state.py", "content": "short\n"})
			got := readFile(t, filepath.Join(repo, "src", "state.py"))
			if tc.written != (got == "short\n") || tc.written == res.IsError {
				t.Fatalf("written=%v IsError=%v: %s", got == "short\n", res.IsError, resultText(res))
			}
			if !tc.written && !strings.Contains(resultText(res), tc.errText) {
				t.Errorf("error %q lacks %q", resultText(res), tc.errText)
			}
			if tc.answer != nil && asked.Load() != 1 {
				t.Errorf("asked %d times", asked.Load())
			}
			// The gate sees what the write did, and approves nothing.
			gate := callTool(t, cs, "azero_gate", nil)
			var out struct {
				Flagged  []string `json:"flagged_files"`
				Approved bool     `json:"approved"`
			}
			raw, _ := json.Marshal(gate.StructuredContent)
			if err := json.Unmarshal(raw, &out); err != nil || out.Approved || (len(out.Flagged) == 1) != tc.written {
				t.Errorf("gate %s (%v)", raw, err)
			}
			cs.Close()
			recs, err := audit.Read(filepath.Join(state, audit.FileName))
			if err != nil {
				t.Fatal(err)
			}
			var approvals []string
			for _, r := range recs {
				if r["event"] == "mcp_approval" {
					approvals = append(approvals, r["decision"].(string))
				}
			}
			if len(approvals) != 1 {
				t.Errorf("approval events %v", approvals)
			}
		})
	}
}

func TestMCPRoot(t *testing.T) {
	t.Parallel()
	res := runAzeroIn(t, t.TempDir(), t.TempDir(), nil, "mcp")
	if res.code != ExitError || !strings.Contains(res.stderr, "--root") || res.stdout != "" {
		t.Errorf("outside a repository: exit %d, stdout %q, stderr %s", res.code, res.stdout, res.stderr)
	}
	res = runAzeroIn(t, t.TempDir(), t.TempDir(), nil, "mcp", "--root", "/nonexistent/azero")
	if res.code != ExitError {
		t.Errorf("missing root: exit %d %s", res.code, res.stderr)
	}
	// With --root any directory is served, and paths stay inside it.
	root := t.TempDir()
	cs := mcpSession(t, os.Args[0], t.TempDir(), t.TempDir(), nil, nil, "--root", root)
	if r := callTool(t, cs, "azero_write", map[string]any{"path": "notes/a.txt", "content": "a\n"}); r.IsError {
		t.Fatal(resultText(r))
	}
	if readFile(t, filepath.Join(root, "notes", "a.txt")) != "a\n" {
		t.Error("not written under --root")
	}
	if r := callTool(t, cs, "azero_write", map[string]any{"path": "../b.txt", "content": "b\n"}); !r.IsError {
		t.Error("a path outside --root was written")
	}
}

// TestBuiltBinary builds cmd/azero and runs it both ways Claude Code does:
// as the PreToolUse hook and as an MCP server.
func TestBuiltBinary(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds azero")
	}
	exe := filepath.Join(t.TempDir(), "azero")
	build := exec.Command("go", "build", "-o", exe, "github.com/azero-dev/azero/cmd/azero")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	repo := hooktest.NewRepo(t)
	hooktest.StageGutBig(t, repo)
	cmd := exec.Command(exe, "hook", "claude-code")
	cmd.Dir = repo
	cmd.Env = testenv.GitEnv(append(os.Environ(), "AZERO_STATE_DIR="+t.TempDir()))
	cmd.Stdin = strings.NewReader(string(hooktest.Payload(t, "bash_commit_flagged.json", repo)))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hook: %v", err)
	}
	hooktest.Check(t, hooktest.Case{Fixture: "bash_commit_flagged.json", Decision: "ask", Reason: []string{"big.py"}}, string(out))

	cs := mcpSession(t, exe, repo, t.TempDir(), nil, nil)
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil || len(tools.Tools) != 4 {
		t.Fatalf("tools %v %v", tools, err)
	}
	res := callTool(t, cs, "azero_apply", map[string]any{"file": "small.py", "edits": "<<<<<<< SEARCH\nsmall_2 = 2\n=======\nsmall_2 = 22\n>>>>>>> REPLACE\n"})
	if res.IsError || !strings.Contains(readFile(t, filepath.Join(repo, "small.py")), "small_2 = 22\n") {
		t.Fatalf("apply: %s", resultText(res))
	}
}
