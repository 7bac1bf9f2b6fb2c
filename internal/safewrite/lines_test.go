package safewrite_test

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/azero-dev/azero/internal/safewrite"
	"github.com/azero-dev/azero/internal/testenv"
)

// withEndings rewrites text's "\n" line endings as nl.
func withEndings(text, nl string) string { return strings.ReplaceAll(text, "\n", nl) }

// Writing back exactly what a large file holds changes nothing: nobody is
// asked, nothing is written (the file keeps its inode and no temporary
// file appears), and the result and the audit say unchanged.
func TestIdenticalContentOfALargeFileIsUnchanged(t *testing.T) {
	t.Parallel()
	lf := numbered("line", 1, 200)
	tests := []struct {
		name     string
		existing string
		content  string
		strategy safewrite.Strategy
		writer   func(t *testing.T) *safewrite.Writer
	}{
		{"default strategy, nobody to ask", lf, lf, "", func(*testing.T) *safewrite.Writer { return &safewrite.Writer{} }},
		{"replace with an approver", lf, lf, safewrite.Replace, func(t *testing.T) *safewrite.Writer {
			return &safewrite.Writer{Approver: mustNotAsk(t)}
		}},
		{"replace with --auto", lf, lf, safewrite.Replace, func(*testing.T) *safewrite.Writer { return &safewrite.Writer{Auto: true} }},
		{"101 lines", numbered("line", 1, 101), numbered("line", 1, 101), "", func(*testing.T) *safewrite.Writer { return &safewrite.Writer{} }},
		{"CRLF", withEndings(lf, "\r\n"), withEndings(lf, "\r\n"), "", func(*testing.T) *safewrite.Writer { return &safewrite.Writer{} }},
		{"CR only", withEndings(lf, "\r"), withEndings(lf, "\r"), "", func(*testing.T) *safewrite.Writer { return &safewrite.Writer{} }},
		{"no final newline", strings.TrimSuffix(lf, "\n"), strings.TrimSuffix(lf, "\n"), "", func(*testing.T) *safewrite.Writer { return &safewrite.Writer{} }},
		{"append of nothing", lf, "", safewrite.Append, func(t *testing.T) *safewrite.Writer {
			return &safewrite.Writer{Approver: mustNotAsk(t)}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := newProject(t)
			writeFile(t, p.path("big.txt"), tt.existing)
			before, err := os.Stat(p.path("big.txt"))
			if err != nil {
				t.Fatal(err)
			}
			audit := newAuditLog()
			w := tt.writer(t)
			w.Audit = audit.log
			res, err := w.Write(t.Context(), safewrite.Request{Root: p.root, Path: "big.txt", Content: []byte(tt.content), Strategy: tt.strategy})
			if err != nil {
				t.Fatalf("writing back the same content: %v", err)
			}
			if !res.Unchanged || res.ApprovalRequired || res.Approval != safewrite.ApprovalNotRequired || res.Created {
				t.Errorf("result %+v: want unchanged, no approval", res)
			}
			if res.OldSHA256 != res.NewSHA256 || res.AddedLines != 0 || res.DeletedLines != 0 || res.OldLines != res.NewLines {
				t.Errorf("result %+v: want identical old and new", res)
			}
			after, err := os.Stat(p.path("big.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if before.Sys().(*syscall.Stat_t).Ino != after.Sys().(*syscall.Stat_t).Ino || readFile(t, p.path("big.txt")) != tt.existing {
				t.Error("the file was rewritten")
			}
			if tmp := tempFiles(t, p.root); len(tmp) > 0 {
				t.Errorf("temporary files: %v", tmp)
			}
			recs := audit.records(t)
			if len(recs) != 1 || recs[0]["event"] != safewrite.EventWrite || recs[0]["unchanged"] != true || recs[0]["approval_required"] != false {
				t.Errorf("audit %v: want one unchanged file_write", recs)
			}
		})
	}
}

// Lines end with "\n", "\r\n" or a lone "\r": the threshold, the line
// counts, merges and diffs treat a classic Mac OS file as the lines it has.
func TestLoneCarriageReturnsEndLines(t *testing.T) {
	t.Parallel()
	cr := func(s string) string { return withEndings(s, "\r") }
	big := cr(numbered("line", 1, 150))
	tests := []struct {
		name            string
		existing        string
		content         string
		strategy        safewrite.Strategy
		line            int
		approval        bool
		oldLines        int
		newLines        int
		added, deleted  int
		result          string // "" when not checked
		diffHas         []string
		diffLacks       []string
		noApprovalError bool
	}{
		{name: "150 CR lines are over 100", existing: big, content: "x\n", approval: true, oldLines: 150, newLines: 1, added: 1, deleted: 150},
		{name: "100 CR lines are not", existing: cr(numbered("line", 1, 100)), content: "x\n", oldLines: 100, newLines: 1, added: 1, deleted: 100},
		{name: "101 CR lines are", existing: cr(numbered("line", 1, 101)), content: "x\n", approval: true, oldLines: 101, newLines: 1, added: 1, deleted: 101},
		{name: "CR lines without a final CR", existing: strings.TrimSuffix(big, "\r"), content: "x\n", approval: true, oldLines: 150, newLines: 1, added: 1, deleted: 150},
		{name: "mixed endings count each line", existing: strings.Repeat("a\rb\r\nc\n", 40), content: "x\n", approval: true, oldLines: 120, newLines: 1, added: 1, deleted: 120},
		{name: "append keeps CR endings", existing: big, content: "new 1\nnew 2\n", strategy: safewrite.Append,
			oldLines: 150, newLines: 152, added: 2, result: big + "new 1\rnew 2\r",
			diffHas: []string{"+new 1\r\n", "+new 2\r\n"}},
		{name: "append after a last line without its CR", existing: strings.TrimSuffix(big, "\r"), content: "new\n", strategy: safewrite.Append,
			oldLines: 150, newLines: 151, added: 2, deleted: 1, result: big + "new\r"},
		{name: "insert counts CR lines", existing: big, content: "inserted\n", strategy: safewrite.Insert, line: 75,
			oldLines: 150, newLines: 151, added: 1,
			result:  cr(numbered("line", 1, 74)) + "inserted\r" + cr(numbered("line", 75, 76)),
			diffHas: []string{"@@ -72,6 +72,7 @@", " line 74\r\n+inserted\r\n line 75\r\n"}},
		{name: "a one-line edit is a one-line diff", existing: big, content: strings.Replace(big, "line 75\r", "changed\r", 1), strategy: safewrite.Replace,
			approval: true, oldLines: 150, newLines: 150, added: 1, deleted: 1,
			diffHas: []string{"-line 75\r\n+changed\r\n"}, diffLacks: []string{"line 1\r", "line 150\r"}},
		{name: "CR to LF shows every line", existing: cr(numbered("line", 1, 3)), content: numbered("line", 1, 3),
			oldLines: 3, newLines: 3, added: 3, deleted: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := newProject(t)
			writeFile(t, p.path("mac.txt"), tt.existing)
			req := safewrite.Request{Root: p.root, Path: "mac.txt", Content: []byte(tt.content), Strategy: tt.strategy, Line: tt.line}
			prop, err := safewrite.Propose(req)
			if err != nil {
				t.Fatal(err)
			}
			if prop.RequiresApproval != tt.approval || prop.ExistingLines != tt.oldLines || prop.NewLines != tt.newLines ||
				prop.Added != tt.added || prop.Deleted != tt.deleted {
				t.Errorf("approval %v, lines %d -> %d, +%d -%d; want %v, %d -> %d, +%d -%d",
					prop.RequiresApproval, prop.ExistingLines, prop.NewLines, prop.Added, prop.Deleted,
					tt.approval, tt.oldLines, tt.newLines, tt.added, tt.deleted)
			}
			if tt.result != "" && string(prop.Result) != tt.result {
				t.Errorf("result %q, want %q", prop.Result, tt.result)
			}
			for _, s := range tt.diffHas {
				if !strings.Contains(prop.Diff, s) {
					t.Errorf("diff lacks %q:\n%q", s, prop.Diff)
				}
			}
			for _, s := range tt.diffLacks {
				if strings.Contains(prop.Diff, s) {
					t.Errorf("diff has %q:\n%q", s, prop.Diff)
				}
			}
			// The writer applies the same rule: without anybody to ask,
			// a write needing approval is refused and the file kept.
			_, err = (&safewrite.Writer{}).Write(t.Context(), req)
			if tt.approval {
				var ae *safewrite.ApprovalError
				if !errors.As(err, &ae) || ae.ExistingLines != tt.oldLines {
					t.Fatalf("write without approval: %v, want an ApprovalError for %d lines", err, tt.oldLines)
				}
				if readFile(t, p.path("mac.txt")) != tt.existing {
					t.Fatal("the file changed although approval was refused")
				}
				return
			}
			if err != nil {
				t.Fatalf("write: %v", err)
			}
		})
	}
}

