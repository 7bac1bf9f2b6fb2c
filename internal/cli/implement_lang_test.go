package cli

// End-to-end runs of `azero implement` in every language it runs the tests
// of besides Go and Python (issue 16): node's test runner, vitest (with
// TypeScript checked by tsc), jest through the project's `npm test`,
// cargo, and a command writing a JUnit XML report. Each is the real azero
// process on a real pseudo-terminal, the real tool on a tiny project, and
// the offline scripted coder, driven to the merge. On the way every run
// passes each gate the issue asks about: a build or collection error that
// is not a red (the coder is asked for stubs, or for the tests again), zero
// tests that are neither a red nor a green, then a real red and a green;
// lint per language; the diff review and the human's approve.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
	"github.com/azero-dev/azero/internal/testrun"
)

// langRun is one project and what its run must show.
type langRun struct {
	name  string
	tools []string
	files map[string]string // the committed project, docs/design.md included
	// installed are npm packages installed globally (as .ci/run does) that
	// the project has in its node_modules, which git ignores.
	installed []string
	runner    string   // the runner kind azero must choose
	args      []string // after implement --lld docs/design.md
	replies   []string // the coder's, in turn order
	tests     string   // the test results the run reported, node:outcome
	prompts   []promptWant
	lint      string // in the lint step's report
	commit    string // the merge commit's files, git show --name-status
	// passes: tests passing in the checkout after the merge, when it is
	// run there too (0: not run; the green run in the worktree stands).
	passes int
}

// promptWant is a text the nth prompt (from 1) of a purpose must hold.
type promptWant struct {
	purpose string // scaffold, stub, implement
	nth     int
	want    string
}

// design is a design document with a Files Changed table of rows
// "path|Change".
func design(title string, rows ...string) string {
	var b strings.Builder
	b.WriteString("# " + title + "\n\n## 2.1 Files Changed\n\n| File | Change Type | Description |\n|---|---|---|\n")
	for _, r := range rows {
		path, change, _ := strings.Cut(r, "|")
		b.WriteString("| `" + path + "` | " + change + " | |\n")
	}
	return b.String()
}

// fenced is a reply as a model writes a whole file.
func fenced(lang, body string) string { return "```" + lang + "\n" + body + "```\n" }

const nodeCheckLint = "node --check"

