//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/testenv"
)

func TestMain(m *testing.M) {
	Init()
	os.Exit(m.Run())
}

// mechanismCase is one way of confining, as a test asks for it.
type mechanismCase struct {
	name string
	cfg  Config
	weak bool // Landlock without namespaces: the documented gaps apply
}

// noBwrap hides bubblewrap, as a machine without it.
func noBwrap(name string) (string, error) {
	if name == "bwrap" {
		return "", exec.ErrNotFound
	}
	return exec.LookPath(name)
}

// mechanisms are the Linux paths every confinement test runs on:
// bubblewrap with Landlock (Mode auto), Landlock alone in azero's own
// namespaces (bubblewrap hidden), and Landlock without namespaces.
func mechanisms() []mechanismCase {
	return []mechanismCase{
		{name: "bubblewrap+landlock", cfg: Config{Mode: Auto}},
		{name: "landlock", cfg: Config{Mode: Auto, LookPath: noBwrap}},
		{name: "landlock (no namespaces)", cfg: Config{Mode: Landlock, noUserns: true}, weak: true},
	}
}

// newSandbox makes the sandbox of mc with cfg's additions, and checks it
// is the mechanism asked for: a machine that lacks it fails (with
// AZERO_REQUIRE_TOOLS) or skips.
func newSandbox(t *testing.T, mc mechanismCase, cfg Config) *Sandbox {
	t.Helper()
	cfg.Mode, cfg.LookPath, cfg.noUserns = mc.cfg.Mode, mc.cfg.LookPath, mc.cfg.noUserns
	if cfg.TempRoot == "" {
		cfg.TempRoot = t.TempDir()
	}
	s, err := New(cfg)
	if err == nil && s.Mechanism() != mc.name {
		err = fmt.Errorf("got %s", s.Mechanism())
	}
	if err != nil {
		msg := fmt.Sprintf("sandbox %s does not work here: %v", mc.name, err)
		if os.Getenv("AZERO_REQUIRE_TOOLS") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return s
}

// result is a finished confined command.
type result struct {
	code int
	out  string
}

// run runs script with sh in a jail of s for spec, with env (os.Environ()
// when nil), and returns its exit code and output.
func run(t *testing.T, ctx context.Context, s *Sandbox, spec Spec, env []string, script string) result {
	t.Helper()
	j, err := s.Prepare(spec)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := j.Close(); err != nil {
			t.Error(err)
		}
	}()
	if env == nil {
		env = os.Environ()
	}
	cmd, err := j.Command(ctx, []string{"sh", "-c", script}, env, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = testenv.Patience
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return result{code: ee.ExitCode(), out: out.String()}
	case err != nil && ctx.Err() == nil:
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	return result{out: out.String()}
}

// fakeHome is a home with credentials in the places CredentialPlaces
// names, and a toolchain beside them in ~/.cargo/bin.
func fakeHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	testenv.WriteFiles(t, home, map[string]string{
		".ssh/id_rsa":                  "SECRET-SSH\n",
		".aws/credentials":             "SECRET-AWS\n",
		".cargo/credentials.toml":      "SECRET-CARGO\n",
		".config/azero/config.toml":    "SECRET-AZERO-CONFIG\n",
		".local/state/azero/serve.key": "SECRET-AZERO-STATE\n",
		".cargo/bin/tool":              "#!/bin/sh\necho TOOL-OK\n",
	})
	if err := os.Chmod(filepath.Join(home, ".cargo/bin/tool"), 0o755); err != nil {
		t.Fatal(err)
	}
	return home
}

