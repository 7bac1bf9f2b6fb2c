package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/azero-dev/azero/internal/agenthook/hooktest"
	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/mcpserver"
	"github.com/azero-dev/azero/internal/runs"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
)

func TestMain(m *testing.M) {
	for _, kv := range testenv.GitEnv(nil) {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	os.Exit(m.Run())
}

// protocols are the two ways elicitation travels: the current protocol
// (the client answers input requests and retries the call) and the
// 2025-06-18 protocol Claude Code and most clients speak today (the server
// sends elicitation/create while the call is open).
var protocols = []string{"", "2025-06-18"}

// elicitor answers approval questions like a user would, and counts them.
type elicitor struct {
	calls    atomic.Int32
	mu       sync.Mutex
	messages []string
	answer   func(req *mcp.ElicitRequest) (*mcp.ElicitResult, error)
}

func (e *elicitor) handle(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	e.calls.Add(1)
	e.mu.Lock()
	e.messages = append(e.messages, req.Params.Message)
	e.mu.Unlock()
	return e.answer(req)
}

func typed(word string) func(*mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return func(*mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": word}}, nil
	}
}

func filled(content map[string]any) func(*mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return func(*mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: content}, nil
	}
}

func action(a string) func(*mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return func(*mcp.ElicitRequest) (*mcp.ElicitResult, error) { return &mcp.ElicitResult{Action: a}, nil }
}

// env is a server on a real repository and a connected SDK client.
type env struct {
	root    string
	session *mcp.ClientSession
	log     *bytes.Buffer
	logMu   *sync.Mutex
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// connect starts the server on root and connects a client speaking
// protocol; el nil means a client without elicitation.
func connect(t *testing.T, root, protocol string, el *elicitor, st func(context.Context) (mcpserver.Lister, error)) *env {
	t.Helper()
	e := &env{root: root, log: &bytes.Buffer{}, logMu: &sync.Mutex{}}
	srv, err := mcpserver.New(mcpserver.Options{Root: root, Version: "test", Audit: audit.New(lockedWriter{e.logMu, e.log}, nil), Runs: st})
	if err != nil {
		t.Fatal(err)
	}
	ct, svt := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), svt, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	opts := &mcp.ClientOptions{}
	if el != nil {
		opts.ElicitationHandler = el.handle
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, opts)
	cs, err := client.Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	e.session = cs
	return e
}

// call calls a tool and returns its result; a protocol error fails the
// test (tool failures must be results).
func (e *env) call(t *testing.T, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := e.session.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v; tool failures must be isError results", tool, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// structured decodes a result's structured content.
func structured[T any](t *testing.T, res *mcp.CallToolResult) T {
	t.Helper()
	var v T
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("structured content %s: %v", raw, err)
	}
	return v
}

func (e *env) events(t *testing.T, name string) []map[string]any {
	t.Helper()
	e.logMu.Lock()
	defer e.logMu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(e.log.String()), "\n") {
		if line == "" {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		if ev["event"] == name {
			out = append(out, ev)
		}
	}
	return out
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestToolsAreListed(t *testing.T) {
	t.Parallel()
	e := connect(t, hooktest.NewRepo(t), "", nil, nil)
	res, err := e.session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"azero_apply": {"file", "edits"},
		"azero_write": {"path", "content"},
		"azero_gate":  nil,
		"azero_runs":  nil,
	}
	for _, tool := range res.Tools {
		req, ok := want[tool.Name]
		if !ok {
			t.Errorf("unexpected tool %s", tool.Name)
			continue
		}
		delete(want, tool.Name)
		schema, _ := json.Marshal(tool.InputSchema)
		var s struct {
			Required []string `json:"required"`
		}
		_ = json.Unmarshal(schema, &s)
		if strings.Join(s.Required, ",") != strings.Join(req, ",") {
			t.Errorf("%s requires %v, want %v", tool.Name, s.Required, req)
		}
		if tool.Description == "" {
			t.Errorf("%s has no description", tool.Name)
		}
	}
	for name := range want {
		t.Errorf("tool %s is missing", name)
	}
}

