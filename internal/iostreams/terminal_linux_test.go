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
)

// terminalHelperEnv makes the test binary act as a program whose standard
// streams are pipes and that asks through its controlling terminal.
const terminalHelperEnv = "IOSTREAMS_TERMINAL_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(terminalHelperEnv) == "1" {
		os.Exit(terminalHelper())
	}
	os.Exit(m.Run())
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
		fmt.Printf("no terminal: %v; ErrNoControllingTerminal=%v\n", err, errors.Is(err, ErrNoControllingTerminal))
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
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	stdout, stderr = &bytes.Buffer{}, &bytes.Buffer{}
	cmd = exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), terminalHelperEnv+"=1")
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

func TestOpenTerminalWithoutOne(t *testing.T) {
	t.Parallel()
	p := openPTY(t)
	cmd, _, stdout, _ := startHelper(t, p, false)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("helper without a controlling terminal: %v, want exit 3\n%s", err, stdout)
	}
	if !strings.Contains(stdout.String(), "ErrNoControllingTerminal=true") {
		t.Errorf("the error does not match ErrNoControllingTerminal: %s", stdout)
	}
}

func TestCloseOfTheProcessStreamsDoesNothing(t *testing.T) {
	t.Parallel()
	s, _, _, _ := Test()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
