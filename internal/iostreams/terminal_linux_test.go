package iostreams

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/term"
)

// terminalHelperEnv makes the test binary act as a program whose standard
// streams are pipes and that asks through its controlling terminal.
const terminalHelperEnv = "IOSTREAMS_TERMINAL_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(terminalHelperEnv) {
	case "1":
		os.Exit(terminalHelper())
	case "background":
		os.Exit(backgroundHelper())
	}
	os.Exit(m.Run())
}

// backgroundHelper runs terminalHelper in a process group of its own: in
// the background of the terminal it shares.
func backgroundHelper() int {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), terminalHelperEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		fmt.Println(err)
		return 1
	}
	return 0
}

// terminalHelper opens the controlling terminal, says "ready" on it, waits
// for a line on its stdin (the test has typed ahead by then), flushes,
// asks, and prints the answer on stdout. Exit 3: no terminal.
func terminalHelper() int {
	s := System(os.Getenv)
	if s.CanPrompt() {
		fmt.Println("the standard streams can prompt; the test wants pipes")
		return 1
	}
	tty, err := s.OpenTerminal()
	if err != nil {
		fmt.Printf("no terminal: %v; ErrNoControllingTerminal=%v; ErrTerminalInUse=%v\n", err, errors.Is(err, ErrNoControllingTerminal), errors.Is(err, ErrTerminalInUse))
		return 3
	}
	defer tty.Close()
	if !tty.CanPrompt() || !tty.IsStderrTTY() || tty.IsStdoutTTY() {
		fmt.Println("the terminal's streams do not say they can prompt")
		return 1
	}
	fmt.Fprintln(tty.ErrOut, "ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		fmt.Printf("read the go-ahead: %v\n", err)
		return 1
	}
	if err := tty.FlushInput(); err != nil {
		fmt.Printf("flush: %v\n", err)
		return 1
	}
	fmt.Fprint(tty.ErrOut, "answer? ")
	line, err := tty.ReadLine(context.Background())
	if err != nil {
		fmt.Printf("read the answer: %v\n", err)
		return 1
	}
	fmt.Fprintf(tty.Out, "answer %q\n", line)
	fmt.Fprintln(os.Stderr, "written to the stderr pipe")
	return 0
}

// startHelper starts the helper with its standard streams on pipes; with
// ctty, p's terminal is its controlling terminal (as for a hook under a
// framework that pipes it, started from a shell on that terminal), else
// it runs in a session of its own without one.
func startHelper(t *testing.T, p *ptyPair, ctty bool) (cmd *exec.Cmd, goAhead *os.File, stdout, stderr *bytes.Buffer) {
	t.Helper()
	return startHelperAs(t, p, ctty, "1")
}

// startHelperAs is startHelper with the helper's mode: "1" asks,
// "background" asks from a process group in the terminal's background.
func startHelperAs(t *testing.T, p *ptyPair, ctty bool, mode string) (cmd *exec.Cmd, goAhead *os.File, stdout, stderr *bytes.Buffer) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	stdout, stderr = &bytes.Buffer{}, &bytes.Buffer{}
	cmd = exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), terminalHelperEnv+"="+mode)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = r, stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if ctty {
		// Descriptor 3 in the child: the terminal, made its controlling
		// terminal but none of its standard streams.
		cmd.ExtraFiles = []*os.File{p.tty}
		cmd.SysProcAttr.Setctty, cmd.SysProcAttr.Ctty = true, 3
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, w, stdout, stderr
}

func (p *ptyPair) shows(t *testing.T, text string) {
	t.Helper()
	p.waitFor(t, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return strings.Contains(p.screen.String(), text)
	}, fmt.Sprintf("the terminal to show %q", text))
}

func TestOpenTerminalAsksThroughTheControllingTerminal(t *testing.T) {
	t.Parallel()
	p := openPTY(t)
	cmd, goAhead, stdout, stderr := startHelper(t, p, true)
	p.shows(t, "ready")
	p.typeAhead(t, "approve")
	if _, err := goAhead.WriteString("go\n"); err != nil {
		t.Fatal(err)
	}
	p.shows(t, "answer? ")
	if _, err := p.master.Write([]byte("typed after\r")); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper: %v\nstdout: %s\nstderr: %s", err, stdout, stderr)
	}
	if got := stdout.String(); got != "answer \"typed after\"\n" {
		t.Errorf("stdout = %q: want only the line typed after the question (the typed-ahead approve flushed)", got)
	}
	if got := stderr.String(); got != "written to the stderr pipe\n" {
		t.Errorf("stderr = %q: the question went to the pipe, or the pipe lost its line", got)
	}
	p.mu.Lock()
	screen := p.screen.String()
	p.mu.Unlock()
	if strings.Contains(screen, "written to the stderr pipe") || strings.Contains(screen, `answer "`) {
		t.Errorf("the terminal shows what belongs to the pipes:\n%q", screen)
	}
}

// TestOpenTerminalRefuses: nobody can be asked without a controlling
// terminal, on one a full-screen program holds in raw mode (an agent's
// interface that ran the command), or from the terminal's background.
func TestOpenTerminalRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		ctty  bool
		raw   bool
		mode  string
		match string
	}{
		{"no controlling terminal", false, false, "1", "ErrNoControllingTerminal=true"},
		{"raw mode", true, true, "1", "ErrTerminalInUse=true"},
		{"background process group", true, false, "background", "ErrTerminalInUse=true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := openPTY(t)
			if tt.raw {
				if _, err := term.MakeRaw(int(p.tty.Fd())); err != nil {
					t.Fatal(err)
				}
			}
			cmd, goAhead, stdout, _ := startHelperAs(t, p, tt.ctty, tt.mode)
			// A helper that got a terminal fails at once instead of
			// waiting for the go-ahead.
			goAhead.Close()
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 3 {
				t.Fatalf("helper: %v, want exit 3 (no terminal to ask on)\n%s", err, stdout)
			}
			if !strings.Contains(stdout.String(), tt.match) {
				t.Errorf("the error does not match: want %s in %s", tt.match, stdout)
			}
		})
	}
}

func TestCloseOfTheProcessStreamsDoesNothing(t *testing.T) {
	t.Parallel()
	s, _, _, _ := Test()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
