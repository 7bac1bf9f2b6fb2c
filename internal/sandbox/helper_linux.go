//go:build linux

package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// helperMain is the helper: it sets up what spec says, in this order (the
// mounts and the loopback need the capabilities the rest drops), then runs
// the command.
func helperMain(args []string) int {
	// Capabilities, no_new_privs and Landlock belong to a thread; the
	// command is forked (or exec'd) from this one, which therefore never
	// runs anything else.
	runtime.LockOSThread()
	verb, spec, argv, err := parseHelper(args)
	if err != nil {
		return helperFail("%v", err)
	}
	switch verb {
	case "probe":
		if err := probeSetup(); err != nil {
			return helperFail("%v", err)
		}
		return 0
	case "run":
	default:
		return helperFail("unknown verb %q", verb)
	}
	if spec.Mode == modeUserns {
		if err := mountAll(spec.Mounts); err != nil {
			return helperFail("mounts: %v", err)
		}
		if spec.Loopback {
			if err := loopbackUp(); err != nil {
				return helperFail("loopback: %v", err)
			}
		}
	}
	if spec.Dir != "" {
		if err := syscall.Chdir(spec.Dir); err != nil {
			return helperFail("enter %s: %v", spec.Dir, err)
		}
	}
	if err := setLimits(spec); err != nil {
		return helperFail("limits: %v", err)
	}
	if spec.Mode != modeOff {
		if err := dropCapabilities(); err != nil {
			return helperFail("drop capabilities: %v", err)
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return helperFail("no_new_privs: %v", err)
	}
	if spec.Landlock {
		if err := restrict(spec); err != nil {
			return helperFail("landlock: %v", err)
		}
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return notRunnable(argv[0], err)
	}
	if spec.Mode == modeOff {
		err := syscall.Exec(path, argv, os.Environ())
		return notRunnable(argv[0], err)
	}
	return supervise(spec, path, argv)
}

// notRunnable reports a command that cannot start, with a shell's codes:
// 127 not found, 126 not executable.
func notRunnable(name string, err error) int {
	fmt.Fprintf(os.Stderr, "azero sandbox: %s: %v\n", name, err)
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
		return 127
	}
	return 126
}

// supervise runs the command as a child in a session of its own (so it
// cannot push input into a terminal it inherited), passes on the signals
// the helper gets, reaps every orphan, and returns the command's status.
// On the namespace paths the helper is pid 1: when it returns, the kernel
// kills every process left in the namespace. Without namespaces it is the
// subreaper of everything the command starts and kills what is left.
func supervise(spec helperSpec, path string, argv []string) int {
	attr := &syscall.SysProcAttr{Setsid: true}
	if spec.Mode == modeLandlock {
		attr.Pdeathsig = syscall.SIGKILL
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			return helperFail("subreaper: %v", err)
		}
	}
	proc, err := os.StartProcess(path, argv, &os.ProcAttr{Env: os.Environ(), Files: []*os.File{os.Stdin, os.Stdout, os.Stderr}, Sys: attr})
	if err != nil {
		return notRunnable(argv[0], err)
	}
	pid := proc.Pid
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	go func() {
		for sig := range sigs {
			_ = syscall.Kill(-pid, sig.(syscall.Signal))
		}
	}()
	var tooMany atomic.Bool
	if spec.Watch && spec.MaxProcesses > 0 {
		go watchProcesses(spec.MaxProcesses, &tooMany)
	}
	var status syscall.WaitStatus
	for {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return helperFail("wait: %v", err)
		}
		if wpid == pid {
			status = ws
			break
		}
	}
	if spec.Mode == modeLandlock {
		killDescendants()
	}
	if tooMany.Load() {
		fmt.Fprintf(os.Stderr, "azero sandbox: the command ran more than %d processes: all of them were killed\n", spec.MaxProcesses)
		return 128 + int(syscall.SIGKILL)
	}
	switch {
	case status.Exited():
		return status.ExitStatus()
	case status.Signaled():
		return 128 + int(status.Signal())
	}
	return 1
}

// watchPeriod is how often the helper counts processes for root.
const watchPeriod = 5 * time.Millisecond

// watchProcesses bounds the processes of a root command, which
// RLIMIT_NPROC does not: the helper is pid 1 of a pid namespace with its
// own /proc, so the numbered entries of /proc are the sandbox's processes.
// Over max, every one of them is killed.
func watchProcesses(max int, tooMany *atomic.Bool) {
	for {
		n, err := countProcesses()
		if err == nil && n-1 > max {
			tooMany.Store(true)
			_ = syscall.Kill(-1, syscall.SIGKILL) // pid 1 is spared: that is this helper
			return
		}
		time.Sleep(watchPeriod)
	}
}

