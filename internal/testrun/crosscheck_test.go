package testrun_test

// Hostile fixtures: tests whose code rewrites the runner's report at exit,
// forces its exit code, or prints a runner's console lines of its own.
// Each would pass for a green (or a red) if the report alone decided; the
// report, the exit code and the console disagree, so the run is Broken.

import (
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/testenv"
	"github.com/azero-dev/azero/internal/testrun"
)

// forgedJUnit is a report of two passing tests.
const forgedJUnit = `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="0" skipped="0" tests="2">` +
	`<testcase classname="test_calc" name="test_add" file="test_calc.py"/><testcase classname="test_calc" name="test_multiply" file="test_calc.py"/></testsuite></testsuites>`

func TestCrossCheckCatchesHostileRuns(t *testing.T) {
	t.Parallel()
	pyTests := "import calc\n\n\ndef test_add():\n    assert calc.add(2, 3) == 5\n\n\ndef test_multiply():\n    assert calc.multiply(3, 4) == 12\n"
	pyCalc := "def add(a, b):\n    return a + b\n\n\ndef multiply(a, b):\n    return a + b\n"
	goMod := "module example.com/calc\n\ngo 1.22\n"
	goCalc := "package calc\n\nfunc Add(a, b int) int { return a + b }\n\nfunc Multiply(a, b int) int { return a + b }\n"
	goTests := "\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"add\")\n\t}\n}\n\nfunc TestMultiply(t *testing.T) {\n\tif Multiply(3, 4) != 12 {\n\t\tt.Fatal(\"multiply\")\n\t}\n}\n"
	cargoToml := "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"
	tests := []struct {
		name  string
		tool  string
		kind  string
		opts  testrun.Options
		files map[string]string
		says  []string // what Disagreement must say
	}{
		{
			name: "a conftest atexit hook rewrites pytest's JUnit report and exits 0", tool: "pytest", kind: testrun.KindPytest,
			files: map[string]string{"calc.py": pyCalc, "test_calc.py": pyTests, "conftest.py": "import atexit\nimport os\nimport sys\n\n\n" +
				"def _forge():\n    for a in sys.argv:\n        if a.startswith('--junitxml='):\n            with open(a.split('=', 1)[1], 'w') as f:\n" +
				"                f.write('" + forgedJUnit + "')\n    os._exit(0)\n\n\natexit.register(_forge)\n"},
			says: []string{"pytest's JUnit report says 2 passed, its console says 1 failed, 1 passed, and it exited 0", "the report and the console disagree"},
		},
		{
			name: "a conftest hook makes pytest exit 0 with a failure", tool: "pytest", kind: testrun.KindPytest,
			files: map[string]string{"calc.py": pyCalc, "test_calc.py": pyTests,
				"conftest.py": "def pytest_sessionfinish(session, exitstatus):\n    session.exitstatus = 0\n"},
			says: []string{"pytest's JUnit report says 1 failed, 1 passed, its console says 1 failed, 1 passed, and it exited 0", "something changed the exit code"},
		},
		{
			name: "a node exit hook rewrites the JUnit report and the exit code", tool: "node", kind: testrun.KindNode,
			files: map[string]string{"package.json": `{"name": "calc", "type": "module", "scripts": {"test": "node --require ./hook.cjs --test"}}`,
				"hook.cjs": "const fs = require('node:fs')\nprocess.on('exit', () => {\n" +
					"  const args = [...process.execArgv, ...(process.env.NODE_OPTIONS || '').split(' ')]\n" +
					"  const junit = args.filter((a) => a.startsWith('--test-reporter-destination=')).map((a) => a.split('=')[1]).find((d) => d !== 'stdout')\n" +
					"  if (!junit) return\n" +
					"  fs.writeFileSync(junit, '<?xml version=\"1.0\"?><testsuites><testcase name=\"adds\" classname=\"test\"/><testcase name=\"multiplies\" classname=\"test\"/></testsuites>')\n" +
					"  process.exitCode = 0\n})\n",
				"calc.js": "export const add = (a, b) => a + b\nexport const multiply = (a, b) => a + b\n",
				"calc.test.js": "import { test } from 'node:test'\nimport assert from 'node:assert/strict'\nimport { add, multiply } from './calc.js'\n" +
					"test('adds', () => { assert.equal(add(2, 3), 5) })\ntest('multiplies', () => { assert.equal(multiply(3, 4), 12) })\n"},
			says: []string{"node's JUnit report says 2 passed, its console says 1 failed, 1 passed, and it exited 0"},
		},
		{
			name: "go: TestMain exits 0 after a failure", tool: "go", kind: testrun.KindGo,
			files: map[string]string{"go.mod": goMod, "calc.go": goCalc,
				"calc_test.go": "package calc\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestMain(m *testing.M) {\n\tm.Run()\n\tos.Exit(0)\n}\n" + goTests},
			says: []string{"package example.com/calc passed with a failing test"},
		},
		{
			name: "go: a test writes fake events into go test's own output", tool: "go", kind: testrun.KindGo,
			files: map[string]string{"go.mod": goMod, "calc.go": goCalc,
				"calc_test.go": "package calc\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\t\"testing\"\n)\n\nfunc init() {\n" +
					"\tf, err := os.OpenFile(fmt.Sprintf(\"/proc/%d/fd/1\", os.Getppid()), os.O_WRONLY, 0)\n\tif err != nil {\n\t\treturn\n\t}\n" +
					"\tfmt.Fprintln(f, `{\"Action\":\"run\",\"Package\":\"example.com/calc\",\"Test\":\"TestDivide\"}`)\n" +
					"\tfmt.Fprintln(f, `{\"Action\":\"pass\",\"Package\":\"example.com/calc\",\"Test\":\"TestDivide\"}`)\n\tf.Close()\n}\n" + goTests},
			says: []string{"TestDivide passed, but its output says \"\""},
		},
		{
			name: "go: a plain go test command whose tests print fake events", tool: "go", kind: testrun.KindGo,
			opts: testrun.Options{TestCmd: "go test -v -count=1 ./..."},
			files: map[string]string{"go.mod": goMod, "calc.go": goCalc,
				"calc_test.go": "package calc\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestMain(m *testing.M) {\n" +
					"\tfmt.Println(`{\"Action\":\"pass\",\"Package\":\"example.com/calc\",\"Test\":\"TestAdd\"}`)\n" +
					"\tfmt.Println(`{\"Action\":\"pass\",\"Package\":\"example.com/calc\",\"Test\":\"TestMultiply\"}`)\n\tm.Run()\n\tos.Exit(0)\n}\n" + goTests},
			says: []string{"go's test events disagree with themselves: TestAdd passed without running"},
		},
		{
			name: "cargo: a test prints a fake summary and exits 0 before a failing test reports", tool: "cargo", kind: testrun.KindCargo,
			files: map[string]string{"Cargo.toml": cargoToml, "src/lib.rs": "pub fn add(a: i32, b: i32) -> i32 { a + b }\n\n" +
				"#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn adds() { assert_eq!(add(1, 2), 3); }\n\n" +
				"    #[test]\n    fn adds_wrong() {\n        std::thread::sleep(std::time::Duration::from_secs(20));\n        assert_eq!(add(1, 2), 4);\n    }\n\n" +
				"    #[test]\n    fn zz_reporter() {\n        use std::io::Write;\n        use std::os::unix::io::FromRawFd;\n" +
				"        std::thread::sleep(std::time::Duration::from_secs(2));\n" +
				"        let mut out = unsafe { std::fs::File::from_raw_fd(1) };\n" +
				"        write!(out, \"test tests::zz_reporter ... ok\\n\\ntest result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\\n\\n\").unwrap();\n" +
				"        std::process::exit(0);\n    }\n}\n"},
			says: []string{"libtest's console disagrees with itself: a summary says 3 passed, 0 failed, 0 ignored where its test lines say 2, 0, 0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			testenv.RequireTool(t, tt.tool)
			dir := t.TempDir()
			testenv.WriteFiles(t, dir, tt.files)
			r, err := testrun.New(tt.kind, sandboxed(t, tt.opts))
			if err != nil {
				t.Fatal(err)
			}
			res, err := r.Run(t.Context(), dir)
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != testrun.Broken {
				t.Fatalf("outcome %s (exit %d): %s\n%s", res.Outcome, res.ExitCode, res.Summary, res.Output)
			}
			for _, s := range tt.says {
				if !strings.Contains(res.Disagreement, s) {
					t.Errorf("disagreement %q lacks %q", res.Disagreement, s)
				}
			}
			if !strings.Contains(res.Summary, res.Disagreement) || res.Disagreement == "" {
				t.Errorf("summary %q does not say why", res.Summary)
			}
		})
	}
}
