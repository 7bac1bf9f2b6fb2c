package testrun_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/sandbox"
	"github.com/azero-dev/azero/internal/testenv"
	"github.com/azero-dev/azero/internal/testrun"
)

// runnerCase is one fixture project and what its run must show.
type runnerCase struct {
	name   string
	files  map[string]string
	want   testrun.Outcome
	passed int
	failed []string // FailedTests, in order
	errs   string   // a line Result.Errors must hold
}

// runCases runs each case's project with the runner kind, in parallel.
// setup prepares a project directory (node_modules, say) before the run.
func runCases(t *testing.T, kind string, opts testrun.Options, setup func(t *testing.T, dir string), cases []runnerCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			testenv.WriteFiles(t, dir, tt.files)
			if setup != nil {
				setup(t, dir)
			}
			r, err := testrun.New(kind, sandboxed(t, opts))
			if err != nil {
				t.Fatal(err)
			}
			res, err := r.Run(t.Context(), dir)
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != tt.want {
				t.Fatalf("outcome %s (exit %d, %s), want %s\nerrors: %q\n%s", res.Outcome, res.ExitCode, res.Summary, tt.want, res.Errors, res.Output)
			}
			if res.Passed != tt.passed || !slices.Equal(res.FailedTests, tt.failed) {
				t.Errorf("passed %d failed %q, want %d %q\n%s", res.Passed, res.FailedTests, tt.passed, tt.failed, res.Output)
			}
			if tt.errs != "" && !containsLine(res.Errors, tt.errs) {
				t.Errorf("errors %q lack %q\n%s", res.Errors, tt.errs, res.Output)
			}
			// The summary, which a terminal and the next prompt show, names
			// why a broken run could not run.
			if tt.want == testrun.Broken && tt.errs != "" && !strings.Contains(res.Summary, tt.errs) {
				t.Errorf("summary %q lacks %q", res.Summary, tt.errs)
			}
			if tt.want == testrun.Fail && (len(res.Failures) == 0 || res.Failures[0].Message == "") {
				t.Errorf("failures %+v carry no message", res.Failures)
			}
			// Reports, caches, build products and lock files the project
			// does not keep stay out of it.
			var extra []string
			filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				rel, _ := filepath.Rel(dir, p)
				if d != nil && d.IsDir() && rel == "node_modules" {
					return filepath.SkipDir
				}
				if _, ok := tt.files[rel]; !ok && rel != "." && (d == nil || !d.IsDir()) && rel != "node_modules" {
					extra = append(extra, rel)
				}
				return nil
			})
			if len(extra) > 0 {
				t.Errorf("the run left files in the project: %v", extra)
			}
			// In a worktree node_modules is the checkout's: no cache there.
			if _, err := os.Stat(filepath.Join(dir, "node_modules", ".vite")); err == nil {
				t.Error("the run left a cache in node_modules/.vite")
			}
		})
	}
}

