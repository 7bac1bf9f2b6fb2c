package review_test

// The scenarios of spec #171, section 10 (T010-T150), against real git
// repositories. The interactive ones (080-110) also run end to end through
// the azero command in internal/cli/gate_test.go.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/prompt"
	"github.com/azero-dev/azero/internal/review"
	"github.com/azero-dev/azero/internal/testenv"
)

func TestScenario010NoChanges(t *testing.T) {
	t.Parallel()
	repo := testenv.NewRepo(t, map[string]string{"a.py": numbered("a", 10)})
	if files := analyze(t, repo, false); len(files) != 0 {
		t.Fatalf("Analyze = %+v, want nothing", files)
	}
	if files := analyze(t, repo, true); len(files) != 0 {
		t.Fatalf("Analyze staged = %+v, want nothing", files)
	}
	g, errOut, log := pipedGate()
	out, err := g.Run(t.Context(), review.GateOptions{Repo: repo})
	if err != nil || out.Decision != review.NotRequired || len(out.Flagged) != 0 || out.Files == nil {
		t.Fatalf("Run = %+v, %v; want NOT_REQUIRED with empty (not nil) lists", out, err)
	}
	if !strings.Contains(errOut.String(), "No changes") {
		t.Errorf("report %q does not say there are no changes", errOut)
	}
	if recs := log.records(t); len(recs) != 1 || recs[0]["decision"] != "NOT_REQUIRED" {
		t.Errorf("audit = %v", recs)
	}
}

func TestScenario020SmallModification(t *testing.T) {
	t.Parallel()
	repo := testenv.NewRepo(t, map[string]string{"mod.py": numbered("line", 100)})
	content := numbered("line", 100)
	for i := 1; i <= 10; i++ {
		content = strings.Replace(content, fmt.Sprintf("line %d\n", i*9), fmt.Sprintf("changed %d\n", i*9), 1)
	}
	write(t, repo, "mod.py", content)
	f := analyze(t, repo, false)[0]
	want := review.FileAnalysis{FilePath: "mod.py", LinesAdded: 10, LinesDeleted: 10, OriginalLines: 100,
		ChangeRatio: 0.1, ChangeType: review.Modified}
	if f != want {
		t.Fatalf("analysis = %+v, want %+v", f, want)
	}
}

func TestScenario030MajorReplacement(t *testing.T) {
	t.Parallel()
	repo := testenv.NewRepo(t, map[string]string{"big.py": numbered("line", 270)})
	// 200 lines deleted, 70 kept, 50 added.
	kept := strings.SplitAfterN(numbered("line", 270), "\n", 201)[200]
	write(t, repo, "big.py", kept+numbered("new", 50))
	f := analyze(t, repo, false)[0]
	if f.LinesDeleted != 200 || f.LinesAdded != 50 || f.OriginalLines != 270 {
		t.Fatalf("counts = %+v, want -200 +50 of 270", f)
	}
	// The ratio, 250/540, is below the threshold: REPLACED is flagged
	// anyway.
	if f.ChangeType != review.Replaced || !f.RequiresReview || math.Abs(f.ChangeRatio-250.0/540) > 1e-9 {
		t.Fatalf("analysis = %+v, want REPLACED, flagged, ratio 0.463", f)
	}
}

func TestT040ChangeRatio(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                     string
		original, added, deleted int
		want                     float64
	}{
		{"untouched", 100, 0, 0, 0},
		{"ten lines rewritten", 100, 10, 10, 0.1},
		{"half rewritten", 100, 50, 50, 0.5},
		{"pr 165", 270, 56, 270, 326.0 / 540},
		{"grown tenfold is capped", 10, 100, 0, 1},
		{"emptied", 270, 0, 270, 0.5},
		{"no original lines, some added", 0, 5, 0, 1},
		{"no original lines, nothing changed", 0, 0, 0, 0},
	}
	for _, tt := range tests {
		if got := review.ChangeRatio(tt.original, tt.added, tt.deleted); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%s: ChangeRatio(%d, %d, %d) = %v, want %v", tt.name, tt.original, tt.added, tt.deleted, got, tt.want)
		}
	}
}

