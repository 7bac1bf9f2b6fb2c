package mcpserver_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/agenthook/hooktest"
	"github.com/azero-dev/azero/internal/mcpserver"
	"github.com/azero-dev/azero/internal/testenv"
)

// goWords are what no error text may show: Go's reflection, type and
// struct field names, fmt's complaints.
var goWords = regexp.MustCompile(`reflect|Go struct|Go value|interface \{\}|map\[|\[\]uint8|mcp\.|mcpserver\.|jsonrpc2|Params|Args\b|%!|<nil>|<invalid`)

// wire is a client speaking raw lines to the server over azero's
// transport, as a stdio client does.
type wire struct {
	t     testing.TB
	in    *io.PipeWriter
	lines chan []byte
	ended chan error
}

// reply is a JSON-RPC response.
type reply struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"` // set on a request from the server
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func startWire(t testing.TB, root string, maxMessage int) *wire {
	t.Helper()
	srv, err := mcpserver.New(mcpserver.Options{Root: root, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	w := &wire{t: t, in: inW, lines: make(chan []byte, 16), ended: make(chan error, 1)}
	go func() {
		w.ended <- srv.Run(t.Context(), &mcpserver.Transport{In: inR, Out: outW, MaxMessage: maxMessage})
		outW.Close()
	}()
	go func() {
		defer close(w.lines)
		r := bufio.NewReader(outR)
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
		inW.Close()
		for range w.lines {
		}
	})
	return w
}

func (w *wire) send(line string) {
	w.t.Helper()
	if _, err := io.WriteString(w.in, line+"\n"); err != nil {
		w.t.Fatalf("send: %v", err)
	}
}

// recv is the server's next line.
func (w *wire) recv() []byte {
	w.t.Helper()
	select {
	case line, ok := <-w.lines:
		if !ok {
			w.t.Fatalf("the server ended the session: %v", <-w.ended)
		}
		return line
	case <-time.After(testenv.Patience):
		w.t.Fatal("no answer")
	}
	return nil
}

// answer is the server's reply with the given id (JSON text), skipping
// its notifications.
func (w *wire) answer(id string) reply {
	w.t.Helper()
	for {
		line := w.recv()
		if line[0] == '[' {
			continue // a batch's answers
		}
		var r reply
		if err := json.Unmarshal(line, &r); err != nil {
			w.t.Fatalf("answer %s: %v", line, err)
		}
		if r.Method == "" && string(r.ID) == id {
			return r
		}
	}
}

func (w *wire) initialize(protocol, capabilities string) {
	w.t.Helper()
	w.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"` + protocol + `","capabilities":` + capabilities + `,"clientInfo":{"name":"wire","version":"1"}}}`)
	if r := w.answer(`"init"`); r.Error != nil {
		w.t.Fatalf("initialize: %s", r.Error.Message)
	}
	w.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// toolsListed checks the session still serves: a tools/list is answered
// with the four tools.
func (w *wire) toolsListed(id string) {
	w.t.Helper()
	w.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list"}`)
	r := w.answer(id)
	var out struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if r.Error != nil || json.Unmarshal(r.Result, &out) != nil || len(out.Tools) != 4 {
		w.t.Fatalf("tools/list: %s %+v", r.Result, r.Error)
	}
}

func wantError(t *testing.T, r reply, code int64, text string) {
	t.Helper()
	if r.Error == nil || r.Error.Code != code || !strings.Contains(r.Error.Message, text) || goWords.MatchString(r.Error.Message) {
		t.Errorf("reply %s %+v, want error %d with %q and no Go in it", r.Result, r.Error, code, text)
	}
}

// TestRequestBeforeInitialize: -32600 under the request's id, and the
// session then starts as usual.
func TestRequestBeforeInitialize(t *testing.T) {
	t.Parallel()
	w := startWire(t, t.TempDir(), 0)
	w.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	wantError(t, w.answer("1"), -32600, `"tools/list" came before "initialize"`)
	w.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"azero_runs"}}`)
	wantError(t, w.answer("2"), -32600, "not initialized")
	w.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`) // ping may come first
	if r := w.answer("3"); r.Error != nil {
		t.Errorf("ping before initialize: %+v", r.Error)
	}
	w.initialize("2025-11-25", "{}")
	w.toolsListed("4")
	w.send(`{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"wire","version":"1"}}}`)
	wantError(t, w.answer("5"), -32600, "already initialized")
	w.toolsListed("6")
}