func TestNodeRunner(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "node")
	pkg := `{"name": "calc", "type": "module", "scripts": {"test": "node --test"}}`
	calc := "export function add(a, b) { return a + b }\n"
	runCases(t, "node", testrun.Options{}, nil, []runnerCase{
		{"green", map[string]string{"package.json": pkg, "calc.js": calc,
			"calc.test.js": "import { test } from 'node:test'\nimport assert from 'node:assert/strict'\nimport { add } from './calc.js'\ntest('adds', () => { assert.equal(add(1, 2), 3) })\ntest('skips', { skip: true }, () => {})\n"},
			testrun.Pass, 1, nil, ""},
		{"red", map[string]string{"package.json": pkg, "calc.js": calc,
			"calc.test.js": "import { test, describe } from 'node:test'\nimport assert from 'node:assert/strict'\nimport { add } from './calc.js'\ndescribe('add', () => {\n  test('adds', () => { assert.equal(add(1, 2), 3) })\n  test('adds wrong', () => { assert.equal(add(1, 2), 4) })\n})\n"},
			testrun.Fail, 1, []string{"add > adds wrong"}, ""},
		{"missing export is not a red", map[string]string{"package.json": pkg, "calc.js": calc,
			"calc.test.js": "import { test } from 'node:test'\nimport assert from 'node:assert/strict'\nimport { add } from './calc.js'\ntest('adds', () => { assert.equal(add(1, 2), 4) })\n",
			"sub.test.js":  "import { test } from 'node:test'\nimport assert from 'node:assert/strict'\nimport { sub } from './calc.js'\ntest('subtracts', () => { assert.equal(sub(3, 2), 1) })\n"},
			testrun.Broken, 0, []string{"adds", "sub.test.js"}, "does not provide an export named 'sub'"},
		{"missing CommonJS module is not a red", map[string]string{"package.json": `{"name": "calc", "scripts": {"test": "node --test"}}`,
			"lib/calc.js": "exports.add = (a, b) => a + b\n",
			"test/add.js": "const { test } = require('node:test')\nconst assert = require('node:assert/strict')\nconst { add } = require('../lib/calc')\ntest('adds', () => { assert.equal(add(1, 2), 3) })\n",
			"test/sub.js": "const { test } = require('node:test')\nconst assert = require('node:assert/strict')\nconst { sub } = require('../lib/sub')\ntest('subtracts', () => { assert.equal(sub(3, 2), 1) })\n"},
			testrun.Broken, 1, []string{"test/sub.js"}, "Error: Cannot find module '../lib/sub'"},
		{"no tests", map[string]string{"package.json": pkg, "calc.js": calc,
			"calc.test.js": "import 'node:test'\n"},
			testrun.NoTests, 0, nil, ""},
		// The project's script decides which files and flags: its tests
		// live in tests/, which node does not search by itself, and need
		// a setup module.
		{"the script's files and flags", map[string]string{"package.json": `{"type": "module", "scripts": {"test": "node --import ./setup.mjs --test tests/*.js"}}`,
			"calc.js": calc, "setup.mjs": "globalThis.expected = 3\n",
			"tests/add.js": "import { test } from 'node:test'\nimport assert from 'node:assert/strict'\nimport { add } from '../calc.js'\ntest('adds', () => { assert.equal(add(1, 2), globalThis.expected) })\ntest('adds wrong', () => { assert.equal(add(1, 1), globalThis.expected) })\n"},
			testrun.Fail, 1, []string{"adds wrong"}, ""},
		{"a script naming its own reporter is not used", map[string]string{"package.json": `{"type": "module", "scripts": {"test": "node --test --test-reporter=dot"}}`,
			"calc.js": calc, "calc.test.js": "import { test } from 'node:test'\nimport assert from 'node:assert/strict'\nimport { add } from './calc.js'\ntest('adds', () => { assert.equal(add(1, 2), 3) })\n"},
			testrun.Pass, 1, nil, ""},
	})
}

