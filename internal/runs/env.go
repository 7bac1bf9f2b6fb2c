package runs

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"sync"
	"time"

	"github.com/azero-dev/azero/internal/answerkey"
	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/config"
	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/llm/provider"
	"github.com/azero-dev/azero/internal/safewrite"
	"github.com/azero-dev/azero/internal/sandbox"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testrun"
)

// Env is the one environment every run is built from, whatever door
// started, continues or answers it: where azero keeps its state and reads
// its configuration, the process's environment, the clock, and what it
// opens on first use (the store, the audit log, the answer key, the
// user's notifications). Nothing is opened or read until asked for, so
// a command that needs none of it pays nothing.
//
// An Env holds nothing of a terminal: what asks a person (an answerer, a
// write approver) comes with each drive (Terminal).
type Env struct {
	Getenv   func(string) string
	Environ  func() []string
	LookPath func(string) (string, error)
	// WorkDir is the directory relative paths are read from.
	WorkDir string
	Now     func() time.Time
	Version string
	// Stderr receives what the service says outside any run's events: a
	// notification that could not be sent. Nil discards it.
	Stderr io.Writer
	// Command is the command that runs this azero where the person
	// stands ("azero", "go run ./cmd/azero"), which the hints the service
	// gives begin with (resume RUN, issue --resume SLUG). Nil: "azero".
	Command func() string
	// Args is the command line being run, without the program's name, and
	// Exec replaces this process with another program: a build without
	// the Temporal engine hands the command line to azero-temporal with
	// them. A nil Exec cannot hand anything over (a test's process).
	Args []string
	Exec func(path string, argv, env []string) error

	mu     sync.Mutex
	store  *store.Store
	audit  *audit.Logger
	key    *answerkey.Key
	notify notifications
}

// StateDir returns where the store, lineage and audit log live:
// $AZERO_STATE_DIR, else $XDG_STATE_HOME/azero, else ~/.local/state/azero.
func (e *Env) StateDir() (string, error) {
	if d := e.Getenv("AZERO_STATE_DIR"); d != "" {
		return filepath.Abs(d)
	}
	if d := e.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "azero"), nil
	}
	home := e.Getenv("HOME")
	if home == "" {
		return "", errors.New("cannot locate the state directory: set AZERO_STATE_DIR or HOME")
	}
	return filepath.Join(home, ".local", "state", "azero"), nil
}

// RunDir returns the folder of one run's lineage inside the state dir.
func (e *Env) RunDir(runID string) (string, error) {
	dir, err := e.StateDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "runs", runID), nil
}

// UserConfigDir returns $XDG_CONFIG_HOME, else ~/.config.
func (e *Env) UserConfigDir() string {
	if d := e.Getenv("XDG_CONFIG_HOME"); d != "" {
		return d
	}
	if home := e.Getenv("HOME"); home != "" {
		return filepath.Join(home, ".config")
	}
	return ""
}

// Config loads the user's and the repository's configuration.
func (e *Env) Config(repoRoot string) (config.Config, error) {
	cfg, _, err := config.Load(e.UserConfigDir(), repoRoot)
	return cfg, err
}

// Store opens the store on first use.
func (e *Env) Store(ctx context.Context) (*store.Store, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.store != nil {
		return e.store, nil
	}
	dir, err := e.StateDir()
	if err != nil {
		return nil, err
	}
	st, err := store.Open(ctx, filepath.Join(dir, store.FileName), store.Options{Now: e.Now})
	if err != nil {
		return nil, err
	}
	e.store = st
	return st, nil
}

// AnswerKey reads the key that seals answers (the state directory's
// answer.key, made if missing) on first use: the store seals and checks
// local answers with the same file; answers sent to Temporal runs are
// sealed with it.
func (e *Env) AnswerKey() (*answerkey.Key, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.key != nil {
		return e.key, nil
	}
	dir, err := e.StateDir()
	if err != nil {
		return nil, err
	}
	k, err := answerkey.Load(dir)
	if err != nil {
		return nil, err
	}
	e.key = k
	return k, nil
}

// Audit opens the audit log on first use.
func (e *Env) Audit() (*audit.Logger, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.audit != nil {
		return e.audit, nil
	}
	dir, err := e.StateDir()
	if err != nil {
		return nil, err
	}
	l, err := audit.Open(filepath.Join(dir, audit.FileName), audit.SecretsFromEnv(e.Environ()))
	if err != nil {
		return nil, err
	}
	e.audit = l
	return l, nil
}

// Close waits, within bounds, for the notifications still being sent and
// releases what the Env opened.
func (e *Env) Close() error {
	e.closeNotifications()
	e.mu.Lock()
	defer e.mu.Unlock()
	var errs []error
	if e.store != nil {
		errs = append(errs, e.store.Close())
		e.store = nil
	}
	if e.audit != nil {
		errs = append(errs, e.audit.Close())
		e.audit = nil
	}
	return errors.Join(errs...)
}

