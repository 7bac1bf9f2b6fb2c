package cli

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/prompt"
	"github.com/azero-dev/azero/internal/review"
	"github.com/azero-dev/azero/internal/runs"
	"github.com/azero-dev/azero/internal/safewrite"
)

// Factory builds what commands depend on: the terminal, how azero was
// invoked, and the run service's environment (runs.Env), which opens the
// store, the audit log and the rest on first use and closes them with
// Close. Only the commands' constructors (NewCmdX) read it: each hands
// its command the dependencies it needs, in the command's Options.
type Factory struct {
	IO       *iostreams.IOStreams
	Getenv   func(string) string
	Environ  func() []string
	LookPath func(string) (string, error)
	// Executable is this program's path, for the commands azero's hints
	// name (invocation.go); nil: os.Executable.
	Executable func() (string, error)
	WorkDir    string
	Now        func() time.Time
	Version    string

	args []string // the command line Run executes, without the program name
	// exec replaces this process with another program (the hand-off of a
	// lean build); nil in a Factory that must not, such as one running in
	// a test's process.
	exec func(path string, argv, env []string) error

	mu     sync.Mutex
	env    *runs.Env
	prompt *prompt.Prompter
	// interrupt says what a first Ctrl-C does to the command running
	// (interrupt.go); nil: it saves the run.
	interrupt func() string
}

// NewFactory returns a Factory bound to the real process environment.
func NewFactory(version string) (*Factory, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("working directory: %w", err)
	}
	io := iostreams.System(os.Getenv)
	io.SetPagerFrom(os.Getenv, exec.LookPath)
	return &Factory{
		IO:       io,
		Getenv:   os.Getenv,
		Environ:  os.Environ,
		LookPath: exec.LookPath,
		WorkDir:  wd,
		Now:      time.Now,
		Version:  version,
		exec:     runs.ExecCommand,
	}, nil
}

// Env returns the run service's environment, made from the Factory's on
// first use.
func (f *Factory) Env() *runs.Env {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.env == nil {
		var stderr io.Writer
		if f.IO != nil {
			stderr = f.IO.ErrOut
		}
		f.env = &runs.Env{Getenv: f.Getenv, Environ: f.Environ, LookPath: f.LookPath, WorkDir: f.WorkDir, Now: f.Now,
			Version: f.Version, Stderr: stderr, Args: f.args, Exec: f.exec,
			Command: func() string { return thisCommand(f.Executable, f.WorkDir, f.LookPath) }}
	}
	return f.env
}

// Prompter returns the terminal prompter.
func (f *Factory) Prompter() *prompt.Prompter {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.prompt == nil {
		f.prompt = prompt.New(f.IO, f.Getenv, f.LookPath)
	}
	return f.prompt
}

// Close releases what the Factory's environment opened.
func (f *Factory) Close() error {
	f.mu.Lock()
	env := f.env
	f.mu.Unlock()
	if env == nil {
		return nil
	}
	return env.Close()
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// trimLines normalises help text written as indented raw strings.
func trimLines(s string) string {
	lines := strings.Split(strings.Trim(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, "  ")
	}
	return strings.Join(lines, "\n")
}

// controllingTerminal opens the process's controlling terminal and a
// prompter on it, for a question whose standard streams cannot ask.
func (f *Factory) controllingTerminal() (*iostreams.IOStreams, review.Approver, error) {
	tty, err := f.IO.OpenTerminal()
	if err != nil {
		return nil, nil, err
	}
	return tty, prompt.New(tty, f.Getenv, f.LookPath), nil
}

// terminal is this terminal as a drive's watcher, answerer and approver:
// the run's events are shown on stderr as they happen, its gates asked
// here, its file writes needing approval too when there is a terminal.
func (f *Factory) terminal() runs.Terminal {
	return runs.Terminal{Watch: renderer(f.IO), Answerer: f.Prompter(), Approver: f.approver(),
		Note: func(line string) { fmt.Fprintln(f.IO.ErrOut, line) }}
}

// approver asks about a file write needing approval at this terminal;
// nil when there is none.
func (f *Factory) approver() safewrite.Approver {
	if !f.IO.CanPrompt() {
		return nil
	}
	return safewrite.NewTerminalApprover(f.IO, f.Prompter())
}

// writer returns the single file-writing function's front door, asking on
// the terminal when there is one.
func (f *Factory) writer(auto, force bool) (*safewrite.Writer, error) {
	return f.Env().Writer(auto, force, f.approver())
}

// runDeps is what a command that starts, drives or lists runs depends on.
func (f *Factory) runDeps() RunDeps {
	return RunDeps{IO: f.IO, Env: f.Env(), WorkDir: f.WorkDir, Terminal: f.terminal}
}
