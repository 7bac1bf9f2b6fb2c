package testrun_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/testenv"
	"github.com/azero-dev/azero/internal/testrun"
)

// Every adapter names each test with its outcome (Result.Tests), the same
// names from one run to the next: a test that passed, one that failed, one
// skipped, in each runner's own report.
func TestEveryRunnerNamesItsTests(t *testing.T) {
	t.Parallel()
	pkgNode := `{"name": "calc", "type": "module", "scripts": {"test": "node --test"}}`
	junit := `<?xml version="1.0"?><testsuites><testsuite name="calc" tests="3">` +
		`<testcase classname="CalcTest" name="adds"/>` +
		`<testcase classname="CalcTest" name="adds wrong"><failure message="want 4">at CalcTest.java:9</failure></testcase>` +
		`<testcase classname="CalcTest" name="later"><skipped/></testcase></testsuite></testsuites>`
	tests := []struct {
		name   string
		kind   string
		tools  []string
		link   string // a node package the project needs
		opts   testrun.Options
		files  map[string]string
		passed []string
		failed []string
		skip   []string
	}{
		{"go", testrun.KindGo, nil, "", testrun.Options{}, map[string]string{"go.mod": "module example.com/calc\n\ngo 1.22\n",
			"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tfor _, c := range []struct{ name string; a, b, want int }{{\"small\", 1, 2, 3}, {\"wrong\", 1, 2, 4}} {\n\t\tt.Run(c.name, func(t *testing.T) {\n\t\t\tif c.a+c.b != c.want {\n\t\t\t\tt.Fatal(\"want\", c.want)\n\t\t\t}\n\t\t})\n\t}\n}\n\nfunc TestLater(t *testing.T) { t.Skip(\"later\") }\n"},
			[]string{"example.com/calc.TestAdd/small"}, []string{"example.com/calc.TestAdd", "example.com/calc.TestAdd/wrong"}, []string{"example.com/calc.TestLater"}},
		{"pytest", testrun.KindPytest, []string{"pytest"}, "", testrun.Options{}, map[string]string{
			"tests/test_calc.py": "import pytest\n\n\nclass TestCalc:\n    @pytest.mark.parametrize('a', [1, 2])\n    def test_adds(self, a):\n        assert a + 1 == 2\n\n\n@pytest.mark.skip(reason='later')\ndef test_later():\n    pass\n"},
			[]string{"tests/test_calc.py::TestCalc::test_adds[1]"}, []string{"tests/test_calc.py::TestCalc::test_adds[2]"}, []string{"tests/test_calc.py::test_later"}},
		{"node", testrun.KindNode, []string{"node"}, "", testrun.Options{}, map[string]string{"package.json": pkgNode,
			"calc.test.js": "import { test, describe } from 'node:test'\nimport assert from 'node:assert/strict'\ndescribe('add', () => {\n  test('adds', () => { assert.equal(1 + 2, 3) })\n  test('adds wrong', () => { assert.equal(1 + 2, 4) })\n  test('later', { skip: true }, () => {})\n})\n"},
			[]string{"add > adds"}, []string{"add > adds wrong"}, []string{"add > later"}},
		{"vitest", testrun.KindVitest, []string{"vitest"}, "vitest", testrun.Options{}, map[string]string{"package.json": `{"name": "calc", "type": "module", "scripts": {"test": "vitest"}}`,
			"calc.test.ts": "import { describe, it, expect } from 'vitest'\ndescribe('add', () => {\n  it('adds', () => { expect(1 + 2).toBe(3) })\n  it('adds wrong', () => { expect(1 + 2).toBe(4) })\n  it.skip('later', () => {})\n})\n"},
			[]string{"calc.test.ts > add > adds"}, []string{"calc.test.ts > add > adds wrong"}, []string{"calc.test.ts > add > later"}},
		{"jest", testrun.KindJest, []string{"jest"}, "", testrun.Options{}, map[string]string{"package.json": `{"name": "calc", "scripts": {"test": "jest"}}`,
			"calc.test.js": "describe('add', () => {\n  test('adds', () => { expect(1 + 2).toBe(3) })\n  test('adds wrong', () => { expect(1 + 2).toBe(4) })\n  test.skip('later', () => {})\n})\n"},
			[]string{"calc.test.js > add adds"}, []string{"calc.test.js > add adds wrong"}, []string{"calc.test.js > add later"}},
		{"cargo", testrun.KindCargo, []string{"cargo"}, "", testrun.Options{}, map[string]string{"Cargo.toml": "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
			"src/lib.rs":  "pub fn add(a: i32, b: i32) -> i32 { a + b }\n",
			"tests/it.rs": "#[test]\nfn adds() { assert_eq!(calc::add(1, 2), 3); }\n#[test]\nfn adds_wrong() { assert_eq!(calc::add(1, 2), 4); }\n#[test]\n#[ignore]\nfn later() {}\n"},
			[]string{"tests/it.rs::adds"}, []string{"tests/it.rs::adds_wrong"}, []string{"tests/it.rs::later"}},
		{"junit", testrun.KindJUnit, nil, "", testrun.Options{TestCmd: "mkdir -p build && cat > build/r.xml <<'EOF'\n" + junit + "\nEOF\nexit 1\n", Report: "junit:build/r.xml"},
			map[string]string{"README": "calc\n"},
			[]string{"CalcTest > adds"}, []string{"CalcTest > adds wrong"}, []string{"CalcTest > later"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, tool := range tt.tools {
				testenv.RequireTool(t, tool)
			}
			dir := t.TempDir()
			testenv.WriteFiles(t, dir, tt.files)
			if tt.link != "" {
				linkNodeModule(t, dir, tt.link)
			}
			r, err := testrun.New(tt.kind, sandboxed(t, tt.opts))
			if err != nil {
				t.Fatal(err)
			}
			res, err := r.Run(t.Context(), dir)
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != testrun.Fail {
				t.Fatalf("outcome %s (%s), want fail\n%s", res.Outcome, res.Summary, res.Output)
			}
			got := res.Tests
			if got == nil || !slices.Equal(got.Passed, tt.passed) || !slices.Equal(got.Failed, tt.failed) || !slices.Equal(got.Skipped, tt.skip) || got.Omitted != 0 {
				t.Fatalf("tests %+v, want passed %q failed %q skipped %q", got, tt.passed, tt.failed, tt.skip)
			}
			// What a checkpoint keeps reads back the same.
			data, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			var back testrun.Result
			if err := json.Unmarshal(data, &back); err != nil || !equalTests(back.Tests, got) {
				t.Errorf("read back %+v (%v), want %+v\n%s", back.Tests, err, got, data)
			}
		})
	}
}

