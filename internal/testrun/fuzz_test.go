package testrun

import (
	"bytes"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// Seeds: real outputs of the runners (trimmed).
const (
	seedGoJSON = `{"ImportPath":"x [x.test]","Action":"build-output","Output":"# x [x.test]\n"}
{"ImportPath":"x [x.test]","Action":"build-output","Output":"./a_test.go:6:5: undefined: Sub\n"}
{"ImportPath":"x [x.test]","Action":"build-fail"}
{"Action":"start","Package":"x"}
{"Action":"output","Package":"x","Output":"FAIL\tx [build failed]\n"}
{"Action":"fail","Package":"x","Elapsed":0,"FailedBuild":"x [x.test]"}
`
	seedGoRun = `{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:7: want 4\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"--- FAIL: TestA (0.00s)\n"}
{"Action":"fail","Package":"p","Test":"TestA","Elapsed":0}
{"Action":"run","Package":"p","Test":"TestB"}
{"Action":"pass","Package":"p","Test":"TestB","Elapsed":0}
{"Action":"skip","Package":"p","Test":"TestC","Elapsed":0}
FAIL
{"Action":"fail","Package":"p","Elapsed":0.1}
--- FAIL: TestText (0.00s)
ok  	p	0.1s
`
	seedPytestJUnit = `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="1" failures="1" skipped="1" tests="4">
<testcase classname="tests.test_calc" name="test_add" file="tests/test_calc.py" line="2" time="0.002" />
<testcase classname="tests.test_calc.TestK" name="test_p[2]" file="tests/test_calc.py" line="7"><failure message="assert 2 == 1">x = 2
E       assert 2 == 1</failure></testcase>
<testcase classname="" name="tests.test_bad" file="tests/test_bad.py"><error message="collection failure">E   ModuleNotFoundError: No module named 'nowhere'</error></testcase>
<testcase classname="tests.test_calc" name="test_s" file="tests/test_calc.py"><skipped type="pytest.skip" message="later">later</skipped></testcase>
</testsuite></testsuites>`
	seedNodeJUnit = `<?xml version="1.0" encoding="utf-8"?>
<testsuites>
	<testcase name="/tmp/exp/node/broken.test.js" time="0.645270" classname="test" failure="test failed">
		<failure type="testCodeFailure" message="test failed">[Error: test failed] { code: 'ERR_TEST_FAILURE' }</failure>
	</testcase>
	<testsuite name="add"><testcase name="adds" time="0.001297" classname="test"/></testsuite>
	<testcase name="adds wrong" classname="test" failure="3 !== 4"><failure type="testCodeFailure" message="3 !== 4">AssertionError &lt;x></failure></testcase>
	<testcase name="skipped" classname="test"><skipped type="skipped" message="true"/></testcase>
	<!-- tests 4 -->
</testsuites>`
	seedVitestJUnit = `<?xml version="1.0" encoding="UTF-8" ?>
<testsuites name="vitest tests" tests="3" failures="2" errors="0" time="0.04">
    <testsuite name="broken2.test.js" tests="1" failures="1" errors="0" skipped="0">
        <testcase classname="broken2.test.js" name="broken2.test.js" time="0">
            <failure message="Cannot find module &apos;./nothere.js&apos;" type="Error">Error: Cannot find module</failure>
        </testcase>
    </testsuite>
    <testsuite name="calc.test.js" tests="2" failures="1" errors="0" skipped="0">
        <testcase classname="calc.test.js" name="adds"></testcase>
        <testcase classname="calc.test.js" name="adds wrong"><failure message="expected 3 to be 4" type="AssertionError">- 4
+ 3</failure><system-out>log</system-out></testcase>
    </testsuite>
</testsuites>`
	seedSurefire = `<testsuite name="com.x.CalcTest" tests="3" errors="2" failures="0"><properties><property name="a" value="b"/></properties>
<testcase name="adds" classname="com.x.CalcTest"><flakyFailure message="once"/></testcase>
<testcase name="db" classname="com.x.CalcTest"><error message="refused" type="java.io.IOException">stack</error><system-err>e</system-err></testcase>
</testsuite>`
	seedJest = `{"numFailedTests":1,"snapshot":{"added":0},"testResults":[
{"assertionResults":[{"fullName":"adds","status":"passed","failureMessages":[]},{"fullName":"add adds wrong","status":"failed","failureMessages":["Error: expect(received).toBe(expected)"]},{"fullName":"later","status":"pending","failureMessages":[]}],"message":"","name":"/p/calc.test.js","status":"failed"},
{"assertionResults":[],"message":"  ● Test suite failed to run\n\n    Cannot find module './nothere' from 'broken.test.js'\n","name":"/p/broken.test.js","status":"failed"}],"wasInterrupted":false}`
	seedCargo = `   Compiling calc v0.1.0 (/tmp/exp/rs)
     Running unittests src/lib.rs (target/debug/deps/calc-c6626fb655a8d231)

running 3 tests
test tests::adds ... ok
test tests::ignored ... ignored
test tests::adds_wrong ... FAILED
test tests::panics - should panic ... ok

failures:

---- tests::adds_wrong stdout ----

thread 'tests::adds_wrong' panicked at src/lib.rs:8:23:
assertion ` + "`left == right`" + ` failed
  left: 3
 right: 4

failures:
    tests::adds_wrong

test result: FAILED. 2 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.34s

error: test failed, to rerun pass ` + "`--lib`" + `
   Doc-tests calc

running 0 tests
error[E0425]: cannot find function ` + "`sub`" + ` in crate ` + "`calc`" + `
 --> tests/it.rs:2:31
error: could not compile ` + "`calc`" + ` (test "it") due to 1 previous error
`
)

// chunks writes data to w in pieces of size n (at least 1).
func chunks(w interface{ Write([]byte) (int, error) }, data []byte, n int) {
	n = max(n, 1)
	for len(data) > 0 {
		k := min(n, len(data))
		w.Write(data[:k])
		data = data[k:]
	}
}

// goStreamOf parses go test -json output written in pieces of size n.
func goStreamOf(data []byte, n int) (*goStream, *display) {
	out := &display{}
	g := newGoStream(out)
	w := newLineWriter(g.line)
	chunks(w, data, n)
	w.Close()
	return g, out
}

func FuzzGoTestJSON(f *testing.F) {
	f.Add([]byte(seedGoJSON), uint8(7))
	f.Add([]byte(seedGoRun), uint8(1))
	f.Add([]byte("{\"Action\":\"output\",\"Test\":\"T\",\"Output\":\"x\"}\n{\"Action\":\"fail\",\"Test\":\"T\"}"), uint8(3))
	f.Add([]byte("not json\n{\n{}\n"), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, n uint8) {
		whole, wholeOut := goStreamOf(data, len(data))
		parts, partsOut := goStreamOf(data, int(n))
		// The stream reads the same however the bytes arrive.
		if !reflect.DeepEqual(whole.t, parts.t) || whole.events != parts.events || whole.built != parts.built {
			t.Fatalf("chunked parse differs:\n%+v\n%+v", whole.t, parts.t)
		}
		if wholeOut.String() != partsOut.String() {
			t.Fatal("chunked display differs")
		}
		v := whole.verdict(execResult{exitCode: 1})
		checkTally(t, v.tally)
		if v.failed > 0 && !v.broken && v.outcome() != Fail {
			t.Fatalf("failures without a build error gave %s", v.outcome())
		}
		if v.outcome() == Pass {
			t.Fatal("exit code 1 gave a pass")
		}
	})
}

