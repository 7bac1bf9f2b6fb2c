package mcpserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A request before "initialize" is answered with -32600 (invalid request):
// the request is well formed but not valid at this point of MCP's
// lifecycle. -32601 would say the method does not exist and -32602 would
// blame its params; the server-defined range (-32000 to -32099) is where
// MCP puts its own codes (-32002, resource not found), so a code of
// azero's there could one day mean something else to a client.
const codeNotInitialized = jsonrpc.CodeInvalidRequest

// answer is the error azero sends for the SDK's answer err to a request
// for method: always a JSON-RPC code (the SDK leaves some at 0), and words
// about the protocol, never Go's (type names, struct fields, reflection).
func answer(method string, err error) *jsonrpc.Error {
	var wire *jsonrpc.Error
	coded := errors.As(err, &wire)
	text := err.Error()
	var typeErr *json.UnmarshalTypeError
	switch {
	case !coded && text == fmt.Sprintf("method %q is invalid during session initialization", method):
		return &jsonrpc.Error{Code: codeNotInitialized, Message: fmt.Sprintf(`the session is not initialized: %q came before "initialize", the request every session starts with`, method)}
	case !coded && text == `duplicate "initialize" received`:
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: `the session is already initialized: "initialize" comes once, first`}
	case errors.As(err, &typeErr):
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: paramsTypeMessage(method, typeErr)}
	case !coded && method == "initialize":
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: `invalid params: "initialize" needs params with protocolVersion, capabilities and clientInfo`}
	case !coded:
		wire = &jsonrpc.Error{Code: jsonrpc.CodeInternalError}
	default:
		wire = &jsonrpc.Error{Code: wire.Code, Data: wire.Data}
	}
	wire.Message = text
	if showsGoInternals(text) {
		wire.Message = genericMessage(wire.Code, method)
	}
	return wire
}

// paramsTypeMessage says which param has the wrong JSON type, by its name
// on the wire.
func paramsTypeMessage(method string, e *json.UnmarshalTypeError) string {
	got := valueKind(e.Value)
	want := jsonTypeOf(e.Type)
	if e.Field == "" {
		return fmt.Sprintf("invalid params: the params of %q must be %s, not %s", method, want, got)
	}
	return fmt.Sprintf("invalid params: %q in the params of %q must be %s, not %s", e.Field, method, want, got)
}

// valueKind names the JSON type of an UnmarshalTypeError's value: the SDK's
// decoder (segmentio's) quotes the value's JSON text, encoding/json names
// its type.
func valueKind(v string) string {
	if raw, err := strconv.Unquote(v); err == nil {
		return kindOf([]byte(raw))
	}
	word, _, _ := strings.Cut(v, " ")
	switch word {
	case "string":
		return "a string"
	case "number":
		return "a number"
	case "bool":
		return "a boolean"
	case "array":
		return "an array"
	case "object":
		return "an object"
	}
	return "another type"
}

// jsonTypeOf names the JSON type a Go type is read from.
func jsonTypeOf(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer in range"
	case reflect.Float32, reflect.Float64:
		return "a number in range"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "another type"
}

// goInternals matches what Go, not the protocol, would put in an error
// text: reflection, Go type and struct field names, fmt's verbs gone wrong.
var goInternals = regexp.MustCompile(`reflect|<invalid|<nil>|Go (struct field|value|type)|interface ?\{\}|map\[|\[\]uint8|%!|\b[a-z][a-z0-9]*\.[A-Z][A-Za-z0-9]*`)

// quoted matches Go-quoted strings: the client's own words (a method, a
// tool name) quoted back, which may look like anything.
var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// showsGoInternals reports whether an error text, outside what it quotes,
// shows Go's internals.
func showsGoInternals(text string) bool {
	return goInternals.MatchString(quoted.ReplaceAllString(text, `""`))
}

// genericMessage is the text of an error whose own text would show Go's
// internals.
func genericMessage(code int64, method string) string {
	switch code {
	case jsonrpc.CodeParseError:
		return "parse error"
	case jsonrpc.CodeInvalidRequest:
		return fmt.Sprintf("invalid request: %q", method)
	case jsonrpc.CodeMethodNotFound:
		return fmt.Sprintf("method not found: %q", method)
	case jsonrpc.CodeInvalidParams:
		return fmt.Sprintf("invalid params: the params of %q do not match the method's schema in the MCP specification", method)
	}
	return fmt.Sprintf("internal error in azero's MCP server answering %q", method)
}

// tooLongMessage answers a line over the limit.
func tooLongMessage(limit int) string {
	size := fmt.Sprintf("%d bytes", limit)
	if limit%(1<<20) == 0 {
		size = fmt.Sprintf("%d MiB", limit>>20)
	}
	return strings.Join([]string{
		fmt.Sprintf("invalid request: the message is longer than %s, the most azero mcp reads in one line;", size),
		"it was skipped unread. Send less per call (split a large file's edits into several azero_apply calls)",
	}, " ")
}
