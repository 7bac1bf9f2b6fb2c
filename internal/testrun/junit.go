package testrun

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// junitCase is one <testcase> of a JUnit XML report.
type junitCase struct {
	Suite   string // the innermost enclosing <testsuite>'s name
	Class   string
	Name    string
	File    string
	Status  status
	Type    string // of the <failure> or <error>
	Message string // its message attribute
	Text    string // its body (a traceback, a diff), capped
}

// message is what a human should read about a case that did not pass.
func (c junitCase) message() string {
	switch {
	case c.Text != "" && c.Message != "" && !strings.Contains(c.Text, c.Message):
		return c.Message + "\n" + c.Text
	case c.Text != "":
		return c.Text
	}
	return c.Message
}

// fileLevel reports whether the case stands for a whole test file rather
// than a test: node's runner reports a file that cannot load (or has no
// tests) as a "test" named by its absolute path; vitest as a case named
// like its file and class.
func (c junitCase) fileLevel() bool {
	n := strings.TrimPrefix(c.Name, "file://")
	if strings.HasPrefix(n, "/") || (len(n) > 2 && n[1] == ':' && (n[2] == '\\' || n[2] == '/')) {
		return true
	}
	return c.Name == c.Class && sourceExt[path.Ext(c.Name)]
}

var sourceExt = map[string]bool{
	".js": true, ".mjs": true, ".cjs": true, ".jsx": true, ".ts": true, ".mts": true, ".cts": true, ".tsx": true,
	".py": true, ".rs": true, ".go": true, ".java": true, ".kt": true, ".rb": true, ".php": true, ".cs": true,
}

// junitSuiteErrors are problems a report states outside any test case.
type junitSuiteErrors []string

// readJUnit reads a JUnit XML report as a stream of tokens, calling each
// for every test case as soon as it ends, whatever the report's size. It
// understands the dialects of pytest, node, vitest, jest-junit,
// cargo-nextest and Maven Surefire: <testsuites> or a single <testsuite>
// at the root, nested suites, <failure>, <error> and <skipped> in a case
// (Surefire's flaky and rerun elements are not failures), and errors a
// leaf suite counts but no case carries. A report cut short returns what
// was read and an error. Memory stays bounded whatever the report's size:
// every run of text (a test's <system-out>, say) is cut to maxXMLRun bytes
// before the decoder holds it.
func readJUnit(r io.Reader, each func(junitCase)) (junitSuiteErrors, error) {
	d := xml.NewDecoder(newXMLCap(r, maxXMLRun))
	d.Strict = false
	d.CharsetReader = func(_ string, in io.Reader) (io.Reader, error) { return in, nil }
	type suite struct {
		name                           string
		errors, failures               int // as the suite's attributes say
		gotErrors, gotFailures, nested int
	}
	var (
		suites  []*suite
		cur     *junitCase
		text    *strings.Builder // the body being collected
		depth   int              // elements open inside the current case
		inner   string           // the case child being read
		out     junitSuiteErrors
		sawRoot bool
	)
	attr := func(e xml.StartElement, name string) string {
		for _, a := range e.Attr {
			if a.Name.Local == name {
				return a.Value
			}
		}
		return ""
	}
	num := func(e xml.StartElement, name string) int {
		n, _ := strconv.Atoi(strings.TrimSpace(attr(e, name)))
		return max(n, 0)
	}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return out, fmt.Errorf("read junit report: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			name := t.Name.Local
			if cur != nil {
				depth++
				if depth > 1 {
					continue // inside a child of the case
				}
				inner = name
				switch name {
				case "failure", "error":
					st := failed
					if name == "error" {
						st = errored
					}
					if cur.Status < st || cur.Status == skipped {
						cur.Status = st
						cur.Type, cur.Message = attr(t, "type"), attr(t, "message")
						text = &strings.Builder{}
					}
				case "skipped":
					if cur.Status == passed {
						cur.Status = skipped
					}
				}
				continue
			}
			switch name {
			case "testsuites":
				sawRoot = true
			case "testsuite":
				sawRoot = true
				if len(suites) > 0 {
					suites[len(suites)-1].nested++
				}
				suites = append(suites, &suite{name: attr(t, "name"), errors: num(t, "errors"), failures: num(t, "failures")})
			case "testcase":
				sawRoot = true
				cur = &junitCase{Class: attr(t, "classname"), Name: attr(t, "name"), File: attr(t, "file")}
				if len(suites) > 0 {
					cur.Suite = suites[len(suites)-1].name
				}
				depth = 0
			case "failure", "error":
				// Outside any case: the suite itself failed.
				if len(suites) > 0 {
					s := suites[len(suites)-1]
					msg := attr(t, "message")
					out = append(out, strings.TrimSpace("suite "+s.name+": "+msg))
					if name == "error" {
						s.gotErrors++
					} else {
						s.gotFailures++
					}
				}
			}
		case xml.CharData:
			if cur != nil && depth == 1 && text != nil && (inner == "failure" || inner == "error") && text.Len() < maxMessage*2 {
				text.Write(t[:min(len(t), maxMessage*2-text.Len())])
			}
		case xml.EndElement:
			if cur != nil {
				if depth > 0 {
					depth--
					if depth == 0 {
						inner = ""
					}
					continue
				}
				if text != nil {
					cur.Text = clip(strings.Trim(text.String(), "\n\r\t "), maxMessage)
					text = nil
				}
				if len(suites) > 0 {
					s := suites[len(suites)-1]
					switch cur.Status {
					case failed:
						s.gotFailures++
					case errored:
						s.gotErrors++
					}
				}
				each(*cur)
				cur = nil
				continue
			}
			if t.Name.Local == "testsuite" && len(suites) > 0 {
				s := suites[len(suites)-1]
				suites = suites[:len(suites)-1]
				// Counts of a suite holding suites add up its children's.
				if s.nested == 0 {
					if n := s.errors - s.gotErrors; n > 0 {
						out = append(out, fmt.Sprintf("suite %s: %d errors outside any test case", s.name, n))
					}
					if n := s.failures - s.gotFailures; n > 0 {
						out = append(out, fmt.Sprintf("suite %s: %d failures outside any test case", s.name, n))
					}
				}
			}
		}
	}
	if cur != nil || len(suites) > 0 {
		return out, errors.New("read junit report: it ends before its last element is closed")
	}
	if !sawRoot {
		return out, errors.New("read junit report: no <testsuites>, <testsuite> or <testcase> element")
	}
	return out, nil
}

