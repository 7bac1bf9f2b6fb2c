package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/azero-dev/azero/internal/config"
	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/sandbox"
)

// exitSandboxSetup is the exit code of `azero sandbox` when no sandbox can
// be set up: the command did not run (as env(1) and timeout(1) do).
const exitSandboxSetup = 125

// SandboxOptions are the inputs of `azero sandbox`.
type SandboxOptions struct {
	IO       *iostreams.IOStreams
	Environ  func() []string
	WorkDir  string
	StateDir func() (string, error)
	// ConfigDir is the user's configuration directory (azero's is hidden).
	ConfigDir string
	LookPath  func(string) (string, error)
	// Settings is the [sandbox] table of the user's config: its mode,
	// limits and extra variables apply here too (its network as well as
	// --network).
	Settings func() (config.Sandbox, error)

	Write   []string
	Read    []string
	Network bool
	Check   bool
	JSON    bool
	Argv    []string
}

// NewCmdSandbox builds `azero sandbox`; runF replaces sandboxRun in
// tests.
func NewCmdSandbox(f *Factory, runF func(*SandboxOptions) error) *cobra.Command {
	opts := &SandboxOptions{IO: f.IO, Environ: f.Environ, WorkDir: f.WorkDir, StateDir: f.Env().StateDir, ConfigDir: f.Env().UserConfigDir(),
		LookPath: f.LookPath, Settings: func() (config.Sandbox, error) {
			cfg, err := f.Env().Config("") // the user's file: a repository's may not name [sandbox]
			return cfg.Sandbox, err
		}}
	cmd := &cobra.Command{
		Use:   "sandbox [--write DIR]... [--read DIR]... [--network] -- COMMAND [ARGS...]",
		Short: "Run a command confined as azero runs the code a model wrote",
		Long: trimLines(`
  Run COMMAND in the current directory under the confinement azero gives
  every test and lint run of code a model wrote, so a person, a git hook or
  another agent can run anything the same way.

  What it protects: COMMAND can write only the directories given with
  --write (a .git inside them stays read-only) and a private temporary
  directory and HOME of its own, removed afterwards. It can read the system,
  the toolchains (GOROOT, the Go module cache, ~/.cargo/bin, ~/.rustup,
  ~/.pyenv, ~/.nvm, ...), the current directory and the directories given
  with --read, and nothing else: not your credentials (~/.ssh, ~/.aws,
  ~/.netrc, ~/.config/gh, ~/.docker, ~/.kube, ~/.gnupg and the like), not
  azero's state and configuration, not your other projects, not /proc of
  processes outside. It has no network (loopback inside works) unless
  --network. Every process it starts dies with it, however it detached
  itself; at most 1024 processes, no file over 1 GiB, no core dumps. Its
  environment is an allowlist (PATH, locale, the toolchains' own variables):
  credentials in yours do not reach it.

  What it does not protect: anything COMMAND may write (the --write
  directories) is at its mercy, and what it reads there may be sent
  wherever --network lets it. It shares the machine's CPU and memory. On
  Linux it uses bubblewrap with Landlock, else Landlock in azero's own
  namespaces; without user namespaces only Landlock and the limits remain
  (weaker: the .git of a --write directory is not protected, a detached
  process outlives a kill of azero, there is no loopback). On macOS it uses
  sandbox-exec. Where nothing works it refuses and says what to install.

  --check reports what works here (bubblewrap and its version, the Landlock
  ABI, user namespaces) and which mechanism would be used; --json prints it
  as one JSON document.

  Exit status: COMMAND's own (128+N when a signal N killed it); 125 when the
  sandbox cannot be set up (the command did not run); 2 for a usage error;
  130 when interrupted. With --check: 0 when a sandbox can run here, 1 when
  not.`),
		Example: trimLines(`
  azero sandbox -- python3 -m pytest
  azero sandbox --write . -- make test
  azero sandbox --write . --network -- npm ci
  azero sandbox --check --json`),
		Annotations: exitCodesAnnotation(ExitOK, ExitError, ExitUsage, ExitInterrupted),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Argv = args
			if opts.JSON && !opts.Check {
				return usagef("--json only applies to --check")
			}
			if opts.Check && len(args) > 0 {
				return usagef("--check runs no command, got %q", args)
			}
			if !opts.Check && (len(args) == 0 || cmd.ArgsLenAtDash() != 0) {
				return usagef("give the command after --: azero sandbox [--write DIR] -- COMMAND [ARGS...]")
			}
			return run(cmd, runF, sandboxRun, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&opts.Write, "write", nil, "a directory the command may write (repeatable)")
	fl.StringArrayVar(&opts.Read, "read", nil, "another directory the command may read (repeatable)")
	fl.BoolVar(&opts.Network, "network", false, "allow the network")
	fl.BoolVar(&opts.Check, "check", false, "report which sandbox works here; run nothing")
	fl.BoolVar(&opts.JSON, "json", false, "with --check: print the report as JSON")
	return cmd
}

// sandboxConfig is the sandbox of `azero sandbox`: the user's [sandbox]
// settings, --network, and azero's own state and configuration hidden.
func sandboxConfig(opts *SandboxOptions) (sandbox.Config, error) {
	cfg := sandbox.Config{Mode: sandbox.Auto, Network: opts.Network, LookPath: opts.LookPath}
	if opts.Settings != nil {
		set, err := opts.Settings()
		if err != nil {
			return cfg, err
		}
		if cfg.Mode, err = sandbox.ParseMode(set.Mode); err != nil {
			return cfg, err
		}
		cfg.Network = cfg.Network || set.Network
		cfg.MaxProcesses, cfg.Env = set.MaxProcesses, set.Env
		if set.MaxFileSize != "" {
			// config.Load checked it.
			cfg.MaxFileSize, _ = config.ParseSize(set.MaxFileSize)
		}
	}
	if state, err := opts.StateDir(); err == nil {
		cfg.Hide = append(cfg.Hide, state)
	}
	if opts.ConfigDir != "" {
		cfg.Hide = append(cfg.Hide, filepath.Join(opts.ConfigDir, "azero"))
	}
	return cfg, nil
}

func sandboxRun(ctx context.Context, opts *SandboxOptions) error {
	cfg, err := sandboxConfig(opts)
	if err != nil {
		return err
	}
	if opts.Check {
		return sandboxCheck(opts, cfg)
	}
	spec := sandbox.Spec{Dir: opts.WorkDir, ReadOnly: append([]string{opts.WorkDir}, opts.Read...)}
	for _, w := range opts.Write {
		abs := w
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(opts.WorkDir, w)
		}
		if info, err := os.Stat(abs); err != nil || !info.IsDir() {
			return usagef("--write %s: not a directory", w)
		}
		spec.Writable = append(spec.Writable, abs)
		spec.Protect = append(spec.Protect, filepath.Join(abs, ".git"))
	}
	for _, r := range opts.Read {
		if _, err := os.Stat(r); err != nil {
			return usagef("--read %s: %v", r, err)
		}
	}
	code, err := runSandboxed(ctx, opts, cfg, spec)
	switch {
	case err != nil:
		return &ExitStatus{Code: exitSandboxSetup, Err: fmt.Errorf("sandbox: %w", err)}
	case ctx.Err() != nil:
		return ctx.Err()
	case code != 0:
		return &ExitStatus{Code: code}
	}
	return nil
}

