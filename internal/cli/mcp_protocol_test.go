package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/agenthook/hooktest"
	"github.com/azero-dev/azero/internal/mcpserver"
	"github.com/azero-dev/azero/internal/testenv"
)

// goWords are what no error text of azero mcp may show: Go's reflection,
// type and struct field names, fmt's complaints.
var goWords = regexp.MustCompile(`reflect|Go struct|Go value|interface \{\}|map\[|\[\]uint8|mcp\.|mcpserver\.|jsonrpc2|Params|Args\b|%!|<nil>|<invalid`)

// mcpWire is `azero mcp` as a process, spoken to in raw lines.
type mcpWire struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan []byte
	stderr bytes.Buffer
}

// rpcReply is a JSON-RPC response.
type rpcReply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func startMCPWire(t *testing.T, dir string) *mcpWire {
	t.Helper()
	w := &mcpWire{t: t, lines: make(chan []byte, 16)}
	w.cmd = exec.Command(os.Args[0], "mcp")
	w.cmd.Dir = dir
	w.cmd.Env = azeroEnv(t.TempDir())
	w.cmd.Stderr = &w.stderr
	var err error
	if w.in, err = w.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := w.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(w.lines)
		r := bufio.NewReader(out)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				w.lines <- line
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		w.cmd.Process.Kill()
		for range w.lines {
		}
		w.cmd.Wait()
	})
	return w
}

func (w *mcpWire) send(line []byte) {
	w.t.Helper()
	if _, err := w.in.Write(append(line, '\n')); err != nil {
		w.t.Fatalf("send: %v (stderr: %s)", err, w.stderr.String())
	}
}

// recv is the next answer (or batch of answers).
func (w *mcpWire) recv() []rpcReply {
	w.t.Helper()
	select {
	case line, ok := <-w.lines:
		if !ok {
			w.t.Fatalf("azero mcp ended the session: %v\n%s", w.cmd.Wait(), w.stderr.String())
		}
		var out []rpcReply
		if line[0] == '[' {
			if err := json.Unmarshal(line, &out); err != nil {
				w.t.Fatalf("answer %s: %v", line, err)
			}
			return out
		}
		var one rpcReply
		if err := json.Unmarshal(line, &one); err != nil {
			w.t.Fatalf("answer %s: %v", line, err)
		}
		return []rpcReply{one}
	case <-time.After(testenv.Patience):
		w.t.Fatal("no answer from azero mcp")
	}
	return nil
}