func TestWriteApproval(t *testing.T) {
	t.Parallel()
	large := "state = None\n" // replaces the 270 lines of src/state.py
	cases := []struct {
		name      string
		elicit    func(*mcp.ElicitRequest) (*mcp.ElicitResult, error) // nil: the client cannot elicit
		written   bool
		errText   string
		decision  string // the mcp_approval event's decision
		questions int32
	}{
		{"typed approve", typed("approve"), true, "", "approved", 1},
		{"typed approve in capitals with spaces", typed("  APPROVE "), true, "", "approved", 1},
		{"typed something else", typed("yes"), false, `typed "yes", not "approve"`, "wrong_word", 1},
		{"partial word", typed("appro"), false, `typed "appro"`, "wrong_word", 1},
		{"typed approve in a field the client named otherwise", filled(map[string]any{"confirmation": "approve"}), true, "", "approved", 1},
		{"approve among several fields", filled(map[string]any{"x": "approve", "y": "no"}), false, `typed "", not "approve"`, "wrong_word", 1},
		{"accepted empty form", filled(map[string]any{}), false, `typed "", not "approve"`, "wrong_word", 1},
		{"declined", action("decline"), false, "the user declined", "declined", 1},
		{"dismissed", action("cancel"), false, "dismissed", "cancelled", 1},
		{"client without elicitation", nil, false, "does not support elicitation", "unavailable", 0},
	}
	for _, proto := range protocols {
		for _, tc := range cases {
			t.Run(tc.name+"/protocol "+proto, func(t *testing.T) {
				t.Parallel()
				root := hooktest.NewRepo(t)
				var el *elicitor
				if tc.elicit != nil {
					el = &elicitor{answer: tc.elicit}
				}
				e := connect(t, root, proto, el, nil)
				before := read(t, filepath.Join(root, "src/state.py"))
				res := e.call(t, "azero_write", map[string]any{"path": "src/state.py", "content": large})
				after := read(t, filepath.Join(root, "src/state.py"))
				if tc.written {
					if res.IsError || after != large {
						t.Fatalf("not written: %s", text(res))
					}
					out := structured[mcpserver.WriteResult](t, res)
					if !out.Written || out.Approval != "approved" || out.OldLines != hooktest.StateLines || out.NewLines != 1 {
						t.Errorf("result %+v", out)
					}
					writes := e.events(t, "file_write")
					if len(writes) != 1 || writes[0]["approval"] != "approved" || writes[0]["actor"] != "mcp:test-agent" {
						t.Errorf("file_write events %v", writes)
					}
				} else {
					if !res.IsError || after != before {
						t.Fatalf("want an isError result and the file untouched; IsError=%v, text %s", res.IsError, text(res))
					}
					if !strings.Contains(text(res), tc.errText) || !strings.Contains(text(res), "nothing was written") {
						t.Errorf("error %q lacks %q", text(res), tc.errText)
					}
					if w := e.events(t, "file_write"); len(w) != 0 {
						t.Errorf("file_write events %v for a refused write", w)
					}
				}
				approvals := e.events(t, mcpserver.EventApproval)
				if len(approvals) != 1 || approvals[0]["decision"] != tc.decision {
					t.Errorf("approval events %v, want one %s", approvals, tc.decision)
				}
				if el != nil {
					if n := el.calls.Load(); n != tc.questions {
						t.Errorf("the user was asked %d times, want %d", n, tc.questions)
					}
					if msg := strings.Join(el.messages, ""); !strings.Contains(msg, "src/state.py (270 lines) with 1 lines") || !strings.Contains(msg, "-state_1 = 1") {
						t.Errorf("the question does not show the change:\n%s", msg)
					}
				}
			})
		}
	}
}