// linkNodeModule makes a package installed globally (as .ci/run does)
// importable from a fixture project, as if installed in it.
func linkNodeModule(t *testing.T, dir, name string) {
	t.Helper()
	bin := testenv.RequireTool(t, name)
	real, err := filepath.EvalSymlinks(bin)
	if err != nil {
		t.Fatal(err)
	}
	pkgDir := filepath.Dir(real)
	for filepath.Base(filepath.Dir(pkgDir)) != "node_modules" || filepath.Base(pkgDir) != name {
		if pkgDir == filepath.Dir(pkgDir) {
			t.Fatalf("%s (%s) is not inside a node_modules/%s directory", bin, real, name)
		}
		pkgDir = filepath.Dir(pkgDir)
	}
	if err := os.MkdirAll(filepath.Join(dir, "node_modules"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(pkgDir, filepath.Join(dir, "node_modules", name)); err != nil {
		t.Fatal(err)
	}
}

func TestVitestRunner(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "vitest")
	script := `{"name": "calc", "type": "module", "scripts": {"test": "vitest"}}`
	noScript := `{"name": "calc", "type": "module", "devDependencies": {"vitest": "^4"}}`
	calc := "export function add(a: number, b: number): number { return a + b }\n"
	test := func(body string) string {
		return "import { describe, it, expect } from 'vitest'\nimport { add } from './calc'\n" + body
	}
	runCases(t, "vitest", testrun.Options{}, func(t *testing.T, dir string) { linkNodeModule(t, dir, "vitest") }, []runnerCase{
		{"green through npm test", map[string]string{"package.json": script, "calc.ts": calc,
			"calc.test.ts": test("it('adds', () => { expect(add(1, 2)).toBe(3) })\nit.skip('later', () => {})\n")},
			testrun.Pass, 1, nil, ""},
		{"red", map[string]string{"package.json": noScript, "calc.ts": calc,
			"calc.test.ts": test("describe('add', () => {\n  it('adds', () => { expect(add(1, 2)).toBe(3) })\n  it('adds wrong', () => { expect(add(1, 2)).toBe(4) })\n})\n")},
			testrun.Fail, 1, []string{"calc.test.ts > add > adds wrong"}, ""},
		{"missing module is not a red", map[string]string{"package.json": script, "calc.ts": calc,
			"calc.test.ts": test("it('adds', () => { expect(add(1, 2)).toBe(4) })\n"),
			"sub.test.ts":  "import { it, expect } from 'vitest'\nimport { sub } from './sub'\nit('subtracts', () => { expect(sub(3, 2)).toBe(1) })\n"},
			testrun.Broken, 0, []string{"calc.test.ts > adds", "sub.test.ts"}, "Cannot find module './sub'"},
		{"no tests", map[string]string{"package.json": noScript, "calc.ts": calc},
			testrun.NoTests, 0, nil, ""},
		// vitest's JUnit report leaves out an error thrown outside any
		// test; its console says it.
		{"an error thrown outside any test is not a red", map[string]string{"package.json": noScript, "calc.ts": calc,
			"calc.test.ts": test("it('adds wrong', () => {\n  setTimeout(() => { throw new Error('thrown later') }, 0)\n  expect(add(1, 2)).toBe(4)\n})\n" +
				"it('waits', async () => { await new Promise((r) => setTimeout(r, 100)); expect(add(1, 1)).toBe(2) })\n")},
			testrun.Broken, 1, []string{"calc.test.ts > adds wrong"}, "Error: thrown later"},
		{"nor a green", map[string]string{"package.json": noScript, "calc.ts": calc,
			"calc.test.ts": test("it('adds', async () => {\n  setTimeout(() => { throw new Error('thrown later') }, 0)\n  await new Promise((r) => setTimeout(r, 100))\n  expect(add(1, 2)).toBe(3)\n})\n")},
			testrun.Broken, 1, nil, "Error: thrown later"},
		{"a script that watches runs once", map[string]string{"package.json": `{"name": "calc", "type": "module", "scripts": {"test": "vitest --watch"}}`, "calc.ts": calc,
			"calc.test.ts": test("it('adds', () => { expect(add(1, 2)).toBe(3) })\n")},
			testrun.Pass, 1, nil, ""},
	})
}

func TestJestRunner(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "jest")
	script := `{"name": "calc", "scripts": {"test": "jest"}}`
	noScript := `{"name": "calc", "devDependencies": {"jest": "^30"}}`
	calc := "exports.add = (a, b) => a + b\n"
	runCases(t, "jest", testrun.Options{}, nil, []runnerCase{
		{"green through npm test", map[string]string{"package.json": script, "calc.js": calc,
			"calc.test.js": "const { add } = require('./calc')\ntest('adds', () => { expect(add(1, 2)).toBe(3) })\ntest.skip('later', () => {})\n"},
			testrun.Pass, 1, nil, ""},
		{"red", map[string]string{"package.json": noScript, "calc.js": calc,
			"__tests__/calc.js": "const { add } = require('../calc')\ndescribe('add', () => {\n  test('adds', () => { expect(add(1, 2)).toBe(3) })\n  test('adds wrong', () => { expect(add(1, 2)).toBe(4) })\n})\n"},
			testrun.Fail, 1, []string{"__tests__/calc.js > add adds wrong"}, ""},
		{"missing module is not a red", map[string]string{"package.json": script, "calc.js": calc,
			"calc.test.js": "const { add } = require('./calc')\ntest('adds', () => { expect(add(1, 2)).toBe(4) })\n",
			"sub.test.js":  "const { sub } = require('./sub')\ntest('subtracts', () => { expect(sub(3, 2)).toBe(1) })\n"},
			testrun.Broken, 0, []string{"calc.test.js > adds", "sub.test.js"}, "Cannot find module './sub' from 'sub.test.js'"},
		{"no tests", map[string]string{"package.json": script, "calc.js": calc},
			testrun.NoTests, 0, nil, ""},
		{"a script that watches runs once", map[string]string{"package.json": `{"name": "calc", "scripts": {"test": "jest --watchAll"}}`, "calc.js": calc,
			"calc.test.js": "const { add } = require('./calc')\ntest('adds', () => { expect(add(1, 2)).toBe(3) })\n"},
			testrun.Pass, 1, nil, ""},
	})
}

