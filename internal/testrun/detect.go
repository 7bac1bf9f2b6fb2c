package testrun

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// DetectFiles names the runner the test files call for: go for *_test.go,
// pytest for Python tests, cargo for Rust tests; "" when they do not
// agree, say nothing, or are JavaScript or TypeScript (node, vitest and
// jest share file names: Detect reads the project instead).
func DetectFiles(tests []string) string {
	kind := ""
	for _, t := range tests {
		k := ""
		switch {
		case strings.HasSuffix(t, "_test.go"):
			k = KindGo
		case strings.HasSuffix(t, ".py"):
			k = KindPytest
		case strings.HasSuffix(t, ".rs"):
			k = KindCargo
		}
		if k == "" || (kind != "" && k != kind) {
			return ""
		}
		kind = k
	}
	return kind
}

// DetectProject names the runner for tests in the project in dir: the one
// the test files call for (DetectFiles), else for JavaScript or TypeScript
// tests the one the package.json names even when the project has a go.mod
// or Cargo.toml beside it (a web front end, a native module), else the
// project's (Detect).
func DetectProject(dir string, tests []string) (string, error) {
	if k := DetectFiles(tests); k != "" {
		return k, nil
	}
	js := len(tests) > 0
	for _, t := range tests {
		js = js && fileLanguage(t) == "js"
	}
	if js && exists(filepath.Join(dir, "package.json")) {
		return detectJS(dir)
	}
	return Detect(dir)
}

// Detect guesses the runner of the project in dir from its files: go for a
// go.mod, cargo for a Cargo.toml, for a package.json the runner its test
// script calls (vitest, jest, `node --test`), else the one it depends on,
// else node's own; pytest for Python test configuration or test files.
func Detect(dir string) (string, error) {
	if exists(filepath.Join(dir, "go.mod")) {
		return KindGo, nil
	}
	if exists(filepath.Join(dir, "Cargo.toml")) {
		return KindCargo, nil
	}
	if exists(filepath.Join(dir, "package.json")) {
		return detectJS(dir)
	}
	for _, f := range []string{"pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini", "conftest.py"} {
		if exists(filepath.Join(dir, f)) {
			return KindPytest, nil
		}
	}
	for _, pattern := range []string{"test_*.py", "*_test.py", "tests/test_*.py", "tests/*_test.py"} {
		if m, _ := filepath.Glob(filepath.Join(dir, pattern)); len(m) > 0 {
			return KindPytest, nil
		}
	}
	return "", fmt.Errorf("cannot tell which test runner %s uses: pass --runner (%s)", dir, strings.Join(Kinds(), ", "))
}

// language is what the lint step and the conventions are chosen by.
func language(kind string) string {
	switch kind {
	case KindGo:
		return "go"
	case KindPytest:
		return "python"
	case KindNode, KindVitest, KindJest:
		return "js"
	case KindCargo:
		return "rust"
	}
	return ""
}

// fileLanguage is the language of a source file, or "".
func fileLanguage(name string) string {
	switch path.Ext(name) {
	case ".go":
		return "go"
	case ".py":
		return "python"
	case ".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx":
		return "js"
	case ".rs":
		return "rust"
	}
	return ""
}

// Conventions returns a short text for prompts: how the runner kind runs
// tests and where test files live and how they reach the code, so a model
// writes tests the runner finds. "" for an unknown kind.
func Conventions(kind string) string {
	switch kind {
	case KindGo:
		return "Tests run with `go test ./...`. A test file is NAME_test.go beside the code, in the same package " +
			"(package calc) or the external test package (package calc_test, importing the module path); tests " +
			"are func TestXxx(t *testing.T) using t.Errorf/t.Fatalf, table tests with t.Run for cases. " +
			"A test that calls a function that does not exist does not compile: a broken run, not a red."
	case KindPytest:
		return "Tests run with `python -m pytest` from the project root (so the root is on sys.path). A test file is " +
			"test_NAME.py or NAME_test.py, at the root or under tests/; tests are plain functions test_xxx() using " +
			"assert, fixtures from conftest.py, pytest.mark.parametrize for cases. Import the code by its module path " +
			"from the root (from calc import add, from pkg.mod import f). An import that fails is a collection error, not a red."
	case KindNode:
		return "Tests run with node's built-in runner (`node --test`, Node 20), which finds files named *.test.js, " +
			"*.test.mjs, *.test.cjs, *-test.js, *_test.js, test-*.js, test.js and any .js file under a test/ directory. " +
			"Use `import { test, describe } from 'node:test'` and `import assert from 'node:assert/strict'` in an ES module " +
			"(`const { test } = require('node:test')` in CommonJS); import the code by relative path with its extension ('./calc.js'). Node 20 does not run TypeScript test files. " +
			"A file that fails to load (a missing export) is a broken test file, not a red."
	case KindVitest:
		return "Tests run with vitest (`vitest run`), which finds *.test.{js,ts,jsx,tsx} and *.spec.* files anywhere " +
			"but node_modules. Use `import { describe, it, expect } from 'vitest'` and import the code by relative path " +
			"('./calc' or './calc.js'); TypeScript works without a build step. A file that fails to load is broken, not a red."
	case KindJest:
		return "Tests run with jest, which finds *.test.js / *.spec.js files and any file under __tests__/. describe, " +
			"test/it and expect are globals; import the code with require('./calc') (CommonJS) unless the project's " +
			"jest config sets up ESM or TypeScript (babel-jest, ts-jest). A suite that fails to run (a missing module, " +
			"a syntax error) is broken, not a red."
	case KindCargo:
		return "Tests run with `cargo test`. Unit tests live in the same file as the code in `#[cfg(test)] mod tests { use super::*; ... }`; " +
			"integration tests are files under tests/ (tests/NAME.rs) that use the crate by name (use calc::add;) and see only " +
			"its public items. Tests are #[test] fn xxx() with assert!/assert_eq!. Code that does not compile (an unknown " +
			"function) is a broken run, not a red."
	case KindJUnit:
		return "Tests run with the project's own command, and azero reads the JUnit XML report it writes: write tests " +
			"the way the project's existing tests are written, in the files its runner collects."
	}
	return ""
}