func countProcesses() (int, error) {
	f, err := os.Open("/proc")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, name := range names {
		if name != "" && name[0] >= '0' && name[0] <= '9' {
			n++
		}
	}
	return n, nil
}

// killDescendants kills what the command left behind when there is no pid
// namespace to do it: the orphans re-parented to this subreaper, round after
// round, until none is left.
func killDescendants() {
	self := os.Getpid()
	for round := 0; round < 1000; round++ {
		children := childrenOf(self)
		if len(children) == 0 {
			return
		}
		for _, c := range children {
			_ = syscall.Kill(c, syscall.SIGKILL)
		}
		for {
			wpid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if err != nil || wpid <= 0 {
				break
			}
		}
		time.Sleep(time.Millisecond)
	}
}

// childrenOf lists the processes whose parent is pid, from /proc.
func childrenOf(pid int) []int {
	f, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer f.Close()
	names, _ := f.Readdirnames(-1)
	var out []int
	for _, name := range names {
		p, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		raw, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		i := strings.LastIndexByte(string(raw), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(raw[i+1:]))
		if len(f) > 1 {
			if ppid, _ := strconv.Atoi(f[1]); ppid == pid {
				out = append(out, p)
			}
		}
	}
	return out
}

// setLimits sets the rlimits, lowering them only: core dumps off, the
// size of a written file, the number of processes.
func setLimits(spec helperSpec) error {
	if err := lower(unix.RLIMIT_CORE, 0); err != nil {
		return fmt.Errorf("core: %w", err)
	}
	if spec.MaxFileSize > 0 {
		if err := lower(unix.RLIMIT_FSIZE, uint64(spec.MaxFileSize)); err != nil {
			return fmt.Errorf("file size: %w", err)
		}
	}
	if spec.MaxProcesses > 0 {
		n := uint64(spec.MaxProcesses)
		if spec.NprocAbove {
			n += uint64(userTasks(os.Getuid()))
		}
		if err := lower(unix.RLIMIT_NPROC, n); err != nil {
			return fmt.Errorf("processes: %w", err)
		}
	}
	return nil
}

func lower(resource int, n uint64) error {
	var cur unix.Rlimit
	if err := unix.Getrlimit(resource, &cur); err != nil {
		return err
	}
	lim := unix.Rlimit{Cur: min(n, cur.Max), Max: min(n, cur.Max)}
	return unix.Setrlimit(resource, &lim)
}

// userTasks counts the threads of every process of uid, which is what
// RLIMIT_NPROC counts outside a user namespace.
func userTasks(uid int) int {
	f, err := os.Open("/proc")
	if err != nil {
		return 0
	}
	defer f.Close()
	names, _ := f.Readdirnames(-1)
	n := 0
	want := strconv.Itoa(uid)
	for _, name := range names {
		if name == "" || name[0] < '0' || name[0] > '9' {
			continue
		}
		st, err := os.Open("/proc/" + name + "/status")
		if err != nil {
			continue
		}
		var real string
		threads := 0
		sc := bufio.NewScanner(st)
		for sc.Scan() {
			line := sc.Text()
			if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
				if f := strings.Fields(rest); len(f) > 0 {
					real = f[0]
				}
			} else if rest, ok := strings.CutPrefix(line, "Threads:"); ok {
				threads, _ = strconv.Atoi(strings.TrimSpace(rest))
			}
		}
		st.Close()
		if real == want {
			n += threads
		}
	}
	return n
}

// dropCapabilities empties this thread's bounding, ambient, inheritable,
// permitted and effective sets: nothing the command execs, set-uid or with
// file capabilities, gets any back. A process without CAP_SETPCAP (an
// unprivileged user outside a user namespace) cannot shrink its bounding
// set, and needs not: it holds no capability, and no_new_privs (set next)
// keeps exec from granting any.
func dropCapabilities() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("ambient: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	if data[0].Effective&(1<<capSetpcap) == 0 {
		if data[0].Effective|data[1].Effective|data[0].Permitted|data[1].Permitted != 0 {
			return errors.New("some capabilities but not CAP_SETPCAP: cannot empty the bounding set")
		}
		return nil
	}
	for c := 0; c <= 63; c++ {
		in, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0)
		if err != nil {
			break // past the last capability this kernel knows
		}
		if in == 0 {
			continue
		}
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			return fmt.Errorf("bounding set, capability %d: %w", c, err)
		}
	}
	data = [2]unix.CapUserData{}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

