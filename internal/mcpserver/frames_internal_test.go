package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// fakeSession is a session in a given state.
type fakeSession struct {
	version string
	busy    []jsonrpc.ID
}

func (f fakeSession) protocol() string { return f.version }

func (f fakeSession) inFlight(id jsonrpc.ID) bool {
	for _, b := range f.busy {
		if b == id {
			return true
		}
	}
	return false
}

// goWords are what no error text may show: Go's reflection, type and
// struct field names, fmt's complaints. The list is the tests' own, not
// the production detector.
var goWords = regexp.MustCompile(`reflect|Go struct|Go value|interface \{\}|map\[|\[\]uint8|mcp\.|mcpserver\.|jsonrpc2|Params|Args\b|%!|<nil>|<invalid`)

// wireReply is one JSON-RPC response as the wire carries it.
type wireReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// replies reads azero's answer: one response or a batch of them, each an
// error response with an id member (null or an id), a code the checks
// send and words without Go in them.
func replies(t testing.TB, reply []byte) []wireReply {
	t.Helper()
	var out []wireReply
	if bytes.HasPrefix(reply, []byte("[")) {
		if err := json.Unmarshal(reply, &out); err != nil || len(out) == 0 {
			t.Fatalf("reply %s: %v", reply, err)
		}
	} else {
		var one wireReply
		if err := json.Unmarshal(reply, &one); err != nil {
			t.Fatalf("reply %s: %v", reply, err)
		}
		out = []wireReply{one}
	}
	for _, r := range out {
		if r.JSONRPC != "2.0" || r.ID == nil || r.Error == nil || r.Result != nil {
			t.Fatalf("not a JSON-RPC 2.0 error response: %s", reply)
		}
		switch r.Error.Code {
		case jsonrpc.CodeParseError, jsonrpc.CodeInvalidRequest, jsonrpc.CodeInvalidParams:
		default:
			t.Fatalf("code %d in %s", r.Error.Code, reply)
		}
		if r.Error.Message == "" || goWords.MatchString(r.Error.Message) {
			t.Fatalf("message %q", r.Error.Message)
		}
	}
	return out
}

