package testrun_test

import (
	"testing"

	"github.com/azero-dev/azero/internal/testenv"
	"github.com/azero-dev/azero/internal/testrun"
)

// A test binary that stops in the middle (a test exits the process, or
// aborts) never ran the tests it did not report: cargo may still exit 0
// and count only the other binaries' passes, but that is not a green.
func TestCargoBinaryThatStopsEarly(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "cargo")
	manifest := "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"
	lib := func(body string) string {
		return "pub fn add(a: i32, b: i32) -> i32 { a + b }\npub fn multiply(a: i32, b: i32) -> i32 {\n" + body + "    a * b\n}\n"
	}
	tests := map[string]string{
		"tests/add.rs":      "#[test]\nfn adds() { assert_eq!(calc::add(1, 2), 3); }\n",
		"tests/multiply.rs": "#[test]\nfn multiplies() { assert_eq!(calc::multiply(3, 4), 12); }\n",
	}
	project := func(body string) map[string]string {
		files := map[string]string{"Cargo.toml": manifest, "src/lib.rs": lib(body)}
		for k, v := range tests {
			files[k] = v
		}
		return files
	}
	runCases(t, "cargo", testrun.Options{}, nil, []runnerCase{
		{"a test exits the process with 0", project("    if a != b {\n        std::process::exit(0);\n    }\n"),
			testrun.Broken, 1, nil, "tests/multiply.rs: the test binary stopped before its summary, having reported 0 of 1 tests (a test exited the process or crashed)"},
		{"a test aborts", project("    if a != b {\n        std::process::abort();\n    }\n"),
			testrun.Broken, 1, nil, "tests/multiply.rs: the test binary stopped before its summary, having reported 0 of 1 tests (a test exited the process or crashed)"},
	})
}