func langRuns() []langRun {
	nodeCalc := "export function add(a, b) {\n  return a + b\n}\n"
	nodeTest := "import { test } from 'node:test'\nimport assert from 'node:assert/strict'\n"
	manifest := "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"
	rustAdd := "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n"
	return []langRun{
		{
			name: "node", tools: []string{"node"}, runner: testrun.KindNode,
			files: map[string]string{
				"package.json":   `{"name": "calc", "type": "module", "scripts": {"test": "node --test"}}` + "\n",
				"calc.js":        nodeCalc,
				"docs/design.md": design("31 - Feature: multiply", "calc.test.js|Add", "calc.js|Modify"),
			},
			replies: []string{
				// A named import of what calc.js lacks: the file cannot load.
				fenced("js", nodeTest+"import { add, multiply } from './calc.js'\n\ntest('adds', () => { assert.equal(add(2, 3), 5) })\ntest('multiplies', () => { assert.equal(multiply(3, 4), 12) })\n"),
				fenced("js", nodeCalc+"\nexport function multiply(a, b) {\n  throw new Error('not implemented')\n}\n"),
				// Code that ends the test process before any test runs.
				fenced("js", "process.exit(0)\n\n"+nodeCalc+"\nexport function multiply(a, b) {\n  return a * b\n}\n"),
				fenced("js", nodeCalc+"\nexport function multiply(a, b) {\n  return a * b\n}\n"),
			},
			tests: "baseline:no_tests red:broken red:fail green:no_tests green:pass",
			prompts: []promptWant{
				{"stub", 1, "does not provide an export named 'multiply'"},
				{"implement", 2, "(no_tests): no tests ran"},
			},
			lint: nodeCheckLint, commit: "M\tcalc.js\nA\tcalc.test.js", passes: 2,
		},
		{
			name: "vitest with TypeScript", tools: []string{"node", "npm", "tsc"}, installed: []string{"vitest"}, runner: testrun.KindVitest,
			files: map[string]string{
				"package.json": `{"name": "slug", "type": "module", "scripts": {"test": "vitest"}, "devDependencies": {"vitest": "^4"}}` + "\n",
				".gitignore":   "node_modules/\n",
				"tsconfig.json": `{"compilerOptions": {"target": "ES2022", "module": "ESNext", "moduleResolution": "Bundler",` +
					` "strict": true, "noEmit": true, "skipLibCheck": true}, "include": ["src"]}` + "\n",
				"src/index.ts":   "export const name = 'slug'\n",
				"docs/design.md": design("32 - Feature: slugify", "src/slug.test.ts|Add", "src/slug.ts|Add"),
			},
			replies: []string{
				// Only a planned test: zero tests ran.
				fenced("ts", "import { it } from 'vitest'\n\nit.todo('slugifies a title')\n"),
				fenced("ts", "import { describe, it, expect } from 'vitest'\nimport { slugify } from './slug'\n\ndescribe('slugify', () => {\n  it('joins lower-case words with dashes', () => {\n    expect(slugify('Hello World')).toBe('hello-world')\n  })\n})\n"),
				fenced("ts", "export function slugify(title: string): string {\n  throw new Error('not implemented: ' + title)\n}\n"),
				fenced("ts", "export function slugify(title: string): string {\n  return title.toLowerCase().split(' ').join('-')\n}\n"),
			},
			tests: "baseline:no_tests red:no_tests red:broken red:fail green:pass",
			prompts: []promptWant{
				{"scaffold", 2, "No test ran"},
				{"stub", 1, "Cannot find module './slug'"},
			},
			lint: "tsc --noEmit", commit: "A\tsrc/slug.test.ts\nA\tsrc/slug.ts",
		},
		{
			name: "jest through npm test", tools: []string{"node", "npm"}, installed: []string{"jest"}, runner: testrun.KindJest,
			files: map[string]string{
				"package.json":                `{"name": "wordcount", "private": true, "scripts": {"test": "jest"}, "devDependencies": {"jest": "^30"}}` + "\n",
				".gitignore":                  "node_modules/\n",
				"lib/text.js":                 "exports.words = (s) => s.split(/\\s+/).filter(Boolean)\n",
				"__tests__/fixtures/text.txt": "one two  three\n",
				"docs/design.md":              design("33 - Feature: count words", "__tests__/count.test.js|Add", "lib/count.js|Add"),
			},
			replies: []string{
				fenced("js", "test.todo('counts the words of a text')\n"),
				fenced("js", "const { countWords } = require('../lib/count')\n\ntest('counts the words of a text', () => {\n  expect(countWords('one two  three')).toBe(3)\n})\n"),
				fenced("js", "exports.countWords = () => 0\n"),
				fenced("js", "const { words } = require('./text')\n\nexports.countWords = (s) => words(s).length\n"),
			},
			tests: "baseline:no_tests red:no_tests red:broken red:fail green:pass",
			prompts: []promptWant{
				{"scaffold", 2, "No test ran"},
				{"stub", 1, "Cannot find module '../lib/count' from '__tests__/count.test.js'"},
			},
			lint: nodeCheckLint, commit: "A\t__tests__/count.test.js\nA\tlib/count.js",
		},
		{
			name: "cargo", tools: []string{"cargo"}, runner: testrun.KindCargo,
			files: map[string]string{
				"Cargo.toml":          manifest,
				"Cargo.lock":          "# This file is automatically @generated by Cargo.\n# It is not intended for manual editing.\nversion = 4\n\n[[package]]\nname = \"calc\"\nversion = \"0.1.0\"\n",
				"src/lib.rs":          rustAdd,
				"tests/common/mod.rs": "pub const SAMPLES: [(i32, i32); 2] = [(3, 4), (0, 9)];\n",
				"docs/design.md":      design("34 - Feature: multiply", "tests/multiply.rs|Add", "src/lib.rs|Modify"),
			},
			replies: []string{
				fenced("rust", "#[test]\n#[ignore = \"multiply is not written yet\"]\nfn multiplies() {}\n"),
				fenced("rust", "#[test]\nfn multiplies() {\n    assert_eq!(calc::multiply(3, 4), 12);\n}\n"),
				fenced("rust", rustAdd+"\npub fn multiply(_a: i32, _b: i32) -> i32 {\n    0\n}\n"),
				fenced("rust", rustAdd+"\npub fn multiply(a: i32, b: i32) -> i32 {\n    a * b\n}\n"),
			},
			tests: "baseline:no_tests red:no_tests red:broken red:fail green:pass",
			prompts: []promptWant{
				{"scaffold", 2, "No test ran"},
				{"stub", 1, "cannot find function `multiply` in crate `calc`"},
			},
			lint: "cargo", commit: "M\tsrc/lib.rs\nA\ttests/multiply.rs",
		},
		{
			// No --runner: a command with its report needs none.
			name: "junit report of node's runner", tools: []string{"node"}, runner: testrun.KindJUnit,
			args: []string{"--test-cmd", "mkdir -p build && node --test --test-reporter=spec --test-reporter-destination=stdout --test-reporter=junit --test-reporter-destination=build/junit.xml",
				"--report", "junit:build/junit.xml"},
			files: map[string]string{
				"calc.mjs":         nodeCalc,
				"test/helpers.mjs": "export const samples = [[3, 4, 12], [0, 9, 0]]\n",
				"docs/design.md":   design("35 - Feature: multiply", "test/calc.test.mjs|Add", "calc.mjs|Modify"),
			},
			replies: []string{
				fenced("js", nodeTest+"import * as calc from '../calc.mjs'\n\ntest('multiplies', () => { assert.equal(calc.multiply(3, 4), 12) }\n"),
				fenced("js", nodeTest+"import * as calc from '../calc.mjs'\nimport { samples } from './helpers.mjs'\n\ntest('multiplies', () => {\n  for (const [a, b, product] of samples) assert.equal(calc.multiply(a, b), product)\n})\n"),
				fenced("js", "process.exit(0)\n\n"+nodeCalc+"\nexport function multiply(a, b) {\n  return a * b\n}\n"),
				fenced("js", nodeCalc+"\nexport function multiply(a, b) {\n  return a * b\n}\n"),
			},
			tests: "baseline:no_tests red:broken red:fail green:no_tests green:pass",
			prompts: []promptWant{
				{"scaffold", 2, "could not run"},
				{"scaffold", 2, "SyntaxError"},
			},
			lint: nodeCheckLint, commit: "M\tcalc.mjs\nA\ttest/calc.test.mjs", passes: 1,
		},
	}
}

