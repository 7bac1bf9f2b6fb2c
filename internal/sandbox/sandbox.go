package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Mode chooses the mechanisms.
type Mode string

// Modes.
const (
	Auto     Mode = "auto"     // bubblewrap + Landlock where bwrap works, else Landlock alone (the default)
	Landlock Mode = "landlock" // never bubblewrap (also how tests run "Landlock alone")
	Off      Mode = "off"      // unconfined: only when the user asked for it by name
)

// Modes lists the modes ParseMode accepts.
func Modes() []Mode { return []Mode{Auto, Landlock, Off} }

// ParseMode reads a mode as the configuration and flags spell it; ""
// is Auto.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case "":
		return Auto, nil
	case Auto, Landlock, Off:
		return m, nil
	}
	return "", fmt.Errorf("unknown sandbox mode %q: use auto, landlock or off", s)
}

// Defaults of the limits.
const (
	DefaultMaxProcesses       = 1024
	DefaultMaxFileSize  int64 = 1 << 30
)

// Config configures a Sandbox.
type Config struct {
	Mode    Mode
	Network bool // allow the network; without it only loopback inside the sandbox works
	// MaxProcesses bounds the processes (and, where the kernel counts them,
	// threads) of one command; 0 is DefaultMaxProcesses.
	MaxProcesses int
	// MaxFileSize bounds the size of a file the command writes, in bytes;
	// 0 is DefaultMaxFileSize.
	MaxFileSize int64
	// Env names variables passed through the environment allowlist
	// besides the built-in ones (Environ).
	Env []string
	// ReadOnly lists paths every command may read besides the system and
	// the toolchains (a toolchain installed in an unusual place).
	ReadOnly []string
	// Hide lists paths no command may read even when they lie inside a
	// readable place: azero's state, configuration and cache directories.
	Hide []string
	// TempRoot is where jails are made ($AZERO_STATE_DIR/sandbox for
	// azero); default os.TempDir().
	TempRoot string
	// Home is the user's real home, where the toolchains and the
	// credential places are; default $HOME.
	Home string
	// Executable is the helper: a program whose main calls Init; default
	// os.Executable().
	Executable string
	// LookPath finds bwrap (tests hide it); default exec.LookPath.
	LookPath func(string) (string, error)

	// noUserns pretends unprivileged user namespaces do not work, so
	// tests reach the weakest Linux path.
	noUserns bool
}

// Sandbox runs commands confined. It is safe for concurrent use.
type Sandbox struct {
	cfg  Config
	mech mechanism
	abi  int    // Landlock ABI, 0 without Landlock
	bwrp string // bwrap's path on the bubblewrap path
	// bwrapNoUserns: this bwrap can forbid user namespaces inside.
	bwrapNoUserns bool
	root          bool // azero runs as root: RLIMIT_NPROC does not bind
	uid, gid      int
}

// mechanism is how commands are confined.
type mechanism int

const (
	mechOff mechanism = iota
	mechBwrap
	mechUserns   // Landlock in azero's own namespaces
	mechLandlock // Landlock without namespaces
	mechSeatbelt
)

// UnavailableError says that no mechanism works here and what to do.
type UnavailableError struct {
	Reasons []string // what was tried and why it failed
	Advice  string   // what to install or enable
}

func (e *UnavailableError) Error() string {
	msg := "no sandbox can run here, so azero will not run code a model wrote"
	if len(e.Reasons) > 0 {
		msg += " (" + strings.Join(e.Reasons, "; ") + ")"
	}
	return msg + ": " + e.Advice + "; or run it unconfined, at your own risk, with --sandbox off"
}