// TestArgumentsNotAnObject: a protocol error (-32602) under the call's id,
// never a tool result; null arguments are no arguments.
func TestArgumentsNotAnObject(t *testing.T) {
	t.Parallel()
	w := startWire(t, t.TempDir(), 0)
	w.initialize("2025-06-18", "{}")
	for i, args := range []string{`"x"`, `[1]`, `5`, `true`, `[]`} {
		id := fmt.Sprint(i + 10)
		w.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"azero_apply","arguments":` + args + `}}`)
		wantError(t, w.answer(id), -32602, "arguments of azero_apply must be an object")
	}
	w.send(`{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"azero_runs","arguments":null}}`)
	if r := w.answer("20"); r.Error != nil || !strings.Contains(string(r.Result), `"runs":[]`) {
		t.Errorf("null arguments: %s %+v", r.Result, r.Error)
	}
	w.send(`{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":5}}`)
	wantError(t, w.answer("21"), -32602, `"name" in the params of "tools/call" must be a string, not a number`)
	w.send(`{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"nope","arguments":{}}}`)
	wantError(t, w.answer("22"), -32602, `unknown tool "nope"`)
	w.toolsListed("23")
}

// TestArgumentErrors: arguments of the wrong name or type are tool
// results marked isError, naming each argument as the schema does.
func TestArgumentErrors(t *testing.T) {
	t.Parallel()
	e := connect(t, hooktest.NewRepo(t), "", nil, nil)
	cases := []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"azero_write", map[string]any{"path": nil, "content": "x"}, []string{`argument "path" must be a string, not null`}},
		{"azero_write", map[string]any{"path": "a", "content": "x", "strategy": nil}, []string{`argument "strategy" must be a string, not null (leave it out for the default)`}},
		{"azero_write", map[string]any{"path": "a", "content": "x", "line": "3"}, []string{`argument "line" must be an integer, not a string ("3")`}},
		{"azero_write", map[string]any{}, []string{`argument "path" is required: the file to write`, `argument "content" is required`}},
		{"azero_apply", map[string]any{"file": 5, "edits": "x"}, []string{`argument "file" must be a string, not a number (5)`}},
		{"azero_apply", map[string]any{"fil": "a", "file": "a", "edits": "x"}, []string{`it has no argument "fil" (its arguments: file, edits, dry_run)`}},
		{"azero_apply", map[string]any{"file": "small.py", "edits": nil}, []string{`argument "edits" must be a string, not null`}},
		{"azero_apply", map[string]any{"file": "small.py", "edits": "x", "dry_run": "yes"}, []string{`argument "dry_run" must be true or false, not a string ("yes")`}},
		{"azero_gate", map[string]any{"staged": 1}, []string{`argument "staged" must be true or false, not a number (1)`}},
		{"azero_runs", map[string]any{"limit": 1e100}, []string{`argument "limit" is out of range: 1e+100`}},
		{"azero_runs", map[string]any{"limit": 1.5}, []string{`argument "limit" must be a whole number, not 1.5`}},
		{"azero_runs", map[string]any{"limit": []int{1}}, []string{`argument "limit" must be an integer, not an array`}},
	}
	for _, tc := range cases {
		res := e.call(t, tc.tool, tc.args)
		got := text(res)
		if !res.IsError || goWords.MatchString(got) || !strings.HasPrefix(got, tc.tool+" was not run: ") {
			t.Errorf("%s %v: IsError=%v %q", tc.tool, tc.args, res.IsError, got)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s %v: %q lacks %q", tc.tool, tc.args, got, w)
			}
		}
	}
	if out := testenv.Git(t, e.root, "status", "--porcelain"); out != "" {
		t.Errorf("refused calls changed the repository: %s", out)
	}
}

