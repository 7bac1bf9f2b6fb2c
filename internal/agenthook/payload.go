package agenthook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// MaxPayloadBytes bounds what the hook reads from stdin. A Write of a
// larger file is refused: azero cannot review what it cannot read.
const MaxPayloadBytes = 64 << 20

// EventPreToolUse is the only hook event azero answers.
const EventPreToolUse = "PreToolUse"

// Payload is what Claude Code sends a PreToolUse command hook on stdin.
// Fields azero does not use are ignored; Claude Code adds some over time.
type Payload struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	PermissionMode string          `json:"permission_mode"`
	HookEventName  string          `json:"hook_event_name"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id"`
}

// WriteInput is tool_input of Write.
type WriteInput struct {
	FilePath string  `json:"file_path"`
	Content  *string `json:"content"`
}

// EditInput is tool_input of Edit, and one element of MultiEdit's edits.
type EditInput struct {
	FilePath   string  `json:"file_path,omitempty"`
	OldString  *string `json:"old_string"`
	NewString  *string `json:"new_string"`
	ReplaceAll bool    `json:"replace_all"`
}

// MultiEditInput is tool_input of MultiEdit.
type MultiEditInput struct {
	FilePath string      `json:"file_path"`
	Edits    []EditInput `json:"edits"`
}

// NotebookEditInput is tool_input of NotebookEdit.
type NotebookEditInput struct {
	NotebookPath string  `json:"notebook_path"`
	CellID       string  `json:"cell_id"`
	NewSource    *string `json:"new_source"`
	CellType     string  `json:"cell_type"`
	EditMode     string  `json:"edit_mode"` // replace (also when empty), insert or delete
}

// BashInput is tool_input of Bash.
type BashInput struct {
	Command *string `json:"command"`
}

// ParsePayload reads one hook payload. It refuses anything but a single
// JSON object of at most MaxPayloadBytes with a tool_name; the tool input
// is decoded later, by the tool's rule.
func ParsePayload(r io.Reader) (Payload, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxPayloadBytes+1))
	if err != nil {
		return Payload{}, fmt.Errorf("read the hook payload from stdin: %w", err)
	}
	if len(data) > MaxPayloadBytes {
		return Payload{}, fmt.Errorf("the hook payload is larger than %d MiB; azero reviews nothing it cannot read whole", MaxPayloadBytes>>20)
	}
	var p Payload
	if err := decodeStrict(data, &p); err != nil {
		return Payload{}, fmt.Errorf("the hook payload is not a JSON object Claude Code sends: %w", err)
	}
	if p.ToolName == "" {
		return Payload{}, errors.New("the hook payload has no tool_name: configure azero as a PreToolUse hook")
	}
	return p, nil
}

// decodeStrict decodes exactly one JSON object into v: no trailing data, no
// top-level null, array or scalar.
func decodeStrict(data []byte, v any) error {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return errors.New("expected a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("unexpected data after the JSON object")
	}
	return nil
}

// toolInput decodes the payload's tool_input into v.
func (p Payload) toolInput(v any) error {
	if err := decodeStrict(p.ToolInput, v); err != nil {
		return fmt.Errorf("the %s tool_input is malformed: %w", p.ToolName, err)
	}
	return nil
}