func TestCheck(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)
	cases := []struct {
		name    string
		line    string
		version string
		busy    []jsonrpc.ID
		forward bool
		code    int64  // the first reply's code
		id      string // the first reply's id
		text    string // in the first reply's message
		n       int    // replies in a batch answer (0: one response)
	}{
		{name: "a request", line: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, forward: true},
		{name: "a request in CRLF with blanks around", line: "  {\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"ping\"} \r", forward: true},
		{name: "a notification", line: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, forward: true},
		{name: "a notification with odd params", line: `{"jsonrpc":"2.0","method":"notifications/x","params":5}`, forward: true},
		{name: "a response", line: `{"jsonrpc":"2.0","id":4,"result":{}}`, forward: true},
		{name: "an error response", line: `{"jsonrpc":"2.0","id":4,"error":{"code":-1,"message":"no"}}`, forward: true},
		{name: "a batch before initialize", line: `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"}]`, forward: true},
		{name: "a batch in 2025-03-26", version: "2025-03-26", line: `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, forward: true},
		{name: "a blank line", line: " \t\r"},

		{name: "not JSON", line: `{this is not json`, code: -32700, id: "null", text: "not valid JSON"},
		{name: "truncated", line: `{"jsonrpc":"2.0","id":1,`, code: -32700, id: "null"},
		{name: "two values", line: `{} {}`, code: -32700, id: "null"},
		{name: "invalid UTF-8", line: "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}", code: -32700, id: "null", text: "UTF-8"},
		{name: "a bare string", line: `"x"`, code: -32600, id: "null", text: "not a string"},
		{name: "a number", line: `42`, code: -32600, id: "null", text: "not a number"},
		{name: "null", line: `null`, code: -32600, id: "null"},
		{name: "an empty object", line: `{}`, code: -32600, id: "null", text: `"jsonrpc"`},
		{name: "JSON-RPC 1.0", line: `{"jsonrpc":"1.0","id":3,"method":"ping"}`, code: -32600, id: "3", text: `"2.0"`},
		{name: "no method, no result", line: `{"jsonrpc":"2.0","id":3}`, code: -32600, id: "null", text: `no "method"`},
		{name: "method not a string", line: `{"jsonrpc":"2.0","id":3,"method":5}`, code: -32600, id: "3", text: "a number (5)"},
		{name: "id an object", line: `{"jsonrpc":"2.0","id":{},"method":"ping"}`, code: -32600, id: "null", text: `"id"`},
		{name: "id a fraction", line: `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, code: -32600, id: "null"},
		{name: "id too large for the SDK", line: `{"jsonrpc":"2.0","id":18014398509481985,"method":"ping"}`, code: -32600, id: "null"},
		{name: "id null on a request", line: `{"jsonrpc":"2.0","id":null,"method":"ping"}`, code: -32600, id: "null", text: "notification"},
		{name: "params an array", line: `{"jsonrpc":"2.0","id":"p","method":"tools/list","params":[1]}`, code: -32602, id: `"p"`, text: "an object, not an array"},
		{name: "params a string", line: `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":"x"}`, code: -32602, id: "9"},
		{name: "a response without id", line: `{"jsonrpc":"2.0","result":{}}`, code: -32600, id: "null"},
		{name: "a response's error malformed", line: `{"jsonrpc":"2.0","id":2,"error":"bad"}`, code: -32600, id: "null", text: `"error"`},
		{name: "an id still in flight", line: `{"jsonrpc":"2.0","id":7,"method":"ping"}`, busy: []jsonrpc.ID{mustID(t, 7)}, code: -32600, id: "null", text: "still in use"},
		{name: "nested too deep", line: long, code: -32600, id: "null", text: "levels"},

		{name: "an empty batch", line: `[]`, code: -32600, id: "null", text: "empty batch"},
		{name: "a batch of numbers", line: `[1,2,3]`, code: -32600, id: "null", n: 3},
		{name: "a batch with one bad message", line: `[{"jsonrpc":"2.0","id":1,"method":"ping"},{}]`, code: -32600, id: "1", text: "message 2", n: 2},
		{name: "a batch reusing an id", line: `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":1,"method":"ping"}]`, code: -32600, id: "1", n: 2},
		{name: "a batch in 2025-06-18", version: "2025-06-18", line: `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"}]`, code: -32600, id: "1", text: "own line", n: 1},
		{name: "a batch of notifications in 2025-11-25", version: "2025-11-25", line: `[{"jsonrpc":"2.0","method":"n"}]`, code: -32600, id: "null", text: "own line"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := check([]byte(tc.line), fakeSession{version: tc.version, busy: tc.busy})
			if tc.forward {
				if v.reply != nil || string(bytes.Join(v.forward, []byte("\n"))) != messages(t, tc.line) {
					t.Fatalf("forward %q, reply %s; want it forwarded", v.forward, v.reply)
				}
				return
			}
			if v.forward != nil {
				t.Fatalf("forwarded %q", v.forward)
			}
			if tc.code == 0 {
				if v.reply != nil {
					t.Fatalf("reply %s to a blank line", v.reply)
				}
				return
			}
			if v.reply == nil {
				t.Fatal("no reply")
			}
			got := replies(t, v.reply)
			if tc.n > 0 != bytes.HasPrefix(v.reply, []byte("[")) || (tc.n > 0 && len(got) != tc.n) {
				t.Errorf("reply %s, want %d replies in an array", v.reply, tc.n)
			}
			if got[0].Error.Code != tc.code || string(got[0].ID) != tc.id || !strings.Contains(got[0].Error.Message, tc.text) {
				t.Errorf("reply %s, want code %d, id %s, a message with %q", v.reply, tc.code, tc.id, tc.text)
			}
		})
	}
}

// messages is what a line forwards: itself, trimmed, or the messages of
// its batch, one a line.
func messages(t *testing.T, line string) string {
	line = strings.Trim(line, " \t\r")
	if !strings.HasPrefix(line, "[") {
		return line
	}
	var elems []json.RawMessage
	if err := json.Unmarshal([]byte(line), &elems); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range elems {
		out = append(out, string(compact(e)))
	}
	return strings.Join(out, "\n")
}

