package prompt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// ErrNoEditor is returned when no editor can be found.
var ErrNoEditor = errors.New("no editor found: set $AZERO_EDITOR, $GIT_EDITOR, $VISUAL or $EDITOR (for example EDITOR=nano), or install vi")

// EditorVars are the variables naming the editor, in the order they are
// read: azero's own, git's, then the usual ones.
var EditorVars = []string{"AZERO_EDITOR", "GIT_EDITOR", "VISUAL", "EDITOR"}

// EditorCommand returns the editor command line, in this order:
// $AZERO_EDITOR, $GIT_EDITOR, $VISUAL, $EDITOR, `code --wait` when VS
// Code's CLI is installed, then vi. The result is a shell fragment;
// arguments such as "--wait" are allowed.
func (p *Prompter) EditorCommand() (string, error) {
	for _, v := range EditorVars {
		if e := p.getenv(v); e != "" {
			return e, nil
		}
	}
	if _, err := p.lookPath("code"); err == nil {
		return "code --wait", nil
	}
	if _, err := p.lookPath("vi"); err == nil {
		return "vi", nil
	}
	return "", ErrNoEditor
}

// CheckEditor verifies that the editor command's program can be started,
// so a workflow can refuse before any model call rather than at its first
// gate.
func (p *Prompter) CheckEditor() (string, error) {
	cmd, err := p.EditorCommand()
	if err != nil {
		return "", err
	}
	prog := firstWord(cmd)
	if _, err := p.lookPath(prog); err != nil {
		return "", fmt.Errorf("editor %q not found in PATH: install it or set $AZERO_EDITOR (or $GIT_EDITOR, $VISUAL, $EDITOR)", prog)
	}
	return cmd, nil
}

func firstWord(s string) string {
	start := -1
	for i, r := range s {
		space := r == ' ' || r == '\t'
		switch {
		case start < 0 && !space:
			start = i
		case start >= 0 && space:
			return s[start:i]
		}
	}
	if start < 0 {
		return ""
	}
	return s[start:]
}

// Edit opens files in the editor and waits until it exits. The editor runs
// attached to the terminal; without one ErrNoTerminal is returned and
// nothing is started.
func (p *Prompter) Edit(ctx context.Context, files ...string) error {
	if !p.CanPrompt() {
		return ErrNoTerminal
	}
	editor, err := p.EditorCommand()
	if err != nil {
		return err
	}
	// As git does: let the shell split the editor's own arguments, and pass
	// the file names as positional parameters so they are never re-split.
	args := append([]string{"-c", editor + ` "$@"`, "azero-editor"}, files...)
	cmd := exec.CommandContext(ctx, "sh", args...)
	cmd.Stdin = p.io.In
	cmd.Stdout = p.io.ErrOut
	cmd.Stderr = p.io.ErrOut
	if f, ok := p.io.In.(*os.File); ok {
		cmd.Stdin = f
	}
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("editor %q: %w", editor, err)
	}
	return nil
}