// checkTally checks what every parser must keep true.
func checkTally(t *testing.T, tl tally) {
	t.Helper()
	if tl.passed < 0 || tl.failed < 0 || tl.errored < 0 || tl.skipped < 0 {
		t.Fatalf("negative count: %+v", tl)
	}
	if len(tl.failures) > maxFailures || len(tl.errors) > maxErrorLines || len(tl.failedNames) > tl.failed || len(tl.erroredNames) > tl.errored {
		t.Fatalf("caps broken: %d failures, %d errors, %d/%d names", len(tl.failures), len(tl.errors), len(tl.failedNames), len(tl.erroredNames))
	}
	for _, f := range tl.failures {
		if len(f.Message) > maxMessage+len("…") {
			t.Fatalf("message of %d bytes", len(f.Message))
		}
	}
}

type junitRun struct {
	cases  []junitCase
	suites junitSuiteErrors
	err    bool
}

func readJUnitAll(data []byte, oneByte bool) junitRun {
	var r junitRun
	var in = bytes.NewReader(data)
	var rd interface{ Read([]byte) (int, error) } = in
	if oneByte {
		rd = iotest.OneByteReader(in)
	}
	suites, err := readJUnit(rd, func(c junitCase) { r.cases = append(r.cases, c) })
	r.suites, r.err = suites, err != nil
	return r
}