func mustID(t *testing.T, v float64) jsonrpc.ID {
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestCheckRecordsCalls: the forwarded requests are the ones azero waits
// to see answered, by the ids the SDK answers them with.
func TestCheckRecordsCalls(t *testing.T) {
	t.Parallel()
	v := check([]byte(`[{"jsonrpc":"2.0","id":1.0,"method":"ping"},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":"x","method":"tools/list"}]`), fakeSession{})
	want := []call{{mustID(t, 1), "ping"}, {must(jsonrpc.MakeID("x")), "tools/list"}}
	if len(v.calls) != len(want) || v.calls[0] != want[0] || v.calls[1] != want[1] {
		t.Errorf("calls %+v, want %+v", v.calls, want)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestLineReader(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		in    string
		max   int
		lines []string // "!" marks a line over the limit
	}{
		{"lines", "a\nbb\n\nccc", 8, []string{"a", "bb", "", "ccc"}},
		{"CRLF kept for the checks to trim", "a\r\nb\r\n", 8, []string{"a\r", "b\r"}},
		{"exactly the limit", "12345678\n123456789\nok\n", 8, []string{"12345678", "!", "ok"}},
		{"a long last line without newline", "ok\n1234567890", 8, []string{"ok", "!"}},
		{"nothing", "", 8, nil},
		{"one newline", "\n", 8, []string{""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, r := range []io.Reader{strings.NewReader(tc.in), iotest.OneByteReader(strings.NewReader(tc.in))} {
				lr := newLineReader(r, tc.max)
				var got []string
				for {
					line, err := lr.next()
					var long *lineTooLongError
					if errors.As(err, &long) {
						got = append(got, "!")
						continue
					}
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, string(line))
				}
				if strings.Join(got, "|") != strings.Join(tc.lines, "|") || len(got) != len(tc.lines) {
					t.Errorf("lines %q, want %q", got, tc.lines)
				}
			}
		})
	}
}

// repeat is an endless stream of one byte.
type repeat byte

func (r repeat) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

// TestLongLineIsNotHeld reads a 256 MiB line under a 1 MiB limit: it is
// answered as too long, the next line is read, and the reader allocates a
// small fraction of the line on the way.
func TestLongLineIsNotHeld(t *testing.T) {
	const size = 256 << 20
	head := `{"method":"tools/call","params":{"name":"azero_write","arguments":{"content":"`
	tail := `"}},"jsonrpc":"2.0","id":"late-id"}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n"
	in := io.MultiReader(strings.NewReader(head), io.LimitReader(repeat('x'), size), strings.NewReader(tail))
	lr := newLineReader(in, 1<<20)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := lr.next()
	runtime.ReadMemStats(&after)
	var long *lineTooLongError
	if !errors.As(err, &long) {
		t.Fatalf("err %v, want the line refused as too long", err)
	}
	if string(long.id) != `"late-id"` {
		t.Errorf("id %s, want the request's own, named after its params", long.id)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("reading a %d MiB line allocated %d MiB", size>>20, alloc>>20)
	}
	next, err := lr.next()
	if err != nil || string(next) != `{"jsonrpc":"2.0","id":2,"method":"ping"}` {
		t.Errorf("next line %q, %v", next, err)
	}
}

func TestIDSniffer(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		line string
		want string // "" for none
	}{
		{"id first", `{"jsonrpc":"2.0","id":7,"method":"x","params":{"a":"b"}}`, "7"},
		{"id last", `{"method":"tools/call","params":{"id":1,"x":[1,{"id":2}]},"jsonrpc":"2.0","id":"abc"}`, `"abc"`},
		{"id with escapes and spaces", `{ "method" : "x" , "id" : "a\"b}," }`, `"a\"b},"`},
		{"a response", `{"jsonrpc":"2.0","id":7,"result":{}}`, ""},
		{"id only nested", `{"method":"x","params":{"id":1}}`, ""},
		{"id an object", `{"method":"x","id":{"a":1}}`, ""},
		{"id a fraction", `{"method":"x","id":1.5}`, ""},
		{"method not a string", `{"method":5,"id":1}`, ""},
		{"an array", `[{"method":"x","id":1}]`, ""},
		{"garbage first", `}{"method":"x","id":1}`, ""},
		{"cut short", `{"method":"x","id":1`, ""},
		{"id given twice, the last nested", `{"method":"x","id":1,"id":[2]}`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, step := range []int{1, 3, len(tc.line)} {
				s := &idSniffer{}
				for i := 0; i < len(tc.line); i += step {
					s.feed([]byte(tc.line[i:min(i+step, len(tc.line))]))
				}
				if got := string(s.requestID()); got != tc.want {
					t.Errorf("fed %d bytes at a time: id %q, want %q", step, got, tc.want)
				}
			}
		})
	}
}

func TestAnswerHidesGoInternals(t *testing.T) {
	t.Parallel()
	var typeErr error
	{
		var v struct {
			Name string `json:"name"`
		}
		typeErr = json.Unmarshal([]byte(`{"name":5}`), &v)
	}
	cases := []struct {
		name   string
		method string
		err    error
		code   int64
		text   string
	}{
		{"before initialize", "tools/list", errors.New(`method "tools/list" is invalid during session initialization`), -32600, "not initialized"},
		{"initialize twice", "initialize", errors.New(`duplicate "initialize" received`), -32600, "already initialized"},
		{"a param of the wrong type", "tools/call", errors.Join(&jsonrpc.Error{Code: -32602, Message: "invalid params"}, typeErr), -32602, `"name" in the params of "tools/call" must be a string, not a number`},
		{"an uncoded error", "tools/list", errors.New("boom"), -32603, "boom"},
		{"an uncoded error showing Go", "tools/list", errors.New("unmarshaling into a *mcp.ListToolsParams"), -32603, "internal error"},
		{"a coded error showing Go", "x", &jsonrpc.Error{Code: -32602, Message: "<invalid reflect.Value>"}, -32602, `the params of "x"`},
		{"a coded error quoting the client", "a.B", &jsonrpc.Error{Code: -32601, Message: `method not found: "a.B"`}, -32601, `"a.B"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := answer(tc.method, tc.err)
			if got.Code != tc.code || !strings.Contains(got.Message, tc.text) || goWords.MatchString(got.Message) {
				t.Errorf("answer %d %q, want %d with %q", got.Code, got.Message, tc.code, tc.text)
			}
		})
	}
}

