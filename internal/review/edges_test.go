package review_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/review"
	"github.com/azero-dev/azero/internal/testenv"
)

// oddPaths are names that break naive handling of git output.
var oddPaths = []string{
	"with space.py",
	`with "quotes".py`,
	"it's.py",
	"new\nline.py",
	"tab\there.py",
	"ünïcödé/日本語.py",
	`back\slash.py`,
	"-dash.py",
	"*.py",
	":(glob)magic.py",
	"esc\x1b[2Jape.py",
	"bidi\u202eyp.txt",
}

func TestOddPathsAreAnalysedAndDiffed(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for _, p := range oddPaths {
		files[p] = numbered("old", 20)
	}
	repo := testenv.NewRepo(t, files)
	for _, p := range oddPaths {
		write(t, repo, p, numbered("new", 5)) // REPLACED
	}
	write(t, repo, "untracked dir/new\tfile "+"\"q\".py", numbered("n", 3))

	for _, staged := range []bool{false, true} {
		if staged {
			testenv.Git(t, repo, "add", "-A")
		}
		got := byPath(analyze(t, repo, staged))
		for _, p := range oddPaths {
			f, ok := got[p]
			if !ok || f.ChangeType != review.Replaced || !f.RequiresReview || f.OriginalLines != 20 || f.LinesAfter() != 5 {
				t.Errorf("staged=%v %q: %+v (found %v), want REPLACED 20 -> 5", staged, p, f, ok)
			}
		}
		if f := got["untracked dir/new\tfile \"q\".py"]; f.ChangeType != review.New || f.LinesAdded != 3 {
			t.Errorf("staged=%v: untracked odd name: %+v", staged, f)
		}
		if len(got) != len(oddPaths)+1 {
			t.Errorf("staged=%v: %d files, want %d", staged, len(got), len(oddPaths)+1)
		}
	}

	g, errOut, _ := pipedGate()
	out, _ := g.Run(t.Context(), review.GateOptions{Repo: repo})
	if len(out.Flagged) != len(oddPaths) {
		t.Fatalf("flagged %q", out.Flagged)
	}
	report := errOut.String()
	if strings.Contains(report, "no diff available") {
		t.Errorf("a flagged file's diff was not found:\n%s", report)
	}
	if strings.Count(report, "+new 5") != len(oddPaths) {
		t.Errorf("not every file's diff is shown:\n%s", report)
	}
	// Names reach the terminal quoted: no raw newline inside a name, no
	// escape sequence, no bidi override.
	for _, bad := range []string{"new\nline", "\x1b[2J", "\u202e"} {
		if strings.Contains(report, bad) {
			t.Errorf("report contains raw %q", bad)
		}
	}
	for _, want := range []string{`"new\nline.py"`, `"esc\x1b[2Jape.py"`, `"bidi\u202eyp.txt"`, "ünïcödé/日本語.py", "with space.py"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %s", want)
		}
	}
}