// withPath is the test's environment with dir first on PATH.
func withPath(dir string, extra ...string) []string {
	return append(append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH")), extra...)
}

func TestConfinement(t *testing.T) {
	t.Parallel()
	for _, mc := range mechanisms() {
		t.Run(mc.name, func(t *testing.T) {
			t.Parallel()
			t.Run("reads no credential place, runs its toolchain", func(t *testing.T) {
				t.Parallel()
				home := fakeHome(t)
				s := newSandbox(t, mc, Config{Home: home})
				dir := t.TempDir()
				r := run(t, t.Context(), s, Spec{Dir: dir, Writable: []string{dir}}, withPath(filepath.Join(home, ".cargo/bin")), `
tool
for f in .ssh/id_rsa .aws/credentials .cargo/credentials.toml .config/azero/config.toml .local/state/azero/serve.key; do cat "`+home+`/$f"; done
ls "`+home+`/.ssh" "`+home+`"`)
				if !strings.Contains(r.out, "TOOL-OK") {
					t.Errorf("the toolchain in ~/.cargo/bin did not run:\n%s", r.out)
				}
				if strings.Contains(r.out, "SECRET") {
					t.Errorf("a credential place was readable:\n%s", r.out)
				}
			})
			t.Run("reads no hidden place", func(t *testing.T) {
				t.Parallel()
				ro := t.TempDir()
				testenv.WriteFiles(t, ro, map[string]string{"visible": "VISIBLE\n", "state/store.db": "SECRET-STATE\n", "config/key": "SECRET-CONFIG\n"})
				s := newSandbox(t, mc, Config{Hide: []string{filepath.Join(ro, "state")}})
				r := run(t, t.Context(), s, Spec{ReadOnly: []string{ro}, Hide: []string{filepath.Join(ro, "config")}}, nil,
					"cd '"+ro+"' && cat visible state/store.db config/key")
				if !strings.Contains(r.out, "VISIBLE") || strings.Contains(r.out, "SECRET") {
					t.Errorf("want the visible file and no hidden one:\n%s", r.out)
				}
			})
			t.Run("writes only its own places", func(t *testing.T) {
				t.Parallel()
				w, ro, other := t.TempDir(), t.TempDir(), t.TempDir()
				name := fmt.Sprintf("azero-sandbox-%d", time.Now().UnixNano())
				s := newSandbox(t, mc, Config{})
				r := run(t, t.Context(), s, Spec{Dir: w, Writable: []string{w}, ReadOnly: []string{ro}}, nil, `
echo ok > ok && echo "wrote the worktree"
echo ok > "$TMPDIR/t" && echo "wrote TMPDIR"
echo ok > "$HOME/h" && echo "wrote HOME"
echo x > '`+ro+`/x' && echo "ESCAPED read-only"
echo x > '`+other+`/x' && echo "ESCAPED elsewhere"
echo x > /`+name+` && echo "ESCAPED root"
echo x > /tmp/`+name+`
true`)
				for _, want := range []string{"wrote the worktree", "wrote TMPDIR", "wrote HOME"} {
					if !strings.Contains(r.out, want) {
						t.Errorf("did not %s:\n%s", strings.TrimPrefix(want, "wrote "), r.out)
					}
				}
				if strings.Contains(r.out, "ESCAPED") {
					t.Errorf("wrote outside its places:\n%s", r.out)
				}
				for _, p := range []string{filepath.Join(ro, "x"), filepath.Join(other, "x"), "/" + name, "/tmp/" + name} {
					if _, err := os.Stat(p); err == nil {
						t.Errorf("%s was written", p)
						os.Remove(p)
					}
				}
			})
			t.Run("cannot change the protected .git link", func(t *testing.T) {
				t.Parallel()
				if mc.weak {
					t.Skip("documented: without a mount namespace nothing inside a writable directory can be kept read-only")
				}
				w := t.TempDir()
				link := "gitdir: /elsewhere/.git/worktrees/x\n"
				testenv.WriteFiles(t, w, map[string]string{".git": link})
				s := newSandbox(t, mc, Config{})
				run(t, t.Context(), s, Spec{Dir: w, Writable: []string{w}, Protect: []string{filepath.Join(w, ".git")}}, nil,
					"echo 'gitdir: /tmp/evil' > .git; rm -f .git; mv .git moved; ln -sf /tmp/evil .git; true")
				if got, err := os.ReadFile(filepath.Join(w, ".git")); err != nil || string(got) != link {
					t.Errorf(".git is now %q, %v", got, err)
				}
			})
			t.Run("writes its private /tmp, a hidden place in the host's", func(t *testing.T) {
				t.Parallel()
				if mc.weak {
					t.Skip("documented: without a mount namespace /tmp is the host's")
				}
				// azero's state directory in /tmp, as in azero's own tests, and
				// another entry of the host's /tmp beside it.
				host, err := os.MkdirTemp("/tmp", "azero-sandbox-host-")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { os.RemoveAll(host) })
				hidden, sibling := filepath.Join(host, "state"), filepath.Join(host, "sibling")
				testenv.WriteFiles(t, host, map[string]string{"state/store.db": "SECRET-STATE\n", "sibling/x": "x\n"})
				s := newSandbox(t, mc, Config{Hide: []string{hidden}})
				w := t.TempDir()
				j, err := s.Prepare(Spec{Dir: w, Writable: []string{w}})
				if err != nil {
					t.Fatal(err)
				}
				defer j.Close()
				cmd, err := j.Command(t.Context(), []string{"sh", "-c", "echo TMP-WRITTEN > /tmp/made && cat /tmp/made; cat " + hidden + "/store.db"}, os.Environ(), nil)
				if err != nil {
					t.Fatal(err)
				}
				if args := strings.Join(cmd.Args, " "); strings.Contains(args, sibling) {
					t.Errorf("the helper's grants name an entry of the host's /tmp it does not bind: %s", sibling)
				}
				out, _ := cmd.CombinedOutput()
				if !strings.Contains(string(out), "TMP-WRITTEN") || strings.Contains(string(out), "SECRET") {
					t.Errorf("want /tmp written and the hidden place unread:\n%s", out)
				}
			})
			t.Run("no network, loopback inside", func(t *testing.T) {
				t.Parallel()
				testenv.RequireTool(t, "python3")
				ln, err := net.Listen("tcp4", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				var accepted atomic.Int32
				go func() {
					for {
						c, err := ln.Accept()
						if err != nil {
							return
						}
						accepted.Add(1)
						c.Close()
					}
				}()
				port := ln.Addr().(*net.TCPAddr).Port
				s := newSandbox(t, mc, Config{})
				r := run(t, t.Context(), s, Spec{}, nil, `python3 - <<'EOF'
import socket
try:
    socket.create_connection(("127.0.0.1", `+strconv.Itoa(port)+`), timeout=5).close()
    print("ESCAPED: reached the host's listener")
except OSError as e:
    print("outside:", e)
try:
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    c = socket.create_connection(srv.getsockname(), timeout=5)
    a, _ = srv.accept()
    c.sendall(b"ping")
    print("loopback:", a.recv(4).decode())
except OSError as e:
    print("no loopback:", e)
EOF`)
				ln.Close()
				if strings.Contains(r.out, "ESCAPED") || accepted.Load() > 0 {
					t.Errorf("reached the network:\n%s", r.out)
				}
				wantLoopback := !mc.weak // documented: without a network namespace TCP is denied, loopback included
				if got := strings.Contains(r.out, "loopback: ping"); got != wantLoopback {
					t.Errorf("loopback works = %v, want %v:\n%s", got, wantLoopback, r.out)
				}
			})
			t.Run("no /proc of processes outside", func(t *testing.T) {
				t.Parallel()
				// A process outside the sandbox with a secret in its
				// environment, as azero has its API keys.
				outside := exec.Command("sleep", "600")
				outside.Env = append(os.Environ(), "AZERO_SANDBOX_TEST_KEY=SECRET-ENVIRON")
				if err := outside.Start(); err != nil {
					t.Fatal(err)
				}
				defer func() { outside.Process.Kill(); outside.Wait() }()
				s := newSandbox(t, mc, Config{})
				pid := strconv.Itoa(outside.Process.Pid)
				ppid := strconv.Itoa(os.Getpid())
				r := run(t, t.Context(), s, Spec{}, nil, "cat /proc/"+pid+"/environ /proc/"+ppid+"/environ; tr '\\0' '\\n' < /proc/1/environ; true")
				if strings.Contains(r.out, "SECRET") || strings.Contains(r.out, "AZERO_SANDBOX_TEST_KEY") {
					t.Errorf("read the environment of a process outside:\n%s", r.out)
				}
			})
			t.Run("sees no credential in its environment", func(t *testing.T) {
				t.Parallel()
				s := newSandbox(t, mc, Config{Env: []string{"GH_TOKEN", "KEEP_ME"}})
				r := run(t, t.Context(), s, Spec{}, append(os.Environ(), "ANTHROPIC_API_KEY=SECRET-1", "GH_TOKEN=SECRET-2", "DB_PASSWORD=SECRET-3", "KEEP_ME=kept", "OTHER=SECRET-4"), "env")
				if strings.Contains(r.out, "SECRET") || !strings.Contains(r.out, "KEEP_ME=kept") {
					t.Errorf("environment:\n%s", r.out)
				}
			})
			t.Run("leaves no process behind", func(t *testing.T) {
				t.Parallel()
				w := t.TempDir()
				token := fmt.Sprintf("azero-left-%d", time.Now().UnixNano())
				s := newSandbox(t, mc, Config{})
				r := run(t, t.Context(), s, Spec{Dir: w, Writable: []string{w}}, nil,
					"setsid sh -c 'while :; do echo x >> marker; sleep 0.05; done' "+token+" &\n"+
						"(sh -c 'sleep 600' "+token+" &)\nwhile [ ! -s marker ]; do sleep 0.05; done; exit 3")
				if r.code != 3 {
					t.Errorf("exit %d, want the command's 3:\n%s", r.code, r.out)
				}
				assertStopped(t, token, filepath.Join(w, "marker"))
			})
			t.Run("dies whole when killed", func(t *testing.T) {
				t.Parallel()
				if mc.weak {
					t.Skip("documented: without a pid namespace a process that left the group outlives a SIGKILL of it")
				}
				w := t.TempDir()
				token := fmt.Sprintf("azero-killed-%d", time.Now().UnixNano())
				s := newSandbox(t, mc, Config{})
				ctx, cancel := context.WithCancel(t.Context())
				go func() {
					deadline := time.Now().Add(testenv.Patience)
					for time.Now().Before(deadline) {
						if _, err := os.Stat(filepath.Join(w, "started")); err == nil {
							break
						}
						time.Sleep(20 * time.Millisecond)
					}
					cancel() // kills the Cmd's process group
				}()
				run(t, ctx, s, Spec{Dir: w, Writable: []string{w}}, nil,
					"setsid sh -c 'while :; do echo x >> marker; sleep 0.05; done' "+token+" &\n"+
						"(sh -c 'sleep 600' "+token+" &)\nwhile [ ! -s marker ]; do sleep 0.05; done; touch started; sleep 600 "+token)
				assertStopped(t, token, filepath.Join(w, "marker"))
			})
			t.Run("starts at most MaxProcesses", func(t *testing.T) {
				t.Parallel()
				if mc.weak && os.Getuid() == 0 {
					t.Skip("documented: root is exempt from RLIMIT_NPROC, and without a pid namespace nothing else bounds it")
				}
				token := fmt.Sprintf("azero-fork-%d", time.Now().UnixNano())
				s := newSandbox(t, mc, Config{MaxProcesses: 40})
				r := run(t, t.Context(), s, Spec{}, nil, "i=0; while [ $i -lt 200 ]; do sh -c 'sleep 600' "+token+" & i=$((i+1)); done; echo ALL-STARTED")
				if strings.Contains(r.out, "ALL-STARTED") && r.code == 0 {
					t.Errorf("started 200 processes under a limit of 40:\n%s", r.out)
				}
				waitGone(t, token)
			})
			t.Run("writes no file over MaxFileSize", func(t *testing.T) {
				t.Parallel()
				w := t.TempDir()
				s := newSandbox(t, mc, Config{MaxFileSize: 1 << 20})
				r := run(t, t.Context(), s, Spec{Dir: w, Writable: []string{w}}, nil, "head -c 3000000 /dev/zero > big; echo rc=$?; head -c 1000 /dev/zero > small")
				info, err := os.Stat(filepath.Join(w, "big"))
				if err != nil || info.Size() > 1<<20 || strings.Contains(r.out, "rc=0") {
					t.Errorf("big file %v, %v:\n%s", info, err, r.out)
				}
				if info, err := os.Stat(filepath.Join(w, "small")); err != nil || info.Size() != 1000 {
					t.Errorf("a small file could not be written: %v", err)
				}
			})
			t.Run("passes the exit status", func(t *testing.T) {
				t.Parallel()
				s := newSandbox(t, mc, Config{})
				for script, want := range map[string]int{"exit 0": 0, "exit 7": 7, "kill -TERM $$": 128 + 15, "no-such-command-azero": 127} {
					if r := run(t, t.Context(), s, Spec{}, nil, script); r.code != want {
						t.Errorf("%s: exit %d, want %d\n%s", script, r.code, want, r.out)
					}
				}
			})
		})
	}
}

// assertStopped checks that no process marked by token remains and that
// the marker they wrote stops growing.
func assertStopped(t *testing.T, token, marker string) {
	t.Helper()
	waitGone(t, token)
	before, err := os.ReadFile(marker)
	if err != nil || len(before) == 0 {
		t.Fatalf("the detached writer never ran: %v", err)
	}
	time.Sleep(200 * time.Millisecond) // a live writer appends every 50 ms
	if after, _ := os.ReadFile(marker); len(after) != len(before) {
		t.Errorf("the marker still grows: %d bytes, then %d", len(before), len(after))
	}
}

// waitGone waits until no process has token in its command line.
func waitGone(t *testing.T, token string) {
	t.Helper()
	deadline := time.Now().Add(testenv.Patience)
	for {
		pids := processesWith(token)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes %v outlived the sandbox", pids)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func processesWith(token string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && strings.Contains(string(raw), token) {
			out = append(out, pid)
		}
	}
	return out
}

