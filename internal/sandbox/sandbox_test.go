package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/testenv"
)

func TestEnviron(t *testing.T) {
	t.Parallel()
	in := []string{
		"PATH=/usr/bin", "LANG=C.UTF-8", "LC_ALL=C", "GOFLAGS=-mod=mod", "CGO_ENABLED=0", "CARGO_TERM_COLOR=never",
		"ANTHROPIC_API_KEY=sk", "GITHUB_TOKEN=ghp", "AWS_SECRET_ACCESS_KEY=x", "DB_PASSWORD=p", "MY_SECRET=s",
		"SSH_AUTH_SOCK=/run/agent", "AWS_PROFILE=prod", "EDITOR=vi", "AZERO_STATE_DIR=/s", "HOME=/home/u",
		"EXTRA=1", "EXTRA_TOKEN=t", "noequals",
	}
	got := Environ(in, []string{"EXTRA", "EXTRA_TOKEN"})
	want := []string{"PATH=/usr/bin", "LANG=C.UTF-8", "LC_ALL=C", "GOFLAGS=-mod=mod", "CGO_ENABLED=0", "CARGO_TERM_COLOR=never", "EXTRA=1"}
	if !slices.Equal(got, want) {
		t.Errorf("Environ =\n%q\nwant\n%q", got, want)
	}
}

