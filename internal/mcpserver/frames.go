package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// MaxMessageBytes is the longest message `azero mcp` reads: one line of
// newline-delimited JSON, its line ending excluded, of at most 16 MiB (the
// MCP Go SDK's own default). A longer line is answered with an error and
// skipped; no more than this many bytes of it are ever held in memory.
const MaxMessageBytes = 16 << 20

// maxDepth is how deeply a message may nest: the SDK's JSON decoder refuses
// deeper values, and a refusal inside the SDK would end the session.
const maxDepth = 1000

// lineTooLongError reports a line over the limit, read to its end and
// dropped. id is the request's id when the line was a request that named
// its id and method at the top level (in any order), else nil.
type lineTooLongError struct {
	limit int
	id    json.RawMessage
}

func (e *lineTooLongError) Error() string {
	return fmt.Sprintf("a message longer than %d bytes", e.limit)
}

// lineReader splits a stream into newline-delimited lines, keeping at most
// max bytes of one.
type lineReader struct {
	r    *bufio.Reader
	max  int
	line []byte
	eof  bool
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its "\n"; the slice is valid until
// the following call. A line over the limit is an *lineTooLongError, the end
// of the stream io.EOF (a last line without "\n" still counts as a line).
func (lr *lineReader) next() ([]byte, error) {
	if lr.eof {
		return nil, io.EOF
	}
	if cap(lr.line) > 1<<20 {
		lr.line = nil // one long message must not pin its buffer for the session
	}
	lr.line = lr.line[:0]
	var (
		n    int
		long *idSniffer
		read bool
	)
	for {
		chunk, err := lr.r.ReadSlice('\n')
		read = read || len(chunk) > 0
		ended := err == nil
		if ended {
			chunk = chunk[:len(chunk)-1]
		}
		n += len(chunk)
		if long == nil && n > lr.max {
			long = &idSniffer{}
			long.feed(lr.line)
			lr.line = lr.line[:0]
		}
		if long != nil {
			long.feed(chunk)
		} else {
			lr.line = append(lr.line, chunk...)
		}
		if ended {
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			lr.eof = true
			if !read {
				return nil, io.EOF
			}
			break
		}
		return nil, err
	}
	if long != nil {
		return nil, &lineTooLongError{limit: lr.max, id: long.requestID()}
	}
	return lr.line, nil
}

// idSniffer finds the top-level "id" and "method" of a JSON object streamed
// through it, holding only a few bytes: a request too long to read still
// gets its answer under its own id. It validates nothing; requestID does.
type idSniffer struct {
	depth   int
	inStr   bool
	esc     bool
	keyPos  bool // at depth 1, the next string is a member's name
	done    bool
	nested  bool // the current member's value is an object or array
	over    bool // the current member's name or value is too long to keep
	key     []byte
	val     []byte
	id      []byte
	method  []byte
	started bool
}

// sniffKeep bounds what the sniffer keeps of a name or a value.
const sniffKeep = 256

func (s *idSniffer) feed(p []byte) {
	for _, c := range p {
		if s.done {
			return
		}
		if s.inStr {
			s.keep(c)
			switch {
			case s.esc:
				s.esc = false
			case c == '\\':
				s.esc = true
			case c == '"':
				s.inStr = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\r', '\n':
		case '{', '[':
			if s.depth == 0 {
				if c != '{' || s.started {
					s.done = true
					continue
				}
				s.started, s.keyPos = true, true
			} else if s.depth == 1 {
				s.nested = true
			}
			s.depth++
		case '}', ']':
			if s.depth == 0 {
				s.done = true
				continue
			}
			s.depth--
			if s.depth == 0 {
				s.endMember()
				s.done = true
			}
		case ',':
			if s.depth == 1 {
				s.endMember()
				s.keyPos = true
			}
		case ':':
			if s.depth == 1 {
				s.keyPos = false
			}
		case '"':
			s.inStr = true
			s.keep(c)
		default:
			if s.depth == 0 {
				s.done = true
				continue
			}
			s.keep(c)
		}
	}
}

func (s *idSniffer) keep(c byte) {
	if s.depth != 1 {
		return
	}
	dst := &s.val
	if s.keyPos {
		dst = &s.key
	}
	if len(*dst) >= sniffKeep {
		s.over = true
		return
	}
	*dst = append(*dst, c)
}

// endMember keeps the member just read if it is the id or the method; a
// later one replaces an earlier one, as in JSON decoders.
func (s *idSniffer) endMember() {
	var keep *[]byte
	switch string(s.key) {
	case `"id"`:
		keep = &s.id
	case `"method"`:
		keep = &s.method
	}
	if keep != nil {
		*keep = nil
		if !s.nested && !s.over {
			*keep = append([]byte{}, s.val...)
		}
	}
	s.key, s.val = s.key[:0], s.val[:0]
	s.nested, s.over = false, false
}

// requestID is the id of a request seen whole enough: a valid id and a
// string method at the top level. Anything else is answered with id null.
func (s *idSniffer) requestID() json.RawMessage {
	if s.id == nil || s.method == nil {
		return nil
	}
	var method string
	if json.Unmarshal(s.method, &method) != nil {
		return nil
	}
	if _, ok := idKey(s.id); !ok {
		return nil
	}
	return json.RawMessage(s.id)
}

// verdict is what azero does with one line: hand it to the SDK (forward:
// one message, trimmed, or the messages of a batch, one by one), or answer
// it itself (reply: one response, or an array of them for a batch). A line
// with neither (a blank one) is skipped.
type verdict struct {
	forward [][]byte
	batch   bool
	calls   []call // the requests forwarded, for the in-flight table
	reply   []byte
}

// call is a request azero forwards: its id and method.
type call struct {
	id     jsonrpc.ID
	method string
}

// session is what the line checks need to know about the session.
type session interface {
	// protocol is the negotiated protocol version, "" before initialize.
	protocol() string
	// inFlight reports whether a request with this id is still unanswered.
	inFlight(id jsonrpc.ID) bool
}

// batchesRemoved is the first MCP version without JSON-RPC batches. Before
// initialize (no version yet) and in older versions azero takes them: it
// hands their messages to the SDK one by one and answers in one array
// (the SDK's own batches wait forever for an answer to a notification in
// one).
const batchesRemoved = "2025-06-18"

// check decides what to do with one line. Whatever the line holds, what
// is forwarded is JSON-RPC messages the SDK reads without error, so no line
// can end the session; everything else gets the JSON-RPC 2.0 answer.
func check(line []byte, s session) verdict {
	line = bytes.Trim(line, " \t\r\n")
	if len(line) == 0 {
		return verdict{}
	}
	if !utf8.Valid(line) {
		return replyOne(nil, jsonrpc.CodeParseError, fmt.Sprintf("parse error: the message is not valid UTF-8 (byte %d)", invalidUTF8At(line)))
	}
	if err := syntaxError(line); err != "" {
		return replyOne(nil, jsonrpc.CodeParseError, "parse error: the message is not valid JSON: "+err)
	}
	if depth(line) > maxDepth {
		return replyOne(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: the message nests more than %d levels deep", maxDepth))
	}
	if line[0] == '[' {
		return checkBatch(line, s)
	}
	m, perr := checkMessage(line, s)
	if perr != nil {
		return verdict{reply: perr.encode()}
	}
	v := verdict{forward: [][]byte{line}}
	if m.isCall {
		v.calls = []call{{m.id, m.method}}
	}
	return v
}

func checkBatch(line []byte, s session) verdict {
	var elems []json.RawMessage
	if err := json.Unmarshal(line, &elems); err != nil {
		return replyOne(nil, jsonrpc.CodeInvalidRequest, "invalid request: the batch cannot be read")
	}
	if len(elems) == 0 {
		return replyOne(nil, jsonrpc.CodeInvalidRequest, "invalid request: an empty batch")
	}
	refusal := ""
	if p := s.protocol(); p >= batchesRemoved {
		refusal = fmt.Sprintf("not run: this session speaks MCP %s, which has no JSON-RPC batches (they left MCP in %s); send each message on its own line", p, batchesRemoved)
	}
	msgs := make([]message, len(elems))
	errs := make([]*protoError, len(elems))
	seen := make(map[jsonrpc.ID]bool)
	for i, raw := range elems {
		msgs[i], errs[i] = checkMessage(raw, s)
		if errs[i] != nil {
			if refusal == "" {
				refusal = fmt.Sprintf("not run: message %d of the batch is invalid, and a batch runs whole or not at all", i+1)
			}
			continue
		}
		if msgs[i].isCall {
			if seen[msgs[i].id] {
				errs[i] = &protoError{code: jsonrpc.CodeInvalidRequest, msg: fmt.Sprintf(`invalid request: id %s appears twice in the batch`, msgs[i].rawID)}
				if refusal == "" {
					refusal = fmt.Sprintf("not run: message %d of the batch reuses an id, and a batch runs whole or not at all", i+1)
				}
			}
			seen[msgs[i].id] = true
		}
	}
	if refusal == "" {
		v := verdict{batch: true}
		for i, m := range msgs {
			v.forward = append(v.forward, compact(elems[i]))
			if m.isCall {
				v.calls = append(v.calls, call{m.id, m.method})
			}
		}
		return v
	}
	var replies []json.RawMessage
	for i, m := range msgs {
		switch {
		case errs[i] != nil:
			replies = append(replies, errs[i].encode())
		case m.isCall:
			replies = append(replies, (&protoError{id: m.rawID, code: jsonrpc.CodeInvalidRequest, msg: refusal}).encode())
		}
	}
	if len(replies) == 0 {
		// Only notifications and responses, none of them run: one answer
		// with id null says so.
		return replyOne(nil, jsonrpc.CodeInvalidRequest, refusal)
	}
	out, _ := json.Marshal(replies)
	return verdict{reply: out}
}

// message is one checked JSON-RPC message.
type message struct {
	isCall bool
	id     jsonrpc.ID
	rawID  json.RawMessage
	method string
}

// checkMessage checks one message as JSON-RPC 2.0 and MCP define it. A
// problem comes back as the answer to send, under the request's id when the
// message is a request whose id could be read; a response or a message
// without a readable id is answered with id null, so that the answer is
// never mistaken for the reply to one of the client's own requests.
func checkMessage(raw json.RawMessage, s session) (message, *protoError) {
	if k := kindOf(raw); k != "an object" {
		return message{}, &protoError{code: jsonrpc.CodeInvalidRequest, msg: "invalid request: a JSON-RPC message is an object, not " + k}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return message{}, &protoError{code: jsonrpc.CodeInvalidRequest, msg: "invalid request: the message cannot be read"}
	}
	rawMethod, hasMethod := m["method"]
	rawID, hasID := m["id"]
	var (
		id      jsonrpc.ID
		replyID json.RawMessage
	)
	if hasID {
		if kindOf(rawID) == "null" {
			if hasMethod {
				return message{}, &protoError{code: jsonrpc.CodeInvalidRequest, msg: `invalid request: "id" is null: give a request a string or integer id, or leave "id" out of a notification`}
			}
			return message{}, &protoError{code: jsonrpc.CodeInvalidRequest, msg: `invalid response: "id" is null`}
		}
		var ok bool
		if id, ok = idKey(rawID); !ok {
			return message{}, &protoError{code: jsonrpc.CodeInvalidRequest, msg: `invalid request: "id" must be a string or an integer (at most 2^53), not ` + describe(rawID)}
		}
		if hasMethod {
			replyID = compact(rawID)
		}
	}
	if v, ok := m["jsonrpc"]; !ok || string(compact(v)) != `"2.0"` {
		return message{}, &protoError{id: replyID, code: jsonrpc.CodeInvalidRequest, msg: `invalid request: "jsonrpc" must be "2.0"`}
	}
	msg := message{rawID: replyID, id: id}
	if hasMethod {
		if json.Unmarshal(rawMethod, &msg.method) != nil {
			return message{}, &protoError{id: replyID, code: jsonrpc.CodeInvalidRequest, msg: `invalid request: "method" must be a string, not ` + describe(rawMethod)}
		}
		msg.isCall = hasID
		if p, ok := m["params"]; ok && msg.isCall {
			if k := kindOf(p); k != "an object" && k != "null" {
				return message{}, &protoError{id: replyID, code: jsonrpc.CodeInvalidParams, msg: fmt.Sprintf(`invalid params: the params of %q must be an object, not %s`, msg.method, k)}
			}
		}
		if msg.isCall && s.inFlight(id) {
			// Answering under this id would settle the earlier request in
			// the client's eyes.
			return message{}, &protoError{code: jsonrpc.CodeInvalidRequest, msg: fmt.Sprintf(`invalid request: id %s is still in use by a request not yet answered`, replyID)}
		}
	} else {
		_, hasResult := m["result"]
		e, hasError := m["error"]
		switch {
		case !hasID || (!hasResult && !hasError):
			return message{}, &protoError{code: jsonrpc.CodeInvalidRequest, msg: `invalid request: no "method": a request names its method, and a response carries "result" or "error" with the id it answers`}
		case hasError && !validWireError(e):
			return message{}, &protoError{code: jsonrpc.CodeInvalidRequest, msg: `invalid response: "error" must be an object with an integer "code" and a string "message"`}
		}
	}
	// The SDK's own reading is the last word: whatever it would refuse is
	// answered here, never handed on to end the session.
	if _, err := jsonrpc.DecodeMessage(raw); err != nil {
		return message{}, &protoError{id: replyID, code: jsonrpc.CodeInvalidRequest, msg: "invalid request: not a JSON-RPC 2.0 message"}
	}
	return msg, nil
}

func validWireError(raw json.RawMessage) bool {
	var e struct {
		Code    *json.Number `json:"code"`
		Message *string      `json:"message"`
	}
	if kindOf(raw) != "an object" || json.Unmarshal(raw, &e) != nil || e.Code == nil || e.Message == nil {
		return false
	}
	_, err := strconv.ParseInt(e.Code.String(), 10, 64)
	return err == nil
}

// idKey reads a request id as the SDK keys it: a string, or an integer
// that survives the SDK's float64 reading (at most 2^53 either way).
func idKey(raw json.RawMessage) (jsonrpc.ID, bool) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return jsonrpc.ID{}, false
	}
	if f, ok := v.(float64); ok && (f != math.Trunc(f) || math.Abs(f) > 1<<53) {
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(v) // strings and numbers; the other types fail
	return id, err == nil && id.IsValid()
}

// protoError is an answer azero sends itself; id nil is id null.
type protoError struct {
	id   json.RawMessage
	code int64
	msg  string
}

func (e *protoError) encode() []byte {
	id := e.id
	if id == nil {
		id = json.RawMessage("null")
	}
	out, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: e.code, Message: e.msg}})
	return out
}

func replyOne(id json.RawMessage, code int64, msg string) verdict {
	return verdict{reply: (&protoError{id: id, code: code, msg: msg}).encode()}
}

// kindOf names the JSON type of a valid value, with its article.
func kindOf(raw []byte) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// describe is a value as an error names it: its type, and the value
// itself when it is short.
func describe(raw json.RawMessage) string {
	k := kindOf(raw)
	c := compact(raw)
	if k == "null" || len(c) > 40 || k == "an object" || k == "an array" {
		return k
	}
	return k + " (" + string(c) + ")"
}

func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// syntaxError is why line is not JSON, "" when it is one JSON value.
func syntaxError(line []byte) string {
	if json.Valid(line) {
		return ""
	}
	var v any
	err := json.Unmarshal(line, &v)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s (at byte %d)", se.Error(), se.Offset)
	}
	return "it is not one JSON value"
}

func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return len(b)
}

// depth is how deeply a valid JSON text nests objects and arrays.
func depth(b []byte) int {
	var d, most int
	inStr, esc := false, false
	for _, c := range b {
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			d++
			most = max(most, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return most
}
