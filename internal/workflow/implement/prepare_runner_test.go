package implement

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/testenv"
	"github.com/azero-dev/azero/internal/testrun"
)

// A project azero has no runner for (a Maven one, say) is run by its own
// command and read from its JUnit report, without --runner junit.
func TestPrepareRunnerOfACommandWithItsReport(t *testing.T) {
	t.Parallel()
	design := "# 5 - Feature: greet\n\n## Files Changed\n\n| File | Change Type | Description |\n|---|---|---|\n" +
		"| `src/test/java/GreetTest.java` | Add | tests |\n| `src/main/java/Greet.java` | Add | greet |\n"
	repo := testenv.NewRepo(t, map[string]string{"pom.xml": "<project/>\n", "src/main/java/App.java": "class App {}\n",
		"src/test/java/AppTest.java": "class AppTest {}\n"})
	tests := []struct {
		name, runner, testCmd, report string
		want                          string // the runner, or the error
	}{
		{"report decides", "", "mvn -q test", "junit:target/surefire-reports/TEST-all.xml", testrun.KindJUnit},
		{"named runner wins", "pytest", "mvn -q test", "junit:target/report.xml", testrun.KindPytest},
		{"nothing to tell by", "", "", "", "cannot tell which test runner"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, _, err := Prepare(t.Context(), Inputs{DesignPath: filepath.Join(repo, "design.md"), Design: []byte(design), Dir: repo,
				Runner: tt.runner, TestCmd: tt.testCmd, Report: tt.report, Coder: "mock:scripted", StateDir: t.TempDir(), RunID: "r1"})
			switch {
			case err != nil && !strings.Contains(err.Error(), tt.want):
				t.Fatalf("Prepare: %v, want %q", err, tt.want)
			case err == nil && s.Runner != tt.want:
				t.Fatalf("runner %q, want %q", s.Runner, tt.want)
			}
		})
	}
}
