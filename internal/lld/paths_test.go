package lld_test

import (
	"testing"

	"github.com/azero-dev/azero/internal/lld"
)

// A path is taken from the table cell as written: a code span verbatim,
// plain text without the emphasis around it, underscores of a name kept.
func TestParsePathCells(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, cell, want string
		test             bool
	}{
		{"jest directory in a code span", "`__tests__/count.test.js`", "__tests__/count.test.js", true},
		{"dunder file in a code span", "`__init__.py`", "__init__.py", false},
		{"code span with spaces inside", "` src/lib.rs `", "src/lib.rs", false},
		{"jest directory as plain text", "__tests__/count.js", "__tests__/count.js", true},
		{"bold", "**calc.py**", "calc.py", false},
		{"italic", "_calc.py_", "calc.py", false},
		{"bold italic around a dunder file", "***__init__.py***", "__init__.py", false},
		{"bold code span", "**`tests/it.rs`**", "tests/it.rs", true},
		{"dot slash", "`./calc.js`", "calc.js", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, err := lld.Parse(table("| " + tt.cell + " | Add | x |"))
			if err != nil {
				t.Fatal(err)
			}
			if len(d.Files) != 1 || d.Files[0].Path != tt.want || d.Files[0].IsTest() != tt.test {
				t.Fatalf("files %+v, want path %q (test %v)", d.Files, tt.want, tt.test)
			}
		})
	}
}

// The test files of languages run through their own command and its JUnit
// report (--test-cmd with --report junit:PATH).
func TestIsTestPathOtherLanguages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path string
		want bool
	}{
		{"src/test/java/com/acme/GreetTest.java", true},
		{"src/test/java/com/acme/Fixtures.java", true},
		{"app/src/test/kotlin/GreetTest.kt", true},
		{"src/main/java/com/acme/Greet.java", false},
		{"src/main/java/com/acme/Test.java", false},
		{"src/main/java/com/acme/Testing.java", false},
		{"src/main/java/com/acme/Contest.java", false},
		{"GreetTests.java", true},
		{"GreetIT.java", true},
		{"GreetSpec.groovy", true},
		{"TestGreet.java", true},
		{"Calc.Tests/CalcTests.cs", true},
		{"Calc/Calc.cs", false},
		{"spec/greet_spec.rb", true},
		{"test/test_greet.rb", true},
		{"lib/greet.rb", false},
		{"tests/GreetTest.php", true},
		{"src/Greet.php", false},
		{"test/greet_test.exs", true},
		{"lib/greet.ex", false},
		{"tests/test_calc.c", true},
		{"src/calc_test.cpp", true},
		{"src/calc.c", false},
	}
	for _, tt := range tests {
		if got := lld.IsTestPath(tt.path); got != tt.want {
			t.Errorf("IsTestPath(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}