func TestRenames(t *testing.T) {
	t.Parallel()
	repo := testenv.NewRepo(t, map[string]string{"pure.py": numbered("p", 50), "edited.py": numbered("e", 50), "gutted.py": numbered("g", 50)})
	if err := os.Mkdir(filepath.Join(repo, "moved"), 0o755); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, repo, "mv", "pure.py", "moved/pure.py")
	testenv.Git(t, repo, "mv", "edited.py", "moved/edited with space.py")
	write(t, repo, "moved/edited with space.py", numbered("e", 50)+"one more\n")
	testenv.Git(t, repo, "mv", "gutted.py", "moved/gutted.py")
	write(t, repo, "moved/gutted.py", numbered("g", 30)+numbered("x", 3))
	testenv.Git(t, repo, "add", "-A")
	for _, staged := range []bool{false, true} {
		got := byPath(analyze(t, repo, staged))
		want := map[string]review.FileAnalysis{
			"moved/pure.py": {FilePath: "moved/pure.py", OldPath: "pure.py", OriginalLines: 50, ChangeType: review.Modified},
			"moved/edited with space.py": {FilePath: "moved/edited with space.py", OldPath: "edited.py", LinesAdded: 1,
				OriginalLines: 50, ChangeRatio: 0.01, ChangeType: review.Modified},
		}
		for p, w := range want {
			if got[p] != w {
				t.Errorf("staged=%v %s: %+v, want %+v", staged, p, got[p], w)
			}
		}
		if g := got["moved/gutted.py"]; g.OldPath != "gutted.py" || g.LinesDeleted != 20 || g.LinesAdded != 3 || g.ChangeType != review.Modified {
			t.Errorf("staged=%v gutted rename: %+v", staged, g)
		}
		if len(got) != 3 {
			t.Errorf("staged=%v: %d files (a rename must not show as delete + add): %v", staged, len(got), got)
		}
	}
	// Rewritten beyond recognition, a moved file is a deletion (flagged)
	// and a new file.
	write(t, repo, "moved/pure.py", numbered("q", 10))
	testenv.Git(t, repo, "add", "-A")
	got := byPath(analyze(t, repo, true))
	if got["pure.py"].ChangeType != review.Deleted || !got["pure.py"].RequiresReview || got["moved/pure.py"].ChangeType != review.New {
		t.Errorf("rewritten move: %+v", got)
	}
}

func TestRenamedAndReplacedIsFlaggedWithItsDiff(t *testing.T) {
	t.Parallel()
	// Long lines kept, most (short) lines deleted: git still sees a rename,
	// and more than half of the lines are gone.
	long := strings.Repeat("keep ", 200) + "\n"
	var before strings.Builder
	for range 10 {
		before.WriteString(long)
	}
	after := before.String() + "added\n"
	before.WriteString(numbered("s", 40))
	repo := testenv.NewRepo(t, map[string]string{"old name.py": before.String()})
	testenv.Git(t, repo, "mv", "old name.py", "new\nname.py")
	write(t, repo, "new\nname.py", after)
	files := analyze(t, repo, false)
	want := review.FileAnalysis{FilePath: "new\nname.py", OldPath: "old name.py", LinesAdded: 1, LinesDeleted: 40,
		OriginalLines: 50, ChangeRatio: 0.41, ChangeType: review.Replaced, RequiresReview: true}
	if len(files) != 1 || files[0] != want {
		t.Fatalf("analysis = %+v, want %+v", files, want)
	}
	g, errOut, _ := pipedGate()
	g.Run(t.Context(), review.GateOptions{Repo: repo})
	report := errOut.String()
	for _, w := range []string{"old name.py => \"new\\nname.py\"", "renamed from old name.py", "rename to \"new\\nname.py\"", "-s 40", "+added"} {
		if !strings.Contains(report, w) {
			t.Errorf("report lacks %q:\n%s", w, report)
		}
	}
}

