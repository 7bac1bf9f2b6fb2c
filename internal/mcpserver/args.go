package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addTool adds a tool whose input schema azero keeps, to check arguments
// against it in its own words (checkArguments).
func addTool[In, Out any](s *server, srv *mcp.Server, t *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) error {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		return fmt.Errorf("the input schema of %s: %w", t.Name, err)
	}
	t.InputSchema = schema
	s.schemas[t.Name] = schema
	mcp.AddTool(srv, t, h)
	return nil
}

// checkArguments checks a tools/call's arguments before the SDK does.
// Arguments that are not an object break the protocol (CallToolRequest's
// arguments are an object): -32602. Arguments of the wrong name or type
// are the model's to fix, so they are a tool result marked isError (MCP
// 2025-11-25, SEP-1303), naming each argument as the schema names it; the
// SDK's own texts for these show Go internals ("<invalid reflect.Value>",
// "Go struct field RunsArgs.limit").
func (s *server) checkArguments(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		call, ok := req.(*mcp.CallToolRequest)
		if method != "tools/call" || !ok || call.Params == nil {
			return next(ctx, method, req)
		}
		schema, known := s.schemas[call.Params.Name]
		if !known {
			return next(ctx, method, req) // the SDK answers an unknown tool
		}
		args := call.Params.Arguments
		if k := kindOf(args); len(args) > 0 && k != "an object" && k != "null" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
				Message: fmt.Sprintf(`invalid params: the arguments of %s must be an object (argument names to values), not %s`, call.Params.Name, k)}
		}
		if problems := argumentProblems(call.Params.Name, schema, args); len(problems) > 0 {
			text := fmt.Sprintf("%s was not run: %s.", call.Params.Name, strings.Join(problems, "; "))
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		}
		return next(ctx, method, req)
	}
}

// argumentProblems lists what is wrong with args (an object or null)
// under schema, one phrase each.
func argumentProblems(tool string, schema *jsonschema.Schema, args json.RawMessage) []string {
	var m map[string]json.RawMessage
	if len(args) > 0 && json.Unmarshal(args, &m) != nil {
		return []string{"the arguments cannot be read"}
	}
	names := schema.PropertyOrder
	if len(names) == 0 {
		for name := range schema.Properties {
			names = append(names, name)
		}
		slices.Sort(names)
	}
	var problems []string
	var unknown []string
	for name := range m {
		if _, ok := schema.Properties[name]; !ok {
			unknown = append(unknown, name)
		}
	}
	slices.Sort(unknown)
	for _, name := range unknown {
		problems = append(problems, fmt.Sprintf("it has no argument %q (its arguments: %s)", name, strings.Join(names, ", ")))
	}
	for _, name := range names {
		prop := schema.Properties[name]
		v, given := m[name]
		required := slices.Contains(schema.Required, name)
		switch {
		case !given && required:
			problems = append(problems, fmt.Sprintf("argument %q is required: %s", name, prop.Description))
		case given:
			if p := valueProblem(prop, v); p != "" {
				if !required && kindOf(v) == "null" {
					p += " (leave it out for the default)"
				}
				problems = append(problems, fmt.Sprintf("argument %q %s", name, p))
			}
		}
	}
	return problems
}

// valueProblem is what is wrong with v under a property's schema, "" when
// nothing: the JSON types azero's tools take (string, boolean, integer,
// number).
func valueProblem(prop *jsonschema.Schema, v json.RawMessage) string {
	types := prop.Types
	if prop.Type != "" {
		types = []string{prop.Type}
	}
	if len(types) == 0 {
		return ""
	}
	k := kindOf(v)
	for _, t := range types {
		switch {
		case t == "string" && k == "a string",
			t == "boolean" && k == "a boolean",
			t == "null" && k == "null",
			t == "object" && k == "an object",
			t == "array" && k == "an array":
			return ""
		case (t == "integer" || t == "number") && k == "a number":
			var f float64
			if json.Unmarshal(v, &f) != nil || math.IsInf(f, 0) {
				return "is out of range: " + string(compact(v))
			}
			if t == "number" {
				return ""
			}
			if f != math.Trunc(f) {
				return "must be a whole number, not " + string(compact(v))
			}
			if math.Abs(f) > 1<<53 {
				return "is out of range: " + string(compact(v))
			}
			return ""
		}
	}
	want := make([]string, len(types))
	for i, t := range types {
		want[i] = map[string]string{"string": "a string", "boolean": "true or false", "integer": "an integer",
			"number": "a number", "null": "null", "object": "an object", "array": "an array"}[t]
	}
	return fmt.Sprintf("must be %s, not %s", strings.Join(want, " or "), describe(v))
}
