package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/azero-dev/azero/internal/answerkey"
	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/config"
	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/prompt"
	"github.com/azero-dev/azero/internal/review"
	"github.com/azero-dev/azero/internal/store"
)

// Factory holds what commands depend on. Expensive parts (the store, the
// audit log) open on first use and close with Close.
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
	// EngineFlags is the engine chosen on the command line (--engine,
	// --temporal).
	EngineFlags EngineFlags

	args []string // the command line Run executes, without the program name
	// exec replaces this process with another program (handOff); nil in
	// a Factory that must not, such as one running in a test's process.
	exec func(path string, argv, env []string) error

	mu     sync.Mutex
	store  *store.Store
	audit  *audit.Logger
	prompt *prompt.Prompter
	key    *answerkey.Key
	notify notifications // the user's [notify] (notify.go)
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
		exec:     execCommand,
	}, nil
}

// StateDir returns where the store, lineage and audit log live:
// $AZERO_STATE_DIR, else $XDG_STATE_HOME/azero, else ~/.local/state/azero.
func (f *Factory) StateDir() (string, error) {
	if d := f.Getenv("AZERO_STATE_DIR"); d != "" {
		return filepath.Abs(d)
	}
	if d := f.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "azero"), nil
	}
	home := f.Getenv("HOME")
	if home == "" {
		return "", errors.New("cannot locate the state directory: set AZERO_STATE_DIR or HOME")
	}
	return filepath.Join(home, ".local", "state", "azero"), nil
}

// RunDir returns the folder of one run's lineage inside the state dir.
func (f *Factory) RunDir(runID string) (string, error) {
	dir, err := f.StateDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "runs", runID), nil
}

// Store opens the store on first use.
func (f *Factory) Store(ctx context.Context) (*store.Store, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.store != nil {
		return f.store, nil
	}
	dir, err := f.StateDir()
	if err != nil {
		return nil, err
	}
	st, err := store.Open(ctx, filepath.Join(dir, store.FileName), store.Options{Now: f.Now})
	if err != nil {
		return nil, err
	}
	f.store = st
	return st, nil
}

// AnswerKey reads the key that seals answers (the state directory's
// answer.key, made if missing) on first use: the store seals and checks
// local answers with the same file; answers sent to Temporal runs are
// sealed with it.
func (f *Factory) AnswerKey() (*answerkey.Key, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.key != nil {
		return f.key, nil
	}
	dir, err := f.StateDir()
	if err != nil {
		return nil, err
	}
	k, err := answerkey.Load(dir)
	if err != nil {
		return nil, err
	}
	f.key = k
	return k, nil
}

// Audit opens the audit log on first use.
func (f *Factory) Audit() (*audit.Logger, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.audit != nil {
		return f.audit, nil
	}
	dir, err := f.StateDir()
	if err != nil {
		return nil, err
	}
	l, err := audit.Open(filepath.Join(dir, audit.FileName), audit.SecretsFromEnv(f.Environ()))
	if err != nil {
		return nil, err
	}
	f.audit = l
	return l, nil
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

// UserConfigDir returns $XDG_CONFIG_HOME, else ~/.config.
func (f *Factory) UserConfigDir() string {
	if d := f.Getenv("XDG_CONFIG_HOME"); d != "" {
		return d
	}
	if home := f.Getenv("HOME"); home != "" {
		return filepath.Join(home, ".config")
	}
	return ""
}

// Config loads the user's and the repository's configuration.
func (f *Factory) Config(repoRoot string) (config.Config, error) {
	cfg, _, err := config.Load(f.UserConfigDir(), repoRoot)
	return cfg, err
}

// Close releases what the Factory opened.
func (f *Factory) Close() error {
	f.closeNotifications()
	f.mu.Lock()
	defer f.mu.Unlock()
	var errs []error
	if f.store != nil {
		errs = append(errs, f.store.Close())
		f.store = nil
	}
	if f.audit != nil {
		errs = append(errs, f.audit.Close())
		f.audit = nil
	}
	return errors.Join(errs...)
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// abs resolves p against the factory's working directory.
func (f *Factory) abs(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(f.WorkDir, p)
}

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