// TestRenameWithAnEdit: `git mv a b`, then an edit of b, whether the edit
// is staged or not, analysed staged and against the working tree, with
// rename detection on or off in the repository's configuration (the gate
// asks for it itself). Comparing the working tree, git hashes the edited b
// to pair it with a, and prints that id although it never stores the
// object: the analysis must read b from disk, not ask git for the object
// (it failed with "object ... missing from the repository").
func TestRenameWithAnEdit(t *testing.T) {
	t.Parallel()
	var long strings.Builder
	for i := range 10 {
		fmt.Fprintf(&long, "%s%d\n", strings.Repeat("keep this long line ", 50), i)
	}
	const old, moved = "module.py", "pkg/module.py"
	pure := review.FileAnalysis{FilePath: moved, OldPath: old, OriginalLines: 120, ChangeType: review.Modified}
	tests := []struct {
		name           string
		before, after  string
		want           []review.FileAnalysis
		flaggedInPatch []string // in the gate's report when the edit is in the working tree
	}{
		{
			// Twelve lines replaced one for one: as many deleted as added,
			// so the new side was asked of git to compare line endings.
			name:   "most lines kept",
			before: numbered("line", 120),
			after:  strings.Replace(numbered("line", 120), numbered("line", 12), numbered("edited", 12), 1),
			want: []review.FileAnalysis{{FilePath: moved, OldPath: old, LinesAdded: 12, LinesDeleted: 12, OriginalLines: 120,
				ChangeRatio: review.ChangeRatio(120, 12, 12), ChangeType: review.Modified}},
		},
		{
			// Eighty of the 120 lines replaced, but the long lines kept:
			// git still pairs the two names, and the file is REPLACED.
			name:   "most lines replaced",
			before: long.String() + numbered("s", 110),
			after:  long.String() + numbered("new", 80) + strings.TrimPrefix(numbered("s", 110), numbered("s", 80)),
			want: []review.FileAnalysis{{FilePath: moved, OldPath: old, LinesAdded: 80, LinesDeleted: 80, OriginalLines: 120,
				ChangeRatio: review.ChangeRatio(120, 80, 80), ChangeType: review.Replaced, RequiresReview: true}},
			flaggedInPatch: []string{"rename from module.py", "rename to pkg/module.py", "-s 1", "+new 80"},
		},
		{
			// Rewritten beyond git's similarity threshold, the two names
			// are not paired: the old one is deleted (flagged), the new one
			// is new.
			name:   "rewritten beyond recognition",
			before: numbered("line", 120),
			after:  numbered("other", 120),
			want: []review.FileAnalysis{
				{FilePath: old, LinesDeleted: 120, OriginalLines: 120, ChangeRatio: 1, ChangeType: review.Deleted, RequiresReview: true},
				{FilePath: moved, LinesAdded: 120, ChangeRatio: 1, ChangeType: review.New},
			},
			flaggedInPatch: []string{"deleted file mode", "-line 120"},
		},
	}
	for _, tt := range tests {
		for _, renames := range []string{"true", "false"} {
			for _, stageEdit := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s/diff.renames=%s/edit staged=%v", tt.name, renames, stageEdit), func(t *testing.T) {
					t.Parallel()
					repo := testenv.NewRepo(t, map[string]string{old: tt.before, "other.py": "x = 1\n"})
					testenv.Git(t, repo, "config", "diff.renames", renames)
					if err := os.Mkdir(filepath.Join(repo, "pkg"), 0o755); err != nil {
						t.Fatal(err)
					}
					testenv.Git(t, repo, "mv", old, moved)
					write(t, repo, moved, tt.after)
					if stageEdit {
						testenv.Git(t, repo, "add", moved)
					}
					for _, staged := range []bool{false, true} {
						files, err := review.Analyze(t.Context(), repo, review.AnalyzeOptions{Staged: staged})
						if err != nil {
							t.Fatalf("staged=%v: %v", staged, err)
						}
						for i := range files {
							files[i].AfterLines = 0
						}
						want := tt.want
						if staged && !stageEdit {
							want = []review.FileAnalysis{pure} // the index holds the move, not the edit
						}
						if !reflect.DeepEqual(files, want) {
							t.Errorf("staged=%v:\n got %+v\nwant %+v", staged, files, want)
						}
					}
					// The gate compares the working tree: the edit is in it
					// either way.
					g, errOut, _ := pipedGate()
					out, err := g.Run(t.Context(), review.GateOptions{Repo: repo})
					flagged := review.Flagged(tt.want)
					wantDecision := review.NotRequired
					if len(flagged) > 0 {
						wantDecision = review.AbortedNonInteractive
					}
					if out.Decision != wantDecision || (err != nil) != (len(flagged) > 0) || (err != nil && !human.Needed(err)) {
						t.Fatalf("gate = %v, %v; want %v\n%s", out.Decision, err, wantDecision, errOut)
					}
					if !slices.Equal(out.Flagged, flagged) {
						t.Errorf("flagged %q, want %q", out.Flagged, flagged)
					}
					report := errOut.String()
					if len(tt.want) == 1 && !strings.Contains(report, "module.py => pkg/module.py") {
						t.Errorf("the report does not show the rename:\n%s", report)
					}
					for _, w := range tt.flaggedInPatch {
						if !strings.Contains(report, w) {
							t.Errorf("report lacks %q:\n%s", w, report)
						}
					}
				})
			}
		}
	}
}