// toolsListed asks for the tools: the session still serves.
func (w *mcpWire) toolsListed(id int) {
	w.t.Helper()
	w.send([]byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/list"}`))
	r := w.recv()
	var out struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if len(r) != 1 || string(r[0].ID) != strconv.Itoa(id) || r[0].Error != nil || json.Unmarshal(r[0].Result, &out) != nil || len(out.Tools) != 4 {
		w.t.Fatalf("tools/list %d: %+v", id, r)
	}
}

// peakRSS is the process's peak resident set in bytes (Linux).
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// TestMCPProcessKeepsServing feeds the real `azero mcp` every kind of bad
// message, each followed by a good tools/list: each bad one gets its
// JSON-RPC 2.0 error, the good one its tools, and only the end of stdin
// ends the process (exit 0).
func TestMCPProcessKeepsServing(t *testing.T) {
	t.Parallel()
	w := startMCPWire(t, hooktest.NewRepo(t))
	w.send([]byte(`{"jsonrpc":"2.0","id":"early","method":"tools/list"}`))
	if r := w.recv(); len(r) != 1 || string(r[0].ID) != `"early"` || r[0].Error == nil || r[0].Error.Code != -32600 || !strings.Contains(r[0].Error.Message, "not initialized") {
		t.Fatalf("a request before initialize: %+v", r)
	}
	w.send([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"wire","version":"1"}}}`))
	if r := w.recv(); len(r) != 1 || r[0].Error != nil {
		t.Fatalf("initialize: %+v", r)
	}
	w.send([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	tooLong := []byte(`{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"azero_write","arguments":{"path":"a","content":"` +
		strings.Repeat("x", mcpserver.MaxMessageBytes) + `"}}}`)
	cases := []struct {
		name    string
		line    []byte
		code    int64
		id      string
		text    string
		answers int // in a batch answer; 0: one answer
	}{
		{"not JSON", []byte(`{this is not json`), -32700, "null", "not valid JSON", 0},
		{"a bare string", []byte(`"x"`), -32600, "null", "not a string", 0},
		{"an empty object", []byte(`{}`), -32600, "null", `"jsonrpc"`, 0},
		{"a number", []byte(`42`), -32600, "null", "not a number", 0},
		{"null", []byte(`null`), -32600, "null", "not null", 0},
		{"an empty batch", []byte(`[]`), -32600, "null", "empty batch", 0},
		{"a batch of numbers", []byte(`[1,2]`), -32600, "null", "not a number", 2},
		{"a batch in 2025-06-18", []byte(`[{"jsonrpc":"2.0","id":"b1","method":"ping"}]`), -32600, `"b1"`, "no JSON-RPC batches", 1},
		{"invalid UTF-8", []byte("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/\xc3\x28list\"}"), -32700, "null", "UTF-8", 0},
		{"JSON-RPC 1.0", []byte(`{"jsonrpc":"1.0","id":4,"method":"tools/list"}`), -32600, "4", `"2.0"`, 0},
		{"params not an object", []byte(`{"jsonrpc":"2.0","id":5,"method":"tools/list","params":[1]}`), -32602, "5", "must be an object", 0},
		{"arguments not an object", []byte(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"azero_apply","arguments":"x"}}`), -32602, "6", "arguments of azero_apply must be an object", 0},
		{"a param of the wrong type", []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":5}}`), -32602, "7", `"name"`, 0},
		{"initialize twice", []byte(`{"jsonrpc":"2.0","id":8,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"wire","version":"1"}}}`), -32600, "8", "already initialized", 0},
		{"a method that does not exist", []byte(`{"jsonrpc":"2.0","id":9,"method":"tools/destroy"}`), -32601, "9", `"tools/destroy"`, 0},
		{"over the size limit", tooLong, -32600, `"big"`, "longer than 16 MiB", 0},
	}
	for i, tc := range cases {
		w.send(tc.line)
		r := w.recv()
		if len(r) != max(tc.answers, 1) {
			t.Errorf("%s: %d answers, want %d", tc.name, len(r), max(tc.answers, 1))
		}
		if e := r[0].Error; e == nil || e.Code != tc.code || string(r[0].ID) != tc.id || !strings.Contains(e.Message, tc.text) || goWords.MatchString(e.Message) {
			t.Errorf("%s: answer %+v, want code %d under id %s saying %q", tc.name, r, tc.code, tc.id, tc.text)
		}
		w.toolsListed(100 + i)
	}

	// A line ten times the limit is read past, not held: the process's
	// peak memory stays far below the line.
	if runtime.GOOS == "linux" {
		const size = 10 * mcpserver.MaxMessageBytes
		before := peakRSS(t, w.cmd.Process.Pid)
		line := append([]byte(`{"jsonrpc":"2.0","id":"huge","method":"ping","params":{"x":"`), bytes.Repeat([]byte("x"), size)...)
		w.send(append(line, `"}}`...))
		if r := w.recv(); string(r[0].ID) != `"huge"` || r[0].Error == nil || r[0].Error.Code != -32600 {
			t.Errorf("a %d MiB line: %+v", size>>20, r)
		}
		grown := peakRSS(t, w.cmd.Process.Pid) - before
		t.Logf("peak memory %d MiB, grown by %d MiB reading a %d MiB line", before>>20, grown>>20, size>>20)
		if grown > size/2 {
			t.Errorf("reading a %d MiB line raised azero's peak memory by %d MiB", size>>20, grown>>20)
		}
		w.toolsListed(200)
	}

	w.in.Close()
	done := make(chan error, 1)
	go func() { done <- w.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil || w.stderr.Len() != 0 {
			t.Errorf("after stdin closed: %v, stderr %q", err, w.stderr.String())
		}
	case <-time.After(testenv.Patience):
		t.Fatal("azero mcp did not end when stdin closed")
	}
}

