package safewrite_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/safewrite"
)

// The scenarios of spec #173, section 10.1, by ID. 030 and 160 also run
// through a real pseudo-terminal in approve_test.go.
func TestScenarios(t *testing.T) {
	t.Parallel()
	tests := []struct {
		id, name string
		run      func(t *testing.T, p project)
	}{
		{"010", "new file is created without approval", func(t *testing.T, p project) {
			w := &safewrite.Writer{Approver: mustNotAsk(t), Auto: true}
			res, err := w.Write(t.Context(), safewrite.Request{Root: p.root, Path: "deep/new/dir/file.py", Content: []byte("x = 1\n"), Actor: "test"})
			if err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, p.path("deep/new/dir/file.py")); got != "x = 1\n" {
				t.Fatalf("content = %q", got)
			}
			if !res.Created || res.ApprovalRequired || res.Approval != safewrite.ApprovalNotRequired || res.OldLines != 0 || res.NewLines != 1 {
				t.Fatalf("result = %+v", res)
			}
			fi, _ := os.Stat(p.path("deep/new/dir/file.py"))
			if fi.Mode().Perm() != 0o644 {
				t.Fatalf("mode = %v, want 0644", fi.Mode().Perm())
			}
		}},
		{"020", "small existing file is replaced without approval", func(t *testing.T, p project) {
			writeFile(t, p.path("small.py"), numbered("old", 1, 50))
			w := &safewrite.Writer{Approver: mustNotAsk(t)}
			res, err := w.Write(t.Context(), safewrite.Request{Root: p.root, Path: "small.py", Content: []byte("new\n")})
			if err != nil {
				t.Fatal(err)
			}
			if readFile(t, p.path("small.py")) != "new\n" || res.OldLines != 50 || res.ApprovalRequired {
				t.Fatalf("result = %+v", res)
			}
		}},
		{"030", "large existing file requires approval", func(t *testing.T, p project) {
			writeFile(t, p.path("large.py"), numbered("old", 1, 150))
			asked := 0
			w := &safewrite.Writer{Approver: approverFunc(func(_ context.Context, prop safewrite.Proposal) (safewrite.Decision, error) {
				asked++
				if prop.Warning != "about to replace 150 lines with 1 lines" || !prop.RequiresApproval {
					t.Errorf("proposal shown: warning %q, requires approval %v", prop.Warning, prop.RequiresApproval)
				}
				return safewrite.Decision{Approved: true, Strategy: safewrite.Replace}, nil
			})}
			res, err := w.Write(t.Context(), safewrite.Request{Root: p.root, Path: "large.py", Content: []byte("new\n")})
			if err != nil {
				t.Fatal(err)
			}
			if asked != 1 || res.Approval != safewrite.ApprovalApproved || readFile(t, p.path("large.py")) != "new\n" {
				t.Fatalf("asked %d times, result %+v", asked, res)
			}
		}},
		{"040", "auto mode refuses a large file", func(t *testing.T, p project) {
			old := numbered("old", 1, 150)
			writeFile(t, p.path("large.py"), old)
			for _, approver := range []safewrite.Approver{nil, mustNotAsk(t)} {
				w := &safewrite.Writer{Auto: true, Approver: approver}
				_, err := w.Write(t.Context(), safewrite.Request{Root: p.root, Path: "large.py", Content: []byte("new\n")})
				var ae *safewrite.ApprovalError
				if !errors.As(err, &ae) || !errors.Is(err, safewrite.ErrNeedsApproval) {
					t.Fatalf("err = %v, want *ApprovalError", err)
				}
				wantHuman := approver == nil
				if human.Needed(err) != wantHuman {
					t.Errorf("with approver %v: NeedsHuman = %v, want %v", approver != nil, human.Needed(err), wantHuman)
				}
				if !strings.Contains(err.Error(), "--force") {
					t.Errorf("the error does not say how to proceed: %v", err)
				}
			}
			if readFile(t, p.path("large.py")) != old {
				t.Fatal("the file changed")
			}
		}},
		{"050", "auto mode with force replaces", func(t *testing.T, p project) {
			writeFile(t, p.path("large.py"), numbered("old", 1, 150))
			w := &safewrite.Writer{Auto: true, Force: true}
			res, err := w.Write(t.Context(), safewrite.Request{Root: p.root, Path: "large.py", Content: []byte("new\n")})
			if err != nil {
				t.Fatal(err)
			}
			if readFile(t, p.path("large.py")) != "new\n" || res.Approval != safewrite.ApprovalForced || !res.ApprovalRequired {
				t.Fatalf("result = %+v", res)
			}
		}},
		{"060", "append adds the content at the end", func(t *testing.T, p project) {
			writeFile(t, p.path("large.py"), numbered("old", 1, 150)+"last line without newline")
			w := &safewrite.Writer{Approver: mustNotAsk(t), Auto: true}
			res, err := w.Write(t.Context(), safewrite.Request{Root: p.root, Path: "large.py", Content: []byte("appended\n"), Strategy: safewrite.Append})
			if err != nil {
				t.Fatal(err)
			}
			want := numbered("old", 1, 150) + "last line without newline\nappended\n"
			if got := readFile(t, p.path("large.py")); got != want {
				t.Fatalf("content ends %q", got[len(got)-60:])
			}
			if res.ApprovalRequired || res.DeletedLines != 1 || res.NewLines != 152 {
				// The unterminated last line counts as changed: it gains a newline.
				t.Fatalf("result = %+v", res)
			}
		}},
		{"070", "insert puts the content at line 50", func(t *testing.T, p project) {
			writeFile(t, p.path("large.py"), numbered("old", 1, 150))
			w := &safewrite.Writer{Approver: mustNotAsk(t), Auto: true}
			_, err := w.Write(t.Context(), safewrite.Request{Root: p.root, Path: "large.py", Content: []byte("new A\nnew B\n"), Strategy: safewrite.Insert, Line: 50})
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(readFile(t, p.path("large.py")), "\n")
			if lines[48] != "old 49" || lines[49] != "new A" || lines[50] != "new B" || lines[51] != "old 50" || len(lines) != 153 {
				t.Fatalf("lines 49-52 = %q (of %d)", lines[48:52], len(lines))
			}
		}},
		{"080", "extend adds methods to an existing class", func(t *testing.T, p project) {
			if _, err := exec.LookPath("python3"); err != nil {
				t.Skip("python3 is not installed")
			}
			old := "class Store:\n    def get(self, k):\n        return self.d[k]\n" + numbered("# filler", 1, 120)
			writeFile(t, p.path("store.py"), old)
			w := &safewrite.Writer{Approver: mustNotAsk(t), Auto: true}
			_, err := w.Write(t.Context(), safewrite.Request{Root: p.root, Path: "store.py", Strategy: safewrite.Extend,
				Content: []byte("class Store:\n  def put(self, k, v):\n    self.d[k] = v\n")})
			if err != nil {
				t.Fatal(err)
			}
			want := "class Store:\n    def get(self, k):\n        return self.d[k]\n\n    def put(self, k, v):\n        self.d[k] = v\n" + numbered("# filler", 1, 120)
			if got := readFile(t, p.path("store.py")); got != want {
				t.Fatalf("got:\n%s", got)
			}
		}},
		{"085", "replace strategy replaces the whole file", func(t *testing.T, p project) {
			writeFile(t, p.path("f.txt"), numbered("old", 1, 30))
			w := &safewrite.Writer{}
			res, err := w.Write(t.Context(), safewrite.Request{Root: p.root, Path: "f.txt", Content: []byte("only this\n"), Strategy: safewrite.Replace})
			if err != nil {
				t.Fatal(err)
			}
			if readFile(t, p.path("f.txt")) != "only this\n" || res.Strategy != safewrite.Replace || res.DeletedLines != 30 || res.AddedLines != 1 {
				t.Fatalf("result = %+v", res)
			}
		}},
		{"090", "diff shows the 214 deleted lines of 270 -> 56", func(t *testing.T, p project) {
			old := numbered("state field", 1, 270)
			writeFile(t, p.path("state.py"), old)
			prop, err := safewrite.Propose(safewrite.Request{Root: p.root, Path: "state.py", Content: []byte(numbered("state field", 1, 56))})
			if err != nil {
				t.Fatal(err)
			}
			minus, plus := diffLines(prop.Diff)
			if prop.Deleted != 214 || prop.Added != 0 || minus != 214 || plus != 0 {
				t.Fatalf("deleted %d added %d; diff has -%d +%d", prop.Deleted, prop.Added, minus, plus)
			}
			if !strings.Contains(prop.Diff, "-state field 57\n") || !strings.Contains(prop.Diff, "-state field 270\n") {
				t.Fatal("the diff does not show the deleted lines")
			}
			if prop.Warning != "about to replace 270 lines with 56 lines" {
				t.Fatalf("warning = %q", prop.Warning)
			}
		}},
		{"100", "diff shows the 50 added lines of 50 -> 100", func(t *testing.T, p project) {
			writeFile(t, p.path("grow.py"), numbered("line", 1, 50))
			prop, err := safewrite.Propose(safewrite.Request{Root: p.root, Path: "grow.py", Content: []byte(numbered("line", 1, 100))})
			if err != nil {
				t.Fatal(err)
			}
			minus, plus := diffLines(prop.Diff)
			if prop.Added != 50 || prop.Deleted != 0 || plus != 50 || minus != 0 || !strings.Contains(prop.Diff, "+line 100\n") {
				t.Fatalf("added %d deleted %d; diff -%d +%d:\n%s", prop.Added, prop.Deleted, minus, plus, prop.Diff)
			}
		}},
		{"110", "exactly 100 lines needs no approval", func(t *testing.T, p project) {
			writeFile(t, p.path("hundred.py"), numbered("old", 1, 100))
			w := &safewrite.Writer{Auto: true} // would refuse if approval were needed
			res, err := w.Write(t.Context(), safewrite.Request{Root: p.root, Path: "hundred.py", Content: []byte("new\n")})
			if err != nil || res.ApprovalRequired {
				t.Fatalf("err %v, result %+v", err, res)
			}
		}},
		{"120", "101 lines need approval", func(t *testing.T, p project) {
			old := numbered("old", 1, 101)
			writeFile(t, p.path("hundred-one.py"), old)
			prop, err := safewrite.Propose(safewrite.Request{Root: p.root, Path: "hundred-one.py", Content: []byte("new\n")})
			if err != nil || !prop.RequiresApproval {
				t.Fatalf("err %v, requires approval %v", err, prop.RequiresApproval)
			}
			_, err = (&safewrite.Writer{}).Write(t.Context(), safewrite.Request{Root: p.root, Path: "hundred-one.py", Content: []byte("new\n")})
			if !human.Needed(err) || !errors.Is(err, safewrite.ErrNeedsApproval) {
				t.Fatalf("no approver: err = %v, want a NeedsHuman approval error", err)
			}
			if readFile(t, p.path("hundred-one.py")) != old {
				t.Fatal("the file changed without approval")
			}
		}},
		{"130", "every write and refusal is audited", func(t *testing.T, p project) {
			old := numbered("old", 1, 150)
			writeFile(t, p.path("large.py"), old)
			log := newAuditLog()
			w := &safewrite.Writer{Audit: log.log, Auto: true}
			ctx := t.Context()
			if _, err := w.Write(ctx, safewrite.Request{Root: p.root, Path: "large.py", Content: []byte("new\n"), Actor: "implement:coder", RunID: "run-1"}); err == nil {
				t.Fatal("auto mode replaced a large file")
			}
			w.Force = true
			if _, err := w.Write(ctx, safewrite.Request{Root: p.root, Path: "large.py", Content: []byte("new\n"), Actor: "implement:coder", RunID: "run-1"}); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write(ctx, safewrite.Request{Root: p.root, Path: "../escape.txt", Content: []byte("x"), Actor: "azero write"}); err == nil {
				t.Fatal("escaped the root")
			}
			recs := log.records(t)
			if len(recs) != 4 {
				t.Fatalf("%d audit records, want 4: %v", len(recs), recs)
			}
			refused, approval, wrote, attack := recs[0], recs[1], recs[2], recs[3]
			// The decision on a write that needs approval is recorded before the write.
			checkRecord(t, approval, map[string]any{"event": "file_write_approval", "path": "large.py", "approval": "forced", "run_id": "run-1"})
			want := map[string]any{"event": "file_write_refused", "path": "large.py", "actor": "implement:coder", "run_id": "run-1",
				"refusal": "needs_approval", "old_lines": 150.0, "old_sha256": sha(old), "strategy": "replace"}
			checkRecord(t, refused, want)
			want = map[string]any{"event": "file_write", "path": "large.py", "actor": "implement:coder", "run_id": "run-1",
				"strategy": "replace", "old_lines": 150.0, "new_lines": 1.0, "old_sha256": sha(old), "new_sha256": sha("new\n"),
				"approval": "forced", "created": false}
			checkRecord(t, wrote, want)
			checkRecord(t, attack, map[string]any{"event": "file_write_refused", "path": "../escape.txt", "refusal": "path", "actor": "azero write"})
			for _, r := range recs {
				if _, ok := r["time"]; !ok {
					t.Errorf("record without time: %v", r)
				}
			}
			if !strings.Contains(refused["reason"].(string), "needs approval") {
				t.Errorf("refusal reason = %v", refused["reason"])
			}
		}},
		{"140", "path traversal is refused", func(t *testing.T, p project) {
			before := tree(t, p.outside)
			for _, path := range []string{"../../etc/passwd", "../outside/secret.txt", "/etc/passwd"} {
				_, err := (&safewrite.Writer{Force: true}).Write(t.Context(), safewrite.Request{Root: p.root, Path: path, Content: []byte("pwned\n")})
				var pt *safewrite.PathTraversalError
				if !errors.As(err, &pt) || pt.Path != path || !strings.Contains(err.Error(), path) {
					t.Fatalf("%s: err = %v, want a PathTraversalError naming it", path, err)
				}
				if _, _, err := safewrite.Read(p.root, path); !errors.As(err, &pt) {
					t.Fatalf("Read %s: err = %v, want a PathTraversalError", path, err)
				}
			}
			p.assertOutsideUnchanged(t, before)
		}},
		{"150", "a failed write leaves the original intact", func(t *testing.T, p project) {
			// A human edits the file while approval is pending: the write
			// has its temporary file ready, finds the change just before
			// the rename, and gives up without a trace.
			old := numbered("old", 1, 150)
			writeFile(t, p.path("large.py"), old)
			w := &safewrite.Writer{Approver: approverFunc(func(context.Context, safewrite.Proposal) (safewrite.Decision, error) {
				writeFile(t, p.path("large.py"), old+"edited meanwhile\n")
				return safewrite.Decision{Approved: true, Strategy: safewrite.Replace}, nil
			})}
			_, err := w.Write(t.Context(), safewrite.Request{Root: p.root, Path: "large.py", Content: []byte("new\n")})
			var stale *safewrite.StaleError
			if !errors.As(err, &stale) || !strings.Contains(err.Error(), "re-run") {
				t.Fatalf("err = %v, want *StaleError", err)
			}
			if readFile(t, p.path("large.py")) != old+"edited meanwhile\n" {
				t.Fatal("the human's edit was lost")
			}
			if tmp := tempFiles(t, p.root); len(tmp) > 0 {
				t.Fatalf("temporary files left: %v", tmp)
			}
			// The write itself failing half way is TestAtomicWriteFailure.
		}},
		{"160", "the prompt's decision is applied", func(t *testing.T, p project) {
			writeFile(t, p.path("large.py"), numbered("old", 1, 150))
			w := &safewrite.Writer{Approver: approverFunc(func(context.Context, safewrite.Proposal) (safewrite.Decision, error) {
				return safewrite.Decision{Approved: true, Strategy: safewrite.Append}, nil
			})}
			res, err := w.Write(t.Context(), safewrite.Request{Root: p.root, Path: "large.py", Content: []byte("new\n")})
			if err != nil {
				t.Fatal(err)
			}
			if res.Strategy != safewrite.Append || readFile(t, p.path("large.py")) != numbered("old", 1, 150)+"new\n" {
				t.Fatalf("result %+v", res)
			}
			w.Approver = approverFunc(func(context.Context, safewrite.Proposal) (safewrite.Decision, error) {
				return safewrite.Decision{Approved: false}, nil
			})
			_, err = w.Write(t.Context(), safewrite.Request{Root: p.root, Path: "large.py", Content: []byte("new\n")})
			if !errors.Is(err, human.ErrAborted) {
				t.Fatalf("rejected: err = %v, want human.ErrAborted", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run("T"+tt.id+"_"+strings.ReplaceAll(tt.name, " ", "_"), func(t *testing.T) {
			t.Parallel()
			tt.run(t, newProject(t))
		})
	}
}

func diffLines(diff string) (minus, plus int) {
	for _, l := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "---"), strings.HasPrefix(l, "+++"):
		case strings.HasPrefix(l, "-"):
			minus++
		case strings.HasPrefix(l, "+"):
			plus++
		}
	}
	return minus, plus
}

func checkRecord(t *testing.T, rec map[string]any, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if rec[k] != v {
			t.Errorf("audit %v: %s = %v (%T), want %v", rec["event"], k, rec[k], rec[k], v)
		}
	}
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