// Removing a CR file audits its real line count.
func TestRemoveCountsCRLines(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	writeFile(t, p.path("mac.txt"), withEndings(numbered("line", 1, 150), "\r"))
	audit := newAuditLog()
	if err := (&safewrite.Writer{Audit: audit.log}).Remove(t.Context(), p.root, "mac.txt", "test", ""); err != nil {
		t.Fatal(err)
	}
	recs := audit.records(t)
	if len(recs) != 1 || recs[0]["old_lines"] != float64(150) {
		t.Fatalf("audit %v: want old_lines 150", recs)
	}
}

// Python reads a lone "\r" as a line end, so the class ranges it reports
// are lines of a CR file; the new member goes inside the class, in CR.
func TestExtendPythonCRFile(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "python3")
	existing := "import os\r\rclass A:\r    def f(self):\r        return 1\r\rx = 1\r"
	prop, err := propose(t, "a.py", existing, "class A:\n    def g(self):\n        return 2\n", safewrite.Extend, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := "import os\r\rclass A:\r    def f(self):\r        return 1\r\r    def g(self):\r        return 2\r\rx = 1\r"
	if string(prop.Result) != want {
		t.Fatalf("result %q\nwant   %q", prop.Result, want)
	}
	if prop.RequiresApproval || prop.Deleted != 0 {
		t.Errorf("extend dropped lines: -%d, approval %v", prop.Deleted, prop.RequiresApproval)
	}
}
