package testrun

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
)

// repeatReader yields head, then body n times, then tail, without holding
// more than one body in memory.
type repeatReader struct {
	parts [][]byte
	n     []int
	read  int64
}

func (r *repeatReader) Read(p []byte) (int, error) {
	for len(r.parts) > 0 {
		if r.n[0] == 0 {
			r.parts, r.n = r.parts[1:], r.n[1:]
			continue
		}
		k := copy(p, r.parts[0])
		if k == len(r.parts[0]) {
			r.n[0]--
		} else {
			// The rest of this part on the next call.
			rest := r.parts[0][k:]
			r.parts = append([][]byte{rest}, r.parts...)
			r.n = append([]int{1}, r.n...)
			r.n[1]--
		}
		r.read += int64(k)
		return k, nil
	}
	return 0, io.EOF
}

// A report of hundreds of megabytes (a test printing in a loop, thousands
// of tests) is read as a stream: each test as soon as it ends, with
// memory bounded by what one message keeps, not by the report's size.
func TestJUnitLargeReportIsStreamed(t *testing.T) {
	mb := bytes.Repeat([]byte("output of a test that prints in a loop & <more> é\n"), 1<<20/52)
	escaped := bytes.ReplaceAll(bytes.ReplaceAll(mb, []byte("&"), []byte("&amp;")), []byte("<"), []byte("&lt;"))
	var cases strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&cases, `<testcase classname="calc" name="t%d"><system-out>%s</system-out></testcase>`, i, escaped[:200])
	}
	r := &repeatReader{
		parts: [][]byte{
			[]byte(`<?xml version="1.0"?><testsuites><testsuite name="outer"><testsuite name="calc" tests="2002" failures="1" errors="1">` +
				`<testcase classname="calc" name="prints"><system-out>`), escaped,
			[]byte(`</system-out><failure message="expected 4" type="AssertionError"><![CDATA[want 4, got 3` + "\n"), mb,
			[]byte(`]]></failure></testcase>`), []byte(cases.String()),
			[]byte(`<testcase classname="calc" name="db"><error message="refused">`), escaped,
			[]byte(`</error><system-err>`), escaped, []byte(`</system-err></testcase></testsuite></testsuite></testsuites>`)},
		n: []int{1, 150, 1, 100, 1, 1, 1, 50, 1, 50, 1},
	}
	var lastPassAt int64 = -1 // bytes read when the last passing test was passed on
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var tl tally
	suiteErrors, err := readJUnit(r, func(c junitCase) {
		if c.Name == "t1999" {
			lastPassAt = r.read
		}
		tl.record(junitName(c), c.Status, c.message())
	})
	runtime.ReadMemStats(&after)
	if err != nil || len(suiteErrors) != 0 {
		t.Fatalf("read: %v, suite errors %q", err, suiteErrors)
	}
	if tl.failed != 1 || tl.errored != 1 || tl.passed != 2000 {
		t.Fatalf("%d failed, %d errored, %d passed; want 1, 1, 2000", tl.failed, tl.errored, tl.passed)
	}
	if f := tl.failures[0]; f.Test != "calc > prints" || !strings.HasPrefix(f.Message, "expected 4\nwant 4, got 3\noutput of a test") || len(f.Message) > maxMessage+len("\n… (999999999 bytes omitted) …\n") {
		t.Errorf("failure %q: %.80q (%d bytes)", f.Test, f.Message, len(f.Message))
	}
	if f := tl.failures[1]; f.Test != "calc > db" || !f.Error || !strings.HasPrefix(f.Message, "refused\noutput of a test that prints in a loop & <more> é") {
		t.Errorf("error %q: %.80q", f.Test, f.Message)
	}
	// The passing tests were passed on before the errored test's 100 MB
	// were read.
	if lastPassAt < 0 || lastPassAt > r.read-90<<20 {
		t.Errorf("the last passing test was passed on after %d of %d bytes", lastPassAt, r.read)
	}
	if r.read < 300<<20 {
		t.Fatalf("only %d bytes read", r.read)
	}
	// Allocation is counted, not timed: a decoder holding whole tokens
	// allocates more than the report's size.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("reading %d MB allocated %d MB", r.read>>20, alloc>>20)
	}
}
