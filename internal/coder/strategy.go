package coder

import (
	"fmt"

	"github.com/azero-dev/azero/internal/edit"
)

// Strategy is how a model is asked to produce a file.
type Strategy int

const (
	// FullFile asks for the complete file (FullFilePrompt, edit.ExtractFullFile).
	FullFile Strategy = iota + 1
	// Blocks asks for edit blocks (BlocksPrompt, edit.Parse, edit.Apply).
	Blocks
)

func (s Strategy) String() string {
	switch s {
	case FullFile:
		return "full-file"
	case Blocks:
		return "blocks"
	}
	return fmt.Sprintf("Strategy(%d)", int(s))
}

// MarshalText makes a Strategy appear as "full-file" or "blocks" in JSON.
func (s Strategy) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// SelectStrategy picks how to generate a file, exactly as spec #324 says:
// Add is always FullFile whatever its size (there is nothing to edit);
// Modify uses Blocks when the existing file is large (edit.IsLarge) and
// FullFile otherwise. Delete generates nothing; it gets FullFile, the
// spec's default, and callers do not call a model for it.
func SelectStrategy(change edit.ChangeType, existing []byte) Strategy {
	if change == edit.Modify && edit.IsLarge(existing) {
		return Blocks
	}
	return FullFile
}
