package review_test

import (
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/review"
	"github.com/azero-dev/azero/internal/testenv"
)

// A test file is the referee's evidence: a change that deletes any line
// of an existing one (a row of a table test, an assertion, a whole test)
// is flagged, and its banner lists the lines it loses, however small the
// change; the same change to a file that is not a test passes.
func TestATestFileLosingLinesIsFlagged(t *testing.T) {
	t.Parallel()
	table := "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tfor _, c := range []struct{ a, b, want int }{\n" +
		"\t\t{1, 2, 3},\n\t\t{-1, 1, 0},\n\t\t{0, 0, 0},\n\t\t{2, 2, 4},\n\t\t{5, 5, 10},\n\t\t{7, 1, 8},\n\t} {\n\t\tif Add(c.a, c.b) != c.want {\n\t\t\tt.Error(c)\n\t\t}\n\t}\n}\n\n" +
		"func TestSub(t *testing.T) {\n\tif Sub(3, 1) != 2 {\n\t\tt.Error(\"sub\")\n\t}\n}\n" + strings.Repeat("\n// padding\n", 20)
	dir := testenv.NewRepo(t, map[string]string{"calc_test.go": table, "notes_test.txt": table})
	// Three rows and TestSub go; a new test comes.
	eroded := strings.Replace(table, "\t\t{-1, 1, 0},\n\t\t{0, 0, 0},\n", "", 1)
	eroded = strings.Replace(eroded, "\t\t{5, 5, 10},\n", "", 1)
	eroded = strings.Replace(eroded, "func TestSub(t *testing.T) {\n\tif Sub(3, 1) != 2 {\n\t\tt.Error(\"sub\")\n\t}\n}\n",
		"func TestMul(t *testing.T) {\n\tif Mul(3, 2) != 6 {\n\t\tt.Error(\"mul\")\n\t}\n}\n", 1)
	testenv.WriteFiles(t, dir, map[string]string{"calc_test.go": eroded, "notes_test.txt": eroded})
	isTest := func(p string) bool { return strings.HasSuffix(p, "_test.go") }
	files, err := review.Analyze(t.Context(), dir, review.AnalyzeOptions{Tests: isTest})
	if err != nil {
		t.Fatal(err)
	}
	got := byPath(files)
	if f := got["calc_test.go"]; !f.Test || !f.RequiresReview || f.ChangeType != review.Modified || f.ChangeRatio > review.Threshold {
		t.Fatalf("the test file: %+v", f)
	}
	if f := got["notes_test.txt"]; f.Test || f.RequiresReview {
		t.Errorf("a file that is not a test is flagged for the same change: %+v", f)
	}
	diffs, err := review.Diffs(t.Context(), dir, files, review.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	report := review.FormatReport(files, diffs, review.ReportOptions{})
	for _, want := range []string{
		"!! WARNING: MODIFIED: calc_test.go",
		"!! This test file loses 6 lines of its 64",
		"!! The tests are the referee's evidence; this test file loses 6 lines:",
		"!!   -\t\t{-1, 1, 0},", "!!   -\t\t{0, 0, 0},", "!!   -\t\t{5, 5, 10},", "!!   -func TestSub(t *testing.T) {",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
	// Adding to a test file loses nothing: not flagged.
	dir2 := testenv.NewRepo(t, map[string]string{"calc_test.go": table})
	testenv.WriteFiles(t, dir2, map[string]string{"calc_test.go": table + "\nfunc TestMore(t *testing.T) {}\n"})
	if files, err := review.Analyze(t.Context(), dir2, review.AnalyzeOptions{Tests: isTest}); err != nil || len(files) != 1 || files[0].RequiresReview || !files[0].Test {
		t.Errorf("an addition to a test file: %+v (%v)", files, err)
	}
}
