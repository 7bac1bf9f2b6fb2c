package testrun_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/sandbox"
	"github.com/azero-dev/azero/internal/testenv"
	"github.com/azero-dev/azero/internal/testrun"
)

const calc = "def add(a, b):\n    return a + b\n"

func TestPytestOutcomes(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "pytest")
	tests := []struct {
		name     string
		files    map[string]string
		testCmd  string
		code     int
		want     testrun.Outcome
		passed   int
		failedTs []string
		errs     string // a line Result.Errors must hold
	}{
		{"pass", map[string]string{"calc.py": calc, "test_calc.py": "from calc import add\ndef test_add():\n    assert add(1, 2) == 3\n"},
			"", 0, testrun.Pass, 1, nil, ""},
		{"assertion fails", map[string]string{"calc.py": calc, "test_calc.py": "from calc import add\ndef test_add():\n    assert add(1, 2) == 4\ndef test_ok():\n    assert True\n"},
			"", 1, testrun.Fail, 1, []string{"test_calc.py::test_add"}, ""},
		{"class and parametrized names", map[string]string{"calc.py": calc, "tests/test_calc.py": "import pytest\nfrom calc import add\nclass TestAdd:\n    @pytest.mark.parametrize('x', [1, 2])\n    def test_p(self, x):\n        assert add(x, 0) == 1\n"},
			"", 1, testrun.Fail, 1, []string{"tests/test_calc.py::TestAdd::test_p[2]"}, ""},
		{"fixture error is not a red", map[string]string{"test_calc.py": "import pytest\n@pytest.fixture\ndef db():\n    raise RuntimeError('no database')\ndef test_a(db):\n    pass\ndef test_b():\n    assert 1 == 2\n"},
			"", 1, testrun.Broken, 0, []string{"test_calc.py::test_b", "test_calc.py::test_a"}, "E   RuntimeError: no database"},
		{"syntax error in test", map[string]string{"calc.py": calc, "test_calc.py": "def test_add(:\n    pass\n"},
			"", 2, testrun.Broken, 0, []string{"test_calc.py"}, "E   SyntaxError: invalid syntax"},
		{"import error in test", map[string]string{"test_calc.py": "from nowhere import add\ndef test_add():\n    assert add(1, 2) == 3\n"},
			"", 2, testrun.Broken, 0, []string{"test_calc.py"}, "E   ModuleNotFoundError: No module named 'nowhere'"},
		{"no tests", map[string]string{"calc.py": calc},
			"", 5, testrun.NoTests, 0, nil, ""},
		{"usage error", map[string]string{"calc.py": calc, "test_calc.py": "def test_a():\n    pass\n"},
			"pytest --no-such-option", 4, testrun.Broken, 0, nil, "unrecognized arguments: --no-such-option"},
		{"internal error", map[string]string{"conftest.py": "def pytest_collection_modifyitems(items):\n    raise RuntimeError('boom')\n", "test_a.py": "def test_a():\n    pass\n"},
			"", 3, testrun.Error, 0, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			testenv.WriteFiles(t, dir, tt.files)
			r, err := testrun.New("pytest", sandboxed(t, testrun.Options{TestCmd: tt.testCmd}))
			if err != nil {
				t.Fatal(err)
			}
			res, err := r.Run(t.Context(), dir)
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != tt.code || res.Outcome != tt.want {
				t.Fatalf("exit %d outcome %s, want %d %s\n%s", res.ExitCode, res.Outcome, tt.code, tt.want, res.Output)
			}
			if res.Passed != tt.passed || strings.Join(res.FailedTests, ",") != strings.Join(tt.failedTs, ",") {
				t.Errorf("passed %d failed %v, want %d %v", res.Passed, res.FailedTests, tt.passed, tt.failedTs)
			}
			if tt.errs != "" && !containsLine(res.Errors, tt.errs) {
				t.Errorf("errors %q lack %q", res.Errors, tt.errs)
			}
			if tt.errs == "" && len(res.Errors) > 0 {
				t.Errorf("unexpected errors %q", res.Errors)
			}
			if _, err := os.Stat(filepath.Join(dir, ".pytest_cache")); err == nil {
				t.Error("the run left .pytest_cache in the project")
			}
			if _, err := os.Stat(filepath.Join(dir, "__pycache__")); err == nil {
				t.Error("the run left __pycache__ in the project")
			}
		})
	}
}