// New detects the mechanisms once and returns a Sandbox using the best
// one Mode allows; an *UnavailableError when none works and Mode is not
// Off. Probes are cached per process, so New is cheap after the first call.
func New(cfg Config) (*Sandbox, error) {
	if cfg.Mode == "" {
		cfg.Mode = Auto
	}
	if _, err := ParseMode(string(cfg.Mode)); err != nil {
		return nil, err
	}
	if cfg.MaxProcesses <= 0 {
		cfg.MaxProcesses = DefaultMaxProcesses
	}
	if cfg.MaxFileSize <= 0 {
		cfg.MaxFileSize = DefaultMaxFileSize
	}
	if cfg.TempRoot == "" {
		cfg.TempRoot = os.TempDir()
	}
	if cfg.Home == "" {
		cfg.Home = os.Getenv("HOME")
	}
	if cfg.LookPath == nil {
		cfg.LookPath = exec.LookPath
	}
	if cfg.Executable == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("sandbox: find the helper: %w", err)
		}
		cfg.Executable = exe
	}
	for _, p := range []*string{&cfg.TempRoot, &cfg.Executable} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		*p = abs
	}
	s := &Sandbox{cfg: cfg, uid: os.Getuid(), gid: os.Getgid()}
	s.root = s.uid == 0
	if cfg.Mode == Off {
		s.mech = mechOff
		return s, nil
	}
	if err := s.detect(); err != nil {
		return nil, err
	}
	return s, nil
}

// Mechanism names how commands are confined: "bubblewrap+landlock",
// "bubblewrap", "landlock", "landlock (no namespaces)", "seatbelt" or
// "off".
func (s *Sandbox) Mechanism() string {
	switch s.mech {
	case mechBwrap:
		if s.abi > 0 {
			return "bubblewrap+landlock"
		}
		return "bubblewrap"
	case mechUserns:
		return "landlock"
	case mechLandlock:
		return "landlock (no namespaces)"
	case mechSeatbelt:
		return "seatbelt"
	}
	return "off"
}

// Off reports whether commands run unconfined.
func (s *Sandbox) Off() bool { return s.mech == mechOff }

// Network reports whether commands may reach the network.
func (s *Sandbox) Network() bool { return s.mech == mechOff || s.cfg.Network }

// Describe says in one line how commands run, for the data policy and
// every gate.
func (s *Sandbox) Describe() string {
	limits := fmt.Sprintf("at most %d processes, files up to %s", s.cfg.MaxProcesses, size(s.cfg.MaxFileSize))
	if s.mech == mechOff {
		return "sandbox OFF (asked for with --sandbox off): the code a model writes runs UNCONFINED, with your files, " +
			"your network and whatever your user can reach; only the environment is filtered and " + limits
	}
	mech := s.Mechanism()
	if s.abi > 0 {
		mech += fmt.Sprintf(" (Landlock ABI %d)", s.abi)
	}
	network := "no network (loopback inside the sandbox only)"
	switch {
	case s.cfg.Network:
		network = "NETWORK ALLOWED"
	case s.mech == mechLandlock:
		network = "no network (TCP denied, loopback included)"
	}
	return fmt.Sprintf("sandbox %s: writes only to the worktree and a private temporary directory; %s; %s", mech, network, limits)
}