// TestRenamedLinkRetargeted: a link moved with git mv and pointed
// elsewhere. Git does not pair links whose targets differ, and it hashes
// the new link's target, comparing the working tree, without storing it.
func TestRenamedLinkRetargeted(t *testing.T) {
	t.Parallel()
	repo := testenv.NewRepo(t, nil)
	const target = "very/long/path/to/some/target/file-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.txt"
	if err := os.Symlink(target, filepath.Join(repo, "l1")); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, repo, "add", "l1")
	testenv.Git(t, repo, "commit", "-q", "-m", "link")
	testenv.Git(t, repo, "mv", "l1", "l2")
	if err := os.Remove(filepath.Join(repo, "l2")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target+".bak", filepath.Join(repo, "l2")); err != nil {
		t.Fatal(err)
	}
	for _, stage := range []bool{false, true} {
		if stage {
			testenv.Git(t, repo, "add", "l2")
		}
		got := byPath(analyze(t, repo, stage))
		if l1 := got["l1"]; l1.ChangeType != review.Deleted || l1.Kind != review.Symlink || l1.Before != target {
			t.Errorf("staged=%v l1: %+v", stage, l1)
		}
		if l2 := got["l2"]; l2.ChangeType != review.New || l2.Kind != review.Symlink || l2.After != target+".bak" {
			t.Errorf("staged=%v l2: %+v", stage, l2)
		}
	}
}

func TestBinaryFiles(t *testing.T) {
	t.Parallel()
	repo := testenv.NewRepo(t, map[string]string{"img.png": "\x89PNG\x00\x01\x02", "old.bin": "\x00gone"})
	write(t, repo, "img.png", "\x89PNG\x00\x01\x03more")
	remove(t, repo, "old.bin")
	write(t, repo, "new.bin", "abc\x00def\n")
	write(t, repo, "late-nul.txt", strings.Repeat("x", 9000)+"\x00\n") // NUL after git's 8000 bytes: text
	got := byPath(analyze(t, repo, false))
	want := map[string]review.FileAnalysis{
		"img.png":      {FilePath: "img.png", ChangeRatio: 1, ChangeType: review.Replaced, RequiresReview: true, Binary: true},
		"old.bin":      {FilePath: "old.bin", ChangeRatio: 1, ChangeType: review.Deleted, RequiresReview: true, Binary: true},
		"new.bin":      {FilePath: "new.bin", ChangeType: review.New, Binary: true},
		"late-nul.txt": {FilePath: "late-nul.txt", LinesAdded: 1, ChangeRatio: 1, ChangeType: review.New},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("analysis:\n%+v\nwant\n%+v", got, want)
	}
	// git agrees about the staged ones.
	testenv.Git(t, repo, "add", "-A")
	staged := byPath(analyze(t, repo, true))
	if !staged["new.bin"].Binary || staged["late-nul.txt"].Binary {
		t.Errorf("staged binary flags differ from git's: %+v", staged)
	}
	report := review.FormatReport(analyze(t, repo, true), nil, review.ReportOptions{})
	if !strings.Contains(report, " img.png      | Bin") || !strings.Contains(report, "binary file: no line counts") {
		t.Errorf("binary files not shown as such:\n%s", report)
	}
}