// restrict applies Landlock to this thread (and so to the command it
// starts): the grants of spec, everything else denied that the kernel's
// ABI can deny; signals and abstract sockets scoped to the sandbox.
func restrict(spec helperSpec) error {
	abi := landlockABI()
	if abi < 1 {
		return errors.New("the kernel has no Landlock")
	}
	cfg := landlock.V11
	if !spec.DenyTCP {
		// The network is the namespace's business, or allowed.
		cfg.HandledAccessNet = 0
	} else if abi < 4 {
		return fmt.Errorf("Landlock ABI %d cannot deny TCP", abi)
	}
	cfg = cfg.BestEffort()
	var rules []landlock.Rule
	dirs, files := byKind(spec.Read)
	rules = append(rules, landlock.RODirs(dirs...).IgnoreIfMissing(), landlock.ROFiles(files...).IgnoreIfMissing())
	if len(spec.List) > 0 {
		rules = append(rules, landlock.PathAccess(landlock.AccessFSSet(ll.AccessFSReadDir), spec.List...).IgnoreIfMissing())
	}
	dirs, files = byKind(spec.Write)
	rw := landlock.RWDirs(dirs...).IgnoreIfMissing()
	if abi >= 2 {
		// Moving and linking files between writable directories (cargo
		// does); on ABI 1 asking for it would turn Landlock off.
		rw = rw.WithRefer()
	}
	rules = append(rules, rw, landlock.RWFiles(append(files, spec.Devices...)...).IgnoreIfMissing())
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return err
	}
	if fd < 0 {
		return errors.New("nothing to enforce")
	}
	defer unix.Close(fd)
	return ll.LandlockRestrictSelf(fd, flags)
}

// byKind splits paths into directories and other files (Landlock grants
// directory rights to directories only).
func byKind(paths []string) (dirs, files []string) {
	for _, p := range paths {
		info, err := os.Stat(p)
		switch {
		case err != nil:
		case info.IsDir():
			dirs = append(dirs, p)
		default:
			files = append(files, p)
		}
	}
	return dirs, files
}

// mountAll makes the helper's mounts: every mount read-only and private,
// then ops in order. Sources are opened first, as a private /tmp hides
// what lay under it.
func mountAll(ops []mountOp) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private: %w", err)
	}
	fds := map[string]int{}
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	for _, op := range ops {
		if op.Op == "bind" || op.Op == "robind" {
			fd, err := unix.Open(op.Path, unix.O_PATH|unix.O_CLOEXEC, 0)
			if err != nil {
				return fmt.Errorf("open %s: %w", op.Path, err)
			}
			fds[op.Path] = fd
		}
	}
	ro := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID}
	if err := unix.MountSetattr(-1, "/", unix.AT_RECURSIVE, &ro); err != nil {
		return fmt.Errorf("make / read-only: %w", err)
	}
	for _, op := range ops {
		switch op.Op {
		case "tmpfs":
			if err := unix.Mount("tmpfs", op.Path, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
				return fmt.Errorf("tmpfs on %s: %w", op.Path, err)
			}
		case "bind", "robind":
			fd := fds[op.Path]
			if err := mountPoint(op.Path, fd); err != nil {
				return err
			}
			if err := unix.Mount(fmt.Sprintf("/proc/self/fd/%d", fd), op.Path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
				return fmt.Errorf("bind %s: %w", op.Path, err)
			}
			attr, flags := unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}, uint(0)
			if op.Op == "robind" {
				attr, flags = unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}, unix.AT_RECURSIVE
			}
			if err := unix.MountSetattr(-1, op.Path, flags, &attr); err != nil {
				return fmt.Errorf("bind %s: %w", op.Path, err)
			}
		case "mask":
			// Landlock does not grant what is masked either: a mask that
			// cannot be made (a place this user cannot even look into) is
			// not a hole.
			info, err := os.Lstat(op.Path)
			if err != nil {
				continue
			}
			if info.IsDir() {
				_ = unix.Mount("tmpfs", op.Path, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=000,size=4k")
			} else {
				_ = unix.Mount("/dev/null", op.Path, "", unix.MS_BIND, "")
			}
		default:
			return fmt.Errorf("unknown mount %q", op.Op)
		}
	}
	// The pid namespace's own /proc: the host's processes out of sight.
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	return nil
}

// mountPoint makes sure path exists to bind the file behind fd onto it
// (inside a private /tmp it does not yet).
func mountPoint(path string, fd int) error {
	if _, err := os.Lstat(path); err == nil {
		return nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return os.MkdirAll(path, 0o755)
	}
	if err := os.MkdirAll(parentDir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

func parentDir(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

// loopbackUp brings up lo in the helper's network namespace.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// probeSetup is what the Landlock path needs of the namespaces, tried in
// a throwaway set of them: private read-only mounts, a tmpfs, a /proc of
// its own, loopback.
func probeSetup() error {
	if err := mountAll([]mountOp{{Op: "tmpfs", Path: "/tmp"}}); err != nil {
		return err
	}
	return loopbackUp()
}