// TestMCPTypeScriptSDK drives `azero mcp` with the official MCP TypeScript
// SDK's client: it lists the tools, applies an edit, and gets protocol
// errors as McpError with their codes, the session serving on.
func TestMCPTypeScriptSDK(t *testing.T) {
	t.Parallel()
	node := testenv.RequireTool(t, "node")
	npm := testenv.RequireTool(t, "npm")
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), testenv.Patience)
	defer cancel()
	linkGlobalMCPSDK(ctx, t, npm, dir)
	script, err := os.ReadFile(filepath.Join("testdata", "mcp_sdk_client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	client := filepath.Join(dir, "client.mjs")
	if err := os.WriteFile(client, script, 0o644); err != nil {
		t.Fatal(err)
	}
	repo := hooktest.NewRepo(t)
	cmd := exec.CommandContext(ctx, node, client, os.Args[0], "mcp")
	cmd.Dir = repo
	cmd.Env = azeroEnv(t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the TypeScript client: %v\n%s", err, stderr.String())
	}
	type failure struct {
		MCPError bool   `json:"mcpError"`
		Code     int64  `json:"code"`
		Message  string `json:"message"`
	}
	type result struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		Structured struct {
			Applied bool `json:"applied"`
		} `json:"structuredContent"`
	}
	var got struct {
		Tools       []string `json:"tools"`
		Apply       result   `json:"apply"`
		BadArgument result   `json:"badArgument"`
		NotAnObject *failure `json:"notAnObject"`
		UnknownTool *failure `json:"unknownTool"`
		TooLong     *failure `json:"tooLong"`
		ToolsAfter  int      `json:"toolsAfter"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("client output %s: %v", out, err)
	}
	if strings.Join(got.Tools, ",") != "azero_apply,azero_gate,azero_runs,azero_write" {
		t.Errorf("tools %v", got.Tools)
	}
	if got.Apply.IsError || !got.Apply.Structured.Applied || !strings.Contains(readFile(t, filepath.Join(repo, "small.py")), "small_2 = 22\n") {
		t.Errorf("azero_apply: %+v", got.Apply)
	}
	if !got.BadArgument.IsError || len(got.BadArgument.Content) != 1 || !strings.Contains(got.BadArgument.Content[0].Text, `argument "file" must be a string, not a number (5)`) {
		t.Errorf("a bad argument: %+v", got.BadArgument)
	}
	for name, f := range map[string]struct {
		got  *failure
		code int64
		text string
	}{
		"arguments not an object": {got.NotAnObject, -32602, "must be an object"},
		"unknown tool":            {got.UnknownTool, -32602, `unknown tool "nope"`},
		"over the size limit":     {got.TooLong, -32600, "longer than 16 MiB"},
	} {
		if f.got == nil || !f.got.MCPError || f.got.Code != f.code || !strings.Contains(f.got.Message, f.text) || goWords.MatchString(f.got.Message) {
			t.Errorf("%s: %+v, want McpError %d saying %q", name, f.got, f.code, f.text)
		}
	}
	if got.ToolsAfter != 4 {
		t.Errorf("tools after the errors: %d", got.ToolsAfter)
	}
	if _, err := os.Stat(filepath.Join(repo, "big.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the message over the limit wrote big.txt: %v", err)
	}
}

// mcpSDK is the official MCP TypeScript SDK's package and the version the
// test drives (.ci/run installs it globally, pinned, with the JavaScript
// test runners).
const (
	mcpSDK        = "@modelcontextprotocol/sdk"
	mcpSDKVersion = "1.32.2"
)

// linkGlobalMCPSDK makes the globally installed MCP TypeScript SDK
// importable from dir (an ES module resolves packages from node_modules
// beside it, never from NODE_PATH). Without the pinned global copy the
// test fails when tools are required, else it is skipped: it never
// downloads anything while the tests run.
func linkGlobalMCPSDK(ctx context.Context, t *testing.T, npm, dir string) {
	t.Helper()
	root, err := exec.CommandContext(ctx, npm, "root", "-g").Output()
	if err != nil {
		t.Fatalf("npm root -g: %v", err)
	}
	global := filepath.Join(strings.TrimSpace(string(root)), filepath.FromSlash(mcpSDK))
	var pkg struct {
		Version string `json:"version"`
	}
	data, err := os.ReadFile(filepath.Join(global, "package.json"))
	if err == nil {
		err = json.Unmarshal(data, &pkg)
	}
	if err != nil || pkg.Version != mcpSDKVersion {
		msg := fmt.Sprintf("%s@%s is not installed globally (npm install -g %s@%s; .ci/run does): found %q, %v", mcpSDK, mcpSDKVersion, mcpSDK, mcpSDKVersion, pkg.Version, err)
		if os.Getenv("AZERO_REQUIRE_TOOLS") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	link := filepath.Join(dir, "node_modules", filepath.FromSlash(mcpSDK))
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(global, link); err != nil {
		t.Fatal(err)
	}
}

// TestMCPDocumentsTheLimit: the help and the README state the limit the
// server holds to.
func TestMCPDocumentsTheLimit(t *testing.T) {
	t.Parallel()
	limit := strconv.Itoa(mcpserver.MaxMessageBytes>>20) + " MiB"
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	help := runAzeroIn(t, t.TempDir(), t.TempDir(), nil, "mcp", "--help")
	for name, doc := range map[string]string{"azero mcp --help": help.stdout, "README.md": string(readme)} {
		doc = strings.Join(strings.Fields(doc), " ")
		if !strings.Contains(doc, "at most "+limit) || !strings.Contains(doc, "-32700") {
			t.Errorf("%s does not say a message may be at most %s, or how errors are answered", name, limit)
		}
	}
}