func TestUntrackedIgnoredAndStaged(t *testing.T) {
	t.Parallel()
	repo := testenv.NewRepo(t, map[string]string{".gitignore": "*.log\nbuild/\n", "tracked.py": numbered("t", 10)})
	write(t, repo, "debug.log", "ignored\n")
	write(t, repo, "build/out.py", "ignored\n")
	write(t, repo, "notes.md", "one\ntwo") // no final newline: still 2 lines
	write(t, repo, "empty.py", "")
	write(t, repo, "tracked.py", numbered("t", 11))
	if err := os.Symlink("tracked.py", filepath.Join(repo, "link.py")); err != nil {
		t.Fatal(err)
	}
	got := byPath(analyze(t, repo, false))
	names := make([]string, 0, len(got))
	for p := range got {
		names = append(names, p)
	}
	if !reflect.DeepEqual(got["notes.md"], review.FileAnalysis{FilePath: "notes.md", LinesAdded: 2, ChangeRatio: 1, ChangeType: review.New}) ||
		got["empty.py"].ChangeType != review.New || got["empty.py"].LinesAdded != 0 ||
		got["link.py"].LinesAdded != 1 || got["tracked.py"].LinesAdded != 1 || len(got) != 4 {
		t.Fatalf("working tree analysis = %v", got)
	}
	// --staged: only the index. Nothing is staged yet.
	if f := analyze(t, repo, true); len(f) != 0 {
		t.Fatalf("staged analysis = %+v, want nothing", f)
	}
	testenv.Git(t, repo, "add", "notes.md")
	write(t, repo, "notes.md", "one\ntwo\nthree\n") // unstaged edit on top
	f := analyze(t, repo, true)
	if len(f) != 1 || f[0].FilePath != "notes.md" || f[0].LinesAdded != 2 {
		t.Fatalf("staged analysis = %+v, want notes.md as staged (2 lines)", f)
	}
	if w := byPath(analyze(t, repo, false))["notes.md"]; w.LinesAdded != 3 {
		t.Errorf("working tree sees %+v, want 3 lines", w)
	}
}