func TestWriteNeedsNoApproval(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		args map[string]any
		file string
		want func(string) bool
	}{
		{"new file", map[string]any{"path": "src/new.py", "content": "x = 1\n"}, "src/new.py", func(s string) bool { return s == "x = 1\n" }},
		{"small file replaced", map[string]any{"path": "small.py", "content": "y\n"}, "small.py", func(s string) bool { return s == "y\n" }},
		{"append to a large file", map[string]any{"path": "src/state.py", "content": "extra = 1\n", "strategy": "append"}, "src/state.py",
			func(s string) bool { return strings.HasSuffix(s, "state_270 = 270\nextra = 1\n") }},
		{"insert into a large file", map[string]any{"path": "big.py", "content": "first = 0\n", "strategy": "insert", "line": 1}, "big.py",
			func(s string) bool { return strings.HasPrefix(s, "first = 0\nvalue_1 = 1\n") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := hooktest.NewRepo(t)
			el := &elicitor{answer: typed("approve")}
			e := connect(t, root, "", el, nil)
			res := e.call(t, "azero_write", tc.args)
			if res.IsError {
				t.Fatalf("error: %s", text(res))
			}
			if got := read(t, filepath.Join(root, tc.file)); !tc.want(got) {
				t.Errorf("%s holds %q", tc.file, got[:min(len(got), 200)])
			}
			if el.calls.Load() != 0 {
				t.Errorf("the user was asked about a write that needs no approval")
			}
		})
	}
}

func TestWriteRefusals(t *testing.T) {
	t.Parallel()
	root := hooktest.NewRepo(t)
	e := connect(t, root, "", &elicitor{answer: typed("approve")}, nil)
	cases := []struct {
		name string
		args map[string]any
		want string
	}{
		{"outside the root", map[string]any{"path": "../escape.txt", "content": "x"}, "climb out of the project root"},
		{"absolute outside", map[string]any{"path": "/etc/azero-never", "content": "x"}, "outside the project root"},
		{"through a symlink", map[string]any{"path": "link_out/x.py", "content": "x"}, "through a symlink"},
		{"into .git", map[string]any{"path": ".git/hooks/pre-commit", "content": "x"}, ".git"},
		{"edit strategy", map[string]any{"path": "small.py", "content": "x", "strategy": "edit"}, "use azero_apply"},
		{"unknown strategy", map[string]any{"path": "small.py", "content": "x", "strategy": "merge"}, "unknown strategy"},
		{"insert without line", map[string]any{"path": "small.py", "content": "x", "strategy": "insert"}, "needs line"},
		{"missing content", map[string]any{"path": "small.py"}, "content"},
	}
	for _, tc := range cases {
		res := e.call(t, "azero_write", tc.args)
		if !res.IsError || !strings.Contains(text(res), tc.want) {
			t.Errorf("%s: IsError=%v %q, want an error containing %q", tc.name, res.IsError, text(res), tc.want)
		}
	}
	if out := testenv.Git(t, root, "status", "--porcelain"); out != "" {
		t.Errorf("refused writes changed the repository: %s", out)
	}
}

// TestApprovalIsBoundToTheChange changes the file while the user is being
// asked: the approval was for the old content and must not apply.
func TestApprovalIsBoundToTheChange(t *testing.T) {
	t.Parallel()
	for _, proto := range protocols {
		t.Run("protocol "+proto, func(t *testing.T) {
			t.Parallel()
			root := hooktest.NewRepo(t)
			target := filepath.Join(root, "src/state.py")
			el := &elicitor{answer: func(*mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				if err := os.WriteFile(target, []byte("someone else's edit\n"), 0o644); err != nil {
					return nil, err
				}
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "approve"}}, nil
			}}
			e := connect(t, root, proto, el, nil)
			res := e.call(t, "azero_write", map[string]any{"path": "src/state.py", "content": "mine\n"})
			if !res.IsError {
				t.Fatalf("a stale approval wrote the file: %s", text(res))
			}
			if got := read(t, target); got != "someone else's edit\n" {
				t.Errorf("the other edit was overwritten: %q", got)
			}
			if !strings.Contains(text(res), "nothing was written") {
				t.Errorf("error %q", text(res))
			}
		})
	}
}

