package testrun

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/azero-dev/azero/internal/lazyre"
)

type pytest struct{ opts Options }

func (p *pytest) Name() string { return KindPytest }

// pytestArgs: -p no:cacheprovider keeps .pytest_cache out of the change
// set; xunit1 reports carry each test's file, so names are node ids.
var pytestArgs = []string{"-v", "--tb=short", "-rfE", "-p", "no:cacheprovider", "-o", "junit_family=xunit1"}

func (p *pytest) Run(ctx context.Context, dir string) (Result, error) {
	var argv []string
	var py python
	if p.opts.TestCmd != "" {
		argv = shellCommand(p.opts.TestCmd)
	} else {
		var err error
		if py, err = findPython(ctx, dir, p.opts); err != nil {
			return Result{}, err
		}
		if !py.pytest {
			return Result{}, fmt.Errorf("pytest is not installed for %s: install it (pip install pytest, or apt-get install python3-pytest) or pass --test-cmd", py.path)
		}
	}
	inv, err := p.opts.start(dir)
	if err != nil {
		return Result{}, err
	}
	defer inv.Close()
	report := ""
	if argv == nil {
		report = filepath.Join(inv.jail.Tmp, "report.xml")
		argv = append(append([]string{py.path, "-m", "pytest"}, pytestArgs...), "--junitxml="+report)
	}
	out := &display{}
	text := &textTail{max: maxOutput}
	both := io.MultiWriter(out, text)
	x, err := execute(ctx, inv, argv, []string{"PYTHONDONTWRITEBYTECODE=1"}, p.opts.Timeout, both, both)
	if err != nil {
		return Result{}, err
	}
	v := verdict{exitCode: x.exitCode, timedOut: x.timedOut}
	fromReport := false
	if report != "" && x.exitCode <= 2 {
		if f, err := os.Open(report); err == nil {
			err = tallyJUnit(bufio.NewReader(f), &v.tally, pytestNodeID, dir)
			f.Close()
			fromReport = err == nil
		}
	}
	if !fromReport {
		v.tally = pytestText(text.String())
	}
	switch x.exitCode {
	case 0, 1:
	case 2:
		// Interrupted, or errors while collecting (then the report or the
		// text has errored tests).
		if v.errored == 0 && !collectionErrors().MatchString(text.String()) {
			v.crashed = true
		} else if v.errored == 0 {
			v.unusable = true
		}
	case 4:
		v.unusable = true
		for _, l := range strings.Split(text.String(), "\n") {
			if strings.Contains(l, "error:") || strings.HasPrefix(l, "ERROR:") {
				v.errorLine(l)
			}
		}
	case 5:
		v.exitCode = 0 // no tests collected: NoTests, not a runner failure
	default:
		v.crashed = true
	}
	crossCheck(&v, pytestWitness(fromReport, text.String(), p.opts.TestCmd == ""))
	return v.result(p.Name(), argv, x, out), nil
}

// pytestNodeID names a case as pytest does ("tests/test_a.py::TestK::test_b[1]")
// from an xunit1 report's file, classname and name.
func pytestNodeID(c junitCase) string {
	if c.File == "" {
		return junitName(c)
	}
	if c.Class == "" {
		return c.File // a collection error: the file is the thing that failed
	}
	module := strings.ReplaceAll(strings.TrimSuffix(c.File, ".py"), "/", ".")
	id := c.File
	if rest, ok := strings.CutPrefix(c.Class, module); ok && (rest == "" || rest[0] == '.') {
		for part := range strings.SplitSeq(strings.TrimPrefix(rest, "."), ".") {
			if part != "" {
				id += "::" + part
			}
		}
	}
	return id + "::" + c.Name
}

var (
	collectionErrors = lazyre.New(`(?m)(\d+ errors? during collection|^ERROR collecting |^E\s+(SyntaxError|IndentationError|ImportError|ModuleNotFoundError))`)
	countRe          = lazyre.New(`(\d+) (passed|failed|error|errors|skipped)\b`)
	failedLine       = lazyre.New(`(?m)^(FAILED|ERROR) (\S+)`)
	summaryLine      = lazyre.New(`(?m)^=+ (.*(passed|failed|error|errors|no tests ran|deselected|skipped).*) =+\s*$`)
	eLine            = lazyre.New(`(?m)^E\s+\S.*$`)
)

// pytestText reads pytest's console output, for a custom command without
// a report: the counts of its last summary line, the names of its short
// summary, and its "E" lines when something errored.
func pytestText(out string) tally {
	var t tally
	if m := summaryLine().FindAllStringSubmatch(out, -1); len(m) > 0 {
		for _, c := range countRe().FindAllStringSubmatch(m[len(m)-1][1], -1) {
			n, _ := strconv.Atoi(c[1])
			switch c[2] {
			case "passed":
				t.passed += n
			case "failed":
				t.failed += n
			case "skipped":
				t.skipped += n
			default:
				t.errored += n
			}
		}
	}
	seen := map[string]bool{}
	for _, m := range failedLine().FindAllStringSubmatch(out, -1) {
		if seen[m[2]] {
			continue
		}
		seen[m[2]] = true
		if m[1] == "FAILED" {
			t.failedNames = append(t.failedNames, m[2])
			t.failures = append(t.failures, Failure{Test: m[2]})
		} else {
			t.erroredNames = append(t.erroredNames, m[2])
			t.failures = append(t.failures, Failure{Test: m[2], Error: true})
		}
	}
	if t.errored > 0 || collectionErrors().MatchString(out) {
		for _, l := range eLine().FindAllString(out, maxErrorLines) {
			t.errorLine(l)
		}
	}
	return t
}