func FuzzJUnit(f *testing.F) {
	for _, s := range []string{seedPytestJUnit, seedNodeJUnit, seedVitestJUnit, seedSurefire,
		`<testcase name="a"><failure/><error/></testcase>`, `<testsuites><testsuite name="x" errors="2">`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		whole := readJUnitAll(data, false)
		slow := readJUnitAll(data, true)
		if !reflect.DeepEqual(whole, slow) {
			t.Fatalf("a byte-at-a-time read differs:\n%+v\n%+v", whole, slow)
		}
		for _, c := range whole.cases {
			if c.Status < passed || c.Status > skipped || len(c.Text) > maxMessage+len("…") {
				t.Fatalf("bad case %+v", c)
			}
		}
		var tl tally
		err := tallyJUnit(bytes.NewReader(data), &tl, junitName, "/p")
		if (err != nil) != whole.err {
			t.Fatalf("tally error %v, read error %v", err, whole.err)
		}
		checkTally(t, tl)
		if got := tl.passed + tl.failed + tl.errored + tl.skipped; got > len(whole.cases) {
			t.Fatalf("%d tests counted from %d cases", got, len(whole.cases))
		}
	})
}

// The pytest report is a JUnit report named by node ids.
func FuzzPytestReport(f *testing.F) {
	f.Add([]byte(seedPytestJUnit))
	f.Add([]byte(`<testsuite><testcase classname="a.b" name="t" file="a/b.py"/><testcase classname="x" name="y" file="q.py"><error/></testcase></testsuite>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var tl tally
		_ = tallyJUnit(bytes.NewReader(data), &tl, pytestNodeID, "/p")
		checkTally(t, tl)
		if tl.errored > 0 && len(tl.errors) == 0 {
			t.Fatal("errored tests left no error line")
		}
	})
}

func FuzzJestJSON(f *testing.F) {
	f.Add([]byte(seedJest))
	f.Add([]byte(`{"testResults":[]}`))
	f.Add([]byte(`{"testResults":[{"status":"failed","assertionResults":null}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var whole, slow tally
		errWhole := tallyJest(bytes.NewReader(data), "/p", &whole)
		errSlow := tallyJest(iotest.OneByteReader(bytes.NewReader(data)), "/p", &slow)
		if (errWhole != nil) != (errSlow != nil) || !reflect.DeepEqual(whole, slow) {
			t.Fatalf("a byte-at-a-time read differs: %v %v\n%+v\n%+v", errWhole, errSlow, whole, slow)
		}
		checkTally(t, whole)
	})
}

func libtestOf(data []byte, n int) *libtest {
	l := &libtest{messages: map[string]int{}}
	w := newLineWriter(func(b []byte) { l.line(string(b)) })
	chunks(w, data, n)
	w.Close()
	l.flush()
	return l
}

func FuzzLibtest(f *testing.F) {
	f.Add([]byte(seedCargo), uint8(5))
	f.Add([]byte("failures:\n---- a stdout ----\nx\n"), uint8(1))
	f.Add([]byte("test a ... FAILED\nfailures:\n---- a stdout ----\nboom\ntest result: FAILED.\n"), uint8(4))
	f.Fuzz(func(t *testing.T, data []byte, n uint8) {
		whole := libtestOf(data, len(data))
		parts := libtestOf(data, int(n))
		if !reflect.DeepEqual(whole.t, parts.t) {
			t.Fatalf("chunked parse differs:\n%+v\n%+v", whole.t, parts.t)
		}
		checkTally(t, whole.t)
	})
}

// The display keeps exactly the first and last halves of what was written.
func FuzzDisplay(f *testing.F) {
	f.Add([]byte("hello\nworld\n"), uint16(3), uint16(1000))
	f.Add(bytes.Repeat([]byte("0123456789"), 3000), uint16(7), uint16(40000))
	f.Fuzz(func(t *testing.T, data []byte, n uint16, repeat uint16) {
		// Repeat the input so that it passes the cap now and then.
		all := bytes.Repeat(data, int(repeat)%64+1)
		if len(all) > 4*maxOutput {
			all = all[:4*maxOutput]
		}
		d := &display{}
		chunks(d, all, int(n))
		got := d.String()
		if len(all) <= maxOutput {
			if got != string(all) {
				t.Fatalf("short output changed: %d bytes in, %d out", len(all), len(got))
			}
			return
		}
		want := string(all[:half]) + fmt.Sprintf("\n... %d bytes of output omitted ...\n", len(all)-maxOutput) + string(all[len(all)-half:])
		if got != want {
			t.Fatalf("display of %d bytes in pieces of %d is wrong", len(all), n)
		}
	})
}

func BenchmarkGoStream(b *testing.B) {
	var buf bytes.Buffer
	for i := range 5000 {
		fmt.Fprintf(&buf, `{"Action":"output","Package":"p","Test":"TestBig","Output":"    big_test.go:12: %d %s\n"}`+"\n", i, strings.Repeat("x", 80))
	}
	buf.WriteString(`{"Action":"fail","Package":"p","Test":"TestBig"}` + "\n")
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		g, _ := goStreamOf(data, 32<<10)
		if g.t.failed != 1 {
			b.Fatal("lost the failure")
		}
	}
}

func BenchmarkJUnit(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString("<testsuites><testsuite name=\"s\">")
	for i := range 5000 {
		fmt.Fprintf(&buf, `<testcase classname="c" name="t%d"/>`, i)
	}
	buf.WriteString(`<testcase classname="c" name="bad"><failure message="m">trace</failure></testcase></testsuite></testsuites>`)
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		var tl tally
		if err := tallyJUnit(bytes.NewReader(data), &tl, junitName, "/"); err != nil || tl.failed != 1 {
			b.Fatal(err)
		}
	}
}

