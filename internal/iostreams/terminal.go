package iostreams

import (
	"errors"
	"fmt"
	"os"
)

// ErrNoControllingTerminal is matched by the error of OpenTerminal when the
// process has no terminal to ask through: started by a cron job, a CI
// runner, a GUI's git client, or any program that detached it (setsid).
var ErrNoControllingTerminal = errors.New("the process has no controlling terminal")

// ErrTerminalInUse is matched by the error of OpenTerminal when the
// process has a controlling terminal but cannot ask on it: another
// program reads it (it is in raw mode), or this process runs in its
// background.
var ErrTerminalInUse = errors.New("the controlling terminal cannot be asked on")

// OpenTerminal opens the process's controlling terminal, the way git's own
// prompts reach the human when the standard streams are pipes (a git hook
// framework such as pre-commit pipes the hook's output to show it later).
// The streams it returns read the terminal (In) and write human text and
// questions to it (ErrOut); Out stays s.Out, so data such as --json still
// goes where stdout goes. Only a real terminal is opened, and only one a
// human can answer on: without one the error matches
// ErrNoControllingTerminal; one held in raw mode by a full-screen program
// (an agent's interface running the command) or with this process in its
// background matches ErrTerminalInUse. Either way nobody can be asked.
//
// The terminal's CanPrompt is true; everything the questions guarantee
// holds on it (FlushInput discards what was typed ahead, a hang-up is the
// end of input). Close the streams to close the terminal.
func (s *IOStreams) OpenTerminal() (*IOStreams, error) {
	f, err := openTerminal()
	if err != nil {
		return nil, err
	}
	if !isTerminal(f) {
		f.Close()
		return nil, fmt.Errorf("%w: %s is not a terminal", ErrNoControllingTerminal, f.Name())
	}
	return &IOStreams{
		In:         f,
		Out:        s.Out,
		ErrOut:     f,
		inTTY:      true,
		outTTY:     s.outTTY,
		errTTY:     true,
		noColor:    s.noColor,
		forceColor: s.forceColor,
		closer:     f,
	}, nil
}

// Close closes the terminal opened by OpenTerminal. Streams over the
// process's own stdio have nothing to close: Close does nothing for them.
func (s *IOStreams) Close() error {
	if s.closer == nil {
		return nil
	}
	err := s.closer.Close()
	s.closer = nil
	if err != nil {
		return fmt.Errorf("close the terminal: %w", err)
	}
	return nil
}

// openTerminalFile opens path for reading and writing, and turns the
// errors of a process without a terminal into ErrNoControllingTerminal.
func openTerminalFile(path string, noTerminal func(error) bool) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		if noTerminal(err) {
			return nil, fmt.Errorf("%w: %w", ErrNoControllingTerminal, err)
		}
		return nil, fmt.Errorf("open the controlling terminal: %w", err)
	}
	return f, nil
}