// TestElicitationFailure: a client whose form fails (an older client
// asked while the call waits) gets an isError result, never a write.
func TestElicitationFailure(t *testing.T) {
	t.Parallel()
	root := hooktest.NewRepo(t)
	el := &elicitor{answer: func(*mcp.ElicitRequest) (*mcp.ElicitResult, error) { return nil, errors.New("the form crashed") }}
	e := connect(t, root, "2025-06-18", el, nil)
	before := read(t, filepath.Join(root, "src/state.py"))
	res := e.call(t, "azero_write", map[string]any{"path": "src/state.py", "content": "x\n"})
	if !res.IsError || !strings.Contains(text(res), "could not be asked") || read(t, filepath.Join(root, "src/state.py")) != before {
		t.Fatalf("IsError=%v %s", res.IsError, text(res))
	}
	if a := e.events(t, mcpserver.EventApproval); len(a) != 1 || a[0]["decision"] != "failed" {
		t.Errorf("approval events %v", a)
	}
}

// TestForgedApproval sends an answer nobody was asked for: a client cannot
// skip the question by inventing the retry.
func TestForgedApproval(t *testing.T) {
	t.Parallel()
	root := hooktest.NewRepo(t)
	e := connect(t, root, "", &elicitor{answer: typed("approve")}, nil)
	before := read(t, filepath.Join(root, "src/state.py"))
	for _, state := range []string{"", "v1.00", "v1." + strings.Repeat("ab", 32)} {
		res, err := e.session.CallTool(t.Context(), &mcp.CallToolParams{
			Name:           "azero_write",
			Arguments:      map[string]any{"path": "src/state.py", "content": "forged\n"},
			InputResponses: mcp.InputResponseMap{"azero_approval": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "approve"}}},
			RequestState:   state,
		})
		if err != nil {
			t.Fatalf("state %q: protocol error %v", state, err)
		}
		if !res.IsError || !strings.Contains(text(res), "does not belong to this exact change") {
			t.Errorf("state %q: %v %s", state, res.IsError, text(res))
		}
	}
	if read(t, filepath.Join(root, "src/state.py")) != before {
		t.Fatal("a forged approval wrote the file")
	}
}

