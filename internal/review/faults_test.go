package review_test

// Issue 12, "fail closed under faults": merge conflicts in every mode, the
// first commit of a repository, and banners that say what happened to a
// file whose lines are not the whole story.

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/review"
	"github.com/azero-dev/azero/internal/testenv"
)

// mergeConflict leaves repo in a merge that stopped on conflicts: a.txt
// changed on both sides, gone.txt deleted on one side and changed on the
// other.
func mergeConflict(t *testing.T) string {
	t.Helper()
	repo := testenv.NewRepo(t, map[string]string{"a.txt": numbered("a", 20), "gone.txt": numbered("g", 5), "ok.txt": "ok\n"})
	testenv.Git(t, repo, "checkout", "-q", "-b", "theirs")
	write(t, repo, "a.txt", strings.Replace(numbered("a", 20), "a 10\n", "theirs\n", 1))
	write(t, repo, "gone.txt", numbered("g", 6))
	testenv.Git(t, repo, "commit", "-qam", "theirs")
	testenv.Git(t, repo, "checkout", "-q", "main")
	write(t, repo, "a.txt", strings.Replace(numbered("a", 20), "a 10\n", "ours\n", 1))
	testenv.Git(t, repo, "rm", "-q", "gone.txt")
	testenv.Git(t, repo, "commit", "-qam", "ours")
	if _, err := (gitx.Repo{Dir: repo}).Run(t.Context(), "merge", "theirs"); err == nil {
		t.Fatal("the merge did not stop on a conflict")
	}
	return repo
}

func TestConflictsFailTheAnalysisInEveryMode(t *testing.T) {
	t.Parallel()
	for _, staged := range []bool{false, true} {
		t.Run(map[bool]string{false: "working tree", true: "staged"}[staged], func(t *testing.T) {
			t.Parallel()
			repo := mergeConflict(t)
			files, err := review.Analyze(t.Context(), repo, review.AnalyzeOptions{Staged: staged})
			if !errors.Is(err, review.ErrConflicts) || files != nil {
				t.Fatalf("Analyze = %v, %v; want ErrConflicts and no files", files, err)
			}
			var ce *review.ConflictError
			if !errors.As(err, &ce) || strings.Join(ce.Paths, ",") != "a.txt,gone.txt" {
				t.Errorf("conflicts = %+v, want a.txt and gone.txt", ce)
			}
			for _, want := range []string{"resolve the conflicts", "git add", "a.txt", "gone.txt"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			// The gate refuses: an error, no decision, audited as a failure.
			g, _, log := pipedGate()
			out, err := g.Run(t.Context(), review.GateOptions{Repo: repo, Staged: staged})
			if !errors.Is(err, review.ErrConflicts) || out.Decision != "" {
				t.Fatalf("gate = %+v, %v; want a refusal without a decision", out, err)
			}
			if recs := log.records(t); len(recs) != 1 || recs[0]["event"] != "gate_failed" {
				t.Errorf("audit = %v, want one gate_failed", recs)
			}
			// Conflict markers resolved by hand but not added are still
			// conflicts: the index says so.
			write(t, repo, "a.txt", numbered("a", 20))
			if _, err := review.Analyze(t.Context(), repo, review.AnalyzeOptions{Staged: staged}); !errors.Is(err, review.ErrConflicts) {
				t.Errorf("after editing without git add: %v, want ErrConflicts", err)
			}
			// Resolved and added, the review goes ahead.
			testenv.Git(t, repo, "add", "a.txt")
			testenv.Git(t, repo, "rm", "-q", "gone.txt")
			if _, err := review.Analyze(t.Context(), repo, review.AnalyzeOptions{Staged: staged}); err != nil {
				t.Errorf("after resolving: %v", err)
			}
		})
	}
}

func TestFirstCommitIsReviewedWhenStaged(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"sha1", "sha256"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			repo := t.TempDir()
			testenv.Git(t, repo, "init", "-q", "--object-format="+format)
			write(t, repo, "main.go", numbered("line", 30))
			write(t, repo, "docs/readme.md", numbered("doc", 4))
			write(t, repo, "untracked.txt", "not staged\n")
			if err := os.Symlink("main.go", filepath.Join(repo, "link")); err != nil {
				t.Fatal(err)
			}
			testenv.Git(t, repo, "add", "main.go", "docs/readme.md", "link")
			write(t, repo, "main.go", numbered("line", 31)) // the index keeps 30 lines

			files := analyze(t, repo, true)
			got := byPath(files)
			if len(files) != 3 || got["main.go"].LinesAdded != 30 || got["docs/readme.md"].LinesAdded != 4 || got["link"].LinesAdded != 1 {
				t.Fatalf("first commit = %+v, want the three staged files with their staged lines", files)
			}
			for _, f := range files {
				if f.ChangeType != review.New || f.RequiresReview || f.OriginalLines != 0 {
					t.Errorf("%s = %+v, want NEW, not flagged", f.FilePath, f)
				}
			}
			if l := got["link"]; l.Kind != review.Symlink || l.After != "main.go" {
				t.Errorf("link = %+v, want a symlink to main.go", l)
			}
			// Its diff is the whole file, from the empty tree.
			d, err := review.Diffs(t.Context(), repo, files, review.DiffOptions{Staged: true})
			if err != nil || d["main.go"].Total < 30 || !strings.Contains(strings.Join(d["main.go"].Lines, "\n"), "+line 30") {
				t.Errorf("diff of main.go = %+v, %v", d["main.go"], err)
			}
			// The gate lets it through without a terminal: nothing is lost.
			g, errOut, _ := pipedGate()
			out, err := g.Run(t.Context(), review.GateOptions{Repo: repo, Staged: true})
			if err != nil || out.Decision != review.NotRequired || len(out.Files) != 3 {
				t.Fatalf("gate = %+v, %v\n%s", out, err, errOut)
			}
			// The working tree has nothing to be compared with.
			_, err = review.Analyze(t.Context(), repo, review.AnalyzeOptions{})
			if !errors.Is(err, review.ErrNoCommits) || !strings.Contains(err.Error(), "--staged") {
				t.Errorf("working tree of an unborn repository: %v, want ErrNoCommits pointing at --staged", err)
			}
		})
	}
}

