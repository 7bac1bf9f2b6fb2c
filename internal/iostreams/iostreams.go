// Package iostreams is azero's only door to the terminal.
//
// Data goes to Out (stdout); human text, progress and prompts go to ErrOut
// (stderr). CanPrompt is true only when both stdin and stderr are terminals:
// a command that cannot ask a human must refuse, never assume consent.
// When they are pipes but the process has a controlling terminal (a git
// hook framework captures the hook's output), OpenTerminal gives streams
// over that terminal, as git's own prompts use it.
package iostreams

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/term"
)

// IOStreams bundles the three standard streams with what is known about them.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	inTTY, outTTY, errTTY bool
	noColor, forceColor   bool

	pager     string        // the pager command for long output on a terminal ("" for none)
	pagerEnv  []string      // its environment
	pagerFrom func() string // chooses pager on first use (SetPagerFrom)

	closer io.Closer // the terminal OpenTerminal opened; nil for the process's stdio

	lineMu  sync.Mutex
	typed   []byte        // read from In, not yet returned as lines
	ended   error         // ErrEOF or a read error, reported after typed
	reading chan struct{} // closed when the read in progress has delivered; nil when none
	empty   int           // reads in a row that returned nothing
}

// System returns streams bound to the process's stdin, stdout and stderr.
// getenv is consulted for NO_COLOR, CLICOLOR, CLICOLOR_FORCE and TERM.
func System(getenv func(string) string) *IOStreams {
	s := &IOStreams{
		In:     os.Stdin,
		Out:    os.Stdout,
		ErrOut: os.Stderr,
		inTTY:  isTerminal(os.Stdin),
		outTTY: isTerminal(os.Stdout),
		errTTY: isTerminal(os.Stderr),
	}
	s.noColor, s.forceColor = colorPolicy(getenv)
	return s
}

func lookup(getenv func(string) string, key string) (string, bool) {
	v := getenv(key)
	return v, v != ""
}

func isTerminal(f *os.File) bool {
	return term.IsTerminal(int(f.Fd()))
}

// colorPolicy reads the colour conventions: NO_COLOR (set and not empty)
// turns colour off, and wins; CLICOLOR_FORCE (not "0") turns it on even
// when the output is piped; CLICOLOR=0, or TERM=dumb, turns it off.
// Otherwise colour goes to terminals only.
func colorPolicy(getenv func(string) string) (off, force bool) {
	if _, ok := lookup(getenv, "NO_COLOR"); ok {
		return true, false
	}
	if v, ok := lookup(getenv, "CLICOLOR_FORCE"); ok && v != "0" {
		return false, true
	}
	return getenv("CLICOLOR") == "0" || getenv("TERM") == "dumb", false
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
func (s *IOStreams) ColorEnabled() bool { return (s.errTTY || s.forceColor) && !s.noColor }

// ColorOutEnabled reports whether text written to Out may carry colour.
func (s *IOStreams) ColorOutEnabled() bool { return (s.outTTY || s.forceColor) && !s.noColor }

// ErrEOF is returned by ReadLine when input ended before a line was typed.
var ErrEOF = errors.New("input ended")

// ReadLine reads one line from In, without its line ending. It returns when
// a line arrives, input ends (ErrEOF) or ctx is done. Reading happens only
// while a caller waits for a line, so a program started in between (an
// editor) gets every keystroke; what a read abandoned by a cancelled ctx
// brings is kept for the next caller, so typed input is never lost, except
// by FlushInput.
func (s *IOStreams) ReadLine(ctx context.Context) (string, error) {
	for {
		s.lineMu.Lock()
		if i := bytes.IndexByte(s.typed, '\n'); i >= 0 {
			line := strings.TrimRight(string(s.typed[:i+1]), "\r\n")
			s.typed = s.typed[i+1:]
			s.lineMu.Unlock()
			return line, nil
		}
		if s.ended != nil {
			if len(s.typed) > 0 { // a last line without a newline; the end comes next
				line := strings.TrimRight(string(s.typed), "\r\n")
				s.typed = nil
				s.lineMu.Unlock()
				return line, nil
			}
			err := s.ended
			s.ended = nil // a terminal may be read again after Ctrl-D
			s.lineMu.Unlock()
			return "", err
		}
		if s.reading == nil {
			s.reading = make(chan struct{})
			go s.readOnce(s.reading)
		}
		reading := s.reading
		s.lineMu.Unlock()

		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-reading:
		}
	}
}