func size(n int64) string {
	switch {
	case n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Spec is what one confined invocation may touch.
type Spec struct {
	// Dir is the working directory; it must lie inside Writable or
	// ReadOnly. "" is the jail's Tmp.
	Dir string
	// Writable lists what the command may write besides the jail's Tmp and
	// Home (a run's worktree).
	Writable []string
	// ReadOnly lists what else it may read (the checkout's node_modules and
	// .venv). A path inside a Writable one is writable.
	ReadOnly []string
	// Protect lists paths inside Writable ones that stay read-only (the
	// worktree's .git link).
	Protect []string
	// Hide lists paths it must not read even inside a readable place,
	// besides Config.Hide and the credential places.
	Hide []string
}

// A Jail is one confined invocation's private space, made fresh by Prepare
// and removed by Close: Tmp (TMPDIR; bubblewrap and the namespaces also
// give the command an empty /tmp of its own) and Home (HOME, with the XDG
// directories inside). The caller builds its command and environment
// knowing these paths (a report written to Tmp, a cache layer), then asks
// Command for the process.
type Jail struct {
	Tmp, Home string

	root string // holds Tmp and Home
	s    *Sandbox
	spec Spec
}

// Prepare makes a jail for spec.
func (s *Sandbox) Prepare(spec Spec) (*Jail, error) {
	// Grants are of real paths; a writable one must exist, a read-only one
	// that does not is nothing to read.
	clean := func(paths []string, missingOK bool) ([]string, error) {
		var out []string
		for _, p := range paths {
			if p == "" {
				continue
			}
			r, err := resolve(p)
			if errors.Is(err, fs.ErrNotExist) && missingOK {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("sandbox: %w", err)
			}
			out = append(out, r)
		}
		return out, nil
	}
	var err error
	if spec.Writable, err = clean(spec.Writable, false); err != nil {
		return nil, err
	}
	if spec.ReadOnly, err = clean(spec.ReadOnly, true); err != nil {
		return nil, err
	}
	// What to protect or hide may not exist (yet): keep the path as given.
	spec.Protect = absAll(spec.Protect)
	spec.Hide = absAll(spec.Hide)
	if spec.Dir != "" {
		dir, err := resolve(spec.Dir)
		if err != nil {
			return nil, fmt.Errorf("sandbox: working directory: %w", err)
		}
		if !within(dir, spec.Writable) && !within(dir, spec.ReadOnly) {
			return nil, fmt.Errorf("sandbox: the working directory %s is neither writable nor readable in the sandbox", dir)
		}
		spec.Dir = dir
	}
	if err := os.MkdirAll(s.cfg.TempRoot, 0o700); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	// The jail is named for its process, so that Sweep can tell the
	// jails of processes that died without closing them.
	root, err := os.MkdirTemp(s.cfg.TempRoot, fmt.Sprintf("%s%d-", jailPrefix, os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	if root, err = filepath.EvalSymlinks(root); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	j := &Jail{Tmp: filepath.Join(root, "tmp"), Home: filepath.Join(root, "home"), root: root, s: s, spec: spec}
	for _, d := range []string{j.Tmp, j.Home} {
		if err := os.Mkdir(d, 0o700); err != nil {
			os.RemoveAll(root)
			return nil, fmt.Errorf("sandbox: %w", err)
		}
	}
	if j.spec.Dir == "" {
		j.spec.Dir = j.Tmp
	}
	return j, nil
}

// jailPrefix starts the name of every jail's directory, followed by the
// pid of the process that made it.
const jailPrefix = "jail-"

// Sweep removes the jails in tempRoot that no live process can close: those
// of processes that are gone (a SIGKILLed azero). It returns the ones it
// removed.
func Sweep(tempRoot string) ([]string, error) {
	ents, err := os.ReadDir(tempRoot)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	var removed []string
	var errs []error
	for _, e := range ents {
		pid, ok := jailPID(e.Name())
		if !e.IsDir() || !ok || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		j := &Jail{root: filepath.Join(tempRoot, e.Name())}
		if err := j.Close(); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, j.root)
	}
	return removed, errors.Join(errs...)
}

// jailPID reads the pid a jail's directory is named for.
func jailPID(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, jailPrefix)
	if !ok {
		return 0, false
	}
	digits, _, ok := strings.Cut(rest, "-")
	pid, err := strconv.Atoi(digits)
	return pid, ok && err == nil && pid > 0
}

// Close removes the jail's Tmp and Home, whatever the command left there
// (directories it made unreadable included).
func (j *Jail) Close() error {
	if err := os.RemoveAll(j.root); err == nil {
		return nil
	}
	_ = filepath.WalkDir(j.root, func(p string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	if err := os.RemoveAll(j.root); err != nil {
		return fmt.Errorf("sandbox: remove the jail: %w", err)
	}
	return nil
}

// Command returns the process that runs argv in the jail. environ is
// the caller's environment, filtered through the allowlist (Environ);
// settings are the caller's own variables for the command (a runner's
// GOCACHE, CI=1), added after it unfiltered but for credential-like names.
// HOME, TMPDIR and the XDG directories point into the jail, whatever either
// says. The caller sets Stdin, Stdout and Stderr and starts the Cmd. It runs
// in a process group of its own; killing that group (as cancelling ctx
// does) kills every process of the command, however it detached itself.
func (j *Jail) Command(ctx context.Context, argv, environ, settings []string) (*exec.Cmd, error) {
	if len(argv) == 0 {
		return nil, errors.New("sandbox: no command")
	}
	env := j.environ(environ, settings)
	var cmd *exec.Cmd
	var err error
	if j.s.mech == mechOff {
		cmd, err = j.offCommand(ctx, argv, env)
	} else {
		cmd, err = j.command(ctx, argv, env)
	}
	if err != nil {
		return nil, err
	}
	ownGroup(cmd)
	return cmd, nil
}

// offCommand runs argv unconfined but for the rlimits, which the helper
// sets before it execs argv.
func (j *Jail) offCommand(ctx context.Context, argv, env []string) (*exec.Cmd, error) {
	// Without a user namespace RLIMIT_NPROC counts every process of the
	// user: the limit goes that far above their count.
	spec := helperSpec{Mode: modeOff, Dir: j.spec.Dir, MaxProcesses: j.s.cfg.MaxProcesses, MaxFileSize: j.s.cfg.MaxFileSize, NprocAbove: true}
	if j.s.root {
		spec.MaxProcesses = 0 // root is exempt anyway, and nothing else can bound it without a namespace
	}
	args, err := helperArgs(spec, argv)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, j.s.cfg.Executable, args...)
	cmd.Dir, cmd.Env = j.spec.Dir, env
	return cmd, nil
}

// resolve makes p absolute and follows its symbolic links: a sandbox binds
// and grants real paths.
func resolve(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	r, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	return r, nil
}

func absAll(paths []string) []string {
	var out []string
	for _, p := range paths {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			out = append(out, abs)
			if r, err := filepath.EvalSymlinks(abs); err == nil && r != abs {
				out = append(out, r)
			}
		}
	}
	return out
}

// inside reports whether p is dir or lies under it.
func inside(p, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// within reports whether p is inside one of dirs.
func within(p string, dirs []string) bool {
	for _, d := range dirs {
		if inside(p, d) {
			return true
		}
	}
	return false
}

// Report is what Check found on this machine.
type Report struct {
	OS                    string `json:"os"`
	Bubblewrap            string `json:"bubblewrap,omitempty"` // its path
	BubblewrapVersion     string `json:"bubblewrap_version,omitempty"`
	BubblewrapWorks       bool   `json:"bubblewrap_works"`
	BubblewrapProblem     string `json:"bubblewrap_problem,omitempty"`
	LandlockABI           int    `json:"landlock_abi"`
	UserNamespaces        bool   `json:"user_namespaces"`
	UserNamespacesProblem string `json:"user_namespaces_problem,omitempty"`
	Seatbelt              bool   `json:"seatbelt,omitempty"`
	// Mechanism is what New would use with cfg; Problem says why nothing
	// would.
	Mechanism string `json:"mechanism,omitempty"`
	Problem   string `json:"problem,omitempty"`
}

// Check reports which mechanisms work here and which one New would use
// with cfg.
func Check(cfg Config) Report {
	if cfg.LookPath == nil {
		cfg.LookPath = exec.LookPath
	}
	if cfg.Executable == "" {
		cfg.Executable, _ = os.Executable()
	}
	r := check(cfg)
	s, err := New(cfg)
	if err != nil {
		r.Problem = err.Error()
	} else {
		r.Mechanism = s.Mechanism()
	}
	return r
}