func TestGoTestOutcomes(t *testing.T) {
	t.Parallel()
	mod := "module example.com/calc\n\ngo 1.22\n"
	code := "package calc\n\nfunc Add(a, b int) int { return a + b }\n"
	tests := []struct {
		name  string
		files map[string]string
		want  testrun.Outcome
		errs  string
	}{
		{"pass", map[string]string{"go.mod": mod, "calc.go": code,
			"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"bad\")\n\t}\n}\n"}, testrun.Pass, ""},
		{"assertion fails", map[string]string{"go.mod": mod, "calc.go": code,
			"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 4 {\n\t\tt.Fatal(\"want 4\")\n\t}\n}\n"}, testrun.Fail, ""},
		{"test does not compile", map[string]string{"go.mod": mod, "calc.go": code,
			"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestSub(t *testing.T) {\n\tif Sub(3, 2) != 1 {\n\t\tt.Fatal(\"bad\")\n\t}\n}\n"}, testrun.Broken, "./calc_test.go:6:5: undefined: Sub"},
		{"code does not compile", map[string]string{"go.mod": mod, "calc.go": "package calc\n\nfunc Add(a, b int) int { return a + }\n",
			"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {}\n"}, testrun.Broken, "./calc.go:3:37: syntax error"},
		{"no test files", map[string]string{"go.mod": mod, "calc.go": code}, testrun.NoTests, ""},
		{"no packages yet", map[string]string{"go.mod": mod}, testrun.NoTests, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			testenv.WriteFiles(t, dir, tt.files)
			r, _ := testrun.New("go", sandboxed(t, testrun.Options{}))
			res, err := r.Run(t.Context(), dir)
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != tt.want {
				t.Fatalf("outcome %s (exit %d), want %s\n%s", res.Outcome, res.ExitCode, tt.want, res.Output)
			}
			if tt.want == testrun.Fail && (len(res.FailedTests) != 1 || !strings.Contains(res.Output, "want 4") ||
				len(res.Failures) != 1 || !strings.Contains(res.Failures[0].Message, "want 4")) {
				t.Errorf("failed tests %v failures %+v; output lacks the failure message:\n%s", res.FailedTests, res.Failures, res.Output)
			}
			if tt.errs != "" && !containsLine(res.Errors, tt.errs) {
				t.Errorf("errors %q lack %q", res.Errors, tt.errs)
			}
		})
	}
}

// The timeout and a cancellation kill the whole jail: a process the tests
// detached (setsid, a double fork) stops with them, and writes nothing after.
func TestTimeoutAndCancelKillTheJail(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		timeout time.Duration
		cancel  bool
	}{
		{"timeout", time.Second, false},
		{"cancel", testrun.DefaultTimeout, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			token := fmt.Sprintf("azero-jail-%d", time.Now().UnixNano())
			// A daemon in a session of its own, and an orphan of a double fork,
			// both marked by token; then the command waits to be stopped.
			cmd := "setsid sh -c 'while :; do echo x >> marker; sleep 0.05; done' " + token + " &\n" +
				"(sh -c 'sleep 600' " + token + " &)\n" +
				"while [ ! -s marker ]; do sleep 0.05; done\necho started > started\nsleep 600\n"
			r, _ := testrun.New("pytest", sandboxed(t, testrun.Options{TestCmd: cmd, Timeout: tt.timeout}))
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if tt.cancel {
				go func() {
					deadline := time.Now().Add(testenv.Patience)
					for !exists(filepath.Join(dir, "started")) && time.Now().Before(deadline) {
						time.Sleep(20 * time.Millisecond)
					}
					cancel()
				}()
			}
			res, err := r.Run(ctx, dir)
			switch {
			case tt.cancel && err == nil:
				t.Fatal("a cancelled run returned no error")
			case !tt.cancel && err != nil:
				t.Fatal(err)
			case !tt.cancel && (!res.TimedOut || res.Outcome != testrun.Error):
				t.Fatalf("timed out %v outcome %s", res.TimedOut, res.Outcome)
			}
			waitGone(t, token)
			before, err := os.ReadFile(filepath.Join(dir, "marker"))
			if err != nil || len(before) == 0 {
				t.Fatalf("the daemon never ran: %q, %v", before, err)
			}
			time.Sleep(200 * time.Millisecond) // a live daemon writes every 50 ms
			if after, _ := os.ReadFile(filepath.Join(dir, "marker")); len(after) != len(before) {
				t.Errorf("the marker still grows after the run: %d bytes, then %d", len(before), len(after))
			}
		})
	}
}