// An ESM project runs jest as jest's documentation says, through node with
// --experimental-vm-modules: without that flag no ESM test file can load,
// so the script's command, not the bare jest binary, must run.
func TestJestRunnerOfAnESMProject(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "jest")
	testenv.RequireTool(t, "npm")
	pkg := `{"name": "calc", "type": "module", "scripts": {"test": "node --experimental-vm-modules node_modules/jest/bin/jest.js"}}`
	viaRun := `{"name": "calc", "type": "module", "scripts": {"test": "npm run lint && npm run test:unit", "lint": "exit 3",` +
		` "test:unit": "NODE_OPTIONS=--experimental-vm-modules jest"}, "devDependencies": {"jest": "^30"}}`
	calc := "export const add = (a, b) => a + b\n"
	test := func(body string) string {
		return "import { add } from '../calc.js'\n" + body
	}
	runCases(t, "jest", testrun.Options{}, func(t *testing.T, dir string) { linkNodeModule(t, dir, "jest") }, []runnerCase{
		{"green", map[string]string{"package.json": pkg, "calc.js": calc,
			"__tests__/calc.test.js": test("test('adds', () => { expect(add(1, 2)).toBe(3) })\n")},
			testrun.Pass, 1, nil, ""},
		{"red", map[string]string{"package.json": pkg, "calc.js": calc,
			"__tests__/calc.test.js": test("test('adds', () => { expect(add(1, 2)).toBe(3) })\ntest('adds wrong', () => { expect(add(1, 2)).toBe(4) })\n")},
			testrun.Fail, 1, []string{"__tests__/calc.test.js > adds wrong"}, ""},
		{"red through npm run", map[string]string{"package.json": viaRun, "calc.js": calc,
			"__tests__/calc.test.js": test("test('adds wrong', () => { expect(add(1, 2)).toBe(4) })\n")},
			testrun.Fail, 0, []string{"__tests__/calc.test.js > adds wrong"}, ""},
		{"missing export is not a red", map[string]string{"package.json": pkg, "calc.js": calc,
			"__tests__/calc.test.js": test("test('adds wrong', () => { expect(add(1, 2)).toBe(4) })\n"),
			"__tests__/sub.test.js":  "import { sub } from '../calc.js'\ntest('subtracts', () => { expect(sub(3, 2)).toBe(1) })\n"},
			testrun.Broken, 0, []string{"__tests__/calc.test.js > adds wrong", "__tests__/sub.test.js"}, "does not provide an export named 'sub'"},
	})
}