// The cap passes a document on unchanged when no run is over its limit,
// and a report the decoder reads reads the same, test by test, however
// short the runs are cut.
func FuzzXMLCap(f *testing.F) {
	for _, s := range []string{seedPytestJUnit, seedNodeJUnit, seedVitestJUnit, seedSurefire,
		`<!DOCTYPE r [<!ENTITY e "x>y"><!-- a > b -->]><r a='1 > 2'>&amp;&#233;é<![CDATA[<x>]]]]><?pi a > b ?><!-- c - d --></r>`,
		`<testsuite><testcase name="a"><failure message="é&amp;é&lt;">ééé&#x41;&unknown x</failure><system-out>--</system-out></testcase></testsuite>`} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, n uint8) {
		whole, err := io.ReadAll(newXMLCap(bytes.NewReader(data), len(data)+1))
		if err != nil || !bytes.Equal(whole, data) {
			t.Fatalf("a document within the limit changed:\n%q\n%q", data, whole)
		}
		limit := int(n%24) + 1
		capped, err := io.ReadAll(newXMLCap(iotest.OneByteReader(bytes.NewReader(data)), limit))
		if err != nil || len(capped) > len(data) {
			t.Fatalf("cap %d: %d bytes from %d, %v", limit, len(capped), len(data), err)
		}
		orig := readJUnitAll(data, false)
		if orig.err {
			return
		}
		cut := readJUnitAll(capped, false)
		if cut.err || len(cut.cases) != len(orig.cases) {
			t.Fatalf("cap %d: %d cases (error %v), want %d\n%q\n%q", limit, len(cut.cases), cut.err, len(orig.cases), data, capped)
		}
		for i := range orig.cases {
			if cut.cases[i].Status != orig.cases[i].Status {
				t.Fatalf("cap %d: case %d is %v, want %v\n%q\n%q", limit, i, cut.cases[i].Status, orig.cases[i].Status, data, capped)
			}
		}
	})
}
