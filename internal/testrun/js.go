package testrun

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/azero-dev/azero/internal/lazyre"
)

// jsRunner runs node's test runner, vitest or jest with a machine-readable
// report in a temporary directory: JUnit XML for node and vitest, jest's
// own JSON results for jest (built in, where JUnit needs jest-junit).
type jsRunner struct {
	kind string
	opts Options
}

func (j *jsRunner) Name() string { return j.kind }

// jsEnv: no colours in logs, and vitest and jest run once instead of
// watching (CI mode also keeps jest from writing new snapshots).
var jsEnv = []string{"NO_COLOR=1", "FORCE_COLOR=0", "CI=1"}

// command is the runner's command and what it adds to the environment.
func (j *jsRunner) command(dir, report string) ([]string, []string, error) {
	if j.opts.TestCmd != "" {
		return shellCommand(j.opts.TestCmd), nil, nil
	}
	switch j.kind {
	case KindNode:
		return j.nodeCommand(dir, report)
	case KindVitest:
		// --run: once, even when the script says --watch (CI=1 does not
		// stop an explicit watch). --no-cache: its results cache would be
		// written into node_modules/.vite, which in a worktree is the
		// checkout's, read-only in the sandbox.
		argv, err := j.viaScript(dir, []string{"--run", "--no-cache", "--reporter=default", "--reporter=junit", "--outputFile.junit=" + report, "--passWithNoTests"}, "run")
		return argv, nil, err
	default:
		// Likewise for jest's --watch and --watchAll.
		argv, err := j.viaScript(dir, []string{"--ci", "--watch=false", "--watchAll=false", "--json", "--outputFile=" + report, "--passWithNoTests"}, "")
		return argv, nil, err
	}
}

// nodeCommand runs node's test runner with a console and a JUnit reporter:
// through the project's script when it runs `node --test` as its last
// command (its files, flags and build steps apply: `tsc && node --test
// dist/`, `node --import tsx --test`), the reporters then passed in
// NODE_OPTIONS, as node reads anything after a file argument as another
// file; else `node --test` itself. A script that names its own reporter
// would clash with them, and is not used.
func (j *jsRunner) nodeCommand(dir, report string) ([]string, []string, error) {
	node, err := j.opts.LookPath("node")
	if err != nil {
		return nil, nil, fmt.Errorf("node not found: install Node.js 20.11 or later (its test runner writes JUnit from there on) or pass --test-cmd")
	}
	reporters := []string{"--test-reporter=spec", "--test-reporter-destination=stdout",
		"--test-reporter=junit", "--test-reporter-destination=" + report}
	pkg, _ := readPackageJSON(dir)
	runner, script := pkg.testRunner()
	npm, npmErr := j.opts.LookPath("npm")
	if runner != KindNode || script == "" || strings.Contains(pkg.Scripts[script], "--test-reporter") || npmErr != nil || strings.ContainsAny(report, " \t\"'\\") {
		return append([]string{node, "--test"}, reporters...), nil, nil
	}
	options := strings.Join(reporters, " ")
	if prior := getenv(j.opts.Environ, "NODE_OPTIONS"); prior != "" {
		options = prior + " " + options
	}
	argv := []string{npm, "test"}
	if script != "test" {
		argv = []string{npm, "run", script}
	}
	return argv, []string{"NODE_OPTIONS=" + options}, nil
}

// viaScript runs the project's own script with args when the test script
// runs the runner as its last command, directly or through `npm run NAME`
// (so the project's own flags and config apply: `node
// --experimental-vm-modules node_modules/jest/bin/jest.js`, say), else the
// runner's binary from node_modules/.bin or PATH.
func (j *jsRunner) viaScript(dir string, args []string, sub string) ([]string, error) {
	pkg, _ := readPackageJSON(dir)
	if runner, script := pkg.testRunner(); runner == j.kind && script != "" {
		if npm, err := j.opts.LookPath("npm"); err == nil {
			if script == "test" {
				return append([]string{npm, "test", "--"}, args...), nil
			}
			return append([]string{npm, "run", script, "--"}, args...), nil
		}
	}
	bin := filepath.Join(dir, "node_modules", ".bin", j.kind)
	if !exists(bin) {
		p, err := j.opts.LookPath(j.kind)
		if err != nil {
			return nil, fmt.Errorf("%s not found: install it in the project (npm install --save-dev %s) or pass --test-cmd", j.kind, j.kind)
		}
		bin = p
	}
	argv := []string{bin}
	if sub != "" {
		argv = append(argv, sub)
	}
	return append(argv, args...), nil
}