// junitName names a case for FailedTests: "class > name", or the suite
// instead of a class that says nothing (node's "test").
// Names are trimmed: jest-junit's default templates ("{classname}
// {title}") start with a space outside any describe block.
func junitName(c junitCase) string {
	name := strings.TrimSpace(c.Name)
	prefix := strings.TrimSpace(c.Class)
	if prefix == "" || prefix == "test" {
		prefix = strings.TrimSpace(c.Suite)
	}
	if prefix == "" || prefix == name {
		return name
	}
	return prefix + " > " + name
}

// tallyJUnit reads a report into t, naming cases with name. A case that
// stands for a file is not a test: when it failed, the file could not run
// (it is named by its path relative to dir).
func tallyJUnit(r io.Reader, t *tally, name func(junitCase) string, dir string) error {
	suiteErrors, err := readJUnit(r, func(c junitCase) {
		if c.fileLevel() {
			if c.Status == failed || c.Status == errored {
				file := strings.TrimPrefix(c.Name, "file://")
				if rel, err := filepath.Rel(dir, file); err == nil && filepath.IsAbs(file) && !strings.HasPrefix(rel, "..") {
					file = rel
				}
				t.record(file, errored, c.message())
				t.errorLine(file + ": " + firstLine(c.message()))
			}
			return
		}
		n := name(c)
		t.record(n, c.Status, c.message())
		if c.Status == errored {
			t.errorLine("ERROR " + n)
			for _, l := range errorLines(c.message()) {
				t.errorLine(l)
			}
		}
	})
	for _, e := range suiteErrors {
		t.errorLine(e)
		t.broken = true
	}
	return err
}

// errorLines picks the lines of an error body worth showing: Python's
// "E   ..." lines when there are any, else its first line.
func errorLines(msg string) []string {
	var out []string
	for l := range strings.SplitSeq(msg, "\n") {
		if strings.HasPrefix(l, "E ") {
			out = append(out, l)
		}
	}
	if len(out) == 0 && strings.TrimSpace(msg) != "" {
		out = append(out, firstLine(msg))
	}
	return out
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[:i])
	}
	return s
}