// waitGone waits until no process on the machine has token in its command
// line.
func waitGone(t *testing.T, token string) {
	t.Helper()
	deadline := time.Now().Add(testenv.Patience)
	for {
		pids := processesWith(token)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes %v outlived the run", pids)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// processesWith lists the processes whose command line holds token.
func processesWith(token string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && strings.Contains(string(raw), token) {
			out = append(out, pid)
		}
	}
	return out
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// The tests see the sandbox's environment allowlist, plus the names the
// configuration adds, and never a credential, even one the configuration
// names.
func TestCredentialsNotPassedToTests(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "pytest")
	dir := t.TempDir()
	testenv.WriteFiles(t, dir, map[string]string{"test_env.py": `import os
def test_env():
    assert "ANTHROPIC_API_KEY" not in os.environ
    assert "GH_TOKEN" not in os.environ
    assert "UNLISTED" not in os.environ
    assert os.environ.get("KEEP_ME") == "yes"
    assert os.environ["HOME"] != os.environ.get("REAL_HOME")
`})
	env := append(os.Environ(), "ANTHROPIC_API_KEY=sk-ant-secret", "GH_TOKEN=ghp_x", "KEEP_ME=yes", "UNLISTED=1", "REAL_HOME="+os.Getenv("HOME"))
	opts := sandboxedWith(t, sandbox.Config{Env: []string{"KEEP_ME", "GH_TOKEN", "REAL_HOME"}}, testrun.Options{Environ: env})
	r, _ := testrun.New("pytest", opts)
	res, err := r.Run(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != testrun.Pass {
		t.Fatalf("outcome %s\n%s", res.Outcome, res.Output)
	}
}

func TestDetect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"go module", map[string]string{"go.mod": "module x\n"}, "go"},
		{"rust crate", map[string]string{"Cargo.toml": "[package]\nname = \"x\"\n"}, "cargo"},
		{"pyproject", map[string]string{"pyproject.toml": ""}, "pytest"},
		{"python tests only", map[string]string{"tests/test_a.py": ""}, "pytest"},
		{"vitest script", map[string]string{"package.json": `{"scripts": {"test": "vitest run --coverage"}}`}, "vitest"},
		{"jest script after a build", map[string]string{"package.json": `{"scripts": {"test": "tsc && NODE_ENV=test jest"}}`}, "jest"},
		{"node test script", map[string]string{"package.json": `{"scripts": {"test": "node --test test/"}}`}, "node"},
		{"vitest dependency", map[string]string{"package.json": `{"scripts": {"test": "make check"}, "devDependencies": {"vitest": "^4"}}`}, "vitest"},
		{"jest dependency", map[string]string{"package.json": `{"devDependencies": {"jest": "^30"}}`}, "jest"},
		{"plain package", map[string]string{"package.json": `{"name": "x"}`}, "node"},
		{"npm's placeholder script", map[string]string{"package.json": `{"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}`}, "node"},
		{"mocha is not run as node's", map[string]string{"package.json": `{"scripts": {"test": "mocha --recursive"}, "devDependencies": {"mocha": "^10"}}`}, ""},
		{"nor ava through npx", map[string]string{"package.json": `{"scripts": {"test": "npx ava"}}`}, ""},
		{"nor mocha under coverage", map[string]string{"package.json": `{"scripts": {"test": "nyc --reporter=lcov mocha"}}`}, ""},
		{"nothing to go by", map[string]string{"README": ""}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			testenv.WriteFiles(t, dir, tt.files)
			got, err := testrun.Detect(dir)
			if got != tt.want || (tt.want == "") != (err != nil) {
				t.Errorf("Detect(%v) = %q, %v; want %q", tt.files, got, err, tt.want)
			}
		})
	}
}