// seeds are lines for the fuzz targets: the malformed frames of issue 24
// and their neighbours.
var seeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
	`{this is not json`, `"x"`, `{}`, `42`, `[]`, `[1,2]`, `null`, "\xff\xfe",
	`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
	`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"azero_apply","arguments":"x"}}`,
	`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":5}}`,
	`{"jsonrpc":"2.0","id":4,"error":{"code":1.5,"message":"x"}}`,
	`{"jsonrpc":"2.0","id":"\u0000","method":"ping","params":null}`,
}

// FuzzCheck: whatever a line holds, it is either handed to the SDK in a
// form the SDK reads without error, or answered with JSON-RPC errors that
// show nothing of Go.
func FuzzCheck(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s), uint8(0))
	}
	versions := []string{"", "2025-03-26", "2025-06-18", "2025-11-25"}
	f.Fuzz(func(t *testing.T, line []byte, version uint8) {
		s := fakeSession{version: versions[int(version)%len(versions)]}
		v := check(line, s)
		switch {
		case v.forward != nil && v.reply != nil:
			t.Fatalf("both forwarded and answered: %s", v.reply)
		case v.reply != nil:
			replies(t, v.reply)
		case v.forward != nil:
			if v.batch && s.version >= batchesRemoved {
				t.Fatalf("a batch forwarded in %s", s.version)
			}
			seen := map[jsonrpc.ID]bool{}
			for _, msg := range v.forward {
				if !bytes.Equal(bytes.TrimSpace(msg), msg) || bytes.ContainsAny(msg, "\n") {
					t.Fatalf("forwarded %q", msg)
				}
				sdkReads(t, msg, seen)
			}
		default:
			if len(bytes.Trim(line, " \t\r\n")) != 0 {
				t.Fatalf("line %q neither forwarded nor answered", line)
			}
		}
	})
}

