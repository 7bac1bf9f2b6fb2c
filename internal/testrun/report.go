package testrun

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/azero-dev/azero/internal/lazyre"
	"github.com/azero-dev/azero/internal/sandbox"
)

// report is where a custom command writes its report.
type report struct {
	format string // "junit"
	path   string // relative to the project
}

// parseReport reads Options.Report ("junit:PATH", PATH a file or a
// directory of reports).
func parseReport(s string) (report, error) {
	format, path, ok := strings.Cut(s, ":")
	switch {
	case s == "":
		return report{}, fmt.Errorf("the junit runner needs a report: pass --report junit:PATH (the JUnit XML file your --test-cmd writes)")
	case !ok || path == "":
		return report{}, fmt.Errorf("report %q: write it as FORMAT:PATH, e.g. junit:build/test-results.xml", s)
	case format != "junit":
		return report{}, fmt.Errorf("report %q: unknown format %q (azero reads junit reports)", s, format)
	}
	return report{format: format, path: path}, nil
}

// reportRunner runs a custom command that writes a JUnit XML report; the
// report decides the outcome (the exit code only vetoes a green).
type reportRunner struct {
	kind   string
	opts   Options
	report report
}

func (r *reportRunner) Name() string { return r.kind }

func (r *reportRunner) Run(ctx context.Context, dir string) (Result, error) {
	argv := shellCommand(r.opts.TestCmd)
	path := r.report.path
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	asDir := strings.HasSuffix(r.report.path, "/")
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		asDir = true
	}
	// A report left by an earlier run must not speak for this one.
	before := reportFiles(path, asDir)
	if inside(dir, path) {
		// The reports this run writes into the project are read, then
		// removed: they are products of the run, not changes to the
		// project, and would otherwise show up in a diff review and be
		// committed; so are the directories the run made for them.
		defer removeNew(path, asDir, before, missingDirs(dir, path, asDir))
	}
	out := &display{}
	var console consoleWatch
	errs := newLineWriter(func(line []byte) {
		out.Write(append(line, '\n'))
		console.line(string(line))
	})
	var more sandbox.Spec
	if !inside(dir, path) {
		// A report outside the project: the directory the user named for
		// it is the tests' to write, unless it is one that holds much more.
		reportDir := path
		if !asDir {
			reportDir = filepath.Dir(path)
		}
		if err := writableReportDir(reportDir, getenv(r.opts.Environ, "HOME")); err != nil {
			return Result{}, err
		}
		more.Writable = []string{reportDir}
	}
	inv, err := r.opts.startWith(dir, more)
	if err != nil {
		return Result{}, err
	}
	defer inv.Close()
	settings, err := inv.buildCaches(language(r.kind))
	if err != nil {
		return Result{}, err
	}
	x, err := execute(ctx, inv, argv, settings, r.opts.Timeout, errs, errs)
	if err != nil {
		return Result{}, err
	}
	if isBaseline(ctx) {
		inv.promoteBuildCaches(language(r.kind))
	}
	errs.Close()
	v := verdict{exitCode: x.exitCode, timedOut: x.timedOut, quiet: true}
	problem := ""
	if asDir {
		problem = readFreshJUnitDir(path, before, x.start, &v.tally, dir)
	} else {
		problem = readFreshJUnit(path, before[path], x.start, &v.tally, junitName, dir)
	}
	if console.broken && problem == "" {
		// The console says a test file could not load, which a report may
		// leave out (jest-junit drops a suite that failed to run unless
		// told otherwise): what the report shows cannot be a red.
		v.broken = true
	}
	if problem != "" {
		noReport(&v, problem, console.errors(), out)
	} else if v.broken || v.errored > 0 {
		for _, l := range console.errors() {
			v.errorLine(l)
		}
	}
	return v.result(r.Name(), argv, x, out), nil
}

// writableReportDir refuses to open to the tests a report directory
// outside the project that would give them much more than their report:
// the root, the temporary directory, the home or a directory above it.
func writableReportDir(dir, home string) error {
	clean := filepath.Clean(dir)
	for _, broad := range []string{"/", os.TempDir(), "/tmp", home} {
		if broad != "" && (clean == filepath.Clean(broad) || inside(clean, filepath.Clean(broad))) {
			return fmt.Errorf("the report %s is in %s, which the sandboxed tests may not write: name a report inside the project or in a directory of its own", dir, clean)
		}
	}
	if !exists(clean) {
		return fmt.Errorf("the report's directory %s does not exist", clean)
	}
	return nil
}

// reportFiles lists the reports at path: the file, or for a directory of
// reports (Maven's and Gradle's, one file per test class) its *.xml files.
func reportFiles(path string, asDir bool) map[string]os.FileInfo {
	out := map[string]os.FileInfo{}
	if !asDir {
		if info, err := os.Stat(path); err == nil {
			out[path] = info
		}
		return out
	}
	entries, _ := os.ReadDir(path)
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".xml") {
			if info, err := e.Info(); err == nil {
				out[filepath.Join(path, e.Name())] = info
			}
		}
	}
	return out
}

// removeNew removes the reports at path that were not there before, then
// the directories of dirs (deepest first) that are left empty.
func removeNew(path string, asDir bool, before map[string]os.FileInfo, dirs []string) {
	for p := range reportFiles(path, asDir) {
		if _, ok := before[p]; !ok {
			_ = os.Remove(p)
		}
	}
	for _, d := range dirs {
		_ = os.Remove(d) // only when empty
	}
}

// missingDirs lists the directories below dir that the report at path
// needs and that do not exist yet, deepest first.
func missingDirs(dir, path string, asDir bool) []string {
	d := filepath.Dir(path)
	if asDir {
		d = path
	}
	var out []string
	for inside(dir, d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		out = append(out, d)
		d = filepath.Dir(d)
	}
	return out
}