func TestJailEnvironment(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	testenv.WriteFiles(t, home, map[string]string{"go/.keep": "", ".cargo/bin/.keep": ""})
	tests := []struct {
		name    string
		network bool
		environ []string
		want    []string // NAME=value that must be there (last value)
		absent  []string // names that must not be there
	}{
		{"offline defaults", false, []string{"PATH=/usr/bin", "HOME=/real", "TMPDIR=/real/tmp", "XDG_CONFIG_HOME=/real/.config"},
			[]string{"GOPROXY=off", "GOTOOLCHAIN=local", "CARGO_NET_OFFLINE=true", "GOPATH=" + filepath.Join(home, "go"), "CARGO_HOME=" + filepath.Join(home, ".cargo")},
			[]string{"RUSTUP_HOME", "PYTHONUSERBASE"}},
		{"the user's toolchain choice stays", false, []string{"GOTOOLCHAIN=go1.26.0", "GOPATH=/opt/go"}, []string{"GOTOOLCHAIN=go1.26.0", "GOPATH=/opt/go"}, nil},
		{"online", true, []string{"GOPROXY=https://proxy.golang.org"}, []string{"GOPROXY=https://proxy.golang.org"}, []string{"CARGO_NET_OFFLINE", "GOTOOLCHAIN"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := New(Config{Mode: Off, Home: home, Network: tt.network, TempRoot: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			// Off reports the network as reachable; the variables follow
			// the configuration.
			s.mech = mechUserns
			j, err := s.Prepare(Spec{})
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			env := j.environ(tt.environ, []string{"GOCACHE=/c", "A_TOKEN=leak"})
			for _, w := range tt.want {
				k, v, _ := strings.Cut(w, "=")
				if got := lookup(env, k); got != v {
					t.Errorf("%s = %q, want %q (%q)", k, got, v, env)
				}
			}
			for _, a := range append(tt.absent, "A_TOKEN") {
				if lookup(env, a) != "" {
					t.Errorf("%s is set: %q", a, env)
				}
			}
			for k, v := range map[string]string{"HOME": j.Home, "TMPDIR": j.Tmp, "TMP": j.Tmp, "TEMP": j.Tmp, "GOCACHE": "/c",
				"XDG_CONFIG_HOME": filepath.Join(j.Home, ".config"), "XDG_CACHE_HOME": filepath.Join(j.Home, ".cache")} {
				if got := lookup(env, k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			for _, kv := range env {
				if strings.HasPrefix(kv, "HOME=") && kv != "HOME="+j.Home {
					t.Errorf("a second HOME: %q", kv)
				}
			}
		})
	}
}

func TestParseMode(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Mode{"": Auto, "auto": Auto, "Landlock": Landlock, " off ": Off} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseMode("none"); err == nil || !strings.Contains(err.Error(), "auto, landlock or off") {
		t.Errorf("ParseMode(none) = %v", err)
	}
	if _, err := New(Config{Mode: "docker"}); err == nil {
		t.Error("New accepted an unknown mode")
	}
}

// Landlock cannot take a place back out of a grant, so a grant holding a
// hidden place is split into its other entries.
func TestSplit(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	testenv.WriteFiles(t, root, map[string]string{
		"etc/passwd": "", "etc/shadow": "", "etc/ssh/key": "", "etc/ssl/certs/a": "", "etc/ssl/private/k": "",
		"home/.cargo/bin/cargo": "", "home/.cargo/credentials.toml": "", "home/.cargo/registry/x": "",
		"state/worktrees/1/a.py": "",
	})
	if err := os.Symlink(filepath.Join(root, "home/.cargo/credentials.toml"), filepath.Join(root, "etc/link-to-secret")); err != nil {
		t.Fatal(err)
	}
	p := func(rel ...string) []string {
		var out []string
		for _, r := range rel {
			out = append(out, filepath.Join(root, r))
		}
		return out
	}
	hidden := p("etc/shadow", "etc/ssh", "etc/ssl/private", "home/.cargo/credentials.toml", "state", "nowhere")
	grants, dirs := split(p("etc", "home/.cargo", "state/worktrees/1", "missing"), hidden)
	slices.Sort(grants)
	slices.Sort(dirs)
	wantGrants := p("etc/passwd", "etc/ssl/certs", "home/.cargo/bin", "home/.cargo/registry", "state/worktrees/1")
	slices.Sort(wantGrants)
	if !slices.Equal(grants, wantGrants) {
		t.Errorf("grants\n%q\nwant\n%q", grants, wantGrants)
	}
	if want := p("etc", "etc/ssl", "home/.cargo"); !slices.Equal(dirs, want) {
		t.Errorf("list-only dirs\n%q\nwant\n%q", dirs, want)
	}
}

// The toolchains a command needs are found from the environment and the
// home, never the home itself or a place holding credentials.
func TestToolchainPaths(t *testing.T) {
	t.Parallel()
	home := "/home/u"
	env := []string{
		"PATH=/home/u/sdk/go1.26/bin:/home/u/.cargo/bin:/home/u/.local/bin:/home/u/bin:/home/u:/usr/bin:relative/bin",
		"GOPATH=/home/u/gopath", "VIRTUAL_ENV=/home/u/proj/.venv", "CARGO_HOME=/opt/cargo",
	}
	hidden := []string{"/home/u/.cargo/credentials.toml", "/home/u/.local/state/azero"}
	got := toolchainPaths(home, env, hidden)
	for _, want := range []string{"/home/u/sdk/go1.26", "/home/u/.cargo/bin", "/home/u/.local/bin", "/home/u/bin", "/home/u/gopath/pkg/mod",
		"/home/u/proj/.venv", "/opt/cargo/bin", "/opt/cargo/registry", "/home/u/.rustup", "/home/u/.pyenv"} {
		if !slices.Contains(got, want) {
			t.Errorf("lacks %s: %q", want, got)
		}
	}
	for _, not := range []string{"/home/u", "/home/u/.cargo", "/home/u/.local", "/opt/cargo", "/usr", "relative"} {
		if slices.Contains(got, not) {
			t.Errorf("has %s: %q", not, got)
		}
	}
}

// What a command sees: the credential places masked where they are
// visible, the program it runs readable, nothing granted twice.
func TestPlan(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	testenv.WriteFiles(t, home, map[string]string{".ssh/id_rsa": "", ".cargo/bin/cargo": "", ".cargo/credentials.toml": "", "tools/bin/tool": ""})
	work, ro := t.TempDir(), t.TempDir()
	testenv.WriteFiles(t, work, map[string]string{".git": "gitdir: x\n"})
	testenv.WriteFiles(t, ro, map[string]string{"secret/k": "", "lib/a": ""})
	s, err := New(Config{Mode: Off, Home: home, TempRoot: t.TempDir(), Hide: []string{filepath.Join(ro, "secret")}})
	if err != nil {
		t.Fatal(err)
	}
	j, err := s.Prepare(Spec{Dir: work, Writable: []string{work}, ReadOnly: []string{ro, filepath.Join(work, "node_modules_in_work")},
		Protect: []string{filepath.Join(work, ".git"), filepath.Join(work, "absent")}})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	p := j.plan(filepath.Join(home, "tools/bin/tool"), []string{"PATH=" + filepath.Join(home, ".cargo/bin") + ":/usr/bin"})
	for _, want := range []string{filepath.Join(home, ".cargo/bin"), ro, filepath.Join(home, "tools/bin/tool")} {
		if !slices.Contains(p.read, want) {
			t.Errorf("read lacks %s: %q", want, p.read)
		}
	}
	for _, want := range []string{work, j.Tmp, j.Home} {
		if !slices.Contains(p.write, want) {
			t.Errorf("write lacks %s: %q", want, p.write)
		}
	}
	if !slices.Equal(p.protect, []string{filepath.Join(work, ".git")}) {
		t.Errorf("protect = %q", p.protect)
	}
	if !slices.Contains(p.masks, filepath.Join(ro, "secret")) || slices.Contains(p.masks, filepath.Join(home, ".ssh")) {
		t.Errorf("masks = %q: want the hidden place inside a readable one, not one nothing shows", p.masks)
	}
	if _, err := os.Stat("/etc/shadow"); err == nil && !slices.Contains(p.masks, "/etc/shadow") {
		t.Errorf("masks = %q: /etc/shadow is visible through /etc", p.masks)
	}
}

func TestSeatbeltProfile(t *testing.T) {
	t.Parallel()
	p := SeatbeltProfile(SeatbeltPolicy{Read: []string{"/Users/u/.cargo/bin"}, Write: []string{`/Users/u/work "q"`}, Deny: []string{"/Users/u/.ssh"}})
	for _, want := range []string{
		"(version 1)\n(deny default)\n",
		"(allow file-read*\n  (subpath \"/usr\")",
		"(subpath \"/Users/u/.cargo/bin\")",
		"(allow file-read* file-write*\n  (subpath \"/Users/u/work \\\"q\\\"\"))",
		"(allow network-outbound (remote ip \"localhost:*\"))",
		"(deny file-read* file-write*\n  (subpath \"/Users/u/.ssh\"))\n",
	} {
		if !strings.Contains(p, want) {
			t.Errorf("profile lacks %q:\n%s", want, p)
		}
	}
	if !strings.HasSuffix(p, "(deny file-read* file-write*\n  (subpath \"/Users/u/.ssh\"))\n") {
		t.Errorf("the denials do not come last, where they win:\n%s", p)
	}
	if strings.Contains(p, "(allow network*)") || strings.Contains(p, "keychain") {
		t.Errorf("the network or the keychain is open:\n%s", p)
	}
	if open := SeatbeltProfile(SeatbeltPolicy{Network: true}); !strings.Contains(open, "(allow network*)") {
		t.Errorf("network allowed but not in the profile:\n%s", open)
	}
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	s := &Sandbox{cfg: Config{MaxProcesses: 1024, MaxFileSize: 1 << 30}, mech: mechBwrap, abi: 7}
	if got := s.Describe(); !strings.Contains(got, "bubblewrap+landlock (Landlock ABI 7)") || !strings.Contains(got, "no network") ||
		!strings.Contains(got, "1024 processes") || !strings.Contains(got, "1 GiB") {
		t.Errorf("Describe() = %q", got)
	}
}

func FuzzParseHelper(f *testing.F) {
	f.Add("run", `{"mode":"bwrap","read":["/usr"],"max_processes":10}`, "true")
	f.Add("run", `{"mounts":[{"op":"bind","path":"/w"}]}`, "")
	f.Add("probe", "", "")
	f.Fuzz(func(t *testing.T, verb, spec, arg string) {
		verb2, s, argv, err := parseHelper([]string{verb, spec, "--", arg})
		if err != nil {
			return
		}
		if verb2 != verb {
			t.Fatalf("verb %q read as %q", verb, verb2)
		}
		if verb == "run" && (len(argv) != 1 || argv[0] != arg) {
			t.Fatalf("argv %q, want [%q]", argv, arg)
		}
		_ = s
	})
}

func FuzzSBPLString(f *testing.F) {
	for _, s := range []string{"/usr", `a"b`, `a\b`, "a\nb", `\"`, ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := sbplString(s)
		if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
			t.Fatalf("%q is not quoted: %q", s, q)
		}
		// Read it back as a Scheme reader would: every quote inside is
		// escaped, so the literal ends where it should.
		var b strings.Builder
		body := q[1 : len(q)-1]
		for i := 0; i < len(body); i++ {
			switch c := body[i]; {
			case c == '"':
				t.Fatalf("an unescaped quote in %q", q)
			case c == '\\' && i+1 < len(body):
				i++
				if body[i] == 'n' {
					b.WriteByte('\n')
				} else {
					b.WriteByte(body[i])
				}
			case c == '\\':
				t.Fatalf("a dangling escape in %q", q)
			default:
				b.WriteByte(c)
			}
		}
		if b.String() != s {
			t.Fatalf("%q read back as %q", s, b.String())
		}
	})
}

// Sweep removes the jails of processes that are gone, and only those: not
// this process's, not a live one's, not what is not a jail.
func TestSweepRemovesTheJailsOfDeadProcesses(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(root, fmt.Sprintf("jail-%d-abc", os.Getpid()))
	gone := filepath.Join(root, fmt.Sprintf("jail-%d-def", dead.Process.Pid))
	live := filepath.Join(root, "jail-1-ghi") // init lives as long as the machine
	other := filepath.Join(root, "cache")
	for _, d := range []string{mine, filepath.Join(gone, "tmp", "locked"), live, other} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// A jail whose command made a directory unreadable is removed too.
	if err := os.Chmod(filepath.Join(gone, "tmp", "locked"), 0); err != nil {
		t.Fatal(err)
	}
	removed, err := Sweep(root)
	if err != nil || len(removed) != 1 || removed[0] != gone {
		t.Fatalf("Sweep = %v, %v; want only %s", removed, err, gone)
	}
	for _, d := range []string{mine, live, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("the dead process's jail is still there: %v", err)
	}
}
