// Package iostreams is azero's only door to the terminal.
//
// Data goes to Out (stdout); human text, progress and prompts go to ErrOut
// (stderr). CanPrompt is true only when both stdin and stderr are terminals:
// a command that cannot ask a human must refuse, never assume consent.
package iostreams

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"

	"charm.land/lipgloss/v2"
	"golang.org/x/term"
)

// IOStreams bundles the three standard streams with what is known about them.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	inTTY, outTTY, errTTY bool
	noColor               bool

	lineMu  sync.Mutex
	reader  *bufio.Reader
	pending chan lineResult // the read in progress, if any
}

type lineResult struct {
	line string
	err  error
}

// System returns streams bound to the process's stdin, stdout and stderr.
// getenv is consulted for NO_COLOR and TERM.
func System(getenv func(string) string) *IOStreams {
	s := &IOStreams{
		In:     os.Stdin,
		Out:    os.Stdout,
		ErrOut: os.Stderr,
		inTTY:  isTerminal(os.Stdin),
		outTTY: isTerminal(os.Stdout),
		errTTY: isTerminal(os.Stderr),
	}
	_, noColor := lookup(getenv, "NO_COLOR")
	s.noColor = noColor || getenv("TERM") == "dumb"
	return s
}

func lookup(getenv func(string) string, key string) (string, bool) {
	v := getenv(key)
	return v, v != ""
}

func isTerminal(f *os.File) bool {
	return term.IsTerminal(int(f.Fd()))
}

// Test returns streams over buffers, none of them a terminal.
func Test() (s *IOStreams, in *bytes.Buffer, out *bytes.Buffer, errOut *bytes.Buffer) {
	in, out, errOut = &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut, noColor: true}, in, out, errOut
}

// SetTTY overrides terminal detection; tests use it to simulate a terminal
// over buffers.
func (s *IOStreams) SetTTY(in, out, errOut bool) {
	s.inTTY, s.outTTY, s.errTTY = in, out, errOut
}

// SetColor forces colour on or off.
func (s *IOStreams) SetColor(on bool) { s.noColor = !on }

// CanPrompt reports whether a human can be asked: stdin and stderr are
// terminals. Prompts are written to stderr so that --json output on a piped
// stdout does not prevent asking.
func (s *IOStreams) CanPrompt() bool { return s.inTTY && s.errTTY }

// IsStdoutTTY reports whether stdout is a terminal.
func (s *IOStreams) IsStdoutTTY() bool { return s.outTTY }

// IsStderrTTY reports whether stderr is a terminal.
func (s *IOStreams) IsStderrTTY() bool { return s.errTTY }

// ColorEnabled reports whether text written to ErrOut may carry colour.
func (s *IOStreams) ColorEnabled() bool { return s.errTTY && !s.noColor }

// ColorOutEnabled reports whether text written to Out may carry colour.
func (s *IOStreams) ColorOutEnabled() bool { return s.outTTY && !s.noColor }

// ErrEOF is returned by ReadLine when input ended before a line was typed.
var ErrEOF = errors.New("input ended")

// ReadLine reads one line from In, without its line ending. It returns when
// a line arrives, input ends (ErrEOF) or ctx is done. Reading happens only
// while a caller waits for a line, so a program started in between (an
// editor) gets every keystroke; a read abandoned by a cancelled ctx is
// handed to the next caller, so typed input is never lost.
func (s *IOStreams) ReadLine(ctx context.Context) (string, error) {
	s.lineMu.Lock()
	if s.reader == nil {
		s.reader = bufio.NewReader(s.In)
	}
	pending := s.pending
	if pending == nil {
		pending = make(chan lineResult, 1)
		s.pending = pending
		go func(r *bufio.Reader) {
			line, err := r.ReadString('\n')
			switch {
			case line != "":
				pending <- lineResult{line: strings.TrimRight(line, "\r\n")}
			case errors.Is(err, io.EOF), errors.Is(err, syscall.EIO):
				// EIO: the terminal hung up, which means no more input.
				pending <- lineResult{err: ErrEOF}
			default:
				pending <- lineResult{err: fmt.Errorf("read input: %w", err)}
			}
		}(s.reader)
	}
	s.lineMu.Unlock()

	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case r := <-pending:
		s.lineMu.Lock()
		s.pending = nil
		s.lineMu.Unlock()
		return r.line, r.err
	}
}

// ColorScheme styles text for ErrOut; with colour disabled every method
// returns its input unchanged.
type ColorScheme struct{ on bool }

// ColorScheme returns the scheme for ErrOut.
func (s *IOStreams) ColorScheme() ColorScheme { return ColorScheme{on: s.ColorEnabled()} }

// ColorSchemeOut returns the scheme for Out.
func (s *IOStreams) ColorSchemeOut() ColorScheme { return ColorScheme{on: s.ColorOutEnabled()} }

// Enabled reports whether the scheme colours text.
func (c ColorScheme) Enabled() bool { return c.on }

func (c ColorScheme) render(st lipgloss.Style, text string) string {
	if !c.on {
		return text
	}
	return st.Render(text)
}

var (
	red    = lipgloss.NewStyle().Foreground(lipgloss.Red)
	green  = lipgloss.NewStyle().Foreground(lipgloss.Green)
	yellow = lipgloss.NewStyle().Foreground(lipgloss.Yellow)
	cyan   = lipgloss.NewStyle().Foreground(lipgloss.Cyan)
	bold   = lipgloss.NewStyle().Bold(true)
	faint  = lipgloss.NewStyle().Faint(true)
	alert  = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.BrightWhite).Background(lipgloss.Red)
)

// Red colours deletions and failures.
func (c ColorScheme) Red(s string) string { return c.render(red, s) }

// Green colours additions and success.
func (c ColorScheme) Green(s string) string { return c.render(green, s) }

// Yellow colours warnings.
func (c ColorScheme) Yellow(s string) string { return c.render(yellow, s) }

// Cyan colours names and headings.
func (c ColorScheme) Cyan(s string) string { return c.render(cyan, s) }

// Bold emphasises.
func (c ColorScheme) Bold(s string) string { return c.render(bold, s) }

// Faint de-emphasises.
func (c ColorScheme) Faint(s string) string { return c.render(faint, s) }

// Alert renders a banner that must not be missed.
func (c ColorScheme) Alert(s string) string { return c.render(alert, s) }
