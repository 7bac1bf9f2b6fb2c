package testenv

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	xterm "golang.org/x/term"

	"github.com/azero-dev/azero/internal/iostreams"
)

// Terminal is a real pseudo-terminal. The code under test reads and writes
// its tty end (through Streams, or as a process started with Start); the
// test types into its master end and reads everything written to it.
type Terminal struct {
	master *os.File
	tty    *os.File
	mu     sync.Mutex
	screen bytes.Buffer
	closed chan struct{} // closed when the far end is gone and all was read
}

// NewTerminal opens a pseudo-terminal that closes when the test ends.
func NewTerminal(t testing.TB) *Terminal {
	t.Helper()
	master, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	term := &Terminal{master: master, tty: tty, closed: make(chan struct{})}
	t.Cleanup(func() { master.Close(); tty.Close() })
	go func() {
		defer close(term.closed)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			term.mu.Lock()
			term.screen.Write(buf[:n])
			term.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return term
}

// Streams returns streams on the terminal, as azero has them when run
// interactively with stdout piped: stdin and stderr are the terminal.
func (term *Terminal) Streams(color bool) *iostreams.IOStreams {
	s := &iostreams.IOStreams{In: term.tty, Out: io.Discard, ErrOut: term.tty}
	s.SetTTY(true, false, true)
	s.SetColor(color)
	return s
}

// Start starts cmd with the terminal as its controlling terminal, stdin
// and stderr (and stdout unless cmd.Stdout is set, as with piped --json).
func (term *Terminal) Start(t testing.TB, cmd *exec.Cmd) {
	t.Helper()
	cmd.Stdin, cmd.Stderr = term.tty, term.tty
	if cmd.Stdout == nil {
		cmd.Stdout = term.tty
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Only the process holds the tty now: when it exits, reading the
	// master ends, and Drained knows all output has arrived.
	term.tty.Close()
}

// StartControlling starts cmd with the terminal as its controlling
// terminal only: its standard streams stay what cmd sets (pipes, as a git
// hook framework gives a hook it runs from a terminal). The process
// reaches the terminal by opening /dev/tty, as git's own prompts do.
func (term *Terminal) StartControlling(t testing.TB, cmd *exec.Cmd) {
	t.Helper()
	// The terminal is passed as an extra descriptor, the one Setctty
	// needs in the child: it is none of the standard streams.
	cmd.ExtraFiles = append(cmd.ExtraFiles, term.tty)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 2 + len(cmd.ExtraFiles)}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	term.tty.Close()
}

// MakeRaw puts the terminal in raw mode, as a full-screen program reading
// it (an editor, an agent's interface) does.
func (term *Terminal) MakeRaw(t testing.TB) {
	t.Helper()
	if _, err := xterm.MakeRaw(int(term.tty.Fd())); err != nil {
		t.Fatal(err)
	}
}

// Drained is closed once the process started with Start has exited and
// everything it wrote has been read.
func (term *Terminal) Drained() <-chan struct{} { return term.closed }

// Type types line and Enter.
func (term *Terminal) Type(t testing.TB, line string) {
	t.Helper()
	if _, err := term.master.Write([]byte(line + "\r")); err != nil {
		t.Fatal(err)
	}
}

// Text returns everything shown so far.
func (term *Terminal) Text() string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return term.screen.String()
}

// WaitFor waits until the screen has shown text count times in all, and
// fails the test after 20 seconds.
func (term *Terminal) WaitFor(t testing.TB, text string, count int) {
	t.Helper()
	// Not a timing assertion: a guard against a prompt that never comes,
	// generous enough for a loaded 2-core machine.
	deadline := time.Now().Add(Patience)
	for time.Now().Before(deadline) {
		if strings.Count(term.Text(), text) >= count {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("terminal never showed %q %d time(s); screen:\n%s", text, count, term.Text())
}