// The design's test files choose among the languages of a project that
// has several.
func TestDetectProject(t *testing.T) {
	t.Parallel()
	both := map[string]string{"package.json": `{"scripts": {"test": "vitest run"}}`, "pyproject.toml": "[tool.pytest.ini_options]\n"}
	tests := []struct {
		name  string
		files map[string]string
		tests []string
		want  string
	}{
		{"python tests beside a package.json", both, []string{"tests/test_api.py"}, "pytest"},
		{"typescript tests beside a pyproject", both, []string{"web/api.test.ts"}, "vitest"},
		{"javascript tests in a go module", map[string]string{"go.mod": "module x\n", "package.json": `{"devDependencies": {"jest": "^30"}}`}, []string{"web/__tests__/api.js"}, "jest"},
		{"go tests beside a package.json", map[string]string{"go.mod": "module x\n", "package.json": `{"scripts": {"test": "jest"}}`}, []string{"api_test.go"}, "go"},
		{"typescript tests of a native module", map[string]string{"Cargo.toml": "[package]\nname = \"x\"\n", "package.json": `{"scripts": {"test": "node --test"}}`}, []string{"index.test.mjs"}, "node"},
		{"rust tests beside a package.json", map[string]string{"Cargo.toml": "[package]\nname = \"x\"\n", "package.json": `{"scripts": {"test": "node --test"}}`}, []string{"tests/it.rs"}, "cargo"},
		{"javascript tests without a package.json", map[string]string{"Cargo.toml": "[package]\nname = \"x\"\n"}, []string{"a.test.js"}, "cargo"},
		{"tests of no known language", map[string]string{"pom.xml": "<project/>"}, []string{"src/test/java/AppTest.java"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			testenv.WriteFiles(t, dir, tt.files)
			got, err := testrun.DetectProject(dir, tt.tests)
			if got != tt.want || (tt.want == "") != (err != nil) {
				t.Errorf("DetectProject(%v) = %q, %v; want %q", tt.tests, got, err, tt.want)
			}
		})
	}
}

func TestConventions(t *testing.T) {
	t.Parallel()
	// Each kind's text names the way its tests run and its test files.
	want := map[string][]string{
		"go":     {"go test", "_test.go"},
		"pytest": {"pytest", "test_"},
		"node":   {"node --test", ".test.js", "node:test"},
		"vitest": {"vitest", ".test.", "from 'vitest'"},
		"jest":   {"jest", "__tests__"},
		"cargo":  {"cargo test", "tests/", "#[cfg(test)]"},
		"junit":  {"JUnit"},
	}
	for _, kind := range testrun.Kinds() {
		text := testrun.Conventions(kind)
		if len(want[kind]) == 0 {
			t.Errorf("no expectations for kind %q", kind)
		}
		for _, w := range want[kind] {
			if !strings.Contains(text, w) {
				t.Errorf("Conventions(%q) lacks %q: %s", kind, w, text)
			}
		}
	}
	if testrun.Conventions("mocha") != "" {
		t.Error("an unknown kind has conventions")
	}
}