func TestCargoRunner(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "cargo")
	manifest := "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"
	lib := "pub fn add(a: i32, b: i32) -> i32 { a + b }\n"
	runCases(t, "cargo", testrun.Options{}, nil, []runnerCase{
		{"green", map[string]string{"Cargo.toml": manifest,
			"src/lib.rs":  lib + "#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    fn adds() { assert_eq!(add(1, 2), 3); }\n    #[test]\n    #[ignore]\n    fn later() {}\n}\n",
			"tests/it.rs": "#[test]\nfn adds_from_outside() { assert_eq!(calc::add(2, 2), 4); }\n"},
			testrun.Pass, 2, nil, ""},
		{"red", map[string]string{"Cargo.toml": manifest,
			"src/lib.rs":  lib + "#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    fn adds() { assert_eq!(add(1, 2), 3); }\n}\n",
			"tests/it.rs": "#[test]\nfn adds_wrong() { assert_eq!(calc::add(1, 2), 4, \"want four\"); }\n"},
			testrun.Fail, 1, []string{"tests/it.rs::adds_wrong"}, ""},
		{"missing function is not a red", map[string]string{"Cargo.toml": manifest, "src/lib.rs": lib,
			"tests/it.rs": "#[test]\nfn subtracts() { assert_eq!(calc::sub(3, 2), 1); }\n"},
			testrun.Broken, 0, nil, "tests/it.rs:2:35: error[E0425]: cannot find function `sub` in crate `calc`"},
		{"no tests", map[string]string{"Cargo.toml": manifest, "src/lib.rs": lib},
			testrun.NoTests, 0, nil, ""},
		// A workspace whose root is a package: cargo test there would test
		// the root package alone.
		{"red in a member of a workspace", map[string]string{"Cargo.toml": manifest + "\n[workspace]\nmembers = [\"crates/mul\"]\n", "src/lib.rs": lib,
			"crates/mul/Cargo.toml":   "[package]\nname = \"mul\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
			"crates/mul/src/lib.rs":   "pub fn mul(a: i32, b: i32) -> i32 { a + b }\n",
			"crates/mul/tests/mul.rs": "#[test]\nfn multiplies() { assert_eq!(mul::mul(3, 4), 12); }\n#[test]\nfn by_two() { assert_eq!(mul::mul(2, 2), 4); }\n"},
			testrun.Fail, 1, []string{"tests/mul.rs::multiplies"}, ""},
		{"virtual workspace", map[string]string{"Cargo.toml": "[workspace]\nmembers = [\"crates/*\"]\nresolver = \"2\"\n",
			"crates/calc/Cargo.toml": manifest, "crates/calc/src/lib.rs": lib + "#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() { assert_eq!(super::add(1, 2), 3); }\n}\n",
			"crates/calc-cli/Cargo.toml":     "[package]\nname = \"calc-cli\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\ncalc = { path = \"../calc\" }\n",
			"crates/calc-cli/src/lib.rs":     "pub fn twice(a: i32) -> i32 { calc::add(a, a) }\n",
			"crates/calc-cli/tests/twice.rs": "#[test]\nfn doubles() { assert_eq!(calc_cli::twice(2), 4); }\n"},
			testrun.Pass, 2, nil, ""},
		{"default members are what the workspace tests", map[string]string{"Cargo.toml": manifest + "\n[workspace]\nmembers = [\"crates/slow\"]\ndefault-members = [\".\"]\n",
			"src/lib.rs":             lib + "#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() { assert_eq!(super::add(1, 2), 3); }\n}\n",
			"crates/slow/Cargo.toml": "[package]\nname = \"slow\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
			"crates/slow/src/lib.rs": "#[cfg(test)]\nmod tests {\n    #[test]\n    fn fails() { assert!(false); }\n}\n"},
			testrun.Pass, 1, nil, ""},
	})
}

