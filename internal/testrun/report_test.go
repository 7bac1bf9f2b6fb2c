package testrun_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/testenv"
	"github.com/azero-dev/azero/internal/testrun"
)

// A report the run writes into the project is read and then removed, so
// that it never shows up as a change; a report that was there before the
// run, or one written outside the project, is left alone.
func TestReportIsNotLeftInTheProject(t *testing.T) {
	t.Parallel()
	const report = `<testsuites><testsuite name="calc"><testcase classname="calc" name="adds"/></testsuite></testsuites>`
	outside := filepath.Join(t.TempDir(), "report.xml")
	tests := []struct {
		name   string
		path   string // as given in --report
		before bool   // a report is there before the run
		kept   bool
		want   testrun.Outcome
	}{
		{"written by the run inside the project", "build/report.xml", false, false, testrun.Pass},
		{"left from before the run", "build/report.xml", true, true, testrun.Error},
		{"outside the project", outside, false, true, testrun.Pass},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := tt.path
			if !filepath.IsAbs(path) {
				path = filepath.Join(dir, path)
			}
			testenv.WriteFiles(t, dir, map[string]string{"build/.keep": ""})
			if tt.before {
				testenv.WriteFiles(t, dir, map[string]string{tt.path: report})
			}
			cmd := "cat > '" + path + "' <<'EOF'\n" + report + "\nEOF\n"
			if tt.before {
				cmd = "true"
			}
			r, err := testrun.New(testrun.KindJUnit, sandboxed(t, testrun.Options{TestCmd: cmd, Report: "junit:" + tt.path}))
			if err != nil {
				t.Fatal(err)
			}
			res, err := r.Run(t.Context(), dir)
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != tt.want {
				t.Fatalf("outcome %s (%s), want %s", res.Outcome, res.Summary, tt.want)
			}
			_, err = os.Stat(path)
			if kept := err == nil; kept != tt.kept {
				t.Errorf("report kept = %v, want %v", kept, tt.kept)
			}
		})
	}
}

// A build that fails because what the tests use does not exist yet asks
// for stubs in the languages run through a JUnit report too.
func TestMissingCodeOfReportedLanguages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  string
		want bool
	}{
		{"javac", "[ERROR] /p/src/test/java/GreetTest.java:[7,9] cannot find symbol", true},
		{"kotlinc", "e: file:///p/src/test/kotlin/GreetTest.kt:5:9 Unresolved reference: greet", true},
		{"csharp name", "GreetTests.cs(9,13): error CS0103: The name 'Greet' does not exist in the current context", true},
		{"csharp type", "GreetTests.cs(3,7): error CS0246: The type or namespace name 'Greeter' could not be found (are you missing a using directive or an assembly reference?)", true},
		{"javac syntax error", "[ERROR] /p/src/test/java/GreetTest.java:[7,9] ';' expected", false},
	}
	for _, tt := range tests {
		r := testrun.Result{Outcome: testrun.Broken, Errors: []string{tt.err}}
		if got := r.MissingCode(); got != tt.want {
			t.Errorf("%s: MissingCode() = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// A command whose console is silent (the report says everything) still
// gives a human and the coder what failed: the output ends with it.
func TestQuietCommandOutputShowsTheReport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testenv.WriteFiles(t, dir, map[string]string{"run.sh": "cat > report.xml <<'EOF'\n" +
		`<testsuite name="calc"><testcase classname="CalcTest" name="adds"/><testcase classname="CalcTest" name="subtracts"><failure message="expected 1 but was 5">at CalcTest.java:9</failure></testcase></testsuite>` +
		"\nEOF\nexit 1\n"})
	r, err := testrun.New(testrun.KindJUnit, sandboxed(t, testrun.Options{TestCmd: "sh run.sh", Report: "junit:report.xml"}))
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Run(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != testrun.Fail {
		t.Fatalf("outcome %s (%s)", res.Outcome, res.Summary)
	}
	for _, want := range []string{"FAIL CalcTest > subtracts", "expected 1 but was 5", "at CalcTest.java:9"} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("output lacks %q:\n%s", want, res.Output)
		}
	}
}

// A directory of reports (Maven's and Gradle's, one per test class): every
// report the run writes there is read, one left from before is not, and
// the new ones are removed once read.
func TestReportDirectory(t *testing.T) {
	t.Parallel()
	suite := func(class, cases string) string {
		return `<testsuite name="` + class + `">` + cases + `</testsuite>`
	}
	write := func(name, xml string) string {
		return "cat > target/surefire-reports/" + name + " <<'EOF'\n" + xml + "\nEOF\n"
	}
	stale := suite("OldTest", `<testcase classname="OldTest" name="gone"><failure message="old"/></testcase>`)
	tests := []struct {
		name   string
		report string // --report junit:REPORT
		script string
		want   testrun.Outcome
		passed int
		failed []string
		errs   string
	}{
		{"two classes", "target/surefire-reports/",
			"mkdir -p target/surefire-reports\n" + write("TEST-AddTest.xml", suite("AddTest", `<testcase classname="AddTest" name="adds"/>`)) +
				write("TEST-SubTest.xml", suite("SubTest", `<testcase classname="SubTest" name="subtracts"><failure message="expected 1 but was 5"/></testcase>`)) +
				"echo 'Tests run: 2, Failures: 1' > target/surefire-reports/SubTest.txt\nexit 1\n",
			testrun.Fail, 1, []string{"SubTest > subtracts"}, ""},
		{"an existing directory without the slash", "target/surefire-reports",
			write("TEST-AddTest.xml", suite("AddTest", `<testcase classname="AddTest" name="adds"/>`)), testrun.Pass, 1, nil, ""},
		{"nothing written", "target/surefire-reports/", "exit 0\n", testrun.Error, 0, nil, "no report in"},
		{"a compile error before any report", "target/surefire-reports/",
			"echo '[ERROR] /p/src/test/java/SubTest.java:[7,9] cannot find symbol' >&2\nexit 1\n", testrun.Broken, 0, nil, "cannot find symbol"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			old := filepath.Join(dir, "target/surefire-reports/TEST-OldTest.xml")
			testenv.WriteFiles(t, dir, map[string]string{"run.sh": tt.script, "target/surefire-reports/TEST-OldTest.xml": stale})
			past := time.Now().Add(-time.Hour)
			if err := os.Chtimes(old, past, past); err != nil {
				t.Fatal(err)
			}
			r, err := testrun.New(testrun.KindJUnit, sandboxed(t, testrun.Options{TestCmd: "sh run.sh", Report: "junit:" + tt.report}))
			if err != nil {
				t.Fatal(err)
			}
			res, err := r.Run(t.Context(), dir)
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != tt.want || res.Passed != tt.passed || !slices.Equal(res.FailedTests, tt.failed) {
				t.Fatalf("outcome %s passed %d failed %q (%s), want %s %d %q", res.Outcome, res.Passed, res.FailedTests, res.Summary, tt.want, tt.passed, tt.failed)
			}
			if tt.errs != "" && !containsLine(res.Errors, tt.errs) {
				t.Errorf("errors %q lack %q", res.Errors, tt.errs)
			}
			left, _ := filepath.Glob(filepath.Join(dir, "target/surefire-reports/*.xml"))
			if len(left) != 1 || left[0] != old {
				t.Errorf("reports left: %v, want only the old one", left)
			}
		})
	}
}