// Abs resolves p against the working directory.
func (e *Env) Abs(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(e.WorkDir, p)
}

// command is the command that runs this azero where the person stands.
func (e *Env) command() string {
	if e.Command == nil {
		return "azero"
	}
	return e.Command()
}

// ResumeCommand is the command that continues run id from a terminal, as
// the person can type it where they stand. onTemporal names the Temporal
// engine (the run is not in this machine's store).
func (e *Env) ResumeCommand(id string, onTemporal bool) string {
	if onTemporal {
		return e.command() + " resume --engine temporal " + id
	}
	return e.command() + " resume " + id
}

func (e *Env) now() time.Time {
	if e.Now == nil {
		return time.Now()
	}
	return e.Now()
}

func (e *Env) stderr() io.Writer {
	if e.Stderr == nil {
		return io.Discard
	}
	return e.Stderr
}

// ProviderEnv maps the configuration and environment into what provider
// packages need.
func (e *Env) ProviderEnv(cfg config.Config) provider.Env {
	prices := llm.DefaultPrices()
	if len(cfg.Prices) > 0 {
		over := map[string]llm.Price{}
		for name, p := range cfg.Prices {
			// A configured price keeps what azero knows of the model's limits.
			known := llm.Price{}
			if spec, err := llm.ParseSpec(name); err == nil {
				known, _ = prices.Price(spec)
			}
			known.Input, known.Output, known.LongAbove = p.Input, p.Output, 0
			over[name] = known
		}
		prices = prices.With(over)
	}
	conv := func(p config.Provider) llm.ProviderConfig {
		return llm.ProviderConfig{APIKey: p.APIKey, BaseURL: p.BaseURL}
	}
	script := cfg.Mock.Script
	if s := e.Getenv("AZERO_MOCK_SCRIPT"); s != "" {
		script = s
	}
	return provider.Env{
		Getenv: e.Getenv,
		Providers: map[string]llm.ProviderConfig{
			llm.ProviderAnthropic: conv(cfg.Providers.Anthropic),
			llm.ProviderGemini:    conv(cfg.Providers.Gemini),
			llm.ProviderOpenAI:    conv(cfg.Providers.OpenAI),
		},
		Prices:     prices,
		MockLLM:    provider.MockRequested(e.Getenv),
		MockScript: e.Abs(script),
	}
}

// secrets are the values no log or lineage may show: the providers' keys
// and the secret-looking variables of the environment.
func (e *Env) secrets(penv provider.Env) []string {
	return append(provider.Secrets(penv), audit.SecretsFromEnv(e.Environ())...)
}

// Sandbox is the sandbox a model's code runs in: mode and network as the
// run recorded them, the limits and extra variables of the user's
// [sandbox], and azero's state, configuration and caches hidden from it.
func (e *Env) Sandbox(cfg config.Config, mode sandbox.Mode, network bool) (*sandbox.Sandbox, error) {
	state, err := e.StateDir()
	if err != nil {
		return nil, err
	}
	c := sandbox.Config{Mode: mode, Network: network, MaxProcesses: cfg.Sandbox.MaxProcesses, Env: cfg.Sandbox.Env,
		TempRoot: filepath.Join(state, "sandbox"), Home: e.Getenv("HOME"), LookPath: e.LookPath,
		Hide: []string{state, filepath.Join(e.UserConfigDir(), "azero"), filepath.Dir(testrun.DefaultSeeds(e.Environ()))}}
	if cfg.Sandbox.MaxFileSize != "" {
		// config.Load checked it.
		c.MaxFileSize, _ = config.ParseSize(cfg.Sandbox.MaxFileSize)
	}
	return sandbox.New(c)
}

// SandboxMode resolves the mode a new run's model code runs in: flag
// (--sandbox), else [sandbox] mode of the user's config, else auto. A
// mode that is not one of sandbox.Modes is a RequestError.
func SandboxMode(flag string, cfg config.Config) (sandbox.Mode, error) {
	choice := flag
	if choice == "" {
		choice = cfg.Sandbox.Mode
	}
	m, err := sandbox.ParseMode(choice)
	if err != nil {
		return "", &RequestError{Err: errorf("--sandbox: %w", err)}
	}
	return m, nil
}

// runCaches is the build cache layer of one run, removed when it ends
// (and by GC).
func runCaches(state, runID string) string {
	return filepath.Join(state, "sandbox", "cache", runID)
}

// Writer returns the single file-writing function's front door. approver
// asks a person about a write that needs approval, where one can be asked
// in place (nil: such a write is refused unless auto and force allow it).
func (e *Env) Writer(auto, force bool, approver safewrite.Approver) (*safewrite.Writer, error) {
	a, err := e.Audit()
	if err != nil {
		return nil, err
	}
	return &safewrite.Writer{Audit: a, Auto: auto, Force: force, Approver: approver}, nil
}
