package iostreams

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// ptyPair is a real pseudo-terminal: the streams read its tty end, the
// test types into its master end and watches the echo.
type ptyPair struct {
	master, tty *os.File
	mu          sync.Mutex
	screen      bytes.Buffer
}

func openPTY(t *testing.T) *ptyPair {
	t.Helper()
	master, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	p := &ptyPair{master: master, tty: tty}
	t.Cleanup(func() { master.Close(); tty.Close() })
	go func() {
		buf := make([]byte, 1024)
		for {
			n, err := master.Read(buf)
			p.mu.Lock()
			p.screen.Write(buf[:n])
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return p
}

// typeAhead types line and waits until the terminal has taken it in (its
// echo is on the screen), so it is pending input, not still in flight.
func (p *ptyPair) typeAhead(t *testing.T, line string) {
	t.Helper()
	if _, err := p.master.Write([]byte(line + "\r")); err != nil {
		t.Fatal(err)
	}
	p.waitFor(t, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return strings.Contains(p.screen.String(), line+"\r\n")
	}, "the echo of "+line)
}

// pending returns how many typed bytes the terminal holds unread.
func (p *ptyPair) pending(t *testing.T) int {
	t.Helper()
	n, err := unix.IoctlGetInt(int(p.tty.Fd()), unix.TIOCINQ)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// patience bounds a wait for something that must happen; only a hang
// exhausts it (testenv.Patience, which this package's tests cannot import).
const patience = 3 * time.Minute

func (p *ptyPair) waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(patience); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func (p *ptyPair) streams() *IOStreams {
	s := &IOStreams{In: p.tty, Out: io.Discard, ErrOut: io.Discard}
	s.SetTTY(true, false, true)
	return s
}

func readLineWithin(t *testing.T, s *IOStreams) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), patience)
	defer cancel()
	line, err := s.ReadLine(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatal("ReadLine never returned")
	}
	return line, err
}

func TestFlushInputDiscardsWhatWasTypedAhead(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// ahead leaves typed-ahead input where the case says, then
		// FlushInput must make it disappear.
		ahead func(t *testing.T, p *ptyPair, s *IOStreams)
	}{
		{"pending in the terminal", func(t *testing.T, p *ptyPair, s *IOStreams) {
			p.typeAhead(t, "approve")
			if n := p.pending(t); n == 0 {
				t.Fatal("the typed-ahead line is not pending in the terminal")
			}
		}},
		{"already read by an abandoned read", func(t *testing.T, p *ptyPair, s *IOStreams) {
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			if _, err := s.ReadLine(ctx); !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled ReadLine: %v", err)
			}
			// The read left behind takes the line out of the terminal.
			p.typeAhead(t, "approve")
			p.waitFor(t, func() bool { return p.pending(t) == 0 }, "the abandoned read to take the line")
		}},
		{"several lines and a partial one", func(t *testing.T, p *ptyPair, s *IOStreams) {
			p.typeAhead(t, "approve")
			p.typeAhead(t, "yes")
			if _, err := p.master.Write([]byte("appr")); err != nil {
				t.Fatal(err)
			}
			p.waitFor(t, func() bool {
				p.mu.Lock()
				defer p.mu.Unlock()
				return strings.HasSuffix(p.screen.String(), "appr")
			}, "the echo of the partial line")
		}},
		{"end of input typed ahead", func(t *testing.T, p *ptyPair, s *IOStreams) {
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			s.ReadLine(ctx)
			if _, err := p.master.Write([]byte{4}); err != nil { // Ctrl-D on an empty line
				t.Fatal(err)
			}
			// Nothing to see on the screen; wait until the read took it.
			p.waitFor(t, func() bool {
				s.lineMu.Lock()
				defer s.lineMu.Unlock()
				return s.ended != nil
			}, "the abandoned read to see the end of input")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := openPTY(t)
			s := p.streams()
			tt.ahead(t, p, s)
			if err := s.FlushInput(); err != nil {
				t.Fatal(err)
			}
			if _, err := p.master.Write([]byte("typed after\r")); err != nil {
				t.Fatal(err)
			}
			got, err := readLineWithin(t, s)
			if err != nil || got != "typed after" {
				t.Fatalf("after the flush ReadLine = %q, %v; want the line typed after it", got, err)
			}
		})
	}
}

func TestFlushInputKeepsInputThatIsNotATerminal(t *testing.T) {
	t.Parallel()
	t.Run("buffer posing as a terminal", func(t *testing.T) {
		t.Parallel()
		s, in, _, _ := Test()
		s.SetTTY(true, false, true)
		in.WriteString("approve\n")
		if err := s.FlushInput(); err != nil {
			t.Fatal(err)
		}
		if got, err := s.ReadLine(t.Context()); err != nil || got != "approve" {
			t.Fatalf("ReadLine = %q, %v: pre-fed input was dropped", got, err)
		}
	})
	t.Run("pipe", func(t *testing.T) {
		t.Parallel()
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		s := &IOStreams{In: r, Out: io.Discard, ErrOut: io.Discard}
		if _, err := w.WriteString("first\nsecond\n"); err != nil {
			t.Fatal(err)
		}
		w.Close()
		if got, err := s.ReadLine(t.Context()); err != nil || got != "first" {
			t.Fatalf("ReadLine = %q, %v", got, err)
		}
		if err := s.FlushInput(); err != nil {
			t.Fatal(err)
		}
		if got, err := s.ReadLine(t.Context()); err != nil || got != "second" {
			t.Fatalf("after FlushInput on a pipe ReadLine = %q, %v; want the data kept", got, err)
		}
	})
}

func TestAHangUpSurvivesTheFlush(t *testing.T) {
	t.Parallel()
	// Nothing reads the master here (openPTY's reader would): a Read
	// blocked on it keeps its descriptor open past Close (os.File closes a
	// blocking descriptor only when its last read returns), and the
	// terminal would never hang up.
	master, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tty.Close() })
	s := (&ptyPair{master: master, tty: tty}).streams()
	master.Close()
	if err := s.FlushInput(); err != nil {
		t.Fatal(err)
	}
	if _, err := readLineWithin(t, s); !errors.Is(err, ErrEOF) {
		t.Fatalf("after a hang-up: %v, want ErrEOF", err)
	}
}
