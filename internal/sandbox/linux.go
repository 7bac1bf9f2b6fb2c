//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// advice is what to do when nothing works on Linux.
const advice = "install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap) " +
	"and allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 and later " +
	"sysctl kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for bwrap), " +
	"or use a kernel with Landlock (Linux 5.13 or later, with landlock in its lsm= list)"

// probeTimeout bounds one probe: a mechanism that hangs does not work.
const probeTimeout = 20 * time.Second

// Probes run once per process and program.
var (
	bwrapProbes  sync.Map // bwrap path -> *bwrapProbe
	usernsProbes sync.Map // helper path -> *usernsProbe
)

type bwrapProbe struct {
	once     sync.Once
	err      error
	noUserns bool // --disable-userns works
}

type usernsProbe struct {
	once sync.Once
	err  error
}

// landlockABI is the kernel's Landlock ABI version, 0 without Landlock.
func landlockABI() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil || v < 0 {
		return 0
	}
	return v
}

func (s *Sandbox) detect() error {
	abi := landlockABI()
	var reasons []string
	if s.cfg.Mode == Auto {
		path, err := s.cfg.LookPath("bwrap")
		if err == nil {
			pr := probeBwrap(path)
			if pr.err == nil {
				s.mech, s.bwrp, s.bwrapNoUserns, s.abi = mechBwrap, path, pr.noUserns, abi
				return nil
			}
			reasons = append(reasons, "bubblewrap cannot run here: "+pr.err.Error())
		} else {
			reasons = append(reasons, "bubblewrap (bwrap) is not installed")
		}
	}
	if abi < 1 {
		reasons = append(reasons, "the kernel has no Landlock")
		return &UnavailableError{Reasons: reasons, Advice: advice}
	}
	s.abi = abi
	if err := probeUserns(s.cfg.Executable); err == nil && !s.cfg.noUserns {
		s.mech = mechUserns
		return nil
	}
	s.mech = mechLandlock
	if !s.cfg.Network && abi < 4 {
		reasons = append(reasons, fmt.Sprintf("user namespaces do not work and Landlock ABI %d cannot deny TCP (it needs 4)", abi))
		return &UnavailableError{Reasons: reasons, Advice: advice}
	}
	return nil
}

// probeBwrap runs bubblewrap once with the namespaces and options azero
// uses.
func probeBwrap(path string) *bwrapProbe {
	v, _ := bwrapProbes.LoadOrStore(path, &bwrapProbe{})
	pr := v.(*bwrapProbe)
	pr.once.Do(func() {
		base := []string{"--unshare-all", "--unshare-user", "--die-with-parent", "--new-session", "--as-pid-1", "--cap-drop", "ALL",
			"--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"}
		if pr.err = runProbe(exec.Command(path, append(base, "true")...)); pr.err != nil {
			return
		}
		pr.noUserns = runProbe(exec.Command(path, append(append(base, "--disable-userns"), "true")...)) == nil
	})
	return pr
}

// probeUserns starts the helper in the namespaces of the Landlock path and
// has it make the mounts and bring up the loopback it would.
func probeUserns(exe string) error {
	v, _ := usernsProbes.LoadOrStore(exe, &usernsProbe{})
	pr := v.(*usernsProbe)
	pr.once.Do(func() {
		cmd := exec.Command(exe, helperArg, "probe")
		cmd.SysProcAttr = usernsAttr(false)
		pr.err = runProbe(cmd)
	})
	return pr.err
}

func runProbe(cmd *exec.Cmd) error {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"}
	cmd.Dir = "/"
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		return err
	}
	timer := time.AfterFunc(probeTimeout, func() { _ = cmd.Process.Kill() })
	defer timer.Stop()
	if err := cmd.Wait(); err != nil {
		if msg := strings.TrimSpace(out.String()); msg != "" {
			return fmt.Errorf("%w: %s", err, firstLine(msg))
		}
		return err
	}
	return nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// usernsAttr starts the helper as pid 1 of new user, mount, pid, IPC and
