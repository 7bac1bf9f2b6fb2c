package testrun

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/azero-dev/azero/internal/lazyre"
	"github.com/pelletier/go-toml/v2"
)

// cargo runs `cargo test` and reads libtest's output line by line, or
// cargo-nextest with a JUnit report when it is installed.
type cargo struct{ opts Options }

func (c *cargo) Name() string { return KindCargo }

func cargoBin(opts Options) (string, error) {
	if p, err := opts.LookPath("cargo"); err == nil {
		return p, nil
	}
	if home := getenv(opts.Environ, "HOME"); home != "" && exists(filepath.Join(home, ".cargo", "bin", "cargo")) {
		return filepath.Join(home, ".cargo", "bin", "cargo"), nil
	}
	return "", fmt.Errorf("cargo not found: install Rust (rustup) or pass --test-cmd")
}

// cargoManifest is what testrun reads of a Cargo.toml.
type cargoManifest struct {
	Package *struct {
		Name string `toml:"name"`
	} `toml:"package"`
	Lib *struct {
		Name string `toml:"name"`
	} `toml:"lib"`
	Workspace *struct {
		Members        []string `toml:"members"`
		DefaultMembers []string `toml:"default-members"`
	} `toml:"workspace"`
}

// readCargoManifest reads dir's Cargo.toml; a manifest that cannot be read
// reads as empty (cargo itself will say what is wrong with it).
func readCargoManifest(dir string) cargoManifest {
	var m cargoManifest
	if raw, err := os.ReadFile(filepath.Join(dir, "Cargo.toml")); err == nil {
		_ = toml.Unmarshal(raw, &m)
	}
	return m
}

// cargoScope is the packages cargo is asked to test and check: every
// member of a workspace, as `cargo test` at the root of a workspace that
// is also a package tests only that package; unless the workspace names
// its default members, which are then what the project tests.
func cargoScope(dir string) []string {
	if w := readCargoManifest(dir).Workspace; w != nil && len(w.DefaultMembers) == 0 {
		return []string{"--workspace"}
	}
	return nil
}

// keepLockOut returns a function that removes the Cargo.lock cargo writes
// into dir when the project has none: a lock file the project does not
// keep must not become part of a change (nor collide, at the merge, with
// the one cargo wrote into the user's checkout). A project that keeps one
// gets it updated, as cargo does.
func keepLockOut(dir string) func() {
	lock := filepath.Join(dir, "Cargo.lock")
	if _, err := os.Lstat(lock); err == nil {
		return func() {}
	}
	return func() { _ = os.Remove(lock) }
}

func (c *cargo) Run(ctx context.Context, dir string) (Result, error) {
	defer keepLockOut(dir)()
	inv, err := c.opts.start(dir)
	if err != nil {
		return Result{}, err
	}
	defer inv.Close()
	// Build products stay out of the project (they would show up in the
	// diff review): the target directory is in the cache layer.
	settings, err := inv.buildCaches("rust")
	if err != nil {
		return Result{}, err
	}
	var argv []string
	report := ""
	switch {
	case c.opts.TestCmd != "":
		argv = shellCommand(c.opts.TestCmd)
	default:
		bin, err := cargoBin(c.opts)
		if err != nil {
			return Result{}, err
		}
		argv = append([]string{bin, "test", "--no-fail-fast"}, cargoScope(dir)...)
		if found(c.opts.LookPath, "cargo-nextest") {
			// A tool config file asks for the JUnit report without touching
			// the project's own .config/nextest.toml.
			config := filepath.Join(inv.jail.Tmp, "nextest.toml")
			if err := os.WriteFile(config, []byte("[profile.default.junit]\npath = \"azero-junit.xml\"\n"), 0o644); err != nil {
				return Result{}, fmt.Errorf("nextest config: %w", err)
			}
			argv = append([]string{bin, "nextest", "run", "--no-fail-fast", "--tool-config-file", "azero:" + config}, cargoScope(dir)...)
			report = filepath.Join(getenv(settings, "CARGO_TARGET_DIR"), "nextest", "default", "azero-junit.xml")
		}
	}
	out := &display{}
	lt, lw := &libtest{messages: map[string]int{}}, &libtestWitness{}
	w := newLineWriter(func(line []byte) {
		out.Write(append(line, '\n'))
		lt.line(string(line))
		lw.line(string(line))
	})
	var before os.FileInfo
	if report != "" {
		before, _ = os.Stat(report)
	}
	x, err := execute(ctx, inv, argv, settings, c.opts.Timeout, w, w)
	if err != nil {
		return Result{}, err
	}
	w.Close()
	lt.flush()
	if isBaseline(ctx) {
		inv.promoteBuildCaches("rust")
	}
	v := verdict{exitCode: x.exitCode, timedOut: x.timedOut}
	if report == "" {
		v.tally = lt.t
		crossCheck(&v, lw.witness(c.opts.TestCmd == ""))
		return v.result(c.Name(), argv, x, out), nil
	}
	if x.exitCode == 4 {
		v.exitCode = 0 // nextest: no tests to run
	}
	if problem := readFreshJUnit(report, before, x.start, &v.tally, junitName, dir); problem != "" {
		noReport(&v, problem, lt.t.errors, out)
	}
	v.broken = v.broken || lt.t.broken
	crossCheck(&v, witness{runner: "cargo nextest", report: "JUnit report", exitRule: true})
	return v.result(c.Name(), argv, x, out), nil
}