// The conventions of a runner in a project say what the project says of
// how tests reach its code.
func TestProjectConventions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		kind  string
		files map[string]string
		want  []string
		not   []string
	}{
		{"a crate with a dash", "cargo", map[string]string{"Cargo.toml": "[package]\nname = \"my-calc\"\nversion = \"0.1.0\"\n"},
			[]string{"cargo test", `the crate is "my-calc"`, "use my_calc::"}, []string{"workspace"}},
		{"a binary crate", "cargo", map[string]string{"Cargo.toml": "[package]\nname = \"tool\"\n", "src/main.rs": "fn main() {}\n"},
			[]string{"is a binary", "#[cfg(test)] mod tests inside"}, []string{"use tool::"}},
		{"a crate with a library and a binary", "cargo", map[string]string{"Cargo.toml": "[package]\nname = \"tool\"\n", "src/main.rs": "fn main() {}\n", "src/lib.rs": ""},
			[]string{"use tool::"}, []string{"is a binary"}},
		{"a crate naming its library", "cargo", map[string]string{"Cargo.toml": "[package]\nname = \"calc-rs\"\n\n[lib]\nname = \"calc\"\n"},
			[]string{"use calc::"}, nil},
		{"a workspace", "cargo", map[string]string{"Cargo.toml": "[workspace]\nmembers = [\"crates/a\", \"crates/b\"]\n"},
			[]string{"workspace (members crates/a, crates/b)"}, []string{"the crate is"}},
		{"ESM with TypeScript", "vitest", map[string]string{"package.json": `{"type": "module", "scripts": {"test": "vitest run"}}`, "tsconfig.json": "{}"},
			[]string{"from 'vitest'", `"type": "module"`, "tsc --noEmit", "`vitest run`"}, []string{"CommonJS (require"}},
		{"CommonJS", "node", map[string]string{"package.json": `{"scripts": {"test": "node --test"}}`},
			[]string{"node:test", ".js files are CommonJS"}, []string{"tsc"}},
		{"ESM jest", "jest", map[string]string{"package.json": `{"type": "module", "scripts": {"test": "node --experimental-vm-modules node_modules/jest/bin/jest.js"}}`},
			[]string{"__tests__", "@jest/globals"}, nil},
		{"jest through babel", "jest", map[string]string{"package.json": `{"scripts": {"test": "jest"}}`},
			[]string{"__tests__"}, []string{"@jest/globals"}},
		{"a go module", "go", map[string]string{"go.mod": "module example.com/calc\n\ngo 1.22\n"},
			[]string{"_test.go", "example.com/calc/DIR"}, nil},
		{"no project files", "pytest", nil, []string{"pytest"}, []string{"In this project"}},
		{"unknown kind", "mocha", map[string]string{"package.json": "{}"}, nil, []string{"In this project"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			testenv.WriteFiles(t, dir, tt.files)
			got := testrun.ProjectConventions(dir, tt.kind)
			if !strings.HasPrefix(got, testrun.Conventions(tt.kind)) {
				t.Errorf("does not start with the runner's conventions: %s", got)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("lacks %q: %s", w, got)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("has %q: %s", n, got)
				}
			}
		})
	}
}

func TestLint(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "python3")
	tests := []struct {
		name  string
		kind  string
		files map[string]string
		lint  []string
		pass  bool
	}{
		{"python ok", "pytest", map[string]string{"a.py": "x = 1\n"}, []string{"a.py"}, true},
		{"python syntax", "pytest", map[string]string{"a.py": "def f(:\n"}, []string{"a.py"}, false},
		{"go vet ok", "go", map[string]string{"go.mod": "module x\n\ngo 1.22\n", "a.go": "package x\n\nfunc F() int { return 1 }\n"}, nil, true},
		{"go vet finds printf misuse", "go", map[string]string{"go.mod": "module x\n\ngo 1.22\n", "a.go": "package x\n\nimport \"fmt\"\n\nfunc F() { fmt.Printf(\"%d\", \"s\") }\n"}, nil, false},
	}
	if _, err := exec.LookPath("pyflakes3"); err == nil {
		tests = append(tests, struct {
			name  string
			kind  string
			files map[string]string
			lint  []string
			pass  bool
		}{"pyflakes unused import", "pytest", map[string]string{"a.py": "import os\n"}, []string{"a.py"}, false})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			testenv.WriteFiles(t, dir, tt.files)
			res, err := testrun.Lint(t.Context(), dir, tt.kind, tt.lint, sandboxed(t, testrun.Options{}))
			if err != nil {
				t.Fatal(err)
			}
			if res.Passed != tt.pass {
				t.Fatalf("passed = %v, want %v\n%s", res.Passed, tt.pass, res.Output)
			}
			if _, err := os.Stat(filepath.Join(dir, "__pycache__")); err == nil {
				t.Error("lint left __pycache__ in the project")
			}
		})
	}
}

func TestDetectFiles(t *testing.T) {
	t.Parallel()
	tests := []struct {
		files []string
		want  string
	}{
		{[]string{"pkg/a_test.go"}, "go"},
		{[]string{"test_a.py", "tests/b_test.py"}, "pytest"},
		{[]string{"tests/it.rs"}, "cargo"},
		{[]string{"a_test.go", "test_b.py"}, ""},
		{[]string{"calc.test.js"}, ""}, // node, vitest or jest: the project says which
		{[]string{"spec.js"}, ""},
		{nil, ""},
	}
	for _, tt := range tests {
		if got := testrun.DetectFiles(tt.files); got != tt.want {
			t.Errorf("DetectFiles(%v) = %q, want %q", tt.files, got, tt.want)
		}
	}
}