func TestFirstCommitWithNothingStaged(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	testenv.Git(t, repo, "init", "-q")
	write(t, repo, "a.txt", "a\n")
	if files := analyze(t, repo, true); len(files) != 0 {
		t.Errorf("nothing staged: %+v", files)
	}
}

// kindRepo commits a CRLF file, a symbolic link and a submodule, then
// converts the file to LF, retargets the link and moves the submodule.
func kindRepo(t *testing.T) (repo, oldSub, newSub string) {
	t.Helper()
	sub := testenv.NewRepo(t, map[string]string{"s.txt": "1\n"})
	oldSub = strings.TrimSpace(testenv.Git(t, sub, "rev-parse", "HEAD"))
	write(t, sub, "s.txt", "2\n")
	testenv.Git(t, sub, "commit", "-qam", "two")
	newSub = strings.TrimSpace(testenv.Git(t, sub, "rev-parse", "HEAD"))

	crlf := strings.ReplaceAll(numbered("line", 40), "\n", "\r\n")
	repo = testenv.NewRepo(t, map[string]string{"dos.txt": crlf, "target-one": "1\n", "target-two": "2\n"})
	if err := os.Symlink("target-one", filepath.Join(repo, "current")); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "vendor/sub")
	testenv.Git(t, filepath.Join(repo, "vendor/sub"), "checkout", "-q", oldSub)
	testenv.Git(t, repo, "add", "-A")
	testenv.Git(t, repo, "commit", "-qm", "kinds")

	write(t, repo, "dos.txt", numbered("line", 40))
	os.Remove(filepath.Join(repo, "current"))
	if err := os.Symlink("target-two", filepath.Join(repo, "current")); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, filepath.Join(repo, "vendor/sub"), "checkout", "-q", newSub)
	return repo, oldSub, newSub
}