// TestBatches: a protocol with batches gets the SDK's batch answer; a
// later one gets a refusal for each request, under its id.
func TestBatches(t *testing.T) {
	t.Parallel()
	batch := `[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","method":"notifications/roots/list_changed"},{"jsonrpc":"2.0","id":"b","method":"tools/list"}]`
	old := startWire(t, t.TempDir(), 0)
	old.initialize("2025-03-26", "{}")
	old.send(batch)
	var answers []reply
	if err := json.Unmarshal(old.recv(), &answers); err != nil || len(answers) != 2 || string(answers[0].ID) != `"a"` || string(answers[1].ID) != `"b"` ||
		answers[0].Error != nil || !strings.Contains(string(answers[1].Result), "azero_apply") {
		t.Errorf("batch in 2025-03-26: %+v %v", answers, err)
	}
	old.send(`[{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}]`) // nothing to answer
	old.send(`[{"jsonrpc":"2.0","id":"c","method":"tools/list","params":{"cursor":5}},{"jsonrpc":"2.0","id":"d","method":"nope"}]`)
	answers = nil
	if err := json.Unmarshal(old.recv(), &answers); err != nil || len(answers) != 2 {
		t.Fatalf("batch of failures: %+v %v", answers, err)
	}
	wantError(t, answers[0], -32602, `"cursor"`)
	wantError(t, answers[1], -32601, `"nope"`)
	old.toolsListed("1")

	current := startWire(t, t.TempDir(), 0)
	current.initialize("2025-06-18", "{}")
	current.send(batch)
	answers = nil
	if err := json.Unmarshal(current.recv(), &answers); err != nil || len(answers) != 2 || string(answers[0].ID) != `"a"` || string(answers[1].ID) != `"b"` {
		t.Fatalf("batch in 2025-06-18: %+v %v", answers, err)
	}
	for _, a := range answers {
		wantError(t, a, -32600, "no JSON-RPC batches")
	}
	current.toolsListed("1")
}

// TestIDInUse: a request reusing the id of one still waiting for the user
// is refused with id null (its id would settle the first one), and the
// first one is answered when the user answers.
func TestIDInUse(t *testing.T) {
	t.Parallel()
	w := startWire(t, hooktest.NewRepo(t), 0)
	w.initialize("2025-06-18", `{"elicitation":{}}`)
	w.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"azero_write","arguments":{"path":"src/state.py","content":"x\n"}}}`)
	var question reply
	for question.Method != "elicitation/create" {
		if err := json.Unmarshal(w.recv(), &question); err != nil {
			t.Fatal(err)
		}
	}
	w.send(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`)
	wantError(t, w.answer("null"), -32600, "id 7 is still in use")
	w.send(`{"jsonrpc":"2.0","id":` + string(question.ID) + `,"result":{"action":"decline"}}`)
	if r := w.answer("7"); r.Error != nil || !strings.Contains(string(r.Result), "declined") {
		t.Errorf("the first call: %s %+v", r.Result, r.Error)
	}
	w.toolsListed("7") // answered, the id is free again
}

// TestTooLongMessage: a line over the limit is answered under the
// request's id and skipped; the session goes on.
func TestTooLongMessage(t *testing.T) {
	t.Parallel()
	w := startWire(t, t.TempDir(), 1024)
	w.initialize("2025-06-18", "{}")
	big := strings.Repeat("x", 2048)
	w.send(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"azero_write","arguments":{"path":"a","content":"` + big + `"}},"id":41}`)
	wantError(t, w.answer("41"), -32600, "longer than 1024 bytes")
	w.send(`{"jsonrpc":"2.0","result":{"content":"` + big + `"},"id":42}`) // a response: id null
	wantError(t, w.answer("null"), -32600, "skipped unread")
	w.toolsListed("43")
}

// FuzzServe: no line ends the session; a tools/list after it is answered.
func FuzzServe(f *testing.F) {
	for _, s := range []string{
		`{this is not json`, `"x"`, `{}`, `42`, `[]`, `[1]`, "\xff", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[1]}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"azero_runs","arguments":"x"}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":5}}`,
		`{"jsonrpc":"2.0","id":4,"error":{"code":1,"message":"x"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if strings.Contains(string(in), "probe") || strings.Contains(string(in), `\\u`) {
			t.Skip("the input could answer for the probe")
		}
		w := startWire(t, t.TempDir(), 4096)
		w.initialize("2025-06-18", "{}")
		if _, err := w.in.Write(append(in, '\n')); err != nil {
			t.Fatalf("the server stopped reading: %v", err)
		}
		w.toolsListed(`"probe"`)
	})
}