// readFreshJUnitDir tallies every report of the directory that this run
// wrote (a report it did not touch is left from an earlier run), and says
// what is wrong when there is none or one cannot be read.
func readFreshJUnitDir(path string, before map[string]os.FileInfo, start time.Time, t *tally, dir string) string {
	now := reportFiles(path, true)
	names := make([]string, 0, len(now))
	for p, info := range now {
		if b, ok := before[p]; ok && info.ModTime().Equal(b.ModTime()) && !info.ModTime().After(start) {
			continue
		}
		names = append(names, p)
	}
	if len(names) == 0 {
		return fmt.Sprintf("no report in %s: the command wrote no *.xml file there", path)
	}
	sort.Strings(names)
	for _, p := range names {
		if problem := readFreshJUnit(p, before[p], start, t, junitName, dir); problem != "" {
			return problem
		}
	}
	return ""
}

// inside reports whether path lies in the directory dir.
func inside(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != "." && !filepath.IsAbs(rel) && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// readFreshJUnit tallies the report at path when this run wrote it, and
// says what is wrong otherwise.
func readFreshJUnit(path string, before os.FileInfo, start time.Time, t *tally, name func(junitCase) string, dir string) string {
	info, err := os.Stat(path)
	switch {
	case err != nil:
		return fmt.Sprintf("no report at %s: the command did not write it", path)
	case before != nil && info.ModTime().Equal(before.ModTime()) && !info.ModTime().After(start):
		return fmt.Sprintf("the report at %s is left from an earlier run: the command did not write it", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("read report: %v", err)
	}
	defer f.Close()
	if err := tallyJUnit(bufio.NewReader(f), t, name, dir); err != nil {
		return fmt.Sprintf("the report at %s is not valid JUnit XML: %v", path, err)
	}
	return ""
}

// consoleWatch reads a runner's console for what its report may leave
// out: a test file that could not load, a build that failed, an error
// thrown outside any test. It keeps the runner's error lines.
type consoleWatch struct {
	broken bool
	marked tally // the marks and their reasons
	other  tally // other error lines
	after  int   // lines still to keep after a mark: its reason
}

func (c *consoleWatch) line(l string) {
	switch {
	case brokenMark(l):
		c.broken, c.after = true, markReasonLines
		if strings.Contains(l, " Unhandled Errors ") {
			c.after = 0 // vitest's section heading: each error has its own below
		}
		c.marked.errorLine(strings.TrimSpace(stripANSI(l)))
	case c.after > 0 && strings.TrimSpace(l) != "":
		c.after--
		c.marked.errorLine(strings.TrimSpace(stripANSI(l)))
	case looksLikeError(l):
		c.other.errorLine(l)
	}
}

// errors are the error lines, the marks and their reasons first.
func (c *consoleWatch) errors() []string {
	return append(append([]string(nil), c.marked.errors...), c.other.errors...)
}

// brokenMarks are the words runners print on their console, at the start
// of a line (after a heading's rule of ⎯ or _), when a test file could not
// load or the tests could not build: jest's heading of a suite that failed
// to run, vitest's list of failed suites, pytest's collection errors,
// cargo's compiler.
var brokenMarks = []string{
	"● Test suite failed to run",
	"Failed Suites ",
	"ERROR collecting ",
	"error: could not compile ",
}

// markReasonLines is how many lines after a mark are kept as its reason
// (jest and vitest print the error under their heading).
const markReasonLines = 2

// brokenMark reports whether a console line says that a test file could
// not load, the tests could not build, or an error was thrown outside any
// test.
func brokenMark(line string) bool {
	t := strings.TrimSpace(stripANSI(line))
	heading := strings.TrimLeft(t, "⎯_ ")
	for _, m := range brokenMarks {
		if strings.HasPrefix(heading, m) {
			return true
		}
	}
	// vitest: "⎯⎯⎯ Uncaught Exception ⎯⎯⎯", "Unhandled Rejection", "Unhandled
	// Errors": thrown outside any test, and not in its JUnit report.
	if strings.HasPrefix(t, "⎯") {
		for _, w := range []string{"Uncaught Exception ", "Unhandled Rejection ", "Unhandled Error"} {
			if strings.HasPrefix(heading, w) {
				return true
			}
		}
	}
	// go test: "FAIL	example.com/calc [build failed]" or "[setup failed]".
	return strings.HasPrefix(t, "FAIL") && (strings.HasSuffix(t, " [build failed]") || strings.HasSuffix(t, " [setup failed]"))
}

// stripANSI removes terminal escape sequences (colours), which runners
// print when a project forces them.
func stripANSI(s string) string {
	if !strings.Contains(s, "\x1b[") {
		return s
	}
	return ansiEscape().ReplaceAllString(s, "")
}

var ansiEscape = lazyre.New(`\x1b\[[0-9;?]*[ -/]*[@-~]`)

// looksLikeError reports whether a console line is worth keeping as an
// error line of a runner that says little in its report.
func looksLikeError(l string) bool {
	t := strings.TrimSpace(l)
	if t == "" || t != strings.TrimLeft(l, " \t") && !strings.HasPrefix(t, "-->") {
		return false // indented: part of a test's report, not the runner's own error
	}
	for _, p := range []string{"Error", "error", "SyntaxError", "TypeError", "ReferenceError", "FAILURE", "FATAL", "fatal:", "-->", "file://"} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return strings.Contains(t, "Error: ") || strings.Contains(t, ": error") || compileLine().MatchString(t)
}