// containsLine reports whether one of lines contains want.
func containsLine(lines []string, want string) bool {
	for _, l := range lines {
		if strings.Contains(l, want) {
			return true
		}
	}
	return false
}

func TestLintLanguages(t *testing.T) {
	t.Parallel()
	without := func(tools ...string) func(string) (string, error) {
		return func(name string) (string, error) {
			for _, tool := range tools {
				if name == tool {
					return "", exec.ErrNotFound
				}
			}
			return exec.LookPath(name)
		}
	}
	crate := "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"
	tsconfig := `{"compilerOptions": {"strict": true, "noEmit": true, "target": "es2022", "module": "nodenext", "skipLibCheck": true, "types": []}, "include": ["*.ts"]}`
	tests := []struct {
		name     string
		tool     string
		kind     string
		files    map[string]string
		lint     []string
		lookPath func(string) (string, error)
		pass     bool
		tools    string // a tool that must have run
		note     string // a note that must be there
	}{
		{"javascript syntax ok", "node", "node", map[string]string{"a.js": "export const f = () => 1\n"}, []string{"a.js"}, nil, true, "node --check", ""},
		{"javascript syntax error", "node", "jest", map[string]string{"a.js": "function f( {\n"}, []string{"a.js"}, nil, false, "node --check", ""},
		{"typescript type error", "tsc", "vitest", map[string]string{"tsconfig.json": tsconfig, "a.ts": "export const n: number = 'one'\n"}, []string{"a.ts"}, nil, false, "tsc --noEmit", ""},
		{"typescript ok", "tsc", "vitest", map[string]string{"tsconfig.json": tsconfig, "a.ts": "export const n: number = 1\n"}, []string{"a.ts"}, nil, true, "tsc --noEmit", ""},
		{"tsc missing is a note", "node", "vitest", map[string]string{"tsconfig.json": tsconfig, "a.ts": "export const n: number = 'one'\n"}, []string{"a.ts"}, without("tsc"), true, "", "tsc is not installed"},
		{"typescript without tsconfig is a note", "node", "node", map[string]string{"a.ts": "export const n = 1\n"}, []string{"a.ts"}, nil, true, "", "no tsconfig.json"},
		{"clippy finds a compile error", "cargo", "cargo", map[string]string{"Cargo.toml": crate, "src/lib.rs": "pub fn f() -> i32 { \"one\" }\n"}, []string{"src/lib.rs"}, nil, false, "clippy --all-targets", ""},
		{"clippy checks every member of a workspace", "cargo", "cargo", map[string]string{"Cargo.toml": crate + "\n[workspace]\nmembers = [\"crates/b\"]\n", "src/lib.rs": "pub fn f() -> i32 { 1 }\n",
			"crates/b/Cargo.toml": "[package]\nname = \"b\"\nversion = \"0.1.0\"\nedition = \"2021\"\n", "crates/b/src/lib.rs": "pub fn g() -> i32 { \"one\" }\n"},
			[]string{"crates/b/src/lib.rs"}, nil, false, "clippy --all-targets", ""},
		{"cargo check without clippy", "cargo", "cargo", map[string]string{"Cargo.toml": crate, "src/lib.rs": "pub fn f() -> i32 { 1 }\n"}, []string{"src/lib.rs"}, without("cargo-clippy"), true, "check --all-targets", "clippy is not installed"},
		{"go missing is a note", "node", "junit", map[string]string{"go.mod": "module x\n", "a.go": "package x\n\nfunc F() { fmt.Println() }\n"}, []string{"a.go"},
			without("go"), true, "", "go is not installed"},
		{"junit lints by file language", "node", "junit", map[string]string{"a.js": "function f( {\n", "b.txt": ""}, []string{"a.js", "b.txt"}, nil, false, "node --check", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			testenv.RequireTool(t, tt.tool)
			dir := t.TempDir()
			testenv.WriteFiles(t, dir, tt.files)
			res, err := testrun.Lint(t.Context(), dir, tt.kind, tt.lint, sandboxed(t, testrun.Options{LookPath: tt.lookPath}))
			if err != nil {
				t.Fatal(err)
			}
			if res.Passed != tt.pass {
				t.Fatalf("passed = %v, want %v\n%+v", res.Passed, tt.pass, res)
			}
			if tt.tools != "" && !containsLine(res.Tools, tt.tools) {
				t.Errorf("tools %q lack %q", res.Tools, tt.tools)
			}
			if tt.note != "" && !containsLine(res.Notes, tt.note) {
				t.Errorf("notes %q lack %q", res.Notes, tt.note)
			}
			for _, product := range []string{"target", "Cargo.lock"} {
				if _, err := os.Stat(filepath.Join(dir, product)); err == nil {
					t.Errorf("lint left %s in the project", product)
				}
			}
		})
	}
}

