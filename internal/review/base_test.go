package review_test

import (
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/review"
	"github.com/azero-dev/azero/internal/testenv"
)

// TestAnalyzeAgainstBase compares with another commit than HEAD: what
// `git commit --amend` would make is HEAD's own change plus the index,
// against HEAD's parent.
func TestAnalyzeAgainstBase(t *testing.T) {
	t.Parallel()
	dir := testenv.NewRepo(t, map[string]string{"state.py": numbered("line", 200), "keep.py": "k\n"})
	write(t, dir, "state.py", numbered("line", 10))
	testenv.Git(t, dir, "commit", "-qam", "shrink")
	write(t, dir, "keep.py", "k\nk2\n")
	testenv.Git(t, dir, "add", "keep.py")

	if got := review.Flagged(analyze(t, dir, true)); len(got) != 0 {
		t.Fatalf("against HEAD the staged change flags %v, want nothing", got)
	}
	parent := strings.TrimSpace(testenv.Git(t, dir, "rev-parse", "HEAD^"))
	for _, staged := range []bool{true, false} {
		files, err := review.Analyze(t.Context(), dir, review.AnalyzeOptions{Staged: staged, Base: parent})
		if err != nil {
			t.Fatal(err)
		}
		m := byPath(files)
		if f := m["state.py"]; !f.RequiresReview || f.OriginalLines != 200 || f.LinesAfter() != 10 {
			t.Errorf("staged=%v: state.py = %+v, want flagged 200 -> 10", staged, f)
		}
		if f := m["keep.py"]; f.LinesAdded != 1 || f.RequiresReview {
			t.Errorf("staged=%v: keep.py = %+v, want +1 unflagged", staged, f)
		}
	}
	if _, err := review.Analyze(t.Context(), dir, review.AnalyzeOptions{Base: "--output=/tmp/x"}); err == nil {
		t.Error("a base that is an option was accepted")
	}
}