func TestApply(t *testing.T) {
	t.Parallel()
	block := func(find, repl string) string {
		return "### CHANGE 1: edit\nFIND:\n```\n" + find + "```\nREPLACE WITH:\n```\n" + repl + "```\n"
	}
	t.Run("applies", func(t *testing.T) {
		t.Parallel()
		root := hooktest.NewRepo(t)
		e := connect(t, root, "", nil, nil)
		res := e.call(t, "azero_apply", map[string]any{"file": "big.py", "edits": block("value_5 = 5\n", "value_5 = 50\n")})
		if res.IsError {
			t.Fatal(text(res))
		}
		out := structured[mcpserver.ApplyResult](t, res)
		if !out.Applied || out.Blocks != 1 || out.DeletedLines != 1 || out.AddedLines != 1 || out.File != "big.py" {
			t.Errorf("result %+v", out)
		}
		if !strings.Contains(read(t, filepath.Join(root, "big.py")), "\nvalue_5 = 50\nvalue_6 = 6\n") {
			t.Error("the edit is not in the file")
		}
		if w := e.events(t, "file_write"); len(w) != 1 || w[0]["strategy"] != "edit" {
			t.Errorf("file_write events %v", w)
		}
	})
	t.Run("dry run", func(t *testing.T) {
		t.Parallel()
		root := hooktest.NewRepo(t)
		e := connect(t, root, "", nil, nil)
		before := read(t, filepath.Join(root, "small.py"))
		res := e.call(t, "azero_apply", map[string]any{"file": "small.py", "edits": block("small_3 = 3\n", "small_3 = 33\n"), "dry_run": true})
		out := structured[mcpserver.ApplyResult](t, res)
		if res.IsError || out.Applied || !strings.Contains(out.Diff, "-small_3 = 3\n+small_3 = 33\n") {
			t.Errorf("dry run %+v: %s", out, text(res))
		}
		if read(t, filepath.Join(root, "small.py")) != before {
			t.Error("dry run wrote the file")
		}
	})
	failures := []struct {
		name  string
		args  map[string]any
		want  string
		files []string
	}{
		{"find not in the file", map[string]any{"file": "small.py", "edits": block("nope = 1\n", "x\n")}, "FIND does not match", nil},
		{"no blocks", map[string]any{"file": "small.py", "edits": "just prose"}, "no edit blocks", nil},
		{"placeholder", map[string]any{"file": "small.py", "edits": block("small_1 = 1\nsmall_2 = 2\n", "# ... existing code ...\n")}, "placeholder", nil},
		{"missing file", map[string]any{"file": "nope.py", "edits": block("a\n", "b\n")}, "does not exist", nil},
		{"outside the root", map[string]any{"file": "../x.py", "edits": block("a\n", "b\n")}, "climb out", nil},
		{"block for another file", map[string]any{"file": "small.py", "edits": "other.py\n<<<<<<< SEARCH\nsmall_1 = 1\n=======\nx\n>>>>>>> REPLACE\n"}, "names other.py", nil},
	}
	for _, tc := range failures {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := hooktest.NewRepo(t)
			e := connect(t, root, "", nil, nil)
			res := e.call(t, "azero_apply", tc.args)
			if !res.IsError || !strings.Contains(text(res), tc.want) {
				t.Errorf("IsError=%v %q, want an error containing %q", res.IsError, text(res), tc.want)
			}
			if out := testenv.Git(t, root, "status", "--porcelain"); out != "" {
				t.Errorf("a failed apply changed the repository: %s", out)
			}
		})
	}
}

// TestApplyThatGutsAFileAsks: an edit deleting most of a large file needs
// the user like a whole-file replace.
func TestApplyThatGutsAFileAsks(t *testing.T) {
	t.Parallel()
	var find strings.Builder
	for i := 1; i <= 150; i++ {
		find.WriteString("value_" + strconv.Itoa(i) + " = " + strconv.Itoa(i) + "\n")
	}
	edits := "### CHANGE 1: drop\nFIND:\n```\n" + find.String() + "```\nREPLACE WITH:\n```\n# moved\n```\n"
	cases := []struct {
		name    string
		elicit  func(*mcp.ElicitRequest) (*mcp.ElicitResult, error)
		applied bool
		want    string
	}{
		{"approved", typed("approve"), true, ""},
		{"declined", action("decline"), false, "declined"},
		{"no elicitation", nil, false, "does not support elicitation"},
	}
	for _, proto := range protocols {
		for _, tc := range cases {
			t.Run(tc.name+"/protocol "+proto, func(t *testing.T) {
				t.Parallel()
				root := hooktest.NewRepo(t)
				var el *elicitor
				if tc.elicit != nil {
					el = &elicitor{answer: tc.elicit}
				}
				e := connect(t, root, proto, el, nil)
				res := e.call(t, "azero_apply", map[string]any{"file": "big.py", "edits": edits})
				lines := strings.Count(read(t, filepath.Join(root, "big.py")), "\n")
				if tc.applied {
					out := structured[mcpserver.ApplyResult](t, res)
					if res.IsError || !out.Applied || !out.Approved || lines != 51 {
						t.Fatalf("not applied (%d lines): %+v %s", lines, out, text(res))
					}
					if msg := strings.Join(el.messages, ""); !strings.Contains(msg, "deletes 150 of the 200 lines of big.py") {
						t.Errorf("question %q", msg)
					}
					return
				}
				if !res.IsError || !strings.Contains(text(res), tc.want) || lines != hooktest.BigLines {
					t.Errorf("IsError=%v %q (%d lines), want refused with %q", res.IsError, text(res), lines, tc.want)
				}
			})
		}
	}
}