// UTS namespaces (and network, unless network is allowed), as the caller's
// own uid and gid, keeping in the namespace the capabilities its mounts
// need (a non-root helper would lose them at exec).
func usernsAttr(network bool) *syscall.SysProcAttr {
	flags := uintptr(syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS)
	if !network {
		flags |= syscall.CLONE_NEWNET
	}
	uid, gid := os.Getuid(), os.Getgid()
	attr := &syscall.SysProcAttr{
		Cloneflags:  flags,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		Pdeathsig:   syscall.SIGKILL,
	}
	if uid != 0 {
		attr.AmbientCaps = []uintptr{capSysAdmin, capNetAdmin, capSetpcap}
	}
	return attr
}

// Capabilities the helper keeps across exec in its own namespace.
const (
	capSetpcap  = 8
	capNetAdmin = 12
	capSysAdmin = 21
)

// devices are the device files a command may read and write.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// command builds the confined process for the mechanism in use.
func (j *Jail) command(ctx context.Context, argv, env []string) (*exec.Cmd, error) {
	s := j.s
	p := j.plan(argv[0], env)
	spec := helperSpec{Dir: p.dir, Landlock: s.abi > 0, MaxProcesses: s.cfg.MaxProcesses, MaxFileSize: s.cfg.MaxFileSize}
	var read, write []string
	for _, r := range p.roots {
		if r.link == "" {
			read = append(read, r.path)
		}
	}
	read = append(read, p.read...)
	write = append(write, p.write...)
	var private []string
	switch s.mech {
	case mechBwrap, mechUserns:
		// A private /tmp and /dev/shm: the helper's (or bwrap's) own.
		private = []string{"/tmp", "/dev/shm"}
		read = append(read, "/proc")
		spec.Watch = s.root
	case mechLandlock:
		read = append(read, "/proc")
		spec.DenyTCP = !s.cfg.Network
		spec.NprocAbove = true
		if s.root {
			spec.MaxProcesses = 0 // root is exempt, and nothing else can bound it without a pid namespace
		}
	}
	existingHidden := slices.DeleteFunc(slices.Clone(p.hidden), func(h string) bool { return !exists(h) })
	spec.Read, spec.List = split(read, existingHidden)
	var listW []string
	spec.Write, listW = split(write, existingHidden)
	// A private /tmp is empty but for the places bound into it: only a
	// hidden place inside one of those can be seen there. Split around the
	// others, the grant would name every entry of the host's /tmp (a helper
	// command line that grows with it) and leave the private /tmp itself
	// unwritable, as it does when azero's state directory lies in /tmp.
	seen := slices.DeleteFunc(slices.Clone(existingHidden), func(h string) bool { return !within(h, slices.Concat(p.write, p.read)) })
	privateW, listP := split(private, seen)
	spec.Write = append(spec.Write, privateW...)
	spec.List = dedupe(slices.Concat(spec.List, listW, listP))
	spec.Devices = devices

	switch s.mech {
	case mechBwrap:
		spec.Mode = modeBwrap
		return j.bwrapCommand(ctx, argv, env, p, spec)
	case mechUserns:
		spec.Mode = modeUserns
		spec.Mounts = usernsMounts(p)
		spec.Loopback = !s.cfg.Network
		args, err := helperArgs(spec, argv)
		if err != nil {
			return nil, err
		}
		cmd := exec.CommandContext(ctx, s.cfg.Executable, args...)
		cmd.Dir, cmd.Env = p.dir, env
		cmd.SysProcAttr = usernsAttr(s.cfg.Network)
		return cmd, nil
	default:
		spec.Mode = modeLandlock
		args, err := helperArgs(spec, argv)
		if err != nil {
			return nil, err
		}
		cmd := exec.CommandContext(ctx, s.cfg.Executable, args...)
		cmd.Dir, cmd.Env = p.dir, env
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		return cmd, nil
	}
}

// bwrapOp is one of bubblewrap's file-system options.
type bwrapOp struct {
	args []string
	dst  string
}