func TestScenario040NewFile(t *testing.T) {
	t.Parallel()
	repo := testenv.NewRepo(t, map[string]string{"old.py": "x\n"})
	write(t, repo, "pkg/new.py", numbered("new", 100))
	for _, staged := range []bool{false, true} {
		if staged {
			testenv.Git(t, repo, "add", "pkg/new.py")
		}
		f := analyze(t, repo, staged)
		want := review.FileAnalysis{FilePath: "pkg/new.py", LinesAdded: 100, ChangeRatio: 1, ChangeType: review.New}
		if len(f) != 1 || f[0] != want {
			t.Errorf("staged=%v: analysis = %+v, want %+v", staged, f, want)
		}
	}
}

func TestScenario050FileDeleted(t *testing.T) {
	t.Parallel()
	repo := testenv.NewRepo(t, map[string]string{"gone.py": numbered("g", 40), "keep.py": "k\n"})
	remove(t, repo, "gone.py")
	want := review.FileAnalysis{FilePath: "gone.py", LinesDeleted: 40, OriginalLines: 40, ChangeRatio: 1,
		ChangeType: review.Deleted, RequiresReview: true}
	if f := analyze(t, repo, false); len(f) != 1 || f[0] != want {
		t.Fatalf("working tree: %+v, want %+v", f, want)
	}
	if f := analyze(t, repo, true); len(f) != 0 {
		t.Fatalf("staged before git rm: %+v, want nothing", f)
	}
	testenv.Git(t, repo, "rm", "-q", "gone.py")
	if f := analyze(t, repo, true); len(f) != 1 || f[0] != want {
		t.Fatalf("staged: %+v, want %+v", f, want)
	}
}

func TestT050T060Classify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                     string
		original, added, deleted int
		want                     review.ChangeType
	}{
		{"T050 partial change", 100, 10, 10, review.Modified},
		{"T050 only additions", 100, 300, 0, review.Modified},
		{"T050 exactly half deleted", 100, 5, 50, review.Modified},
		{"T060 majority deleted and new added", 100, 5, 51, review.Replaced},
		{"T060 pr 165", 270, 56, 270, review.Replaced},
		{"T060 spec scenario 030", 270, 50, 200, review.Replaced},
		{"majority deleted, nothing added", 100, 0, 80, review.Modified},
	}
	for _, tt := range tests {
		if got := review.Classify(tt.original, tt.added, tt.deleted); got != tt.want {
			t.Errorf("%s: Classify(%d, %d, %d) = %s, want %s", tt.name, tt.original, tt.added, tt.deleted, got, tt.want)
		}
	}
}