func (j *jsRunner) Run(ctx context.Context, dir string) (Result, error) {
	inv, err := j.opts.start(dir)
	if err != nil {
		return Result{}, err
	}
	defer inv.Close()
	report := filepath.Join(inv.jail.Tmp, "report")
	argv, extra, err := j.command(dir, report)
	if err != nil {
		return Result{}, err
	}
	out := &display{}
	text := &textTail{max: maxOutput}
	var console consoleWatch // the runner's own error lines, from its console
	w := newLineWriter(func(line []byte) {
		out.Write(append(line, '\n'))
		text.Write(append(line, '\n'))
		console.line(string(line))
	})
	x, err := execute(ctx, inv, argv, append(extra, jsEnv...), j.opts.Timeout, w, w)
	if err != nil {
		return Result{}, err
	}
	w.Close()
	v := verdict{exitCode: x.exitCode, timedOut: x.timedOut}
	if j.opts.TestCmd != "" {
		v.tally = jsText(j.kind, text.String())
		v.broken = v.broken || console.broken
		if v.broken || v.errored > 0 {
			v.errors = console.errors()
		}
		return v.result(j.Name(), argv, x, out), nil
	}
	var problem string
	if j.kind == KindJest {
		problem = readJestReport(report, dir, &v.tally)
	} else {
		problem = readFreshJUnit(report, nil, x.start, &v.tally, junitName, dir)
	}
	switch {
	case problem != "":
		noReport(&v, problem, console.errors(), out)
	case console.broken || j.kind == KindNode && (v.broken || v.errored > 0):
		// An error the report leaves out (vitest's uncaught exceptions)
		// makes the run broken. node's report says only that a file's
		// "test failed"; what went wrong is on the console, which comes
		// first.
		v.broken = v.broken || console.broken
		fromReport := v.errors
		v.errors = nil
		for _, l := range append(console.errors(), fromReport...) {
			v.errorLine(l)
		}
	}
	crossCheck(&v, jsWitness(j.kind, text.String(), true))
	return v.result(j.Name(), argv, x, out), nil
}

// noReport decides a run that left no usable report: after a failed
// command nothing ran as tests (a build or config error: Broken), unless
// the command itself was missing; after a successful one the runner did
// not do what it was asked (Error).
func noReport(v *verdict, problem string, console []string, out *display) {
	if len(console) == 0 {
		console = lastLines(out.String(), 10)
	}
	v.errors = v.errors[:0]
	v.errorLine(problem)
	for _, l := range console {
		v.errorLine(l)
	}
	if v.exitCode != 0 && v.exitCode != 126 && v.exitCode != 127 {
		v.unusable = true
	} else {
		v.crashed = true
	}
}

// packageJSON is what testrun reads of a package.json.
type packageJSON struct {
	Type            string            `json:"type"`
	Scripts         map[string]string `json:"scripts"`
	Dependencies    map[string]string `json:"dependencies"`
	DevDependencies map[string]string `json:"devDependencies"`
}

func readPackageJSON(dir string) (packageJSON, error) {
	var p packageJSON
	raw, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return p, err
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, fmt.Errorf("read %s: %w", filepath.Join(dir, "package.json"), err)
	}
	return p, nil
}

func (p packageJSON) depends(name string) bool {
	_, a := p.Dependencies[name]
	_, b := p.DevDependencies[name]
	return a || b
}

var scriptSep = lazyre.New(`&&|\|\||;|\|`)

// maxScriptDepth bounds how many `npm run NAME` calls are followed.
const maxScriptDepth = 5

// testRunner names the test runner the package's test script runs
// (vitest, jest, or node for `node --test`), following `npm run NAME` (and
// yarn's, pnpm's and bun's way of saying it) into the scripts it calls; and
// the script that runs it as its last command, the one `npm run SCRIPT --
// ARGS` passes ARGS to ("" when the runner is not any script's last
// command).
func (p packageJSON) testRunner() (runner, script string) {
	return p.scriptRunner("test", 0)
}

func (p packageJSON) scriptRunner(name string, depth int) (runner, script string) {
	parts := scriptSep().Split(p.Scripts[name], -1)
	for i := len(parts) - 1; i >= 0; i-- {
		if r := commandRunner(parts[i]); r != "" {
			if i == len(parts)-1 {
				return r, name
			}
			return r, ""
		}
		called := scriptCall(parts[i])
		if called == "" || called == name || depth >= maxScriptDepth {
			continue
		}
		if _, ok := p.Scripts[called]; !ok {
			continue
		}
		if r, s := p.scriptRunner(called, depth+1); r != "" {
			// The called script runs on its own: what comes before the
			// call in this one (a lint step, say) is not the tests.
			return r, s
		}
	}
	return "", ""
}