func TestImplementEveryRunnerToTheMerge(t *testing.T) {
	t.Parallel()
	for _, tt := range langRuns() {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, tool := range tt.tools {
				testenv.RequireTool(t, tool)
			}
			repo := testenv.NewRepo(t, tt.files)
			for _, name := range tt.installed {
				installGlobal(t, repo, name)
			}
			statusBefore := testenv.Git(t, repo, "status", "--porcelain", "--ignored")
			beforeRefs := testenv.Refs(t, repo)
			state := t.TempDir()
			args := append([]string{"implement", "--lld", "docs/design.md"}, tt.args...)
			screen := startAzero(t, state, repo, implementEnv(state, coderScript(t, tt.replies...)), args...)
			waitWhileRunning(t, screen, "Nothing is committed unless you type approve")
			screen.Type(t, "approve")
			waitWhileRunning(t, screen, "to merge it")
			screen.Type(t, "approve")
			if code := screen.exit(t); code != 0 {
				t.Fatalf("exit %d, want 0\n%s", code, screen.Text())
			}

			r, hist := runOf(t, state)
			// Every red follows a scaffold (tests or stubs), every green an
			// implementation.
			want := "worktree:ok baseline:ok " + strings.Repeat("scaffold:ok red:ok ", strings.Count(tt.tests, "red:")) +
				strings.Repeat("implement:ok green:ok ", strings.Count(tt.tests, "green:")) +
				"lint:ok diff_review:ok human_review:ok commit:ok merge:ok cleanup:ok END:done"
			if got := testenv.NodePath(hist); got != want {
				t.Errorf("path:\n got %s\nwant %s", got, want)
			}
			var s struct {
				Runner string `json:"runner"`
				Result string `json:"result"`
			}
			if err := json.Unmarshal(r.State, &s); err != nil || s.Runner != tt.runner || s.Result != "merged" || r.Status != store.StatusDone {
				t.Errorf("runner %q result %q status %s (%v), want %q merged done", s.Runner, s.Result, r.Status, err, tt.runner)
			}
			results, lint := reported(t, state, repo, r.ID)
			if results != tt.tests {
				t.Errorf("test results:\n got %s\nwant %s", results, tt.tests)
			}
			if !strings.Contains(lint, tt.lint) {
				t.Errorf("lint step %q did not run %q", lint, tt.lint)
			}
			checkPrompts(t, state, r.ID, tt.runner, tt.prompts)

			// The merge holds exactly the design's files: no report, lock
			// file, build product or dependency came with it.
			if got := strings.TrimSpace(testenv.Git(t, repo, "show", "--format=", "--name-status", "HEAD")); got != tt.commit {
				t.Errorf("merged files:\n%s\nwant\n%s", got, tt.commit)
			}
			if got := testenv.Refs(t, repo); got != beforeRefs {
				t.Errorf("branches or worktrees left behind:\n%s", got)
			}
			if _, err := os.Stat(filepath.Join(state, "worktrees", r.ID)); !os.IsNotExist(err) {
				t.Error("worktree left behind")
			}
			if after := testenv.Git(t, repo, "status", "--porcelain", "--ignored"); after != statusBefore {
				t.Errorf("the checkout changed besides the merge:\n%s\n---\n%s", statusBefore, after)
			}
			if tt.passes == 0 {
				return
			}
			// The merged code passes in the checkout, run by the same
			// runner, which leaves nothing behind there either.
			runner, err := testrun.New(tt.runner, testrun.Options{TestCmd: flagValue(tt.args, "--test-cmd"), Report: flagValue(tt.args, "--report"), Sandbox: testSandbox(t)})
			if err != nil {
				t.Fatal(err)
			}
			res, err := runner.Run(t.Context(), repo)
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != testrun.Pass || res.Passed != tt.passes {
				t.Errorf("after the merge: %s, want %d passing\n%s", res.Summary, tt.passes, res.Output)
			}
			if after := testenv.Git(t, repo, "status", "--porcelain", "--ignored"); after != statusBefore {
				t.Errorf("the tests left files in the checkout:\n%s\n---\n%s", statusBefore, after)
			}
		})
	}
}