var (
	libtestLine   = lazyre.New(`^test (.+?) \.\.\. (ok|FAILED|ignored\b.*|bench:.*)$`)
	libtestOutput = lazyre.New(`^---- (.+?) std(out|err) ----$`)
	cargoRunning  = lazyre.New(`^\s*Running (?:unittests )?(\S+)`)
	cargoDoc      = lazyre.New(`^\s*Doc-tests (\S+)`)
	rustError     = lazyre.New(`^error(\[E\d+\])?: (.*)$`)
	rustLocation  = lazyre.New(`^\s*--> (\S+:\d+:\d+)\s*$`)
	testFailedMsg = lazyre.New(`^(test failed, to rerun pass|doctest failed|\d+ targets? failed)`)
	libtestRun    = lazyre.New(`^running (\d+) tests?$`)
)

// libtest reads the merged output of `cargo test`: cargo's progress and
// compiler messages, and each test binary's libtest report.
type libtest struct {
	t        tally
	target   string         // the test binary running: "src/lib.rs", "tests/it.rs", "doc calc"
	section  int            // index in t.failures of the test whose output is being read, or -1
	inReport bool           // inside a binary's "failures:" report, where tests print what they like
	messages map[string]int // failing test name -> index in t.failures
	pending  string         // a compiler error waiting for its location
	// The test binary being read announced this many tests and reported
	// this many so far; open until its "test result:" summary.
	announced, reported int
	open                bool
}

func (l *libtest) name(test string) string {
	if l.target == "" {
		return test
	}
	return l.target + "::" + test
}

func (l *libtest) line(s string) {
	if l.inReport {
		switch {
		case strings.HasPrefix(s, "test result: "):
			l.inReport, l.section, l.open = false, -1, false
		case libtestOutput().MatchString(s):
			l.section = -1
			if i, ok := l.messages[l.name(libtestOutput().FindStringSubmatch(s)[1])]; ok {
				l.section = i
			}
		case s == "failures:":
			l.section = -1 // the closing list of names
		case l.section >= 0 && len(l.t.failures[l.section].Message) < maxMessage:
			l.t.failures[l.section].Message = clip(l.t.failures[l.section].Message+s+"\n", maxMessage)
		}
		return
	}
	switch {
	case s == "failures:":
		l.inReport, l.section = true, -1
	case strings.HasPrefix(s, "test result: "):
		l.open = false
	case libtestRun().MatchString(s):
		l.closeBinary()
		l.announced, _ = strconv.Atoi(libtestRun().FindStringSubmatch(s)[1])
		l.reported, l.open = 0, true
	case libtestLine().MatchString(s):
		l.reported++
		m := libtestLine().FindStringSubmatch(s)
		name := l.name(strings.TrimSuffix(m[1], " - should panic"))
		switch {
		case m[2] == "ok", strings.HasPrefix(m[2], "bench:"):
			l.t.record(name, passed, "")
		case m[2] == "FAILED":
			l.t.record(name, failed, "")
			if n := len(l.t.failures); n > 0 && l.t.failures[n-1].Test == name {
				l.messages[name] = n - 1
			}
		default:
			l.t.record(name, skipped, "")
		}
	case cargoRunning().MatchString(s):
		l.flush()
		l.target = cargoRunning().FindStringSubmatch(s)[1]
	case cargoDoc().MatchString(s):
		l.flush()
		l.target = "doc " + cargoDoc().FindStringSubmatch(s)[1]
	case rustError().MatchString(s):
		l.flush()
		msg := rustError().FindStringSubmatch(s)[2]
		if testFailedMsg().MatchString(msg) {
			return // cargo's word that tests failed, not a build error
		}
		l.t.broken = true
		if strings.HasPrefix(msg, "could not compile") {
			l.t.errorLine(s)
			return
		}
		l.pending = s
	case rustLocation().MatchString(s) && l.pending != "":
		l.t.errorLine(rustLocation().FindStringSubmatch(s)[1] + ": " + l.pending)
		l.pending = ""
	}
}

// closeBinary checks the test binary read so far: one that ends without
// its summary and without reporting every test it announced exited or
// crashed in the middle (a test calling process::exit, an abort), so the
// tests it did not report never ran: the run cannot count as tests.
func (l *libtest) closeBinary() {
	if !l.open {
		return
	}
	l.open = false
	if l.reported < l.announced {
		l.t.broken = true
		target := l.target
		if target == "" {
			target = "a test binary"
		}
		l.t.errorLine(fmt.Sprintf("%s: the test binary stopped before its summary, having reported %d of %d tests (a test exited the process or crashed)",
			target, l.reported, l.announced))
	}
}

func (l *libtest) flush() {
	l.closeBinary()
	if l.pending != "" {
		l.t.errorLine(l.pending)
		l.pending = ""
	}
}