// runSandboxed runs the command and returns its exit status; an error
// when it could not be started confined.
func runSandboxed(ctx context.Context, opts *SandboxOptions, cfg sandbox.Config, spec sandbox.Spec) (int, error) {
	s, err := sandbox.New(cfg)
	if err != nil {
		return 0, err
	}
	j, err := s.Prepare(spec)
	if err != nil {
		return 0, err
	}
	defer j.Close()
	cmd, err := j.Command(ctx, opts.Argv, opts.Environ(), nil)
	if err != nil {
		return 0, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = opts.IO.In, opts.IO.Out, opts.IO.ErrOut
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &ee):
		if ee.ExitCode() < 0 {
			return 128 + 9, nil // killed by a signal, as when ctx ended
		}
		return ee.ExitCode(), nil
	}
	return 0, err
}

// sandboxCheck prints what works here; it fails (exit 1) when no sandbox
// can run.
func sandboxCheck(opts *SandboxOptions, cfg sandbox.Config) error {
	r := sandbox.Check(cfg)
	if opts.JSON {
		if err := writeJSON(opts.IO.Out, r); err != nil {
			return err
		}
	} else {
		w := opts.IO.Out
		fmt.Fprintf(w, "system: %s\n", r.OS)
		if r.OS == "linux" {
			switch {
			case r.BubblewrapWorks:
				fmt.Fprintf(w, "bubblewrap: %s %s, works\n", r.Bubblewrap, r.BubblewrapVersion)
			case r.Bubblewrap != "":
				fmt.Fprintf(w, "bubblewrap: %s %s, does not work: %s\n", r.Bubblewrap, r.BubblewrapVersion, r.BubblewrapProblem)
			default:
				fmt.Fprintln(w, "bubblewrap: not installed")
			}
			if r.LandlockABI > 0 {
				fmt.Fprintf(w, "landlock: ABI %d\n", r.LandlockABI)
			} else {
				fmt.Fprintln(w, "landlock: not available")
			}
			if r.UserNamespaces {
				fmt.Fprintln(w, "user namespaces: work")
			} else {
				fmt.Fprintf(w, "user namespaces: do not work: %s\n", r.UserNamespacesProblem)
			}
		}
		if r.OS == "darwin" {
			fmt.Fprintf(w, "seatbelt (sandbox-exec): %v\n", r.Seatbelt)
		}
		if r.Mechanism != "" {
			fmt.Fprintf(w, "sandbox: %s\n", r.Mechanism)
		}
	}
	if r.Problem != "" {
		return errors.New(r.Problem)
	}
	return nil
}