func TestRequiresReview(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		f    review.FileAnalysis
		want bool
	}{
		{"replaced below the ratio", review.FileAnalysis{ChangeType: review.Replaced, ChangeRatio: 0.3, OriginalLines: 270, LinesDeleted: 200, LinesAdded: 50}, true},
		{"deleted", review.FileAnalysis{ChangeType: review.Deleted, ChangeRatio: 1}, true},
		{"new is never flagged", review.FileAnalysis{ChangeType: review.New, ChangeRatio: 1, LinesAdded: 5000}, false},
		{"modified at the threshold", review.FileAnalysis{ChangeType: review.Modified, ChangeRatio: 0.5, OriginalLines: 100, LinesAdded: 50, LinesDeleted: 50}, false},
		{"modified above the threshold", review.FileAnalysis{ChangeType: review.Modified, ChangeRatio: 0.51, OriginalLines: 100, LinesAdded: 102}, true},
		{"emptied file lost everything", review.FileAnalysis{ChangeType: review.Modified, ChangeRatio: 0.5, OriginalLines: 270, LinesDeleted: 270}, true},
		{"lost most lines", review.FileAnalysis{ChangeType: review.Modified, ChangeRatio: 0.3, OriginalLines: 100, LinesDeleted: 60}, true},
		{"lost half", review.FileAnalysis{ChangeType: review.Modified, ChangeRatio: 0.25, OriginalLines: 100, LinesDeleted: 50}, false},
	}
	for _, tt := range tests {
		if got := review.RequiresReview(tt.f); got != tt.want {
			t.Errorf("%s: RequiresReview = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestScenario060MultipleFilesMixed(t *testing.T) {
	t.Parallel()
	repo := testenv.NewRepo(t, map[string]string{"small.py": numbered("s", 100), "swap.py": numbered("old", 60)})
	write(t, repo, "small.py", strings.Replace(numbered("s", 100), "s 7\n", "seven\n", 1))
	write(t, repo, "swap.py", numbered("brand new", 20))
	write(t, repo, "added.py", numbered("a", 30))
	files := analyze(t, repo, false)
	got := map[string]string{}
	for _, f := range files {
		got[f.FilePath] = fmt.Sprintf("%s %v", f.ChangeType, f.RequiresReview)
	}
	want := map[string]string{"added.py": "NEW false", "small.py": "MODIFIED false", "swap.py": "REPLACED true"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("analysis = %v, want %v", got, want)
	}
	g, errOut, _ := pipedGate()
	out, _ := g.Run(t.Context(), review.GateOptions{Repo: repo})
	if !reflect.DeepEqual(out.Flagged, []string{"swap.py"}) {
		t.Errorf("flagged = %q, want only swap.py", out.Flagged)
	}
	report := errOut.String()
	if n := strings.Count(report, "WARNING"); n != 1 {
		t.Errorf("%d WARNING banners, want 1:\n%s", n, report)
	}
	for _, quiet := range []string{"WARNING: MODIFIED: small.py", "WARNING: NEW", "+seven"} {
		if strings.Contains(report, quiet) {
			t.Errorf("report shows %q for an unflagged file", quiet)
		}
	}
}

// pr165 builds the files of PR #165: a 270-line state.py, and the 56
// lines that replaced it.
func pr165() (before, after string) {
	var b strings.Builder
	b.WriteString("\"\"\"Workflow state for the TDD workflow.\"\"\"\n\nfrom typing import TypedDict\n\n\n")
	for i := 0; b.Len() > 0 && strings.Count(b.String(), "\n") < 270; i++ {
		fmt.Fprintf(&b, "class Part%d(TypedDict):\n    field_%d: str\n    count_%d: int\n\n", i, i, i)
	}
	before = strings.Join(strings.SplitAfter(b.String(), "\n")[:270], "")
	var a strings.Builder
	a.WriteString("\"\"\"Workflow state (rewritten).\"\"\"\n\nfrom dataclasses import dataclass\n\n\n@dataclass\nclass WorkflowState:\n")
	for i := 0; strings.Count(a.String(), "\n") < 56; i++ {
		fmt.Fprintf(&a, "    attr_%d: str = \"\"\n", i)
	}
	return before, a.String()
}

func TestScenario070And120PR165Recreation(t *testing.T) {
	t.Parallel()
	before, after := pr165()
	if n := strings.Count(before, "\n"); n != 270 {
		t.Fatalf("fixture has %d lines", n)
	}
	if n := strings.Count(after, "\n"); n != 56 {
		t.Fatalf("fixture has %d lines", n)
	}
	repo := testenv.NewRepo(t, map[string]string{"src/workflows/state.py": before, "README.md": "readme\n"})
	write(t, repo, "src/workflows/state.py", after)
	testenv.Git(t, repo, "add", "-A")

	for _, staged := range []bool{false, true} {
		f := analyze(t, repo, staged)
		if len(f) != 1 {
			t.Fatalf("staged=%v: %+v", staged, f)
		}
		if f[0].ChangeType != review.Replaced || !f[0].RequiresReview || f[0].OriginalLines != 270 || f[0].LinesAfter() != 56 {
			t.Fatalf("staged=%v: %+v, want REPLACED and flagged, 270 -> 56 lines", staged, f[0])
		}
	}

	g, errOut, _ := pipedGate()
	out, err := g.Run(t.Context(), review.GateOptions{Repo: repo, Staged: true})
	if !human.Needed(err) || out.Decision != review.AbortedNonInteractive {
		t.Fatalf("Run = %v, %v; want ABORTED_NON_INTERACTIVE needing a human", out.Decision, err)
	}
	report := errOut.String()
	for _, want := range []string{
		"src/workflows/state.py | ",
		" 1 file changed, ",
		"WARNING: REPLACED: src/workflows/state.py",
		"before: 270 lines, after: 56 lines",
		"270 → 56",
		"More than half of the original lines were deleted",
		"diff --git a/src/workflows/state.py b/src/workflows/state.py",
		"-class Part0(TypedDict):",
		"+class WorkflowState:",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	// The summary line is git's own.
	gitStat := strings.TrimSpace(lastLine(testenv.Git(t, repo, "diff", "--cached", "--stat", "HEAD")))
	if !strings.Contains(report, " "+gitStat+"\n") {
		t.Errorf("summary differs from git's %q:\n%s", gitStat, report)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// approveThrough runs the gate on a real pseudo-terminal, typing answers.
func approveThrough(t *testing.T, repo string, answers ...string) (review.Outcome, error, string, *auditBuffer) {
	t.Helper()
	term, io := newTerminal(t)
	logger, log := newAudit()
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	g := &review.Gate{IO: io, Prompter: prompt.New(io, noEnv, nil), Audit: logger, Now: func() time.Time { return now }}
	type result struct {
		out review.Outcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := g.Run(t.Context(), review.GateOptions{Repo: repo, RunID: "run-1"})
		done <- result{out, err}
	}()
	for i, a := range answers {
		if i == 0 {
			term.WaitFor(t, "Type 'approve' to proceed", 1)
		} else {
			term.WaitFor(t, "in full", i)
		}
		term.Type(t, a)
	}
	select {
	case r := <-done:
		return r.out, r.err, term.Text(), log
	case <-time.After(testenv.Patience):
		t.Fatalf("the gate did not return; screen:\n%s", term.Text())
	}
	return review.Outcome{}, nil, "", nil
}

func flaggedRepo(t *testing.T) string {
	before, after := pr165()
	repo := testenv.NewRepo(t, map[string]string{"state.py": before})
	write(t, repo, "state.py", after)
	return repo
}

func TestScenario080ApprovalAccepted(t *testing.T) {
	t.Parallel()
	out, err, screen, _ := approveThrough(t, flaggedRepo(t), "approve")
	if err != nil || out.Decision != review.Approved || !out.HumanApproved {
		t.Fatalf("Run = %+v, %v; want APPROVED", out, err)
	}
	if !strings.Contains(screen, "WARNING: REPLACED: state.py") {
		t.Errorf("the report was not shown before asking:\n%s", screen)
	}
}

func TestScenario090ApprovalRejected(t *testing.T) {
	t.Parallel()
	out, err, _, log := approveThrough(t, flaggedRepo(t), "reject")
	if out.Decision != review.Rejected || out.HumanApproved || !out.ApprovedAt.IsZero() {
		t.Fatalf("outcome = %+v, want REJECTED without approval", out)
	}
	if !errors.Is(err, review.ErrRejected) || !errors.Is(err, human.ErrAborted) {
		t.Fatalf("err = %v, want ErrRejected and human.ErrAborted (exit 4)", err)
	}
	if recs := log.records(t); len(recs) != 1 || recs[0]["decision"] != "REJECTED" {
		t.Errorf("audit = %v", recs)
	}
}

func TestScenario100EmptyInputAsksAgain(t *testing.T) {
	t.Parallel()
	// Enter, junk and abbreviations never approve; the gate asks again
	// each time until a whole word comes.
	out, err, screen, _ := approveThrough(t, flaggedRepo(t), "", "y", "yes", "approv", "reject")
	if out.HumanApproved || out.Decision != review.Rejected || !errors.Is(err, human.ErrAborted) {
		t.Fatalf("Run = %+v, %v; want no approval", out, err)
	}
	if n := strings.Count(screen, "in full"); n != 4 {
		t.Errorf("asked again %d times, want 4:\n%s", n, screen)
	}
}

func TestScenario110NoBypass(t *testing.T) {
	// Not parallel: it sets environment variables.
	// The Gate type has nothing that could skip it.
	typ := reflect.TypeOf(review.Gate{})
	for i := range typ.NumField() {
		f := typ.Field(i)
		name := strings.ToLower(f.Name)
		for _, bad := range []string{"auto", "yes", "force", "skip", "bypass", "assume", "noninteractive"} {
			if strings.Contains(name, bad) {
				t.Errorf("Gate has a field %s", f.Name)
			}
		}
		if f.Type.Kind() == reflect.Bool {
			t.Errorf("Gate has a boolean field %s", f.Name)
		}
	}
	// The environment an --auto run would set changes nothing: the human
	// is still asked (and here, still asked again after junk).
	for _, kv := range [][2]string{{"AZERO_AUTO", "1"}, {"CI", "true"}, {"AZERO_YES", "1"}} {
		t.Setenv(kv[0], kv[1])
	}
	out, err, screen, _ := approveThrough(t, flaggedRepo(t), "auto", "approve")
	if err != nil || !out.HumanApproved || !strings.Contains(screen, "Type 'approve' to proceed") {
		t.Fatalf("Run = %+v, %v; the prompt must still be shown and answered", out, err)
	}
}

func TestScenario130ApprovalLogging(t *testing.T) {
	t.Parallel()
	out, err, _, log := approveThrough(t, flaggedRepo(t), "approve")
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC); !out.ApprovedAt.Equal(want) {
		t.Errorf("ApprovedAt = %v, want %v", out.ApprovedAt, want)
	}
	recs := log.records(t)
	if len(recs) != 1 {
		t.Fatalf("audit records = %v, want one", recs)
	}
	r := recs[0]
	if _, err := time.Parse(time.RFC3339, fmt.Sprint(r["time"])); err != nil {
		t.Errorf("time %v is not RFC 3339: %v", r["time"], err)
	}
	if r["event"] != "gate_decision" || r["decision"] != "APPROVED" || r["run_id"] != "run-1" || r["channel"] != human.ChannelTerminal ||
		r["repository"] != out.Repository || r["files"] != float64(1) || r["human_approved"] != true {
		t.Errorf("record = %v", r)
	}
	if ff, _ := r["flagged_files"].([]any); len(ff) != 1 || ff[0] != "state.py" {
		t.Errorf("flagged_files = %v, want [state.py]", r["flagged_files"])
	}
}

func TestScenario140NonInteractiveAborts(t *testing.T) {
	t.Parallel()
	repo := flaggedRepo(t)
	g, errOut, log := pipedGate()
	out, err := g.Run(t.Context(), review.GateOptions{Repo: repo})
	var nr *review.NeedsReviewError
	if !errors.As(err, &nr) || !human.Needed(err) || out.Decision != review.AbortedNonInteractive {
		t.Fatalf("Run = %v, %v; want ABORTED_NON_INTERACTIVE and a NeedsHuman error", out.Decision, err)
	}
	if !strings.Contains(err.Error(), "azero gate") || !strings.Contains(err.Error(), "state.py") {
		t.Errorf("error %q does not name the file and what to do", err)
	}
	// Nobody answered: the record does not name the terminal.
	if recs := log.records(t); len(recs) != 1 || recs[0]["decision"] != "ABORTED_NON_INTERACTIVE" || recs[0]["channel"] != human.ChannelUnattended {
		t.Errorf("audit = %v", recs)
	}
	if !strings.Contains(errOut.String(), "WARNING: REPLACED") {
		t.Errorf("the report is not in the output for the log:\n%s", errOut)
	}

	// Nothing flagged and nobody to ask: the commit may go on.
	clean := testenv.NewRepo(t, map[string]string{"a.py": numbered("a", 100)})
	write(t, clean, "a.py", numbered("a", 101))
	out, err = g.Run(t.Context(), review.GateOptions{Repo: clean})
	if err != nil || out.Decision != review.NotRequired || len(out.Files) != 1 {
		t.Fatalf("unflagged: %+v, %v; want NOT_REQUIRED", out, err)
	}
	if recs := log.records(t); len(recs) != 2 || recs[1]["decision"] != "NOT_REQUIRED" || recs[1]["channel"] != human.ChannelUnattended {
		t.Errorf("audit = %v", recs)
	}
}

func TestScenario150LargeDiffTruncation(t *testing.T) {
	t.Parallel()
	repo := testenv.NewRepo(t, map[string]string{"huge.txt": numbered("old", 500)})
	write(t, repo, "huge.txt", numbered("new", 495)) // a 1000-line diff plus headers
	files := analyze(t, repo, false)
	diffs, err := review.Diffs(t.Context(), repo, files, review.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d := diffs["huge.txt"]
	if len(d.Lines) != review.DefaultMaxDiffLines || d.Total != 1000 {
		t.Fatalf("diff kept %d of %d lines, want 500 of 1000", len(d.Lines), d.Total)
	}
	report := review.FormatReport(files, diffs, review.ReportOptions{})
	var diffLines int
	for _, l := range strings.Split(report, "\n") {
		if strings.HasPrefix(l, "-old ") || strings.HasPrefix(l, "+new ") {
			diffLines++
		}
	}
	if diffLines != 500-5 {
		t.Errorf("%d diff lines shown, want the first 500 lines of the diff (495 of them changes)", diffLines)
	}
	if !strings.Contains(report, "... truncated: 500 more lines (see git diff HEAD -- huge.txt)") {
		t.Errorf("no truncation line:\n%s", report[len(report)-300:])
	}
	// A smaller cap is honoured too.
	small := review.FormatReport(files, diffs, review.ReportOptions{MaxDiffLines: 10, Staged: true})
	if !strings.Contains(small, "... truncated: 990 more lines (see git diff --cached -- huge.txt)") {
		t.Errorf("cap 10 not honoured")
	}
}

func TestInteractiveAlwaysAsksEvenWhenNothingIsFlagged(t *testing.T) {
	t.Parallel()
	repo := testenv.NewRepo(t, map[string]string{"a.py": numbered("a", 100)})
	write(t, repo, "a.py", numbered("a", 101))
	out, err, screen, _ := approveThrough(t, repo, "approve")
	if err != nil || out.Decision != review.Approved || len(out.Flagged) != 0 {
		t.Fatalf("Run = %+v, %v", out, err)
	}
	if !strings.Contains(screen, " a.py | 1 +") || !strings.Contains(screen, "Commit the changes to 1 file?") {
		t.Errorf("report or question missing:\n%s", screen)
	}
}

func TestTerminalWithoutAnswers(t *testing.T) {
	t.Parallel()
	repo := flaggedRepo(t)
	// Input ends (Ctrl-D) before an answer: nobody answered.
	io, _, _, _ := iostreams.Test()
	io.SetTTY(true, false, true)
	logger, log := newAudit()
	g := &review.Gate{IO: io, Prompter: prompt.New(io, noEnv, nil), Audit: logger}
	out, err := g.Run(t.Context(), review.GateOptions{Repo: repo})
	if !human.Needed(err) || out.Decision != review.AbortedNonInteractive || out.HumanApproved {
		t.Fatalf("at end of input: %+v, %v; want ABORTED_NON_INTERACTIVE needing a human", out.Decision, err)
	}
	// Nobody answered: the record does not name the terminal.
	if recs := log.records(t); len(recs) != 1 || recs[0]["decision"] != "ABORTED_NON_INTERACTIVE" || recs[0]["channel"] != human.ChannelUnattended {
		t.Errorf("audit = %v", recs)
	}

	// Interrupted while asking: no decision, the context's error.
	term, tty := newTerminal(t)
	logger, log = newAudit()
	g = &review.Gate{IO: tty, Prompter: prompt.New(tty, noEnv, nil), Audit: logger}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		out, err := g.Run(ctx, review.GateOptions{Repo: repo})
		if out.Decision != "" || out.HumanApproved {
			err = fmt.Errorf("decided %s after an interrupt", out.Decision)
		}
		done <- err
	}()
	term.WaitFor(t, "Type 'approve' to proceed", 1)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	case <-time.After(testenv.Patience):
		t.Fatal("the gate ignored the interrupt")
	}
	if recs := log.records(t); len(recs) != 0 {
		t.Errorf("an interrupted gate recorded %v", recs)
	}
}