func equalTests(a, b *testrun.Tests) bool {
	if a == nil || b == nil {
		return a == b
	}
	return slices.Equal(a.Passed, b.Passed) && slices.Equal(a.Failed, b.Failed) && slices.Equal(a.Errored, b.Errored) &&
		slices.Equal(a.Skipped, b.Skipped) && a.Omitted == b.Omitted
}

// Names are front-coded in JSON, which keeps a project's many names with
// a long shared prefix small; the lists read back exactly.
func TestTestNamesAreFrontCoded(t *testing.T) {
	t.Parallel()
	var names []string
	for i := range 500 {
		names = append(names, "example.com/some/long/package/path/calc.TestAdd/case_"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+"_"+strings.Repeat("9", i%3))
	}
	slices.Sort(names)
	names = slices.Compact(names)
	in := &testrun.Tests{Passed: names, Failed: []string{"é/ü", "é/ü2", "éa"}, Omitted: 3}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := json.Marshal(names)
	if len(data) > len(plain)/3 {
		t.Errorf("front-coded names take %d bytes, the plain list %d", len(data), len(plain))
	}
	var out testrun.Tests
	if err := json.Unmarshal(data, &out); err != nil || !equalTests(&out, in) {
		t.Fatalf("read back %+v (%v)", out, err)
	}
	for _, bad := range []string{`{"passed":["x"]}`, `{"passed":["0:a","2:b"]}`, `{"passed":["0:ab","01:c"]}`, `{"passed":["0:ab","+1:c"]}`} {
		if err := json.Unmarshal([]byte(bad), &out); err == nil {
			t.Errorf("%s read without an error", bad)
		}
	}
}

func FuzzTestNamesRoundTrip(f *testing.F) {
	f.Add("a\nab\nabc", "x")
	f.Add("é\néa\nü", "")
	f.Add("\xff\xfe\n\xffa", "z")
	f.Fuzz(func(t *testing.T, passed, failed string) {
		list := func(s string) []string {
			if s == "" {
				return nil
			}
			l := strings.Split(strings.ToValidUTF8(s, "?"), "\n")
			slices.Sort(l)
			return slices.Compact(l)
		}
		in := &testrun.Tests{Passed: list(passed), Failed: list(failed)}
		data, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		var out testrun.Tests
		if err := json.Unmarshal(data, &out); err != nil || !equalTests(&out, in) {
			t.Fatalf("%q read back as %+v (%v)", data, out, err)
		}
	})
}

// The real case of issue 23: a Go table test loses three rows and a test
// function goes, while the counts still rise (the new tests outnumber the
// lost): each lost test is named, with where it went missing.
func TestErodedNamesWhatWentMissing(t *testing.T) {
	t.Parallel()
	baseline := &testrun.Tests{Passed: []string{"calc.TestAdd/neg", "calc.TestAdd/one", "calc.TestAdd/big", "calc.TestAdd/zero", "calc.TestDiv", "calc.TestSub"}}
	slices.Sort(baseline.Passed)
	red := &testrun.Tests{Passed: []string{"calc.TestAdd/zero", "calc.TestSub"}, Failed: []string{"calc.TestMul/a", "calc.TestMul/b", "calc.TestMul/c", "calc.TestMul/d", "calc.TestMul/e"}}
	green := &testrun.Tests{Passed: []string{"calc.TestAdd/zero", "calc.TestMul/a", "calc.TestMul/b", "calc.TestMul/c", "calc.TestMul/d", "calc.TestMul/e", "calc.TestSub"}, Skipped: []string{"calc.TestDiv"}}
	got := testrun.Eroded(baseline, testrun.Phase{Name: "red", Tests: red}, testrun.Phase{Name: "green", Tests: green})
	var lines []string
	for _, e := range got {
		lines = append(lines, e.String())
	}
	want := []string{
		"calc.TestAdd/big: passed before the change, missing at red and green",
		"calc.TestAdd/neg: passed before the change, missing at red and green",
		"calc.TestAdd/one: passed before the change, missing at red and green",
		"calc.TestDiv: passed before the change, missing at red, skipped at green",
	}
	if !slices.Equal(lines, want) {
		t.Errorf("eroded:\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	// Nothing is said of a run that named no tests, or of names a run
	// with capped names may have left out.
	if got := testrun.Eroded(baseline, testrun.Phase{Name: "red"}, testrun.Phase{Name: "green", Tests: &testrun.Tests{Passed: []string{"calc.TestSub"}, Omitted: 9}}); len(got) != 0 {
		t.Errorf("eroded without names: %v", got)
	}
	if got := testrun.Eroded(nil, testrun.Phase{Name: "red", Tests: red}); len(got) != 0 {
		t.Errorf("eroded without a baseline: %v", got)
	}
}
