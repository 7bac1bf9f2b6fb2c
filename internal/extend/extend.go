package extend

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
)

// Error reports why new members cannot be merged into the file.
type Error struct {
	Path   string
	Reason string
}

func (e *Error) Error() string {
	return fmt.Sprintf("extend %s: %s", e.Path, e.Reason)
}

// Merge merges piece, new members and declarations, into existing, the
// content of the file at path, whose extension says its language: Go
// (.go) or Python (.py, .pyi). Anything else is an *Error.
func Merge(ctx context.Context, path string, existing, piece []byte) ([]byte, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".go":
		return mergeGo(path, existing, piece)
	case ".py", ".pyi":
		return mergePython(ctx, path, existing, piece)
	}
	return nil, &Error{Path: path, Reason: "extend understands Go (.go) and Python (.py) files only; use append, insert or replace for this file"}
}