// A project whose tests ran through its own command (a container, say) on
// a machine without cargo: the Rust check is skipped with a note, not an
// error that would stop the run.
func TestLintWithoutCargo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testenv.WriteFiles(t, dir, map[string]string{"Cargo.toml": "[package]\nname = \"calc\"\n", "src/lib.rs": "pub fn f() -> i32 { \"one\" }\n"})
	noCargo := func(name string) (string, error) {
		if strings.HasPrefix(name, "cargo") {
			return "", exec.ErrNotFound
		}
		return exec.LookPath(name)
	}
	res, err := testrun.Lint(t.Context(), dir, "junit", []string{"src/lib.rs"},
		sandboxed(t, testrun.Options{LookPath: noCargo, Environ: append(os.Environ(), "HOME="+t.TempDir())}))
	if err != nil || !res.Passed || !containsLine(res.Notes, "cargo is not installed") {
		t.Fatalf("Lint = %+v, %v; want a pass with a note", res, err)
	}
}

func TestMissingCode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		r    testrun.Result
		want bool
	}{
		{"go undefined", testrun.Result{Outcome: testrun.Broken, Errors: []string{"./slug_test.go:9:7: undefined: Slugify"}}, true},
		{"python module missing", testrun.Result{Outcome: testrun.Broken, Errors: []string{"E   ModuleNotFoundError: No module named 'calc'"}}, true},
		{"node export missing", testrun.Result{Outcome: testrun.Broken, Errors: []string{"SyntaxError: The requested module './calc.js' does not provide an export named 'sub'"}}, true},
		{"jest module missing", testrun.Result{Outcome: testrun.Broken, Errors: []string{"sub.test.js: Cannot find module './sub' from 'sub.test.js'"}}, true},
		{"rust function missing", testrun.Result{Outcome: testrun.Broken, Errors: []string{"tests/it.rs:2:35: error[E0425]: cannot find function `sub` in crate `calc`"}}, true},
		{"older results: the output", testrun.Result{Outcome: testrun.Broken, Output: "./slug_test.go:9:7: undefined: Slugify"}, true},
		{"syntax error needs a rewrite", testrun.Result{Outcome: testrun.Broken, Errors: []string{"E   SyntaxError: invalid syntax"}}, false},
		{"a red is not missing code", testrun.Result{Outcome: testrun.Fail, Errors: []string{"undefined: x"}}, false},
	}
	for _, tt := range tests {
		if got := tt.r.MissingCode(); got != tt.want {
			t.Errorf("%s: MissingCode() = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// A coverage tool's data file (coverage.py writes .coverage where the tests
// run unless COVERAGE_FILE says where) goes to the run's jail: a file left
// in the project would make every run one that changed the change.
func TestCoverageDataStaysOutOfTheProject(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "pytest")
	dir := t.TempDir()
	testenv.WriteFiles(t, dir, map[string]string{"calc.py": calc,
		// What coverage.py does at exit, in a few lines.
		"conftest.py":  "import atexit, os\natexit.register(lambda: open(os.environ.get('COVERAGE_FILE', '.coverage'), 'w').write('data'))\n",
		"test_calc.py": "from calc import add\ndef test_add():\n    assert add(1, 2) == 3\n"})
	r, err := testrun.New("pytest", sandboxed(t, testrun.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Run(t.Context(), dir)
	if err != nil || res.Outcome != testrun.Pass {
		t.Fatalf("Run = %s, %v\n%s", res.Outcome, err, res.Output)
	}
	if _, err := os.Stat(filepath.Join(dir, ".coverage")); !os.IsNotExist(err) {
		t.Errorf("the coverage data file is in the project: %v", err)
	}
}