// A JUnit report from any command decides the outcome.
func TestJUnitReportRunner(t *testing.T) {
	t.Parallel()
	report := func(cases string) string {
		return "<?xml version=\"1.0\"?>\n<testsuites><testsuite name=\"calc\" tests=\"2\">" + cases + "</testsuite></testsuites>\n"
	}
	write := func(xml string) string {
		return "cat > build/report.xml <<'EOF'\n" + xml + "EOF\n"
	}
	tests := []struct {
		name   string
		script string
		exists string // a report left by an earlier run
		want   testrun.Outcome
		failed []string
		errs   string
	}{
		{"green", write(report(`<testcase classname="CalcTest" name="adds"/>`)), "", testrun.Pass, nil, ""},
		{"red", write(report(`<testcase classname="CalcTest" name="adds"/><testcase classname="CalcTest" name="subtracts"><failure message="expected 1 but was 5" type="AssertionError">at CalcTest.java:9</failure></testcase>`)) + "exit 1\n",
			"", testrun.Fail, []string{"CalcTest > subtracts"}, ""},
		{"error is not a red", write(report(`<testcase classname="CalcTest" name="adds"><failure message="no"/></testcase><testcase classname="CalcTest" name="db"><error message="connection refused" type="IOException"/></testcase>`)) + "exit 1\n",
			"", testrun.Broken, []string{"CalcTest > adds", "CalcTest > db"}, "connection refused"},
		{"suite error outside any case", write(`<testsuite name="CalcTest" tests="1" errors="1" failures="0"><testcase classname="CalcTest" name="adds"/></testsuite>`) + "exit 1\n",
			"", testrun.Broken, nil, "suite CalcTest: 1 errors outside any test case"},
		{"zero tests", write(report("")), "", testrun.NoTests, nil, ""},
		{"build fails before any report", "echo 'Main.java:3: error: cannot find symbol' >&2\nexit 1\n", "", testrun.Broken, nil, "Main.java:3: error: cannot find symbol"},
		{"stale report is not read", "exit 0\n", report(`<testcase classname="CalcTest" name="adds"/>`), testrun.Error, nil, "left from an earlier run"},
		{"passing report but failing command", write(report(`<testcase classname="CalcTest" name="adds"/>`)) + "exit 3\n", "", testrun.Error, nil, ""},
		{"a suite the report leaves out", write(report(`<testcase classname="" name="adds wrong"><failure>expected 4</failure></testcase>`)) +
			"printf 'FAIL ./sub.test.js\\n  \\033[1m\\342\\227\\217 Test suite failed to run\\033[22m\\n\\n    Cannot find module ./sub from sub.test.js\\n' >&2\nexit 1\n",
			"", testrun.Broken, []string{"calc > adds wrong"}, "Cannot find module ./sub from sub.test.js"},
		{"a build failure the report leaves out", write(report(`<testcase classname="calc" name="TestAdd"><failure>want 4</failure></testcase>`)) +
			"printf 'FAIL\\texample.com/calc/sub [build failed]\\n'\nexit 1\n", "", testrun.Broken, []string{"calc > TestAdd"}, "[build failed]"},
		{"report cut short", "printf '<testsuites><testsuite name=\"x\"><testcase name=\"a\">' > build/report.xml\nexit 1\n", "", testrun.Broken, nil, "not valid JUnit XML"},
		{"command not found", "no-such-runner-azero\n", "", testrun.Error, nil, "no report"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			testenv.WriteFiles(t, dir, map[string]string{"run-tests.sh": tt.script, "build/.keep": ""})
			if tt.exists != "" {
				testenv.WriteFiles(t, dir, map[string]string{"build/report.xml": tt.exists})
			}
			r, err := testrun.New("junit", sandboxed(t, testrun.Options{TestCmd: "sh run-tests.sh", Report: "junit:build/report.xml"}))
			if err != nil {
				t.Fatal(err)
			}
			res, err := r.Run(t.Context(), dir)
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != tt.want || !slices.Equal(res.FailedTests, tt.failed) {
				t.Fatalf("outcome %s failed %q, want %s %q (%s)\nerrors %q\n%s", res.Outcome, res.FailedTests, tt.want, tt.failed, res.Summary, res.Errors, res.Output)
			}
			if tt.errs != "" && !containsLine(res.Errors, tt.errs) {
				t.Errorf("errors %q lack %q", res.Errors, tt.errs)
			}
		})
	}
}