// otherRunners are JavaScript test runners azero reads only through a
// JUnit report of theirs (--test-cmd and --report).
var otherRunners = []string{"mocha", "ava", "tap", "tape", "jasmine", "karma", "uvu", "playwright", "cypress", "ts-mocha"}

// packageRunners run the command after them (a package's binary, or the
// command under coverage).
var packageRunners = []string{"npx", "pnpm", "yarn", "bunx", "exec", "dlx", "c8", "nyc"}

// otherRunner names the test runner of otherRunners the test script's
// last command runs, or "".
func (p packageJSON) otherRunner() string {
	parts := scriptSep().Split(p.Scripts["test"], -1)
	w := commandWords(parts[len(parts)-1])
	for len(w) > 0 && (slices.Contains(packageRunners, w[0]) || len(w) < len(commandWords(parts[len(parts)-1])) && strings.HasPrefix(w[0], "-")) {
		w = w[1:]
	}
	if len(w) > 0 && slices.Contains(otherRunners, filepath.Base(w[0])) {
		return filepath.Base(w[0])
	}
	return ""
}

// commandWords are the words of one command of a script without the
// variable assignments and wrappers before the program it runs.
func commandWords(cmd string) []string {
	fields := strings.Fields(cmd)
	for len(fields) > 0 {
		f := fields[0]
		if strings.Contains(f, "=") && !strings.HasPrefix(f, "-") || f == "cross-env" || f == "env" || f == "exec" {
			fields = fields[1:]
			continue
		}
		break
	}
	return fields
}

// scriptCall names the package script a command runs (`npm run NAME`,
// `npm test`, `yarn NAME`, `pnpm run NAME`, `bun run NAME`), or "".
func scriptCall(cmd string) string {
	w := commandWords(cmd)
	if len(w) < 2 {
		return ""
	}
	switch w[0] {
	case "npm":
		switch {
		case (w[1] == "run" || w[1] == "run-script") && len(w) > 2:
			return w[2]
		case w[1] == "test" || w[1] == "t":
			return "test"
		}
	case "yarn", "pnpm", "bun":
		if w[1] == "run" && len(w) > 2 {
			return w[2]
		}
		if w[0] != "bun" && !strings.HasPrefix(w[1], "-") {
			return w[1]
		}
	}
	return ""
}

func commandRunner(cmd string) string {
	fields := commandWords(cmd)
	wrapped := false // after a package runner, whose own flags come first
	for len(fields) > 0 {
		switch f := fields[0]; {
		case slices.Contains(packageRunners, f):
			fields, wrapped = fields[1:], true
		case wrapped && strings.HasPrefix(f, "-"):
			fields = fields[1:]
		default:
			return programRunner(fields)
		}
	}
	return ""
}

// programRunner names the runner a program and its arguments are: vitest,
// jest, node with --test, or node running jest's or vitest's own script
// (as ESM projects run jest: node --experimental-vm-modules
// node_modules/jest/bin/jest.js).
func programRunner(fields []string) string {
	if r := runnerOfPath(fields[0]); r != "" {
		return r
	}
	if filepath.Base(fields[0]) != "node" {
		return ""
	}
	for _, f := range fields[1:] {
		if f == "--test" {
			return KindNode
		}
		if strings.HasPrefix(f, "-") {
			continue
		}
		if r := runnerOfPath(f); r != "" {
			return r
		}
	}
	return ""
}

// runnerOfPath names the runner a program path is: the vitest or jest
// command, or the script of their packages.
func runnerOfPath(p string) string {
	p = strings.Trim(p, `"'`)
	switch base := filepath.Base(p); {
	case base == "vitest" || base == "vitest.mjs" && strings.Contains(p, "vitest/"):
		return KindVitest
	case base == "jest" || (base == "jest.js" && (strings.Contains(p, "jest/bin/") || strings.Contains(p, "jest-cli/bin/"))):
		return KindJest
	}
	return ""
}

// jestSuite is one test file of jest's JSON results.
type jestSuite struct {
	Name             string `json:"name"`
	Status           string `json:"status"`
	Message          string `json:"message"`
	AssertionResults []struct {
		FullName        string   `json:"fullName"`
		Status          string   `json:"status"`
		FailureMessages []string `json:"failureMessages"`
	} `json:"assertionResults"`
}