func TestEmptiedAndEmptyFiles(t *testing.T) {
	t.Parallel()
	repo := testenv.NewRepo(t, map[string]string{"state.py": numbered("s", 270), "was-empty.py": "", "mode.sh": "echo\n"})
	write(t, repo, "state.py", "")
	write(t, repo, "was-empty.py", "now\n")
	if err := os.Chmod(filepath.Join(repo, "mode.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	got := byPath(analyze(t, repo, false))
	// Emptying a file scores exactly 0.5 by the formula; it lost all of its
	// content and is flagged.
	if f := got["state.py"]; f.ChangeType != review.Modified || f.ChangeRatio != 0.5 || !f.RequiresReview || f.LinesAfter() != 0 {
		t.Errorf("emptied file: %+v, want MODIFIED 0.5 flagged", f)
	}
	if f := got["was-empty.py"]; f.OriginalLines != 0 || f.ChangeRatio != 1 || f.ChangeType != review.Modified {
		t.Errorf("file that was empty: %+v", f)
	}
	if f := got["mode.sh"]; f.ChangeType != review.Modified || f.RequiresReview || f.LinesAdded+f.LinesDeleted != 0 {
		t.Errorf("mode change: %+v", f)
	}
	report := review.FormatReport(analyze(t, repo, false), nil, review.ReportOptions{})
	if !strings.Contains(report, "This file lost 270 of its 270 lines.") {
		t.Errorf("report:\n%s", report)
	}
}

func TestSubdirectoryAnalysesTheWholeRepository(t *testing.T) {
	t.Parallel()
	repo := testenv.NewRepo(t, map[string]string{"a/b/c.py": "c\n", "top.py": numbered("t", 4)})
	remove(t, repo, "top.py")
	write(t, repo, "a/new.py", "n\n")
	got := analyze(t, repo+"/a/b", false)
	if len(got) != 2 || got[0].FilePath != "a/new.py" || got[1].FilePath != "top.py" {
		t.Fatalf("analysis from a subdirectory = %+v, want repository-relative paths of the whole tree", got)
	}
}

func TestNotARepositoryAndNoCommits(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	_, err := review.Analyze(t.Context(), outside, review.AnalyzeOptions{})
	if !errors.Is(err, gitx.ErrNotRepository) || !strings.Contains(err.Error(), "git init") {
		t.Errorf("outside git: %v, want ErrNotRepository saying what to do", err)
	}
	fresh := t.TempDir()
	testenv.Git(t, fresh, "init", "-q")
	write(t, fresh, "a.py", "a\n")
	_, err = review.Analyze(t.Context(), fresh, review.AnalyzeOptions{})
	if !errors.Is(err, review.ErrNoCommits) || !strings.Contains(err.Error(), "first commit") {
		t.Errorf("no commits: %v, want ErrNoCommits saying what to do", err)
	}
	// The gate fails closed on both, records it, and decides nothing.
	g, _, log := pipedGate()
	for _, dir := range []string{outside, fresh, filepath.Join(outside, "missing")} {
		out, err := g.Run(t.Context(), review.GateOptions{Repo: dir})
		if err == nil || out.Decision != "" {
			t.Errorf("%s: Run = %+v, %v; want an error and no decision", dir, out, err)
		}
	}
	for _, r := range log.records(t) {
		if r["event"] != "gate_failed" {
			t.Errorf("audit record %v, want gate_failed", r)
		}
	}
}

func TestUnmergedIndexIsAnError(t *testing.T) {
	t.Parallel()
	repo := testenv.NewRepo(t, map[string]string{"f": numbered("l", 5)})
	testenv.Git(t, repo, "checkout", "-q", "-b", "other")
	write(t, repo, "f", numbered("l", 6))
	testenv.Git(t, repo, "commit", "-qam", "other")
	testenv.Git(t, repo, "checkout", "-q", "main")
	write(t, repo, "f", numbered("l", 4)+"X\n")
	testenv.Git(t, repo, "commit", "-qam", "main")
	// The merge stops with a conflict (exit 1): the index holds it.
	if _, err := (gitx.Repo{Dir: repo}).Run(t.Context(), "merge", "other"); err == nil {
		t.Fatal("merge succeeded; the test needs a conflict")
	}
	_, err := review.Analyze(t.Context(), repo, review.AnalyzeOptions{Staged: true})
	if err == nil || !strings.Contains(err.Error(), "merge conflicts") {
		t.Fatalf("staged analysis during a conflict: %v, want an error about the conflict", err)
	}
}

func TestNestedRepositoryIsNew(t *testing.T) {
	t.Parallel()
	repo := testenv.NewRepo(t, map[string]string{"a": "a\n"})
	inner := filepath.Join(repo, "vendor", "lib")
	if err := os.MkdirAll(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, inner, "init", "-q")
	write(t, inner, "x.go", "package x\n")
	testenv.Git(t, inner, "add", "-A")
	testenv.Git(t, inner, "commit", "-qm", "inner")
	got := analyze(t, repo, false)
	if len(got) != 1 || got[0].FilePath != "vendor/lib/" || got[0].ChangeType != review.New || got[0].RequiresReview {
		t.Fatalf("nested repository: %+v", got)
	}
}

func TestReportNeutralisesTerminalEscapes(t *testing.T) {
	t.Parallel()
	evil := "x = 1\n\x1b[1A\x1b[2K# the line above is hidden\rOVERWRITE\n\u202eevil\u202c\n\xff\n"
	repo := testenv.NewRepo(t, map[string]string{"evil.py": numbered("ok", 10)})
	write(t, repo, "evil.py", evil)
	g, errOut, _ := pipedGate()
	g.Run(t.Context(), review.GateOptions{Repo: repo})
	report := errOut.String()
	for _, raw := range []string{"\x1b", "\r", "\u202e", "\xff"} {
		if strings.Contains(report, raw) {
			t.Errorf("report contains raw %q", raw)
		}
	}
	for _, shown := range []string{"+^[[1A^[[2K# the line above is hidden^MOVERWRITE", "+<U+202E>evil<U+202C>", `+\xff`} {
		if !strings.Contains(report, shown) {
			t.Errorf("report lacks %q:\n%s", shown, report)
		}
	}
}

func TestReportColour(t *testing.T) {
	t.Parallel()
	repo := flaggedRepo(t)
	files := analyze(t, repo, false)
	diffs, err := review.Diffs(t.Context(), repo, files, review.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tty, _, _, _ := iostreams.Test()
	tty.SetTTY(true, true, true)
	tty.SetColor(true)
	coloured := review.FormatReport(files, diffs, review.ReportOptions{Color: tty.ColorScheme()})
	for _, want := range []string{"\x1b[31m-class Part0", "\x1b[32m+class WorkflowState", "!! WARNING: REPLACED"} {
		if !strings.Contains(coloured, want) {
			t.Errorf("coloured report lacks %q", want)
		}
	}
	piped, _, _, _ := iostreams.Test()
	plain := review.FormatReport(files, diffs, review.ReportOptions{Color: piped.ColorScheme()})
	if strings.Contains(plain, "\x1b") {
		t.Error("report to a pipe contains escape sequences")
	}
	// A plain report read back (a stored run, a question) is coloured the
	// same way, and classifying it loses nothing.
	if again := review.ColorizeReport(plain, tty.ColorScheme()); again != coloured {
		t.Errorf("ColorizeReport of the plain report differs from the coloured report:\n%q\n%q", again, coloured)
	}
	var back []string
	for _, l := range review.ClassifyReport(plain) {
		back = append(back, l.Text())
	}
	if strings.Join(back, "\n") != plain {
		t.Error("ClassifyReport lost text")
	}
	noColor, _, _, _ := iostreams.Test()
	noColor.SetTTY(true, true, true)
	noColor.SetColor(false) // what NO_COLOR does
	if strings.Contains(review.FormatReport(files, diffs, review.ReportOptions{Color: noColor.ColorScheme()}), "\x1b") {
		t.Error("report with colour off contains escape sequences")
	}
}

func TestStatSummaryMatchesGit(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i, n := range []int{3, 40, 200, 1000} {
		files[string(rune('a'+i))+".txt"] = numbered("x", n)
	}
	repo := testenv.NewRepo(t, files)
	write(t, repo, "a.txt", numbered("y", 1))
	write(t, repo, "b.txt", numbered("x", 45))
	write(t, repo, "c.txt", numbered("x", 100))
	remove(t, repo, "d.txt")
	testenv.Git(t, repo, "add", "-A")
	ours := review.FormatReport(analyze(t, repo, true), nil, review.ReportOptions{})
	git := testenv.Git(t, repo, "diff", "--cached", "--stat=80", "HEAD")
	// Names, counts and the summary line are git's; bars are scaled to
	// at most 40 characters.
	columns := func(stat string, maxBar int) (rows []string, summary string) {
		for _, line := range strings.Split(strings.TrimRight(stat, "\n"), "\n") {
			name, rest, ok := strings.Cut(line, "|")
			if !ok {
				summary = line
				continue
			}
			rows = append(rows, strings.TrimSpace(name)+" "+strings.Fields(rest)[0])
			if f := strings.Fields(rest); len(f) == 2 && len(f[1]) > maxBar {
				t.Errorf("bar wider than 40: %q", line)
			}
		}
		return rows, summary
	}
	ourStat, _, _ := strings.Cut(ours, "\n\n")
	gotRows, gotSummary := columns(ourStat, 40)
	wantRows, wantSummary := columns(git, 80)
	if !reflect.DeepEqual(gotRows, wantRows) || gotSummary != wantSummary {
		t.Errorf("stat:\n%s\ngit:\n%s", ourStat, git)
	}
}

func TestProgressIsReported(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i := range 50 {
		files[filepathName(i)] = numbered("x", 3)
	}
	repo := testenv.NewRepo(t, files)
	for i := range 50 {
		write(t, repo, filepathName(i), numbered("y", 3))
	}
	var mu sync.Mutex
	var last [2]int
	calls := 0
	_, err := review.Analyze(t.Context(), repo, review.AnalyzeOptions{Progress: func(done, total int) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		last = [2]int{done, total}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if calls == 0 || last != [2]int{50, 50} {
		t.Errorf("progress called %d times, last %v; want a final 50/50", calls, last)
	}
}

func filepathName(i int) string {
	return "f" + string(rune('a'+i/26)) + string(rune('a'+i%26)) + ".txt"
}

func TestDiffsBeyondTheCommandLine(t *testing.T) {
	t.Parallel()
	// 400 flagged files with 300-byte names: more than fits on git's
	// command line, so the whole diff is read and split, still once.
	files := map[string]string{"unflagged.txt": numbered("u", 100)}
	dir := strings.Repeat("d", 100) + "/" + strings.Repeat("e", 100) + "/"
	name := func(i int) string { return fmt.Sprintf("%s%s%04d.txt", dir, strings.Repeat("f", 95), i) }
	for i := range 400 {
		files[name(i)] = numbered("old", 4)
	}
	repo := testenv.NewRepo(t, files)
	for i := range 400 {
		write(t, repo, name(i), numbered("new", 2))
	}
	write(t, repo, "unflagged.txt", numbered("u", 101))
	all := analyze(t, repo, false)
	var flagged []review.FileAnalysis
	for _, f := range all {
		if f.RequiresReview {
			flagged = append(flagged, f)
		}
	}
	if len(flagged) != 400 {
		t.Fatalf("%d flagged, want 400", len(flagged))
	}
	diffs, err := review.Diffs(t.Context(), repo, flagged, review.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) != 400 {
		t.Fatalf("%d diffs, want only the 400 flagged files", len(diffs))
	}
	if _, ok := diffs["unflagged.txt"]; ok {
		t.Error("an unflagged file's diff was kept")
	}
	d := diffs[name(7)]
	if d.Total != 11 || d.Lines[0] != "diff --git a/"+name(7)+" b/"+name(7) || d.Lines[len(d.Lines)-1] != "+new 2" {
		t.Errorf("diff of one file = %q (%d lines)", d.Lines, d.Total)
	}
}

func TestAllDiffsShowsEveryFileWithUntrackedOnes(t *testing.T) {
	t.Parallel()
	repo := testenv.NewRepo(t, map[string]string{"a.go": "package a\n\nfunc A() int { return 1 }\n"})
	write(t, repo, "a.go", "package a\n\nfunc A() int { return 2 }\n")
	write(t, repo, "new file.go", "package a\n\nfunc B() {}\n")
	files := analyze(t, repo, false)
	diffs, err := review.Diffs(t.Context(), repo, files, review.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"diff --git a/new file.go b/new file.go", "new file (untracked)", "--- /dev/null", "+++ b/new file.go",
		"@@ -0,0 +1,3 @@", "+package a", "+", "+func B() {}"}
	if d := diffs["new file.go"]; d.Total != len(want) || !slices.Equal(d.Lines, want) {
		t.Errorf("untracked file's diff = %q (total %d)", d.Lines, d.Total)
	}
	short := review.FormatReport(files, diffs, review.ReportOptions{})
	if strings.Contains(short, "+func B() {}") || strings.Contains(short, "return 2") {
		t.Errorf("without AllDiffs, unflagged files' diffs are shown:\n%s", short)
	}
	full := review.FormatReport(files, diffs, review.ReportOptions{AllDiffs: true})
	for _, want := range []string{"-func A() int { return 1 }", "+func A() int { return 2 }", "+func B() {}", "The change:"} {
		if !strings.Contains(full, want) {
			t.Errorf("AllDiffs report lacks %q:\n%s", want, full)
		}
	}
}
