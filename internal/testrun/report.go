package testrun

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// report is where a custom command writes its report.
type report struct {
	format string // "junit"
	path   string // relative to the project
}

// parseReport reads Options.Report ("junit:PATH").
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
	// A report left by an earlier run must not speak for this one.
	before, _ := os.Stat(path)
	if before == nil && inside(dir, path) {
		// A report this run writes into the project is read, then removed:
		// it is a product of the run, not a change to the project, and
		// would otherwise show up in a diff review and be committed.
		defer os.Remove(path)
	}
	out := &display{}
	errs := newLineWriter(nil)
	var t tally
	errs.fn = func(line []byte) {
		out.Write(append(line, '\n'))
		if looksLikeError(string(line)) {
			t.errorLine(string(line))
		}
	}
	x, err := execute(ctx, dir, argv, cleanEnv(r.opts.Environ), r.opts.Timeout, errs, errs)
	if err != nil {
		return Result{}, err
	}
	errs.Close()
	v := verdict{exitCode: x.exitCode, timedOut: x.timedOut, quiet: true}
	problem := readFreshJUnit(path, before, x.start, &v.tally, junitName, dir)
	if problem != "" {
		noReport(&v, problem, t.errors, out)
	} else if v.broken || v.errored > 0 {
		for _, l := range t.errors {
			v.errorLine(l)
		}
	}
	return v.result(r.Name(), argv, x, out), nil
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
	return strings.Contains(t, "Error: ") || strings.Contains(t, ": error") || compileLine.MatchString(t)
}