func TestGate(t *testing.T) {
	t.Parallel()
	root := hooktest.NewRepo(t)
	hooktest.StageGutBig(t, root)
	hooktest.StageSmallChange(t, root)
	e := connect(t, root, "", nil, nil)
	res := e.call(t, "azero_gate", map[string]any{"staged": true})
	if res.IsError {
		t.Fatal(text(res))
	}
	out := structured[mcpserver.GateResult](t, res)
	if !out.RequiresReview || out.Approved || strings.Join(out.Flagged, ",") != "big.py" || len(out.Files) != 3 {
		t.Errorf("gate %+v", out)
	}
	if !strings.Contains(out.Report, "WARNING") || !strings.Contains(out.Report, "-value_11 = 11") || !strings.Contains(out.Next, "approves nothing") {
		t.Errorf("report lacks the banner or the diff:\n%s\n%s", out.Report, out.Next)
	}
	if got := e.events(t, "gate_decision"); len(got) != 0 {
		t.Errorf("an analysis recorded a gate decision: %v", got)
	}

	clean := connect(t, hooktest.NewRepo(t), "", nil, nil)
	if out := structured[mcpserver.GateResult](t, clean.call(t, "azero_gate", nil)); out.RequiresReview || len(out.Files) != 0 || out.Approved {
		t.Errorf("clean repository: %+v", out)
	}
	for _, bad := range []string{"..", "/", "link_out", ".git", "big.py", "missing"} {
		if res := e.call(t, "azero_gate", map[string]any{"repository": bad}); !res.IsError {
			t.Errorf("repository %q accepted: %s", bad, text(res))
		}
	}
}

func TestRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := &runs.Env{Getenv: func(k string) string {
		if k == "AZERO_STATE_DIR" {
			return dir
		}
		return ""
	}, Environ: func() []string { return nil }}
	t.Cleanup(func() { env.Close() })
	st, err := env.Store(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []store.Run{
		{ID: "260101-aaaaaa", Workflow: "implement", Node: "red", Status: store.StatusWaiting, State: []byte("{}")},
		{ID: "260101-bbbbbb", Workflow: "issue", Node: "filed", Status: store.StatusDone, State: []byte("{}")},
	} {
		if err := st.CreateRun(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	// azero_runs lists through the run service, as azero runs does.
	e := connect(t, hooktest.NewRepo(t), "", nil, func(ctx context.Context) (mcpserver.Lister, error) {
		return runs.OpenLocal(ctx, env, runs.Catalog())
	})
	all := structured[mcpserver.RunsResult](t, e.call(t, "azero_runs", nil))
	if len(all.Runs) != 2 {
		t.Fatalf("runs %+v", all)
	}
	waiting := structured[mcpserver.RunsResult](t, e.call(t, "azero_runs", map[string]any{"status": "waiting"}))
	if len(waiting.Runs) != 1 || waiting.Runs[0].ID != "260101-aaaaaa" || waiting.Runs[0].Node != "red" {
		t.Errorf("waiting runs %+v", waiting)
	}
	if res := e.call(t, "azero_runs", map[string]any{"status": "sleeping"}); !res.IsError || !strings.Contains(text(res), "unknown status") {
		t.Errorf("unknown status: %s", text(res))
	}
	none := connect(t, hooktest.NewRepo(t), "", nil, nil)
	if out := structured[mcpserver.RunsResult](t, none.call(t, "azero_runs", nil)); out.Runs == nil || len(out.Runs) != 0 {
		t.Errorf("no store: %+v", out)
	}
}