// With the network allowed, the host's listener is reached.
func TestNetworkAllowed(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "python3")
	for _, mc := range mechanisms() {
		t.Run(mc.name, func(t *testing.T) {
			t.Parallel()
			ln, err := net.Listen("tcp4", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go func() {
				if c, err := ln.Accept(); err == nil {
					c.Write([]byte("hello"))
					c.Close()
				}
			}()
			s := newSandbox(t, mc, Config{Network: true})
			if !s.Network() || !strings.Contains(s.Describe(), "NETWORK ALLOWED") {
				t.Errorf("Describe() = %q", s.Describe())
			}
			r := run(t, t.Context(), s, Spec{}, nil, fmt.Sprintf(`python3 -c 'import socket; print(socket.create_connection(("127.0.0.1", %d), timeout=30).recv(5).decode())'`, ln.Addr().(*net.TCPAddr).Port))
			if !strings.Contains(r.out, "hello") {
				t.Errorf("the network was not reached:\n%s", r.out)
			}
		})
	}
}

// The runners azero drives work in a jail: go test, pytest, node's test
// runner and cargo test, each in a fixture project.
func TestToolchainsRun(t *testing.T) {
	t.Parallel()
	goCache := t.TempDir() // one build cache for the three paths: warm after the first
	projects := []struct {
		tool, script string
		files        map[string]string
		want         string
	}{
		{"go", "GOCACHE=" + goCache + " go test -count=1 ./...", map[string]string{"go.mod": "module example.com/calc\n\ngo 1.22\n",
			"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif 1+2 != 3 {\n\t\tt.Fatal(1)\n\t}\n}\n"}, "ok  \texample.com/calc"},
		{"pytest", "pytest -q -p no:cacheprovider", map[string]string{"test_calc.py": "def test_add():\n    assert 1 + 2 == 3\n"}, "1 passed"},
		{"node", "node --test", map[string]string{"calc.test.mjs": "import { test } from 'node:test'\nimport assert from 'node:assert/strict'\ntest('adds', () => assert.equal(1 + 2, 3))\n"}, "pass 1"},
		{"cargo", "CARGO_TARGET_DIR=$TMPDIR/target cargo test -q", map[string]string{"Cargo.toml": "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
			"src/lib.rs": "#[test]\nfn adds() { assert_eq!(1 + 2, 3); }\n"}, "1 passed"},
	}
	for _, mc := range mechanisms() {
		t.Run(mc.name, func(t *testing.T) {
			t.Parallel()
			for _, p := range projects {
				t.Run(p.tool, func(t *testing.T) {
					testenv.RequireTool(t, p.tool)
					dir := t.TempDir()
					testenv.WriteFiles(t, dir, p.files)
					s := newSandbox(t, mc, Config{})
					r := run(t, t.Context(), s, Spec{Dir: dir, Writable: []string{dir, goCache}}, nil, p.script)
					if r.code != 0 || !strings.Contains(r.out, p.want) {
						t.Errorf("exit %d, want 0 and %q:\n%s", r.code, p.want, r.out)
					}
				})
			}
		})
	}
}