// waitWhileRunning waits until the screen shows text, and fails the test
// at once if the process ends first (a run that went another way).
func waitWhileRunning(t *testing.T, s *session, text string) {
	t.Helper()
	deadline := time.Now().Add(testenv.Patience)
	for !strings.Contains(s.Text(), text) {
		select {
		case <-s.done:
			select { // everything it wrote, read
			case <-s.Drained():
			case <-time.After(testenv.Patience):
			}
			if strings.Contains(s.Text(), text) {
				return
			}
			t.Fatalf("azero exited %d before showing %q; screen:\n%s", s.code, text, s.Text())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the screen never showed %q; screen:\n%s", text, s.Text())
		}
	}
}

// installGlobal gives the project the npm package name, installed
// globally (as .ci/run does), as `npm install` would: node_modules/NAME
// and its command in node_modules/.bin. The project's .gitignore ignores
// node_modules.
func installGlobal(t *testing.T, dir, name string) {
	t.Helper()
	bin := testenv.RequireTool(t, name)
	real, err := filepath.EvalSymlinks(bin)
	if err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Dir(real)
	for filepath.Base(pkg) != name || filepath.Base(filepath.Dir(pkg)) != "node_modules" {
		if pkg == filepath.Dir(pkg) {
			t.Fatalf("%s (%s) is not inside a node_modules/%s directory", bin, real, name)
		}
		pkg = filepath.Dir(pkg)
	}
	if err := os.MkdirAll(filepath.Join(dir, "node_modules", ".bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{filepath.Join("node_modules", name): pkg, filepath.Join("node_modules", ".bin", name): real} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
}

// reported reads the run's events through `azero runs show --events
// --json`: the outcome of every test run (node:outcome) and what the lint
// step said.
func reported(t *testing.T, state, dir, runID string) (results, lint string) {
	t.Helper()
	res := runAzeroIn(t, state, dir, nil, "runs", "show", runID, "--events", "--json")
	if res.code != 0 {
		t.Fatalf("runs show: exit %d\n%s", res.code, res.stderr)
	}
	var out struct {
		Events []struct {
			Node string `json:"node"`
			Kind string `json:"kind"`
			Text string `json:"text"`
			Data struct {
				Outcome string `json:"outcome"`
			} `json:"data"`
		} `json:"events"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &out); err != nil {
		t.Fatalf("runs show --json: %v\n%s", err, res.stdout)
	}
	var got []string
	for _, e := range out.Events {
		switch {
		case e.Kind == "test_result":
			got = append(got, e.Node+":"+e.Data.Outcome)
		case e.Node == "lint" && strings.HasPrefix(e.Text, "lint"):
			lint += e.Text + "\n"
		}
	}
	return strings.Join(got, " "), lint
}

// checkPrompts checks the prompts the coder was sent, kept in the run's
// lineage: each holds the runner's conventions, and the ones that asked
// again hold what the runner said.
func checkPrompts(t *testing.T, state, runID, runner string, wants []promptWant) {
	t.Helper()
	dir := filepath.Join(state, "runs", runID)
	all, _ := filepath.Glob(filepath.Join(dir, "*-prompt-*.md"))
	if len(all) == 0 {
		t.Fatalf("no prompts in %s", dir)
	}
	for _, p := range all {
		text, _ := os.ReadFile(p)
		if !strings.Contains(string(text), testrun.Conventions(runner)) {
			t.Errorf("%s lacks the %s runner's conventions", filepath.Base(p), runner)
		}
	}
	for _, w := range wants {
		prompts, _ := filepath.Glob(filepath.Join(dir, "*-prompt-"+w.purpose+".md"))
		sort.Strings(prompts)
		if len(prompts) < w.nth {
			t.Errorf("%d %s prompt(s), want at least %d", len(prompts), w.purpose, w.nth)
			continue
		}
		if text, _ := os.ReadFile(prompts[w.nth-1]); !strings.Contains(string(text), w.want) {
			t.Errorf("%s prompt %d lacks %q:\n%s", w.purpose, w.nth, w.want, text)
		}
	}
}

// flagValue is the value after flag in args, or "".
func flagValue(args []string, flag string) string {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == flag {
			return args[i+1]
		}
	}
	return ""
}

// Code that ends a test process in the middle of a test makes node count
// the rest as a pass (the test file "passed" with no tests); the green
// gate sees that fewer tests ran than at the red gate and sends the code
// back. Without a terminal the run then stops at the diff review (exit 3).
func TestImplementTestsThatStopRunningAreNotGreen(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "node")
	calc := "export function add(a, b) {\n  return a + b\n}\n"
	header := "import { test } from 'node:test'\nimport assert from 'node:assert/strict'\nimport * as calc from './calc.js'\n\n"
	repo := testenv.NewRepo(t, map[string]string{
		"package.json":   `{"name": "calc", "type": "module", "scripts": {"test": "node --test"}}` + "\n",
		"calc.js":        calc,
		"add.test.js":    header + "test('adds', () => { assert.equal(calc.add(2, 3), 5) })\n",
		"docs/design.md": design("36 - Feature: multiply", "multiply.test.js|Add", "calc.js|Modify"),
	})
	state := t.TempDir()
	script := coderScript(t,
		fenced("js", header+"test('multiplies', () => { assert.equal(calc.multiply(3, 4), 12) })\n"),
		fenced("js", calc+"\nexport function multiply(a, b) {\n  process.exit(0)\n}\n"),
		fenced("js", calc+"\nexport function multiply(a, b) {\n  return a * b\n}\n"))
	res := runAzeroIn(t, state, repo, implementEnv(state, script), "implement", "--lld", "docs/design.md", "--json")
	if res.code != 3 {
		t.Fatalf("exit %d, want 3\n%s", res.code, res.stderr)
	}
	r, hist := runOf(t, state)
	want := "worktree:ok baseline:ok scaffold:ok red:ok implement:ok green:ok implement:ok green:ok lint:ok diff_review:waiting"
	if got := testenv.NodePath(hist); got != want {
		t.Errorf("path:\n got %s\nwant %s", got, want)
	}
	if results, _ := reported(t, state, repo, r.ID); results != "baseline:pass red:fail green:broken green:pass" {
		t.Errorf("test results: %s", results)
	}
	checkPrompts(t, state, r.ID, testrun.KindNode, []promptWant{{"implement", 2, "only 1 of the 2 tests that ran at the red gate ran"}})
	if r.Status != store.StatusWaiting {
		t.Errorf("status %s, want waiting", r.Status)
	}
}