// sdkReads fails unless the SDK's stdio connection reads the message as
// one request or response (readBatch in the SDK's mcp/transport.go), and
// its id, if a request's, is not in seen.
func sdkReads(t *testing.T, line []byte, seen map[jsonrpc.ID]bool) {
	t.Helper()
	if !json.Valid(line) || line[0] != '{' || depth(line) > maxDepth {
		t.Fatalf("forwarded %q", line)
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		t.Fatalf("the SDK cannot read %q: %v", line, err)
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		if seen[req.ID] {
			t.Fatalf("id %v twice", req.ID.Raw())
		}
		seen[req.ID] = true
	}
}

// FuzzLineReader: lines come out as a plain split on "\n" would give them,
// those over the limit refused, however the stream is cut.
func FuzzLineReader(f *testing.F) {
	f.Add([]byte("a\nbb\n\nccc"), uint8(2), false)
	f.Add([]byte("123456789\nok"), uint8(8), true)
	f.Fuzz(func(t *testing.T, in []byte, limit uint8, oneByte bool) {
		max := int(limit%64) + 1
		var r io.Reader = bytes.NewReader(in)
		if oneByte {
			r = iotest.OneByteReader(r)
		}
		want := bytes.Split(in, []byte("\n"))
		if len(want[len(want)-1]) == 0 {
			want = want[:len(want)-1]
		}
		lr := newLineReader(r, max)
		for i := 0; ; i++ {
			line, err := lr.next()
			if errors.Is(err, io.EOF) {
				if i != len(want) {
					t.Fatalf("%d lines, want %d", i, len(want))
				}
				return
			}
			if i >= len(want) {
				t.Fatalf("line %d %q beyond the %d lines", i, line, len(want))
			}
			var long *lineTooLongError
			switch {
			case errors.As(err, &long):
				if len(want[i]) <= max {
					t.Fatalf("line %d (%d bytes) refused under a limit of %d", i, len(want[i]), max)
				}
			case err != nil:
				t.Fatal(err)
			case !bytes.Equal(line, want[i]):
				t.Fatalf("line %d %q, want %q", i, line, want[i])
			}
		}
	})
}

// FuzzIDSniffer: an id the sniffer finds is the request's own, and on a
// plain request (no escapes, short members) it finds it.
func FuzzIDSniffer(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":7,"method":"x","params":{"id":8}}`), uint8(1))
	f.Add([]byte(`{"method":"x","params":[],"id":"z"}`), uint8(3))
	f.Fuzz(func(t *testing.T, line []byte, step uint8) {
		s := &idSniffer{}
		n := int(step) + 1
		for i := 0; i < len(line); i += n {
			s.feed(line[i:min(i+n, len(line))])
		}
		got := s.requestID()
		var m map[string]json.RawMessage
		if json.Unmarshal(line, &m) != nil {
			return // not JSON: any guess is answered as id null or not at all
		}
		var method string
		_, idOK := idKey(m["id"])
		isRequest := idOK && json.Unmarshal(m["method"], &method) == nil
		if got != nil && (!isRequest || !bytes.Equal(got, compact(m["id"]))) {
			t.Fatalf("sniffed id %s from %s", got, line)
		}
		plain := !bytes.Contains(line, []byte(`\`)) && len(m["id"]) < sniffKeep && len(m["method"]) < sniffKeep
		if got == nil && isRequest && plain {
			t.Fatalf("no id sniffed from %s", line)
		}
	})
}

// BenchmarkCheck: the checks every line passes before the SDK reads it,
// on a tools/call carrying 64 KiB of edits.
func BenchmarkCheck(b *testing.B) {
	edits, _ := json.Marshal(strings.Repeat("<<<<<<< SEARCH\nold line\n=======\nnew line\n>>>>>>> REPLACE\n", 1200)[:64<<10])
	line := []byte(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"azero_apply","arguments":{"file":"a.go","edits":` + string(edits) + `}}}`)
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if v := check(line, fakeSession{}); v.reply != nil {
			b.Fatal(string(v.reply))
		}
	}
}