// Node's own JUnit reporter through --test-cmd and --report: a real
// producer read by the generic adapter.
func TestJUnitReportFromNode(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "node")
	dir := t.TempDir()
	testenv.WriteFiles(t, dir, map[string]string{
		"calc.test.mjs": "import { test } from 'node:test'\nimport assert from 'node:assert/strict'\ntest('adds', () => { assert.equal(1 + 2, 3) })\ntest('adds wrong', () => { assert.equal(1 + 2, 4) })\n",
	})
	r, err := testrun.New("junit", sandboxed(t, testrun.Options{
		TestCmd: "node --test --test-reporter=junit --test-reporter-destination=junit.xml",
		Report:  "junit:junit.xml",
	}))
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Run(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != testrun.Fail || res.Passed != 1 || !slices.Equal(res.FailedTests, []string{"adds wrong"}) ||
		!strings.Contains(res.Failures[0].Message, "3 !== 4") {
		t.Fatalf("outcome %s passed %d failed %q failures %+v\n%s", res.Outcome, res.Passed, res.FailedTests, res.Failures, res.Output)
	}
}

// globalNodeModule finds a package installed globally with npm (as
// .ci/run installs them) and links it into the project's node_modules.
func globalNodeModule(t *testing.T, dir, name string) {
	t.Helper()
	npm := testenv.RequireTool(t, "npm")
	root, err := exec.Command(npm, "root", "-g").Output()
	if err != nil {
		t.Fatalf("npm root -g: %v", err)
	}
	pkg := filepath.Join(strings.TrimSpace(string(root)), name)
	if _, err := os.Stat(filepath.Join(pkg, "package.json")); err != nil {
		msg := name + " is not installed (npm install -g " + name + ")"
		if os.Getenv("AZERO_REQUIRE_TOOLS") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if err := os.MkdirAll(filepath.Join(dir, "node_modules"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(pkg, filepath.Join(dir, "node_modules", name)); err != nil {
		t.Fatal(err)
	}
}

// jest-junit, the JUnit reporter most jest projects use, leaves a test
// file that failed to load out of its report unless told otherwise: the
// report shows only the other files' failures, and jest's console says
// what the report does not. That is not a red.
func TestJUnitReportFromJestJunit(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "jest")
	cmd := "JEST_JUNIT_OUTPUT_DIR=build jest --ci --reporters=default --reporters=jest-junit"
	calc := "exports.add = (a, b) => a + b\n"
	tests := []struct {
		name   string
		files  map[string]string
		want   testrun.Outcome
		failed []string
		errs   string
	}{
		{"red", map[string]string{"calc.test.js": "const { add } = require('./calc')\ntest('adds', () => expect(add(1, 2)).toBe(3))\ntest('adds wrong', () => expect(add(1, 2)).toBe(4))\n"},
			testrun.Fail, []string{"adds wrong"}, ""},
		{"a file that cannot load beside a red one", map[string]string{
			"calc.test.js": "const { add } = require('./calc')\ntest('adds wrong', () => expect(add(1, 2)).toBe(4))\n",
			"sub.test.js":  "const { sub } = require('./sub')\ntest('subtracts', () => expect(sub(3, 2)).toBe(1))\n"},
			testrun.Broken, []string{"adds wrong"}, "Cannot find module './sub' from 'sub.test.js'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			testenv.WriteFiles(t, dir, tt.files)
			testenv.WriteFiles(t, dir, map[string]string{"package.json": `{"name": "calc"}`, "calc.js": calc})
			globalNodeModule(t, dir, "jest-junit")
			r, err := testrun.New("junit", sandboxed(t, testrun.Options{TestCmd: cmd, Report: "junit:build/junit.xml"}))
			if err != nil {
				t.Fatal(err)
			}
			res, err := r.Run(t.Context(), dir)
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != tt.want || !slices.Equal(res.FailedTests, tt.failed) {
				t.Fatalf("outcome %s failed %q, want %s %q (%s)\nerrors %q\n%s", res.Outcome, res.FailedTests, tt.want, tt.failed, res.Summary, res.Errors, res.Output)
			}
			if tt.errs != "" && !containsLine(res.Errors, tt.errs) {
				t.Errorf("errors %q lack %q", res.Errors, tt.errs)
			}
			if tt.want == testrun.Broken && !res.MissingCode() {
				t.Errorf("a missing module is not seen as missing code: errors %q", res.Errors)
			}
		})
	}
}

func TestNewRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		kind string
		opts testrun.Options
		want string
	}{
		{"unknown kind", "mocha", testrun.Options{}, "unknown test runner"},
		{"junit without report", "junit", testrun.Options{TestCmd: "make test"}, "--report junit:PATH"},
		{"report without command", "go", testrun.Options{Report: "junit:out.xml"}, "--test-cmd"},
		{"report without path", "junit", testrun.Options{TestCmd: "make test", Report: "junit"}, "FORMAT:PATH"},
		{"unknown report format", "junit", testrun.Options{TestCmd: "make test", Report: "tap:out.tap"}, "unknown format"},
	}
	for _, tt := range tests {
		_, err := testrun.New(tt.kind, tt.opts)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: New = %v, want an error about %q", tt.name, err, tt.want)
		}
	}
}

