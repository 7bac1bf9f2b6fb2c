package testrun_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/testrun"
)

func TestDeclaredTests(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, path, content string
		want                []string
	}{
		{"python functions, classes and methods", "tests/test_calc.py",
			"import pytest\n\n\ndef test_add():\n    assert 1\n\n\nasync def test_async():\n    pass\n\n\ndef helper():\n    def test_inner():\n        pass\n\n\n" +
				"class TestCalc:\n    @pytest.mark.parametrize('x', [1])\n    def test_p(self, x):\n        pass\n\n    def helper(self):\n        pass\n\n\n" +
				"class CalcTests(unittest.TestCase):\n    def test_sub(self):\n        '''\n        def test_not_a_test():\n        '''\n\n\ndef testing_too():\n    pass\n",
			[]string{"test_add", "test_async", "TestCalc::test_p", "CalcTests::test_sub", "testing_too"}},
		{"go tests, benchmarks, examples and fuzz targets", "calc_test.go",
			"package calc\n\nfunc TestAdd(t *testing.T) {}\nfunc Test(t *testing.T) {}\nfunc TestSub_neg(t *testing.T) {\n\tt.Run(\"x\", func(t *testing.T) {})\n}\n" +
				"func Testing(t *testing.T) {}\nfunc BenchmarkAdd(b *testing.B) {}\nfunc ExampleAdd() {}\nfunc FuzzParse(f *testing.F) {}\nfunc helper(t *testing.T) {}\nfunc (s *suite) TestMethod() {}\n",
			[]string{"TestAdd", "Test", "TestSub_neg", "BenchmarkAdd", "ExampleAdd", "FuzzParse"}},
		{"javascript titles", "calc.test.js",
			"describe('calc', () => {\n  it('adds', () => {})\n  it.skip(\"subtracts\", () => {})\n  test.each([[1, 2]])('mul %i', () => {})\n  test(`divides`, async () => {})\n  // it('commented', () => {})\n})\nsplit('x')\nobj.test('not one')\n",
			[]string{`describe "calc"`, `it "adds"`, `it "subtracts"`, `test "mul %i"`, `test "divides"`}},
		{"typescript titles", "src/slug.spec.ts",
			"import { describe, it } from 'vitest'\ndescribe.concurrent('slug', () => { it.only('joins', () => {}) })\n",
			[]string{`describe "slug"`, `it "joins"`}},
		{"rust test functions", "tests/area.rs",
			"#[test]\nfn squares() {}\n\n#[test]\n#[should_panic(expected = \"x\")]\nfn panics() {}\n\nfn helper() {}\n\n#[tokio::test]\nasync fn waits() {}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    #[ignore]\n    pub fn later() {}\n}\n",
			[]string{"squares", "panics", "waits", "later"}},
		{"other languages", "README.md", "# test_x\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := testrun.DeclaredTests(tt.path, tt.content); !slices.Equal(got, tt.want) {
				t.Errorf("declared %q, want %q", got, tt.want)
			}
		})
	}
}

// A change to a test file that removes or renames tests names them, per
// language; a test declared twice and removed once counts once.
func TestRemovedTests(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, path, before, after string
		want                      []string
	}{
		{"go: a test function goes, a table test loses rows", "calc_test.go",
			"func TestAdd(t *testing.T) {\n\tfor _, c := range cases {}\n}\n\nfunc TestSub(t *testing.T) {}\n\nfunc TestDiv(t *testing.T) {}\n",
			"func TestAdd(t *testing.T) {\n}\n\nfunc TestDiv(t *testing.T) {}\n\nfunc TestMul(t *testing.T) {}\n",
			[]string{"TestSub"}},
		{"python: a method renamed", "test_calc.py",
			"class TestCalc:\n    def test_add(self):\n        pass\n    def test_sub(self):\n        pass\n",
			"class TestCalc:\n    def test_add(self):\n        pass\n    def test_subtract(self):\n        pass\n",
			[]string{"TestCalc::test_sub"}},
		{"js: one of two tests of the same title", "a.test.js",
			"describe('a', () => { it('works', () => {}) })\ndescribe('b', () => { it('works', () => {}) })\n",
			"describe('a', () => { it('works', () => {}) })\ndescribe('b', () => {})\n",
			[]string{`it "works"`}},
		{"rust: nothing removed, one added", "tests/it.rs", "#[test]\nfn adds() {}\n", "#[test]\nfn adds() {}\n#[test]\nfn subs() {}\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := testrun.RemovedTests(tt.path, tt.before, tt.after); !slices.Equal(got, tt.want) {
				t.Errorf("removed %q, want %q", got, tt.want)
			}
		})
	}
}

func FuzzDeclaredTests(f *testing.F) {
	for _, seed := range []string{"def test_a():\n", "func TestA(t *testing.T) {}\n", "it('x', () => {})\n", "#[test]\nfn a() {}\n", "'''\ndef test_x", "it(`a\\`b`)"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, content string) {
		for _, p := range []string{"t.py", "t_test.go", "t.test.ts", "t.rs"} {
			got := testrun.DeclaredTests(p, content)
			for _, name := range got {
				if name == "" || strings.Contains(name, "\n") {
					t.Fatalf("%s: name %q from %q", p, name, content)
				}
			}
			if removed := testrun.RemovedTests(p, content, content); len(removed) != 0 {
				t.Fatalf("%s: the same text removes %q", p, removed)
			}
		}
	})
}