// readJestJSON reads jest's JSON results one test file at a time.
func readJestJSON(r io.Reader, each func(jestSuite)) error {
	d := json.NewDecoder(r)
	if err := expectDelim(d, '{'); err != nil {
		return err
	}
	sawResults := false
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return fmt.Errorf("read jest results: %w", err)
		}
		if key, _ := tok.(string); key != "testResults" {
			var skip json.RawMessage
			if err := d.Decode(&skip); err != nil {
				return fmt.Errorf("read jest results: %w", err)
			}
			continue
		}
		sawResults = true
		if err := expectDelim(d, '['); err != nil {
			return err
		}
		for d.More() {
			var s jestSuite
			if err := d.Decode(&s); err != nil {
				return fmt.Errorf("read jest results: %w", err)
			}
			each(s)
		}
		if err := expectDelim(d, ']'); err != nil {
			return err
		}
	}
	if err := expectDelim(d, '}'); err != nil {
		return err
	}
	if !sawResults {
		return errors.New("read jest results: no testResults")
	}
	return nil
}

func expectDelim(d *json.Decoder, want json.Delim) error {
	tok, err := d.Token()
	if err != nil {
		return fmt.Errorf("read jest results: %w", err)
	}
	if got, ok := tok.(json.Delim); !ok || got != want {
		return fmt.Errorf("read jest results: found %v where %q belongs", tok, want)
	}
	return nil
}

// tallyJest counts jest's results: a file whose suite failed without a
// failing test could not run (a syntax or import error): Broken.
func tallyJest(r io.Reader, dir string, t *tally) error {
	return readJestJSON(r, func(s jestSuite) {
		file := s.Name
		if rel, err := filepath.Rel(dir, s.Name); err == nil && !strings.HasPrefix(rel, "..") {
			file = rel
		}
		failedHere := 0
		for _, a := range s.AssertionResults {
			name := file + " > " + a.FullName
			switch a.Status {
			case "passed":
				t.record(name, passed, "")
			case "failed":
				failedHere++
				t.record(name, failed, strings.Join(a.FailureMessages, "\n"))
			default: // pending, skipped, todo, disabled, focused
				t.record(name, skipped, "")
			}
		}
		if s.Status == "failed" && failedHere == 0 {
			msg := strings.TrimSpace(s.Message)
			if msg == "" {
				msg = "the test file failed to run"
			}
			t.record(file, errored, msg)
			t.errorLine(file + ": " + jsErrorLine(msg))
		}
	})
}

func readJestReport(path, dir string, t *tally) string {
	f, err := os.Open(path)
	if err != nil {
		return "jest wrote no results: see its output"
	}
	defer f.Close()
	if err := tallyJest(bufio.NewReader(f), dir, t); err != nil {
		return err.Error()
	}
	return ""
}

// jsErrorLine picks the telling line of a suite's failure message: the
// first after jest's "● Test suite failed to run" heading, or an error.
func jsErrorLine(msg string) string {
	lines := strings.Split(msg, "\n")
	for _, l := range lines {
		if t := strings.TrimSpace(l); strings.Contains(t, "Error: ") && !strings.HasPrefix(t, "at ") {
			return t
		}
	}
	for _, l := range lines {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "●") {
			return t
		}
	}
	return strings.TrimSpace(msg)
}

var (
	nodeCountRe   = lazyre.New(`(?m)^[ℹ#] (tests|pass|fail|cancelled|skipped|todo) (\d+)\s*$`)
	vitestTestsRe = lazyre.New(`(?m)^\s*Tests\s+(.*)$`)
	jestTestsRe   = lazyre.New(`(?m)^Tests:\s+(.*)$`)
	countWordRe   = lazyre.New(`(\d+) (passed|failed|skipped|todo|pending)`)
)

// jsText reads a JavaScript runner's console summary, for a custom command
// without a report.
func jsText(kind, out string) tally {
	var t tally
	switch kind {
	case KindNode:
		for _, m := range nodeCountRe().FindAllStringSubmatch(out, -1) {
			n, _ := strconv.Atoi(m[2])
			switch m[1] {
			case "pass":
				t.passed = n
			case "fail":
				t.failed = n
			case "skipped", "todo":
				t.skipped = n
			}
		}
	default:
		re := vitestTestsRe
		if kind == KindJest {
			re = jestTestsRe
		}
		if m := re().FindAllStringSubmatch(out, -1); len(m) > 0 {
			for _, c := range countWordRe().FindAllStringSubmatch(m[len(m)-1][1], -1) {
				n, _ := strconv.Atoi(c[1])
				switch c[2] {
				case "passed":
					t.passed = n
				case "failed":
					t.failed = n
				default:
					t.skipped += n
				}
			}
		}
		if strings.Contains(out, "Test suite failed to run") || strings.Contains(out, "Failed Suites") {
			t.broken = true
		}
	}
	return t
}
