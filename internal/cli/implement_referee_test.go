package cli

// End-to-end runs of `azero implement` about the referee's evidence and
// what the human and the model are shown (issue 23): tests the model's
// reply loses, per language, flagged at the diff review; a revision that
// reaches the test files; a stub that would gut a file refused in sight;
// Add targets in directories that do not exist yet. Real runners, real
// git, the offline scripted coder.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
)

// shown reads `azero runs show RUN --json --events`: the question the run
// waits at and its events.
func shown(t *testing.T, state, dir, runID string) (*human.Question, []event.Event) {
	t.Helper()
	res := runAzeroIn(t, state, dir, nil, "runs", "show", runID, "--json", "--events")
	if res.code != 0 {
		t.Fatalf("runs show: exit %d\n%s", res.code, res.stderr)
	}
	var d struct {
		Question *human.Question `json:"question"`
		Events   []event.Event   `json:"events"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &d); err != nil {
		t.Fatalf("runs show --json: %v\n%s", err, res.stdout)
	}
	return d.Question, d.Events
}

// erosionRun is a project whose existing test file the model's reply
// erodes, and what the diff review must say of it.
type erosionRun struct {
	name    string
	tools   []string
	files   map[string]string
	replies []string
	path    string   // the nodes the run takes, up to the diff review
	eroded  []string // the eroded tests the diff review lists, in order
	lost    []string // lines the test file's banner lists as lost
	events  []string // texts the run's events must hold
}

func erosionRuns() []erosionRun {
	goMod := "module example.com/calc\n\ngo 1.22\n"
	goCalc := "package calc\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n\n// Sub subtracts.\nfunc Sub(a, b int) int { return a - b }\n"
	goTable := func(rows, extra string) string {
		return "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tcases := []struct {\n\t\tname       string\n\t\ta, b, want int\n\t}{\n" + rows +
			"\t}\n\tfor _, c := range cases {\n\t\tt.Run(c.name, func(t *testing.T) {\n\t\t\tif got := Add(c.a, c.b); got != c.want {\n\t\t\t\tt.Errorf(\"Add(%d, %d) = %d, want %d\", c.a, c.b, got, c.want)\n\t\t\t}\n\t\t})\n\t}\n}\n" + extra
	}
	allRows := "\t\t{\"small\", 1, 2, 3},\n\t\t{\"zero\", 0, 0, 0},\n\t\t{\"negative\", -1, -2, -3},\n\t\t{\"mixed\", -1, 2, 1},\n\t\t{\"large\", 1000, 2000, 3000},\n"
	goSub := "\nfunc TestSub(t *testing.T) {\n\tif Sub(3, 1) != 2 {\n\t\tt.Error(\"Sub(3, 1) != 2\")\n\t}\n}\n"
	var mulRows strings.Builder
	for i := range 8 {
		fmt.Fprintf(&mulRows, "\t\t{\"by%d\", %d, 3, %d},\n", i, i, 3*i)
	}
	goMul := "\nfunc TestMul(t *testing.T) {\n\tcases := []struct {\n\t\tname       string\n\t\ta, b, want int\n\t}{\n" + mulRows.String() +
		"\t}\n\tfor _, c := range cases {\n\t\tt.Run(c.name, func(t *testing.T) {\n\t\t\tif got := Mul(c.a, c.b); got != c.want {\n\t\t\t\tt.Errorf(\"Mul(%d, %d) = %d, want %d\", c.a, c.b, got, c.want)\n\t\t\t}\n\t\t})\n\t}\n}\n"
	// The model's tests: two of the five rows of TestAdd kept, TestSub
	// gone, TestMul's eight rows added: 3 passing and 9 failing at red,
	// 12 passing at green, each more than the baseline's 7.
	erodedGo := goTable("\t\t{\"small\", 1, 2, 3},\n\t\t{\"large\", 1000, 2000, 3000},\n", goMul)
	// A stub that guts Add (refused: a stub only adds), then one that
	// keeps the code.
	guttingStub := goCalc[:strings.Index(goCalc, "func Add")] + "func Add(a, b int) int { panic(\"not implemented\") }\n\n// Sub subtracts.\nfunc Sub(a, b int) int { return a - b }\n\n// Mul multiplies.\nfunc Mul(a, b int) int { return 0 }\n"
	stub := goCalc + "\n// Mul multiplies.\nfunc Mul(a, b int) int { return 0 }\n"
	impl := goCalc + "\n// Mul multiplies.\nfunc Mul(a, b int) int { return a * b }\n"

	pyCalc := "\"\"\"A small calculator.\"\"\"\n\n\ndef add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
	pyTests := "import pytest\n\nimport calc\n\n\n@pytest.mark.parametrize(\"a,b,want\", [(1, 2, 3), (0, 0, 0), (-1, 1, 0)])\ndef test_add(a, b, want):\n    assert calc.add(a, b) == want\n\n\ndef test_sub():\n    assert calc.sub(3, 1) == 2\n"
	pyEroded := "import pytest\n\nimport calc\n\n\n@pytest.mark.parametrize(\"a,b,want\", [(1, 2, 3), (-1, 1, 0)])\ndef test_add(a, b, want):\n    assert calc.add(a, b) == want\n\n\n@pytest.mark.parametrize(\"a,b,want\", [(2, 3, 6), (0, 5, 0), (4, 4, 16)])\ndef test_mul(a, b, want):\n    assert calc.mul(a, b) == want\n"

	nodeCalc := "export function add(a, b) {\n  return a + b\n}\n\nexport function sub(a, b) {\n  return a - b\n}\n"
	nodeHead := "import { test } from 'node:test'\nimport assert from 'node:assert/strict'\nimport * as calc from './calc.js'\n\n"
	nodeTests := nodeHead + "test('adds', () => { assert.equal(calc.add(1, 2), 3) })\ntest('subtracts', () => { assert.equal(calc.sub(3, 1), 2) })\n"
	nodeEroded := nodeHead + "test('adds', () => { assert.equal(calc.add(1, 2), 3) })\ntest('multiplies', () => { assert.equal(calc.mul(3, 4), 12) })\ntest('multiplies by zero', () => { assert.equal(calc.mul(0, 4), 0) })\n"

	manifest := "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"
	rsLib := "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\npub fn sub(a: i32, b: i32) -> i32 {\n    a - b\n}\n"
	rsTests := "#[test]\nfn adds() {\n    assert_eq!(calc::add(1, 2), 3);\n}\n\n#[test]\nfn subtracts() {\n    assert_eq!(calc::sub(3, 1), 2);\n}\n"
	rsEroded := "#[test]\nfn adds() {\n    assert_eq!(calc::add(1, 2), 3);\n}\n\n#[test]\nfn multiplies() {\n    assert_eq!(calc::mul(3, 4), 12);\n}\n\n#[test]\nfn multiplies_by_zero() {\n    assert_eq!(calc::mul(0, 4), 0);\n}\n"

	return []erosionRun{
		{
			// The real case of issue 23.
			name: "go: a table test loses three rows and a test function while the counts rise", tools: []string{"go"},
			files: map[string]string{"go.mod": goMod, "calc.go": goCalc, "calc_test.go": goTable(allRows, goSub),
				"docs/design.md": design("41 - Feature: multiply", "calc_test.go|Modify", "calc.go|Modify")},
			replies: []string{fenced("go", erodedGo), fenced("go", guttingStub), fenced("go", stub), fenced("go", impl)},
			path:    "worktree:ok baseline:ok scaffold:ok red:ok scaffold:ok red:ok implement:ok green:ok lint:ok diff_review:waiting",
			eroded: []string{
				"example.com/calc.TestAdd/mixed: passed before the change, missing at red and green",
				"example.com/calc.TestAdd/negative: passed before the change, missing at red and green",
				"example.com/calc.TestAdd/zero: passed before the change, missing at red and green",
				"example.com/calc.TestSub: passed before the change, missing at red and green",
				"calc_test.go: TestSub is no longer declared (removed or renamed)",
			},
			lost:   []string{"-\t\t{\"zero\", 0, 0, 0},", "-\t\t{\"negative\", -1, -2, -3},", "-\t\t{\"mixed\", -1, 2, 1},", "-func TestSub(t *testing.T) {"},
			events: []string{"stub calc.go", "calc.go: the coder's reply was refused (compiling stubs)", "line 4: func Add(a, b int) int { return a + b }"},
		},
		{
			name: "pytest: a parametrized case and a test function", tools: []string{"pytest"},
			files: map[string]string{"calc.py": pyCalc, "test_calc.py": pyTests,
				"docs/design.md": design("42 - Feature: multiply", "test_calc.py|Modify", "calc.py|Modify")},
			replies: []string{fenced("python", pyEroded), fenced("python", pyCalc+"\n\ndef mul(a, b):\n    return a * b\n")},
			path:    "worktree:ok baseline:ok scaffold:ok red:ok implement:ok green:ok lint:ok diff_review:waiting",
			eroded: []string{
				"test_calc.py::test_add[0-0-0]: passed before the change, missing at red and green",
				"test_calc.py::test_sub: passed before the change, missing at red and green",
				"test_calc.py: test_sub is no longer declared (removed or renamed)",
			},
			lost: []string{`-@pytest.mark.parametrize("a,b,want", [(1, 2, 3), (0, 0, 0), (-1, 1, 0)])`, "-def test_sub():"},
		},
		{
			name: "node: a test renamed away", tools: []string{"node"},
			files: map[string]string{"package.json": `{"name": "calc", "type": "module", "scripts": {"test": "node --test"}}` + "\n",
				"calc.js": nodeCalc, "calc.test.js": nodeTests,
				"docs/design.md": design("43 - Feature: multiply", "calc.test.js|Modify", "calc.js|Modify")},
			replies: []string{fenced("js", nodeEroded), fenced("js", nodeCalc+"\nexport function mul(a, b) {\n  return a * b\n}\n")},
			path:    "worktree:ok baseline:ok scaffold:ok red:ok implement:ok green:ok lint:ok diff_review:waiting",
			eroded: []string{
				"subtracts: passed before the change, missing at red and green",
				`calc.test.js: test "subtracts" is no longer declared (removed or renamed)`,
			},
			lost: []string{"-test('subtracts', () => { assert.equal(calc.sub(3, 1), 2) })"},
		},
		{
			name: "cargo: an integration test removed", tools: []string{"cargo"},
			files: map[string]string{"Cargo.toml": manifest, "src/lib.rs": rsLib, "tests/calc.rs": rsTests,
				"docs/design.md": design("44 - Feature: multiply", "tests/calc.rs|Modify", "src/lib.rs|Modify")},
			replies: []string{fenced("rust", rsEroded), fenced("rust", rsLib+"\npub fn mul(_a: i32, _b: i32) -> i32 {\n    0\n}\n"),
				fenced("rust", rsLib+"\npub fn mul(a: i32, b: i32) -> i32 {\n    a * b\n}\n")},
			path: "worktree:ok baseline:ok scaffold:ok red:ok scaffold:ok red:ok implement:ok green:ok lint:ok diff_review:waiting",
			eroded: []string{
				"tests/calc.rs::subtracts: passed before the change, missing at red and green",
				"tests/calc.rs: subtracts is no longer declared (removed or renamed)",
			},
			lost:   []string{"-fn subtracts() {", "-    assert_eq!(calc::sub(3, 1), 2);"},
			events: []string{"stub src/lib.rs"},
		},
	}
}

// TestImplementFlagsErodedTests: the model's test reply loses existing
// tests although the design said to extend the file; the runs' counts
// rise all the same. The diff review lists every lost test (from the
// runner's names at the baseline, red and green, and from the test file's
// declarations), flags the test file with the lines it lost, and, without
// a terminal, waits for a human (exit 3) where it would otherwise pass.
func TestImplementFlagsErodedTests(t *testing.T) {
	t.Parallel()
	for _, tt := range erosionRuns() {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, tool := range tt.tools {
				testenv.RequireTool(t, tool)
			}
			repo, state := testenv.NewRepo(t, tt.files), t.TempDir()
			res := runAzeroIn(t, state, repo, implementEnv(state, coderScript(t, tt.replies...)), "implement", "--lld", "docs/design.md", "--json")
			if res.code != ExitNeedsHuman {
				t.Fatalf("exit %d, want %d\n%s", res.code, ExitNeedsHuman, res.stderr)
			}
			r, hist := runOf(t, state)
			if got := testenv.NodePath(hist); got != tt.path {
				t.Errorf("path:\n got %s\nwant %s", got, tt.path)
			}
			q, events := shown(t, state, repo, r.ID)
			if q == nil || q.Gate != "diff_review" {
				t.Fatalf("waiting at %+v, want the diff review", q)
			}
			if q.Unattended != nil {
				t.Error("the diff review of a change that loses tests may pass unattended")
			}
			var eroded []string
			for _, e := range q.Facts["eroded_tests"].([]any) {
				eroded = append(eroded, e.(string))
			}
			if !slices.Equal(eroded, tt.eroded) {
				t.Errorf("eroded tests in the question's facts:\n%s\nwant\n%s", strings.Join(eroded, "\n"), strings.Join(tt.eroded, "\n"))
			}
			for _, e := range tt.eroded {
				if !strings.Contains(q.Report, "!!   "+e+"\n") {
					t.Errorf("the report does not list %q", e)
				}
			}
			for _, l := range tt.lost {
				if !strings.Contains(q.Report, "!!   "+l+"\n") {
					t.Errorf("the test file's banner does not list the lost line %q:\n%s", l, q.Report)
				}
			}
			if !strings.Contains(q.Prompt, "lost") {
				t.Errorf("prompt %q", q.Prompt)
			}
			var text strings.Builder
			for _, ev := range events {
				text.WriteString(ev.Text + "\n")
			}
			for _, want := range tt.events {
				if !strings.Contains(text.String(), want) {
					t.Errorf("the run's events lack %q:\n%s", want, text.String())
				}
			}
			// `azero runs show` (text) shows the report, eroded tests first.
			show := runAzeroIn(t, state, repo, nil, "runs", "show", r.ID)
			if i := strings.Index(show.stdout, tt.eroded[0]); i < 0 || i > strings.Index(show.stdout, "files changed") {
				t.Errorf("runs show does not list the eroded tests before the change:\n%s", show.stdout)
			}
		})
	}
}

// The diff review's decision records the eroded tests a human approved
// (gate_decision's eroded_tests), and the final review recalls them.
func TestImplementErodedTestsInTheAuditRecord(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "pytest")
	run := erosionRuns()[1]
	repo, state := testenv.NewRepo(t, run.files), t.TempDir()
	env := azeroEnv(state, implementEnv(state, coderScript(t, run.replies...))...)
	screen := startOnTerminal(t, repo, env, os.Args[0], "implement", "--lld", "docs/design.md")
	waitWhileRunning(t, screen, "Nothing is committed unless you type approve")
	if !strings.Contains(screen.Text(), "3 TESTS LOST") {
		t.Errorf("the terminal does not say tests were lost:\n%s", screen.Text())
	}
	screen.Type(t, "approve")
	waitWhileRunning(t, screen, "to merge it")
	if !strings.Contains(screen.Text(), "tests lost (shown at the diff review): test_calc.py::test_add[0-0-0]") {
		t.Errorf("the final review does not recall the lost tests:\n%s", screen.Text())
	}
	screen.Type(t, "abort")
	if code := screen.exit(t); code != ExitRejected {
		t.Fatalf("exit %d\n%s", code, screen.Text())
	}
	recs, _ := audit.Read(filepath.Join(state, audit.FileName))
	found := false
	for _, rec := range recs {
		if rec["event"] == "gate_decision" && rec["gate"] == "diff_review" {
			found = true
			got, _ := json.Marshal(rec["eroded_tests"])
			if rec["decision"] != "APPROVED" || !strings.Contains(string(got), "test_calc.py::test_sub: passed before the change") ||
				!strings.Contains(fmt.Sprint(rec["flagged_files"]), "test_calc.py") || rec["tree"] == nil {
				t.Errorf("the diff review's record: %v", rec)
			}
		}
	}
	if !found {
		t.Error("no gate_decision for the diff review")
	}
	if r, _ := runOf(t, state); r.Status != store.StatusAborted {
		t.Errorf("status %s", r.Status)
	}
}

// TestImplementReviseReachesTheTests: at the final review the human asks
// for a behaviour the tests must check. The coder is asked about every
// file of the change, the test file first: its new test fails on the
// reviewed code (red again), then the code changes and the changelog
// stays as it is ("no change", in the coder's words). The next diff
// review shows the coder's answers and what changed since the last
// review, beside the whole change; the merge holds the revised tests.
func TestImplementReviseReachesTheTests(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "pytest")
	const feedback = "multiply must raise TypeError when it is given a string"
	calc := "\"\"\"A small calculator.\"\"\"\n\n\ndef add(a, b):\n    return a + b\n"
	repo := testenv.NewRepo(t, map[string]string{"calc.py": calc, "CHANGES.md": "# Changes\n",
		"docs/design.md": design("45 - Feature: multiply", "test_calc.py|Add", "calc.py|Modify", "CHANGES.md|Modify")})
	tests := "import calc\n\n\ndef test_add():\n    assert calc.add(2, 3) == 5\n\n\ndef test_multiply():\n    assert calc.multiply(3, 4) == 12\n"
	revisedTests := "import pytest\n\n" + tests + "\n\ndef test_multiply_rejects_strings():\n    with pytest.raises(TypeError):\n        calc.multiply(\"a\", 2)\n"
	code := calc + "\n\ndef multiply(a, b):\n    return a * b\n"
	revisedCode := calc + "\n\ndef multiply(a, b):\n    if isinstance(a, str) or isinstance(b, str):\n        raise TypeError(\"multiply takes numbers\")\n    return a * b\n"
	state := t.TempDir()
	script := coderScript(t, fenced("python", tests), fenced("python", code), fenced("markdown", "# Changes\n\n- multiply\n"),
		"I added a test that multiply rejects strings; the other tests stay as they were.\n\n"+fenced("python", revisedTests),
		"multiply now checks its arguments before multiplying.\n\n"+fenced("python", revisedCode),
		"NO CHANGE\n\nThe changelog already lists multiply; the check is part of it.\n")
	env := azeroEnv(state, implementEnv(state, script)...)
	screen := startOnTerminal(t, repo, env, os.Args[0], "implement", "--lld", "docs/design.md")
	waitWhileRunning(t, screen, "Nothing is committed unless you type approve")
	screen.Type(t, "approve")
	waitWhileRunning(t, screen, "to merge it")
	screen.Type(t, "revise")
	screen.WaitFor(t, "What should the coder change?", 1)
	screen.Type(t, feedback)
	screen.Type(t, "")
	screen.WaitFor(t, "Nothing is committed unless you type approve", 2)
	text := screen.Text()
	second := text[strings.Index(text, "What should the coder change?"):]
	for _, want := range []string{
		"revise test_calc.py: does it change for your feedback?",
		"test_calc.py: changed; the coder says:", "I added a test that multiply rejects strings",
		"red: pytest exited 1 (fail): 1 failed, 2 passed: test_calc.py::test_multiply_rejects_strings; next: the code, for your feedback",
		"revise calc.py: does it change for your feedback?",
		"calc.py: changed; the coder says:", "multiply now checks its arguments",
		"revise CHANGES.md: does it change for your feedback?",
		"CHANGES.md: no change; the coder says:", "The changelog already lists multiply",
		"The coder's answer to your feedback (\"" + feedback + "\"):",
		"What changed since your last review:",
		"The whole change (against the base commit):",
	} {
		if !strings.Contains(second, want) {
			t.Errorf("the revision does not show %q:\n%s", want, second)
		}
	}
	// What changed since the last review: the test and the check, not
	// the changelog (unchanged).
	if i, j := strings.Index(second, "What changed since your last review:"), strings.Index(second, "The whole change (against the base commit):"); i >= 0 && j > i {
		since := second[i:j]
		if !strings.Contains(since, "+def test_multiply_rejects_strings():") || !strings.Contains(since, "+        raise TypeError(\"multiply takes numbers\")") || strings.Contains(since, "CHANGES.md") {
			t.Errorf("what changed since the last review:\n%s", since)
		}
	}
	screen.Type(t, "approve")
	screen.WaitFor(t, "to merge it", 2)
	screen.Type(t, "approve")
	if code := screen.exit(t); code != ExitOK {
		t.Fatalf("exit %d\n%s", code, screen.Text())
	}
	if got, _ := os.ReadFile(filepath.Join(repo, "test_calc.py")); string(got) != revisedTests {
		t.Errorf("the revised tests were not merged:\n%s", got)
	}
	if got, _ := os.ReadFile(filepath.Join(repo, "CHANGES.md")); string(got) != "# Changes\n\n- multiply\n" {
		t.Errorf("CHANGES.md: %q", got)
	}
	r, hist := runOf(t, state)
	want := "worktree:ok baseline:ok scaffold:ok red:ok implement:ok green:ok lint:ok diff_review:ok human_review:ok " +
		"revise:ok red:ok implement:ok green:ok lint:ok diff_review:ok human_review:ok commit:ok merge:ok cleanup:ok END:done"
	if got := testenv.NodePath(hist); got != want {
		t.Errorf("path:\n got %s\nwant %s", got, want)
	}
	prompts, _ := filepath.Glob(filepath.Join(state, "runs", r.ID, "*-prompt-revise.md"))
	if len(prompts) != 1 {
		t.Fatalf("revise prompts: %v", prompts)
	}
	if p, _ := os.ReadFile(prompts[0]); !strings.Contains(string(p), feedback) || !strings.Contains(string(p), "NO CHANGE") || !strings.Contains(string(p), "def test_multiply():") {
		t.Errorf("the revise prompt of the test file:\n%s", p)
	}
	recs, _ := audit.Read(filepath.Join(state, audit.FileName))
	var answers []string
	for _, rec := range recs {
		if rec["event"] == "revision_answer" {
			answers = append(answers, fmt.Sprint(rec["path"], ":", rec["changed"]))
		}
	}
	if got := strings.Join(answers, " "); got != "test_calc.py:true calc.py:true CHANGES.md:false" {
		t.Errorf("revision answers in the audit log: %s", got)
	}
}

// TestImplementAddsInNewDirectories: a design that adds files in
// directories that do not exist yet (a Go package, a Rust integration
// test directory, a Python test directory) runs: the worktree gets the
// directories, the tests go red then green.
func TestImplementAddsInNewDirectories(t *testing.T) {
	t.Parallel()
	manifest := "[package]\nname = \"geo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"
	rsLib := "pub fn area(w: i32, h: i32) -> i32 {\n    w * h\n}\n"
	tests := []struct {
		name    string
		tool    string
		files   map[string]string
		replies []string
		made    []string // files the worktree must hold
	}{
		{"go package", "go", map[string]string{"go.mod": "module example.com/t\n\ngo 1.22\n", "main.go": "// Package t is t.\npackage t\n",
			"docs/design.md": design("46 - Feature: slugs", "slug/slug_test.go|Add", "slug/slug.go|Add")},
			[]string{
				fenced("go", "package slug\n\nimport \"testing\"\n\nfunc TestSlugify(t *testing.T) {\n\tif got := Slugify(\"A B\"); got != \"a-b\" {\n\t\tt.Errorf(\"got %q\", got)\n\t}\n}\n"),
				fenced("go", "// Package slug makes slugs.\npackage slug\n\n// Slugify is not written yet.\nfunc Slugify(s string) string { return \"\" }\n"),
				fenced("go", "// Package slug makes slugs.\npackage slug\n\nimport \"strings\"\n\n// Slugify makes a slug.\nfunc Slugify(s string) string { return strings.ReplaceAll(strings.ToLower(s), \" \", \"-\") }\n"),
			}, []string{"slug/slug.go", "slug/slug_test.go"}},
		{"rust integration tests", "cargo", map[string]string{"Cargo.toml": manifest, "src/lib.rs": rsLib,
			"docs/design.md": design("47 - Feature: intersection", "tests/intersection.rs|Add", "src/lib.rs|Modify")},
			[]string{
				fenced("rust", "#[test]\nfn overlapping() {\n    assert_eq!(geo::intersection((0, 4), (2, 6)), Some((2, 4)));\n}\n"),
				fenced("rust", rsLib+"\npub fn intersection(_a: (i32, i32), _b: (i32, i32)) -> Option<(i32, i32)> {\n    None\n}\n"),
				fenced("rust", rsLib+"\npub fn intersection(a: (i32, i32), b: (i32, i32)) -> Option<(i32, i32)> {\n    let (lo, hi) = (a.0.max(b.0), a.1.min(b.1));\n    if lo < hi { Some((lo, hi)) } else { None }\n}\n"),
			}, []string{"tests/intersection.rs"}},
		{"python test directory", "pytest", map[string]string{"pkg/util.py": "def one():\n    return 1\n",
			"docs/design.md": design("48 - Feature: double", "pkg/new/test_x.py|Add", "pkg/new/x.py|Add")},
			[]string{
				fenced("python", "import x\n\n\ndef test_double():\n    assert x.double(2) == 4\n"),
				fenced("python", "def double(n):\n    raise NotImplementedError\n"),
				fenced("python", "def double(n):\n    return 2 * n\n"),
			}, []string{"pkg/new/test_x.py", "pkg/new/x.py"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			testenv.RequireTool(t, tt.tool)
			repo, state := testenv.NewRepo(t, tt.files), t.TempDir()
			res := runAzeroIn(t, state, repo, implementEnv(state, coderScript(t, tt.replies...)), "implement", "--lld", "docs/design.md", "--json")
			if res.code != ExitNeedsHuman {
				t.Fatalf("exit %d, want %d\n%s", res.code, ExitNeedsHuman, res.stderr)
			}
			r, hist := runOf(t, state)
			if got := testenv.NodePath(hist); !strings.HasPrefix(got, "worktree:ok baseline:ok scaffold:ok red:ok scaffold:ok red:ok implement:ok green:ok lint:ok diff_review:") {
				t.Errorf("path %s\n%s", got, res.stderr)
			}
			for _, f := range tt.made {
				if _, err := os.Stat(filepath.Join(state, "worktrees", r.ID, f)); err != nil {
					t.Errorf("the worktree lacks %s: %v", f, err)
				}
			}
		})
	}
}