// bwrapCommand builds bubblewrap's command line: the root made of the
// system roots, then the toolchains and the caller's read-only paths, the
// writable ones, the protected ones inside them and the masks, parents
// before children; the helper as pid 1.
func (j *Jail) bwrapCommand(ctx context.Context, argv, env []string, p plan, spec helperSpec) (*exec.Cmd, error) {
	s := j.s
	args := []string{"--unshare-all", "--unshare-user", "--die-with-parent", "--new-session", "--as-pid-1", "--cap-drop", "ALL",
		"--hostname", "azero-sandbox"}
	if s.bwrapNoUserns {
		args = append(args, "--disable-userns")
	}
	if s.cfg.Network {
		args = append(args, "--share-net")
	}
	ops := []bwrapOp{
		{[]string{"--dev", "/dev"}, "/dev"},
		{[]string{"--proc", "/proc"}, "/proc"},
		{[]string{"--tmpfs", "/tmp"}, "/tmp"},
	}
	for _, r := range p.roots {
		if r.link != "" {
			ops = append(ops, bwrapOp{[]string{"--symlink", r.link, r.path}, r.path})
		} else {
			ops = append(ops, bwrapOp{[]string{"--ro-bind", r.path, r.path}, r.path})
		}
	}
	for _, r := range p.read {
		ops = append(ops, bwrapOp{[]string{"--ro-bind", r, r}, r})
	}
	for _, w := range p.write {
		ops = append(ops, bwrapOp{[]string{"--bind", w, w}, w})
	}
	for _, pr := range p.protect {
		ops = append(ops, bwrapOp{[]string{"--ro-bind", pr, pr}, pr})
	}
	for _, m := range p.masks {
		if info, err := os.Lstat(m); err == nil && info.IsDir() {
			ops = append(ops, bwrapOp{[]string{"--perms", "0000", "--tmpfs", m}, m})
		} else {
			ops = append(ops, bwrapOp{[]string{"--ro-bind", "/dev/null", m}, m})
		}
	}
	exe := s.cfg.Executable
	ops = append(ops, bwrapOp{[]string{"--ro-bind", exe, exe}, exe})
	sort.SliceStable(ops, func(a, b int) bool { return depth(ops[a].dst) < depth(ops[b].dst) })
	for _, op := range ops {
		args = append(args, op.args...)
	}
	args = append(args, "--chdir", p.dir, "--", exe)
	hargs, err := helperArgs(spec, argv)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, s.bwrp, append(args, hargs...)...)
	cmd.Dir, cmd.Env = p.dir, env
	// bwrap takes its sandbox down when azero dies (--die-with-parent
	// covers bwrap's own death).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd, nil
}

// usernsMounts are the mounts the helper makes on the Landlock path, parents
// before children: a private /tmp and /dev/shm, the writable paths bound
// back writable over the read-only root, the readable ones the private /tmp
// would hide bound back read-only, the protected paths read-only, and the
// masks.
func usernsMounts(p plan) []mountOp {
	ops := []mountOp{{Op: "tmpfs", Path: "/tmp"}}
	if info, err := os.Stat("/dev/shm"); err == nil && info.IsDir() {
		ops = append(ops, mountOp{Op: "tmpfs", Path: "/dev/shm"})
	}
	private := []string{"/tmp", "/dev/shm"}
	for _, w := range p.write {
		ops = append(ops, mountOp{Op: "bind", Path: w})
	}
	for _, r := range p.read {
		if within(r, private) {
			ops = append(ops, mountOp{Op: "robind", Path: r})
		}
	}
	for _, pr := range p.protect {
		ops = append(ops, mountOp{Op: "robind", Path: pr})
	}
	for _, m := range p.masks {
		ops = append(ops, mountOp{Op: "mask", Path: m})
	}
	sort.SliceStable(ops, func(a, b int) bool { return depth(ops[a].Path) < depth(ops[b].Path) })
	return ops
}

// bwrapVersion asks bubblewrap for its version ("0.8.0"), for --check.
func bwrapVersion(path string) string {
	out, err := exec.Command(path, "--version").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "bubblewrap"))
}

// check reports the mechanisms of this machine.
func check(cfg Config) Report {
	r := Report{OS: "linux", LandlockABI: landlockABI()}
	if path, err := cfg.LookPath("bwrap"); err == nil {
		r.Bubblewrap = path
		r.BubblewrapVersion = bwrapVersion(path)
		if pr := probeBwrap(path); pr.err != nil {
			r.BubblewrapProblem = pr.err.Error()
		} else {
			r.BubblewrapWorks = true
		}
	} else {
		r.BubblewrapProblem = "not installed"
	}
	if cfg.Executable != "" {
		if err := probeUserns(cfg.Executable); err != nil {
			r.UserNamespacesProblem = err.Error()
		} else {
			r.UserNamespaces = true
		}
	}
	return r
}