// python is an interpreter and what it can import.
type python struct {
	path     string
	pytest   bool
	pyflakes bool
}

var pythonCache sync.Map // interpreter path -> python

// findPython chooses the one interpreter that runs a Python project's tests
// and lint: the project's virtual environment (.venv or venv in dir, then
// in the checkout a worktree dir was made from, or $VIRTUAL_ENV), else the interpreter of the pytest on PATH, else python3
// or python on PATH; the first that can import pytest, else the first
// that exists. A pytest script and a python3 on PATH can belong to
// different interpreters (a pyenv shim and /usr/bin), which is why the
// choice is made once, here.
func findPython(ctx context.Context, dir string, opts Options) (python, error) {
	opts = opts.withDefaults()
	var candidates []string
	add := func(p string) {
		if p != "" && exists(p) {
			candidates = append(candidates, p)
		}
	}
	for _, root := range []string{dir, opts.Checkout} {
		if root != "" {
			add(filepath.Join(root, ".venv", "bin", "python"))
			add(filepath.Join(root, "venv", "bin", "python"))
		}
	}
	if venv := getenv(opts.Environ, "VIRTUAL_ENV"); venv != "" {
		add(filepath.Join(venv, "bin", "python"))
	}
	if script, err := opts.LookPath("pytest"); err == nil {
		add(shebang(script, opts.LookPath))
	}
	for _, name := range []string{"python3", "python"} {
		if p, err := opts.LookPath(name); err == nil {
			add(p)
		}
	}
	if len(candidates) == 0 {
		return python{}, fmt.Errorf("python not found: install python3 and pytest (apt-get install python3-pytest) or pass --test-cmd")
	}
	var first python
	for i, c := range candidates {
		py, err := probePython(ctx, c, opts)
		if err != nil {
			if ctx.Err() != nil {
				return python{}, ctx.Err()
			}
			continue
		}
		if py.pytest {
			return py, nil
		}
		if i == 0 || first.path == "" {
			first = py
		}
	}
	if first.path == "" {
		return python{}, fmt.Errorf("no working python among %s", strings.Join(candidates, ", "))
	}
	return first, nil
}

// probePython asks an interpreter which of the modules it can import,
// without importing them.
func probePython(ctx context.Context, path string, opts Options) (python, error) {
	if py, ok := pythonCache.Load(path); ok {
		return py.(python), nil
	}
	// A project's interpreter may be the project's own code: the probe runs
	// in a jail too, which may read the interpreter's virtual environment.
	inv, err := opts.start("", venvOf(path)...)
	if err != nil {
		return python{}, err
	}
	defer inv.Close()
	var out strings.Builder
	argv := []string{path, "-c", "import importlib.util as u; print(*[u.find_spec(m) is not None for m in ('pytest', 'pyflakes')])"}
	x, err := execute(ctx, inv, argv, nil, min(opts.Timeout, DefaultTimeout/10), &out, &out)
	if err != nil {
		return python{}, err
	}
	if x.exitCode != 0 || x.timedOut {
		return python{}, fmt.Errorf("%s does not run: %s", path, strings.TrimSpace(out.String()))
	}
	f := strings.Fields(out.String())
	py := python{path: path, pytest: len(f) > 0 && f[0] == "True", pyflakes: len(f) > 1 && f[1] == "True"}
	pythonCache.Store(path, py)
	return py, nil
}

// venvOf names the virtual environment an interpreter belongs to (the
// directory above its bin holding pyvenv.cfg), as a list of none or one.
func venvOf(interpreter string) []string {
	root := filepath.Dir(filepath.Dir(interpreter))
	if exists(filepath.Join(root, "pyvenv.cfg")) {
		return []string{root}
	}
	return nil
}

// shebang returns the interpreter a script names on its first line
// ("#!/usr/bin/python3", "#!/usr/bin/env python3"), or "".
func shebang(script string, lookPath func(string) (string, error)) string {
	f, err := os.Open(script)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), "#!")
	if !ok {
		return ""
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return ""
	}
	if filepath.Base(fields[0]) == "env" && len(fields) > 1 {
		p, err := lookPath(fields[len(fields)-1])
		if err != nil {
			return ""
		}
		return p
	}
	return fields[0]
}

// textTail keeps the last max bytes of an output as text, for the
// classification that reads a runner's console.
type textTail struct {
	mu  sync.Mutex
	buf tailBuffer
	max int
}

func (t *textTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.max = t.max
	t.buf.WriteString(string(p))
	return len(p), nil
}

func (t *textTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.max = t.max
	return t.buf.String()
}
