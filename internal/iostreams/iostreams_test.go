package iostreams

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

func TestReadLineKeepsTypedAheadInput(t *testing.T) {
	t.Parallel()
	s, in, _, _ := Test()
	in.WriteString("first\r\nsecond\nthird")
	for _, want := range []string{"first", "second", "third"} {
		got, err := s.ReadLine(context.Background())
		if err != nil || got != want {
			t.Fatalf("ReadLine = %q, %v; want %q", got, err, want)
		}
	}
	if _, err := s.ReadLine(context.Background()); !errors.Is(err, ErrEOF) {
		t.Fatalf("at the end: %v, want ErrEOF", err)
	}
}

func TestReadLineCancelledKeepsTheLineForTheNextCaller(t *testing.T) {
	t.Parallel()
	r, w := io.Pipe()
	s := &IOStreams{In: r, Out: io.Discard, ErrOut: io.Discard}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	if _, err := s.ReadLine(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled read: %v", err)
	}
	go w.Write([]byte("late answer\n"))
	got, err := s.ReadLine(context.Background())
	if err != nil || got != "late answer" {
		t.Fatalf("next read = %q, %v", got, err)
	}
}

func TestColorAndPrompting(t *testing.T) {
	t.Parallel()
	s, _, _, _ := Test()
	if s.CanPrompt() || s.ColorEnabled() {
		t.Fatal("buffers can prompt or colour")
	}
	if got := s.ColorScheme().Red("x"); got != "x" {
		t.Errorf("colour without a terminal: %q", got)
	}
	s.SetTTY(true, false, true)
	s.SetColor(true)
	if !s.CanPrompt() || !s.ColorEnabled() || s.ColorOutEnabled() {
		t.Error("terminal flags")
	}
	if got := s.ColorScheme().Red("x"); !strings.Contains(got, "\x1b[") || !strings.Contains(got, "x") {
		t.Errorf("colour on a terminal: %q", got)
	}
	s.SetTTY(false, false, true)
	if s.CanPrompt() {
		t.Error("a prompt without a terminal on stdin")
	}
	env := map[string]string{"NO_COLOR": "1"}
	sys := System(func(k string) string { return env[k] })
	if sys.noColor != true {
		t.Error("NO_COLOR ignored")
	}
}

func TestProgressOnlyOnATerminal(t *testing.T) {
	t.Parallel()
	s, _, _, errOut := Test()
	p := s.StartProgress("Analysing")
	p.Update(1, 10)
	p.Done()
	if errOut.Len() != 0 {
		t.Errorf("progress without a terminal: %q", errOut.String())
	}
	s.SetTTY(false, false, true)
	p = s.StartProgress("Analysing")
	p.Update(3, 10)
	p.Done()
	if got := errOut.String(); !strings.Contains(got, "Analysing 3/10") || !strings.HasSuffix(got, "\r\x1b[K") {
		t.Errorf("progress = %q", got)
	}
}

func TestHangUpIsEndOfInput(t *testing.T) {
	t.Parallel()
	master, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	s := &IOStreams{In: tty, Out: io.Discard, ErrOut: io.Discard}
	master.Close() // the terminal goes away: reads fail with EIO
	if _, err := s.ReadLine(context.Background()); !errors.Is(err, ErrEOF) {
		t.Fatalf("after a hang-up: %v, want ErrEOF", err)
	}
}

// emptyReader never has anything, yet never says so.
type emptyReader struct{}

func (emptyReader) Read([]byte) (int, error) { return 0, nil }

func TestReadLineFromAReaderThatNeverDelivers(t *testing.T) {
	t.Parallel()
	s := &IOStreams{In: emptyReader{}, Out: io.Discard, ErrOut: io.Discard}
	if _, err := s.ReadLine(t.Context()); !errors.Is(err, io.ErrNoProgress) {
		t.Fatalf("ReadLine = %v, want io.ErrNoProgress", err)
	}
}