// cargo-nextest cannot be installed here (it is not in Debian and crates
// are out of reach), so a stand-in plays its part of the contract: cargo
// finds `cargo-nextest` on PATH, azero's tool config asks for a JUnit
// report, and nextest writes it under the target directory's
// nextest/default/. The stand-in reads the path from the tool config as
// nextest would, so this checks azero's side of the wiring.
func TestCargoNextestReport(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "cargo")
	bin := t.TempDir()
	testenv.WriteFiles(t, bin, map[string]string{"cargo-nextest": `#!/bin/sh
# cargo nextest run --no-fail-fast --tool-config-file azero:FILE
[ "$1" = nextest ] && [ "$2" = run ] || { echo "unexpected arguments: $*" >&2; exit 2; }
config=""
while [ $# -gt 0 ]; do
  case "$1" in --tool-config-file) config="${2#azero:}"; shift ;; esac
  shift
done
path=$(sed -n 's/^path = "\(.*\)"$/\1/p' "$config")
[ -n "$path" ] || { echo "no junit path in $config" >&2; exit 2; }
mkdir -p "$CARGO_TARGET_DIR/nextest/default"
cat > "$CARGO_TARGET_DIR/nextest/default/$path" <<'EOF2'
<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="nextest-run" tests="2" failures="1" errors="0">
<testsuite name="calc" tests="2" failures="1" errors="0">
<testcase name="tests::adds" classname="calc"/>
<testcase name="tests::adds_wrong" classname="calc"><failure type="test failure">thread 'tests::adds_wrong' panicked at src/lib.rs:8:23</failure></testcase>
</testsuite>
</testsuites>
EOF2
exit 100
`})
	if err := os.Chmod(filepath.Join(bin, "cargo-nextest"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	lookPath := func(name string) (string, error) {
		if name == "cargo-nextest" {
			return filepath.Join(bin, name), nil
		}
		return exec.LookPath(name)
	}
	dir := t.TempDir()
	testenv.WriteFiles(t, dir, map[string]string{"Cargo.toml": "[package]\nname = \"calc\"\nversion = \"0.1.0\"\n", "src/lib.rs": ""})
	// The stand-in lies outside the places a sandbox reads: this one may.
	r, _ := testrun.New("cargo", sandboxedWith(t, sandbox.Config{ReadOnly: []string{bin}}, testrun.Options{Environ: env, LookPath: lookPath}))
	res, err := r.Run(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != testrun.Fail || res.Passed != 1 || !slices.Equal(res.FailedTests, []string{"calc > tests::adds_wrong"}) {
		t.Fatalf("outcome %s passed %d failed %q (%s)\n%s", res.Outcome, res.Passed, res.FailedTests, res.Summary, res.Output)
	}
	if !slices.Contains(res.Command, "nextest") {
		t.Errorf("command %q did not run nextest", res.Command)
	}
}