// A helper that cannot set up the sandbox says why and exits 125, and the
// command does not run.
func TestHelperFailsClosed(t *testing.T) {
	t.Parallel()
	w := t.TempDir()
	marker := filepath.Join(w, "ran")
	tests := []struct {
		name string
		args []string
	}{
		{"spec unreadable", []string{helperArg, "run", "{not json", "--", "touch", marker}},
		{"no command", []string{helperArg, "run", "{}", "--"}},
		{"mounts impossible outside namespaces", []string{helperArg, "run", `{"mode":"userns","mounts":[{"op":"tmpfs","path":"/tmp"}]}`, "--", "touch", marker}},
		{"unknown verb", []string{helperArg, "dance"}},
	}
	for _, tt := range tests {
		cmd := exec.Command(os.Args[0], tt.args...)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 125 || !strings.HasPrefix(string(out), "azero sandbox: ") {
			t.Errorf("%s: %v, output %q; want exit 125 and one line starting azero sandbox:", tt.name, err, out)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command ran although the sandbox was not set up")
	}
}

// Mode off runs unconfined but for the environment, the private HOME and
// TMPDIR and the rlimits, and says so.
func TestOff(t *testing.T) {
	t.Parallel()
	home := fakeHome(t)
	s, err := New(Config{Mode: Off, Home: home, TempRoot: t.TempDir(), MaxFileSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Off() || s.Mechanism() != "off" || !strings.Contains(s.Describe(), "OFF") || !strings.Contains(s.Describe(), "UNCONFINED") {
		t.Errorf("mechanism %q, Describe %q", s.Mechanism(), s.Describe())
	}
	w := t.TempDir()
	r := run(t, t.Context(), s, Spec{Dir: w, Writable: []string{w}}, append(os.Environ(), "GH_TOKEN=SECRET-TOKEN"),
		"cat '"+home+"/.ssh/id_rsa'; env; head -c 3000000 /dev/zero > big")
	if !strings.Contains(r.out, "SECRET-SSH") {
		t.Errorf("off is not unconfined:\n%s", r.out)
	}
	if strings.Contains(r.out, "SECRET-TOKEN") || strings.Contains(r.out, "HOME="+os.Getenv("HOME")+"\n") {
		t.Errorf("off passed a credential or the real HOME:\n%s", r.out)
	}
	if info, err := os.Stat(filepath.Join(w, "big")); err != nil || info.Size() > 1<<20 {
		t.Errorf("off wrote a file over the limit: %v", err)
	}
}

func TestPrepareRefusesAWorkingDirectoryOutside(t *testing.T) {
	t.Parallel()
	s, err := New(Config{Mode: Off, TempRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prepare(Spec{Dir: t.TempDir(), Writable: []string{t.TempDir()}}); err == nil {
		t.Error("a working directory outside every grant was accepted")
	}
}

// Where nothing works, the error says what to install or enable, and
// that only --sandbox off runs the code.
func TestUnavailableSaysWhatToDo(t *testing.T) {
	t.Parallel()
	err := &UnavailableError{Reasons: []string{"bubblewrap (bwrap) is not installed", "the kernel has no Landlock"}, Advice: advice}
	for _, want := range []string{"apt-get install bubblewrap", "unprivileged_userns_clone", "apparmor_restrict_unprivileged_userns", "lsm=", "--sandbox off", "not installed"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err.Error(), want)
		}
	}
}

// Init is one comparison when the process is not the helper.
func BenchmarkInit(b *testing.B) {
	for b.Loop() {
		Init()
	}
}

// BenchmarkSandboxOverhead runs a one-test pytest project unconfined and
// on each path, jail made and removed every time, as a test run of azero
// is. Each confined run follows an unconfined one, timed apart, so that the
// milliseconds added and the ratio compare runs made under the same load
// (a shared machine's load drifts over a benchmark), whichever
// sub-benchmarks run.
func BenchmarkSandboxOverhead(b *testing.B) {
	pytest, err := exec.LookPath("pytest")
	if err != nil {
		b.Skip("pytest is not installed")
	}
	dir := b.TempDir()
	testenv.WriteFiles(b, dir, map[string]string{"test_calc.py": "def test_add():\n    assert 1 + 2 == 3\n"})
	argv := []string{pytest, "-q", "-p", "no:cacheprovider"}
	settings := []string{"PYTHONDONTWRITEBYTECODE=1"}
	off, err := New(Config{Mode: Off, TempRoot: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	// unconfined runs pytest directly, with the environment of a jail (HOME
	// and TMPDIR of its own, the allowlist), so only the confinement
	// differs, and returns how long that took.
	unconfined := func(b *testing.B) time.Duration {
		start := time.Now()
		j, err := off.Prepare(Spec{Dir: dir, Writable: []string{dir}})
		if err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir, cmd.Env = dir, j.environ(os.Environ(), settings)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
		j.Close()
		return time.Since(start)
	}
	b.Run("unconfined", func(b *testing.B) {
		for b.Loop() {
			unconfined(b)
		}
	})
	for _, mc := range mechanisms() {
		b.Run(mc.name, func(b *testing.B) {
			cfg := mc.cfg
			cfg.TempRoot = b.TempDir()
			s, err := New(cfg)
			if err != nil || s.Mechanism() != mc.name {
				b.Skipf("%s does not work here: %v", mc.name, err)
			}
			var base time.Duration
			for b.Loop() {
				b.StopTimer()
				base += unconfined(b)
				b.StartTimer()
				j, err := s.Prepare(Spec{Dir: dir, Writable: []string{dir}})
				if err != nil {
					b.Fatal(err)
				}
				cmd, err := j.Command(b.Context(), argv, os.Environ(), settings)
				if err != nil {
					b.Fatal(err)
				}
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v\n%s", err, out)
				}
				if err := j.Close(); err != nil {
					b.Fatal(err)
				}
			}
			per, basePer := b.Elapsed()/time.Duration(b.N), base/time.Duration(b.N)
			b.ReportMetric(float64(per-basePer)/1e6, "ms-added/op")
			b.ReportMetric(float64(per)/float64(basePer), "x-unconfined")
		})
	}
}

// BenchmarkHelperStart is the cost of the helper alone: the executable
// started as the helper in mode off (rlimits, exec) running true, against
// true started directly.
func BenchmarkHelperStart(b *testing.B) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		b.Skip("no true")
	}
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command(truePath).Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("helper", func(b *testing.B) {
		args, err := helperArgs(helperSpec{Mode: modeOff}, []string{truePath})
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if out, err := exec.Command(os.Args[0], args...).CombinedOutput(); err != nil {
				b.Fatalf("%v\n%s", err, out)
			}
		}
	})
}

// BenchmarkTrue is the fixed cost of each path: true run confined, against
// true run directly and through the helper alone (mode off).
func BenchmarkTrue(b *testing.B) {
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, mc := range append([]mechanismCase{{name: "off", cfg: Config{Mode: Off}}}, mechanisms()...) {
		b.Run(mc.name, func(b *testing.B) {
			cfg := mc.cfg
			cfg.TempRoot = b.TempDir()
			s, err := New(cfg)
			if err != nil || s.Mechanism() != mc.name {
				b.Skipf("%s does not work here: %v", mc.name, err)
			}
			dir := b.TempDir()
			for b.Loop() {
				j, err := s.Prepare(Spec{Dir: dir, Writable: []string{dir}})
				if err != nil {
					b.Fatal(err)
				}
				cmd, err := j.Command(b.Context(), []string{"true"}, os.Environ(), nil)
				if err != nil {
					b.Fatal(err)
				}
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v\n%s", err, out)
				}
				j.Close()
			}
		})
	}
}