// detectJS names the runner of the package.json in dir: the one its test
// script runs, else the one it depends on, else node's own.
func detectJS(dir string) (string, error) {
	pkg, err := readPackageJSON(dir)
	if err != nil {
		return "", err
	}
	if r, _ := pkg.testRunner(); r != "" {
		return r, nil
	}
	if other := pkg.otherRunner(); other != "" {
		return "", fmt.Errorf("the package.json's test script runs %s, which azero has no runner for: pass --test-cmd with a command "+
			"that writes a JUnit XML report and --report junit:PATH (or --runner to run one of %s)", other, strings.Join(Kinds(), ", "))
	}
	for _, k := range []string{KindVitest, KindJest} {
		if pkg.depends(k) {
			return k, nil
		}
	}
	return KindNode, nil
}

// ProjectConventions is Conventions for the project in dir: the runner's
// conventions followed by what the project itself says about how tests
// reach the code (the crate's name as tests use it, whether JavaScript
// is ESM or CommonJS, the Go module's path, the test script).
func ProjectConventions(dir, kind string) string {
	c := Conventions(kind)
	if c == "" {
		return ""
	}
	var facts []string
	switch language(kind) {
	case "rust":
		facts = rustFacts(dir)
	case "js":
		facts = jsFacts(dir, kind)
	case "go":
		facts = goFacts(dir)
	}
	if len(facts) == 0 {
		return c
	}
	return c + "\n\nIn this project: " + strings.Join(facts, " ")
}

func rustFacts(dir string) []string {
	m := readCargoManifest(dir)
	var facts []string
	switch {
	case m.Package == nil || m.Package.Name == "":
	case m.Lib == nil && !exists(filepath.Join(dir, "src", "lib.rs")) && exists(filepath.Join(dir, "src", "main.rs")):
		facts = append(facts, fmt.Sprintf("the crate %q is a binary (src/main.rs, no library): tests under tests/ cannot use its code; "+
			"its tests live in #[cfg(test)] mod tests inside its files.", m.Package.Name))
	default:
		name := strings.ReplaceAll(m.Package.Name, "-", "_")
		if m.Lib != nil && m.Lib.Name != "" {
			name = m.Lib.Name
		}
		facts = append(facts, fmt.Sprintf("the crate is %q: tests under tests/ use it as `%s` (use %s::...).", m.Package.Name, name, name))
	}
	if m.Workspace != nil && len(m.Workspace.Members) > 0 {
		facts = append(facts, fmt.Sprintf("It is a workspace (members %s): each crate has its own tests/ directory and is used by its own name; every member's tests run.",
			strings.Join(m.Workspace.Members, ", ")))
	}
	return facts
}

func jsFacts(dir, kind string) []string {
	pkg, err := readPackageJSON(dir)
	if err != nil {
		return nil
	}
	var facts []string
	if pkg.Type == "module" {
		facts = append(facts, `package.json says "type": "module": .js files are ES modules (import/export; require is not defined); .cjs files are CommonJS.`)
	} else {
		facts = append(facts, "package.json has no \"type\": \"module\": .js files are CommonJS (require/module.exports); .mjs files are ES modules.")
	}
	if exists(filepath.Join(dir, "tsconfig.json")) {
		facts = append(facts, "TypeScript is type-checked with tsc --noEmit against tsconfig.json: tests must type-check too.")
	}
	if script := pkg.Scripts["test"]; script != "" {
		facts = append(facts, fmt.Sprintf("Its test script is `%s`.", script))
	}
	if _, script := pkg.testRunner(); kind == KindJest && strings.Contains(pkg.Scripts["test"]+" "+pkg.Scripts[script], "--experimental-vm-modules") {
		facts = append(facts, "jest runs ES modules here: the globals describe, test and expect remain; jest.fn and jest.mock come from `import { jest } from '@jest/globals'`.")
	}
	return facts
}

func goFacts(dir string) []string {
	raw, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return nil
	}
	for l := range strings.SplitSeq(string(raw), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "module" {
			return []string{fmt.Sprintf("the module path is %s: an external test package (package NAME_test) imports the package under test as %s/DIR (or %s at the root).",
				strings.Trim(f[1], `"`), strings.Trim(f[1], `"`), strings.Trim(f[1], `"`))}
		}
	}
	return nil
}
