// Package sandbox confines the processes azero starts that may execute
// code nobody has reviewed yet: the tests, code and project scripts a model
// wrote, run by the test runner, the lint step and `azero sandbox`.
//
// # What a confined process can and cannot do
//
// It can read the system (/usr, /bin, /lib*, /etc, /opt, /nix, /snap, /sys),
// the toolchains it needs (GOROOT, the Go module cache, ~/.cargo/bin,
// ~/.cargo/registry, ~/.rustup, ~/.pyenv, ~/.nvm and the like, the PATH
// entries under the home directory), the paths its caller lists as
// read-only (Spec.ReadOnly, Config.ReadOnly) and the program it runs. It can
// write only the paths its caller lists as writable (Spec.Writable: a
// run's worktree) and its jail's private Tmp and Home, and never the paths
// listed as protected inside them (Spec.Protect: the worktree's .git link).
//
// It cannot read anything else: not the credential places
// (CredentialPlaces: ~/.ssh, ~/.aws, ~/.netrc, /etc/shadow, ...), not
// azero's state, configuration and caches (Config.Hide, Spec.Hide), not
// the user's checkout or other projects, not /proc of processes outside the
// sandbox. It has no network unless Config.Network: it gets its own
// network namespace, where loopback works, so tests that start a local
// server pass. Every process it starts dies with it (after the command
// exits, on a kill of the process group the Cmd runs in, and when azero
// dies), however it detached itself (setsid, a double fork). It cannot
// start more than MaxProcesses processes or threads, nor write a file over
// MaxFileSize bytes, nor dump core. Its environment is an allowlist
// (Environ): credentials in azero's environment never reach it.
//
// # Mechanisms
//
// Linux, Mode Auto: bubblewrap (bwrap) builds a new root from an allowlist
// of read-only binds in new user, pid, network, IPC, UTS and mount
// namespaces, with every capability dropped, and starts azero's own helper
// (see Init) as the namespace's pid 1; the helper sets the rlimits, applies
// Landlock as a second layer (the same read and write grants, signals and
// abstract sockets scoped to the sandbox) and runs the command. Where bwrap
// is missing or cannot work (Mode Landlock forces this path), azero starts
// the helper itself in new user, pid, mount, IPC, UTS and network
// namespaces: the helper makes every mount read-only, mounts a private /tmp
// and /proc, binds the writable paths back, masks the credential places,
// brings up loopback, drops its capabilities and applies Landlock. Without
// unprivileged user namespaces only Landlock and the rlimits remain
// ("landlock (no namespaces)"), which is weaker: the .git link is not
// protected, a process the command detached survives a SIGKILL of azero,
// TCP is denied entirely (a loopback server cannot listen), the command
// lines of the user's other processes stay visible in /proc (their
// environment and memory do not), the process limit counts every process
// of the user, root's processes are not bounded at all, and (Landlock does
// not cover chmod) a command may change the permission bits of any file its
// user owns, which for root is most of the system.
//
// macOS: sandbox-exec with a generated Seatbelt profile (SeatbeltProfile):
// deny by default, read the same places, write the writable ones, network
// only to localhost unless allowed.
//
// Where nothing works New returns an *UnavailableError that says what to
// install or enable. Mode Off runs commands unconfined (still with the
// environment allowlist, a private HOME and TMPDIR, the rlimits and one
// process group killed as a whole); it is only ever used when the user
// asked for it by name, and Describe says so loudly.
//
// # Running as root
//
// Root's processes are exempt from RLIMIT_NPROC, even inside a user
// namespace (the kernel exempts the real root user, whatever the namespace).
// When azero runs as root the helper therefore watches the number of
// processes in the sandbox's pid namespace and kills them all when there
// are more than MaxProcesses (threads are not counted there). Capabilities
// are dropped on every path, so root inside the sandbox has no more power
// than its uid gives it over the files the sandbox shows.
//
// # The environment allowlist
//
// Environ passes only: PATH, LANG, LANGUAGE, LC_*, TERM, TZ, NO_COLOR,
// COLORTERM, USER, LOGNAME; GOROOT, GOPATH, GOMODCACHE, GOFLAGS, GOPROXY,
// GONOSUMDB, GONOPROXY, GOPRIVATE, GOSUMDB, GOTOOLCHAIN, GOEXPERIMENT,
// GODEBUG, GOAMD64, GOARM64, CGO_*, CC, CXX, CFLAGS, CXXFLAGS, LDFLAGS,
// PKG_CONFIG_PATH; CARGO_HOME, RUSTUP_HOME, RUSTUP_TOOLCHAIN, RUSTFLAGS,
// RUSTDOCFLAGS, CARGO_BUILD_*, CARGO_TERM_*; PYTHONPATH, VIRTUAL_ENV,
// PYTHONIOENCODING, PYTHONUTF8, PYENV_ROOT, PYENV_VERSION; NODE_PATH,
// NODE_OPTIONS, NVM_DIR, VOLTA_HOME; JAVA_HOME, MAVEN_OPTS, GRADLE_OPTS; and
// the names in Config.Env. A name that looks like a credential (ending in
// _KEY, _TOKEN, _SECRET, _PASSWORD) is dropped even when listed. HOME,
// TMPDIR, TMP, TEMP and XDG_{CONFIG,CACHE,DATA,STATE}_HOME point into the
// jail; GOPATH, CARGO_HOME, RUSTUP_HOME and PYTHONUSERBASE are set to their
// defaults under the real home when they exist and are unset, so the
// toolchains are still found; without network GOPROXY=off,
// GOTOOLCHAIN=local (unless set) and CARGO_NET_OFFLINE=true.
//
// # The helper
//
// Landlock and rlimits apply to a process between fork and exec, which
// os/exec cannot do, so azero re-executes itself: Init must be the first
// call of main (and of TestMain in packages whose tests start sandboxed
// processes). It costs one comparison when the process is not the helper.
// A helper that cannot set the sandbox up prints one line starting with
// "azero sandbox:" and exits 125; it never runs the command unconfined.
// The command's exit status is passed through (128+N for a signal N).
package sandbox