// readOnce performs one read of In and hands what it brought to ReadLine
// under lineMu, then closes done.
func (s *IOStreams) readOnce(done chan struct{}) {
	buf := make([]byte, 4096)
	n, err := s.In.Read(buf)
	s.lineMu.Lock()
	defer s.lineMu.Unlock()
	s.typed = append(s.typed, buf[:n]...)
	if n == 0 && err == nil {
		// A reader that keeps returning nothing would have ReadLine spin.
		if s.empty++; s.empty >= 100 {
			err = io.ErrNoProgress
		}
	} else {
		s.empty = 0
	}
	switch {
	case err == nil:
	case errors.Is(err, io.EOF), errors.Is(err, syscall.EIO):
		// EIO: the terminal hung up, which means no more input.
		s.ended = ErrEOF
	default:
		s.ended = fmt.Errorf("read input: %w", err)
	}
	s.reading = nil
	close(done)
}

// FlushInput discards input typed ahead of a question, so that nothing
// typed before the question was shown can answer it: the terminal's
// pending input (tcflush TCIFLUSH) and whatever ReadLine already read but
// did not return. It does so only when In is a real terminal; other input
// (a pipe, a file, a test's buffer) is data meant to be read, and is kept.
// A read already waiting on the terminal stays: what it brings was typed
// after the flush.
func (s *IOStreams) FlushInput() error {
	conn, ok := s.In.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := conn.SyscallConn()
	if err != nil {
		return nil // not backed by a file descriptor
	}
	s.lineMu.Lock()
	defer s.lineMu.Unlock()
	var isTerm bool
	var flushErr error
	if err := rc.Control(func(fd uintptr) {
		if isTerm = term.IsTerminal(int(fd)); isTerm {
			flushErr = flushTerminalInput(int(fd))
		}
	}); err != nil {
		return fmt.Errorf("discard input typed ahead of the question: %w", err)
	}
	if !isTerm {
		return nil
	}
	if flushErr != nil {
		return fmt.Errorf("discard input typed ahead of the question: %w", flushErr)
	}
	s.typed = nil
	if errors.Is(s.ended, ErrEOF) {
		// A Ctrl-D typed ahead is typed-ahead input too; a hang-up shows
		// again at the next read.
		s.ended = nil
	}
	return nil
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

// SGR parameters of the scheme's styles. Plain escape sequences, not a
// styling library: the eight basic colours every terminal has, and at start
// up nothing to build (lipgloss measured half a millisecond of every
// command's start, for seven styles).
const (
	sgrRed    = "31"
	sgrGreen  = "32"
	sgrYellow = "33"
	sgrCyan   = "36"
	sgrBold   = "1"
	sgrFaint  = "2"
	sgrAlert  = "1;97;41" // bold bright white on red
)

// render wraps each line of text in the style's escape sequences, so a
// line stays styled on its own (in a pager, after a cut).
func (c ColorScheme) render(sgr, text string) string {
	if !c.on || text == "" {
		return text
	}
	var b strings.Builder
	b.Grow(len(text) + 8*(strings.Count(text, "\n")+1))
	for i, line := range strings.Split(text, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		if line == "" {
			continue
		}
		b.WriteString("\x1b[")
		b.WriteString(sgr)
		b.WriteByte('m')
		b.WriteString(line)
		b.WriteString("\x1b[m")
	}
	return b.String()
}

// Red colours deletions and failures.
func (c ColorScheme) Red(s string) string { return c.render(sgrRed, s) }

// Green colours additions and success.
func (c ColorScheme) Green(s string) string { return c.render(sgrGreen, s) }

// Yellow colours warnings.
func (c ColorScheme) Yellow(s string) string { return c.render(sgrYellow, s) }

// Cyan colours names and headings.
func (c ColorScheme) Cyan(s string) string { return c.render(sgrCyan, s) }

// Bold emphasises.
func (c ColorScheme) Bold(s string) string { return c.render(sgrBold, s) }

// Faint de-emphasises.
func (c ColorScheme) Faint(s string) string { return c.render(sgrFaint, s) }

// DiffLineClass classes one line of a unified diff: "file" for the file
// headers (diff --git, ---, +++), "hunk", "add", "del", or "" for context.
// It is the one reading of a diff line, for the terminal (DiffLine) and
// the web page.
func DiffLineClass(line string) string {
	switch {
	case strings.HasPrefix(line, "diff --git "), strings.HasPrefix(line, "+++ "), strings.HasPrefix(line, "--- "):
		return "file"
	case strings.HasPrefix(line, "@@"):
		return "hunk"
	case strings.HasPrefix(line, "+"):
		return "add"
	case strings.HasPrefix(line, "-"):
		return "del"
	}
	return ""
}

// DiffLine colours one line of a unified diff by its class: file headers
// bold, hunk headers cyan, additions green, deletions red.
func (c ColorScheme) DiffLine(line string) string {
	switch DiffLineClass(line) {
	case "file":
		return c.Bold(line)
	case "hunk":
		return c.Cyan(line)
	case "add":
		return c.Green(line)
	case "del":
		return c.Red(line)
	}
	return line
}

// Alert renders a banner that must not be missed.
func (c ColorScheme) Alert(s string) string { return c.render(sgrAlert, s) }