func TestBannersSayWhatHappened(t *testing.T) {
	t.Parallel()
	for _, staged := range []bool{false, true} {
		t.Run(map[bool]string{false: "working tree", true: "staged"}[staged], func(t *testing.T) {
			t.Parallel()
			repo, oldSub, newSub := kindRepo(t)
			if staged {
				testenv.Git(t, repo, "add", "-A")
			}
			files := analyze(t, repo, staged)
			got := byPath(files)
			if len(files) != 3 {
				t.Fatalf("files = %+v", files)
			}
			after := newSub
			if !staged {
				after = "" // git does not hash the working tree's submodule
			}
			want := map[string][3]string{
				"dos.txt":    {string(review.LineEndings), "CRLF", "LF"},
				"current":    {string(review.Symlink), "target-one", "target-two"},
				"vendor/sub": {string(review.Submodule), oldSub, after},
			}
			for path, w := range want {
				f := got[path]
				if string(f.Kind) != w[0] || f.Before != w[1] || f.After != w[2] || !f.RequiresReview {
					t.Errorf("%s = kind %q before %q after %q flagged %v, want %q", path, f.Kind, f.Before, f.After, f.RequiresReview, w)
				}
			}
			d, err := review.Diffs(t.Context(), repo, files, review.DiffOptions{Staged: staged})
			if err != nil {
				t.Fatal(err)
			}
			report := review.FormatReport(files, d, review.ReportOptions{Staged: staged})
			for _, line := range []string{
				"Only the line endings changed (CRLF → LF)",
				"This symbolic link now points to target-two instead of target-one",
				"symbolic link: before → target-one, after → target-two",
				"This submodule moves from commit " + oldSub[:12] + " to commit " + newSub[:12],
				"submodule: before commit " + oldSub[:12] + ", after commit " + newSub[:12],
			} {
				if !strings.Contains(report, line) {
					t.Errorf("report lacks %q:\n%s", line, report)
				}
			}
			if strings.Contains(report, "More than half") {
				t.Errorf("a generic banner is left:\n%s", report)
			}
		})
	}
}

func TestLineEndingsOnlyWhenTheTextIsTheSame(t *testing.T) {
	t.Parallel()
	crlf := strings.ReplaceAll(numbered("line", 10), "\n", "\r\n")
	tests := []struct {
		name, before, after string
		kind                review.Kind
		from, to            string
	}{
		{"LF to CRLF", numbered("line", 10), crlf, review.LineEndings, "LF", "CRLF"},
		{"CRLF to mixed", crlf, strings.Replace(crlf, "\r\n", "\n", 6), review.LineEndings, "CRLF", "mixed"},
		{"converted and edited", crlf, strings.Replace(numbered("line", 10), "line 3\n", "line three\n", 1), "", "", ""},
		{"endings swapped between lines", strings.Repeat("a\r\nb\n", 5), strings.Repeat("a\nb\r\n", 5), review.LineEndings, "mixed", "mixed"},
		{"a CR moved inside each line", crlf, strings.ReplaceAll(numbered("line", 10), "line ", "line\r "), "", "", ""},
		{"CRs added inside lines", numbered("line", 10), strings.ReplaceAll(numbered("line", 10), "\n", "\r\r\n"), "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			repo := testenv.NewRepo(t, map[string]string{"f.txt": tt.before})
			write(t, repo, "f.txt", tt.after)
			for _, staged := range []bool{false, true} {
				if staged {
					testenv.Git(t, repo, "add", "f.txt")
				}
				f := analyze(t, repo, staged)[0]
				if f.Kind != tt.kind || f.Before != tt.from || f.After != tt.to || !f.RequiresReview {
					t.Errorf("staged=%v: %+v, want kind %q %s → %s, flagged", staged, f, tt.kind, tt.from, tt.to)
				}
			}
		})
	}
}

func TestLinkTypeChangesAndDeletions(t *testing.T) {
	t.Parallel()
	repo := testenv.NewRepo(t, map[string]string{"plain": numbered("p", 3), "t": "t\n"})
	for _, l := range []string{"was-link", "gone-link"} {
		if err := os.Symlink("t", filepath.Join(repo, l)); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Git(t, repo, "add", "-A")
	testenv.Git(t, repo, "commit", "-qm", "links")
	os.Remove(filepath.Join(repo, "plain"))
	os.Symlink("t", filepath.Join(repo, "plain"))
	os.Remove(filepath.Join(repo, "was-link"))
	write(t, repo, "was-link", "now a file\n")
	os.Remove(filepath.Join(repo, "gone-link"))
	testenv.Git(t, repo, "add", "-A")
	files := analyze(t, repo, true)
	report := review.FormatReport(files, nil, review.ReportOptions{Staged: true})
	for _, want := range []string{
		"This file is replaced by a symbolic link to t",
		"This symbolic link to t is replaced by a regular file",
		"This symbolic link to t is deleted",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
}
