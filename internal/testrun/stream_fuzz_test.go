package testrun

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// streamEvents is how many events (go test -json) or test cases (pytest's
// report) a large stream holds around its one failing test.
const streamEvents = 5000

// minStream is the size a large stream must exceed: the logs that lost
// their failure were cut at 128 KiB.
const minStream = 128 << 10

// filler is text a test prints, made from fuzzed bytes: valid UTF-8, at
// least width bytes, so that any input makes a stream over minStream.
func filler(noise []byte, width int) string {
	s := strings.ToValidUTF8(string(noise), "?")
	for len(s) < width {
		s += "x"
	}
	return s
}

// bigGoStream is `go test -json` output: streamEvents events of passing
// tests that print fuzzed text, with the one failing test at position at.
func bigGoStream(noise []byte, at int) []byte {
	text := filler(noise, 40)
	var b bytes.Buffer
	event := func(action, test, output string) {
		ev := map[string]string{"Action": action, "Package": "example.com/big"}
		if test != "" {
			ev["Test"] = test
		}
		if action == "output" {
			ev["Output"] = output
		}
		raw, _ := json.Marshal(ev)
		b.Write(raw)
		b.WriteByte('\n')
	}
	event("start", "", "")
	for i := 0; i < streamEvents; i++ {
		name := fmt.Sprintf("TestPass%04d", i)
		if i == at {
			event("run", "TestMiddle", "")
			event("output", "TestMiddle", "=== RUN   TestMiddle\n")
			event("output", "TestMiddle", "    big_test.go:12: the middle failed: want 4, got 5\n")
			event("output", "TestMiddle", "--- FAIL: TestMiddle (0.00s)\n")
			event("fail", "TestMiddle", "")
			continue
		}
		// One event in three is a whole passing test, the rest its output:
		// 5,000 events either way.
		switch i % 3 {
		case 0:
			event("run", name, "")
		case 1:
			event("output", fmt.Sprintf("TestPass%04d", i-1), "    big_test.go:7: "+text+"\n")
		case 2:
			event("pass", fmt.Sprintf("TestPass%04d", i-2), "")
		}
	}
	event("output", "", "FAIL\n")
	event("output", "", "FAIL\texample.com/big\t0.4s\n")
	event("fail", "", "")
	return b.Bytes()
}

// FuzzGoTestJSONFailureInTheMiddle: whatever the tests print and wherever
// the failing test falls among 5,000 events, in a stream over 128 KiB
// arriving in pieces of any size, the run is a red with that test named
// and its message kept; never an error, never broken.
func FuzzGoTestJSONFailureInTheMiddle(f *testing.F) {
	f.Add([]byte("plain log line"), uint16(2500), uint16(4096))
	f.Add([]byte(`{"Action":"fail"} [build failed] "quoted" \ backslash`), uint16(0), uint16(1))
	f.Add([]byte("\x00\xff\xfe\n\r\t FAIL: TestOther"), uint16(4999), uint16(65535))
	f.Add(bytes.Repeat([]byte("y"), 60000), uint16(1234), uint16(333))
	f.Fuzz(func(t *testing.T, noise []byte, at, chunk uint16) {
		if len(noise) > 1<<16 {
			return
		}
		data := bigGoStream(noise, int(at)%streamEvents)
		if len(data) <= minStream {
			t.Fatalf("the stream is %d bytes, not over %d", len(data), minStream)
		}
		g, out := goStreamOf(data, int(chunk))
		v := g.verdict(execResult{exitCode: 1})
		if v.outcome() != Fail || v.failed != 1 || !slices.Equal(v.failedNames, []string{"example.com/big.TestMiddle"}) {
			t.Fatalf("outcome %s, failed %d %q (broken %v): want a red naming TestMiddle", v.outcome(), v.failed, v.failedNames, v.broken)
		}
		if len(v.failures) != 1 || !strings.Contains(v.failures[0].Message, "the middle failed: want 4, got 5") {
			t.Fatalf("the failure's message was lost: %+v", v.failures)
		}
		if len(out.String()) > maxOutput+100 {
			t.Fatalf("the display kept %d bytes, over its cap", len(out.String()))
		}
	})
}

// bigPytestReport is pytest's JUnit report (xunit1): streamEvents cases,
// each passing test's system-out the fuzzed text, the one failing case at
// position at.
func bigPytestReport(noise []byte, at int) []byte {
	text := html.EscapeString(strings.Map(func(r rune) rune {
		// XML 1.0 has no place for most control characters.
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == utf8.RuneError {
			return '?'
		}
		return r
	}, filler(noise, 40)))
	var b bytes.Buffer
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="1" skipped="0" tests="%d">`+"\n", streamEvents)
	for i := 0; i < streamEvents; i++ {
		if i == at {
			b.WriteString(`<testcase classname="test_big" name="test_many[middle]" file="test_big.py" line="3" time="0.001">` +
				`<failure message="AssertionError: assert {'a': 1, 'b': 2} == {'a': 1, 'b': 3}">i = 'middle'` + "\n" +
				`E       AssertionError: assert {'a': 1, 'b': 2} == {'a': 1, 'b': 3}` + "\n" +
				`E         Differing items:` + "\n" + `E         {'b': 2} != {'b': 3}</failure></testcase>` + "\n")
			continue
		}
		fmt.Fprintf(&b, `<testcase classname="test_big" name="test_many[%d]" file="test_big.py" line="3" time="0.001"><system-out>%s</system-out></testcase>`+"\n", i, text)
	}
	b.WriteString("</testsuite></testsuites>\n")
	return b.Bytes()
}

// pieces reads r in pieces of at most n bytes.
type pieces struct {
	r io.Reader
	n int
}

func (p pieces) Read(b []byte) (int, error) { return p.r.Read(b[:min(len(b), max(p.n, 1))]) }

// FuzzPytestReportFailureInTheMiddle: pytest's report of 5,000 tests, over
// 128 KiB, read in pieces of any size, names the one failing test wherever
// it is and keeps its assertion, whatever the other tests printed.
func FuzzPytestReportFailureInTheMiddle(f *testing.F) {
	f.Add([]byte("captured stdout"), uint16(1500), uint16(4096))
	f.Add([]byte(`</system-out><failure message="x"/>&amp; <![CDATA[ ]]> "'<>`), uint16(0), uint16(7))
	f.Add([]byte("\x00\x01\x1b[31mred\x1b[0m \xff"), uint16(4999), uint16(65535))
	f.Fuzz(func(t *testing.T, noise []byte, at, chunk uint16) {
		if len(noise) > 1<<16 {
			return
		}
		data := bigPytestReport(noise, int(at)%streamEvents)
		if len(data) <= minStream {
			t.Fatalf("the report is %d bytes, not over %d", len(data), minStream)
		}
		var v verdict
		v.exitCode = 1
		if err := tallyJUnit(pieces{bytes.NewReader(data), int(chunk)}, &v.tally, pytestNodeID, "/p"); err != nil {
			t.Fatalf("the report was not read: %v", err)
		}
		if v.outcome() != Fail || v.failed != 1 || v.passed != streamEvents-1 || !slices.Equal(v.failedNames, []string{"test_big.py::test_many[middle]"}) {
			t.Fatalf("outcome %s, %d failed %q, %d passed, %d errored: want a red naming the middle test", v.outcome(), v.failed, v.failedNames, v.passed, v.errored)
		}
		if len(v.failures) != 1 || !strings.Contains(v.failures[0].Message, "{'b': 2} != {'b': 3}") {
			t.Fatalf("the failure's message was lost: %+v", v.failures)
		}
	})
}
