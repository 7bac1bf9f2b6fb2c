package safewrite_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/safewrite"
)

func TestStaleness(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		before string // "" : no file when read
		change func(t *testing.T, path string)
	}{
		{"changed", "v1\n", func(t *testing.T, path string) { writeFile(t, path, "v2\n") }},
		{"appeared", "", func(t *testing.T, path string) { writeFile(t, path, "surprise\n") }},
		{"vanished", "v1\n", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := newProject(t)
			if tt.before != "" {
				writeFile(t, p.path("f.txt"), tt.before)
			}
			_, base, err := safewrite.Read(p.root, "f.txt")
			if err != nil {
				t.Fatal(err)
			}
			tt.change(t, p.path("f.txt"))
			after := tree(t, p.root)
			log := newAuditLog()
			w := &safewrite.Writer{Audit: log.log, Force: true}
			_, err = w.Write(t.Context(), safewrite.Request{Root: p.root, Path: "f.txt", Content: []byte("mine\n"), Base: &base})
			var stale *safewrite.StaleError
			if !errors.As(err, &stale) || !strings.Contains(err.Error(), "changed since azero read it") {
				t.Fatalf("err = %v, want *StaleError", err)
			}
			if fmt.Sprint(tree(t, p.root)) != fmt.Sprint(after) {
				t.Fatal("something was written")
			}
			if recs := log.records(t); len(recs) != 1 || recs[0]["refusal"] != "stale" {
				t.Fatalf("audit = %v", recs)
			}
		})
	}
	// An unchanged file with its Base is written; a proposal carries the
	// same snapshot as Read.
	p := newProject(t)
	writeFile(t, p.path("f.txt"), "v1\n")
	_, base, _ := safewrite.Read(p.root, "f.txt")
	prop, err := safewrite.Propose(safewrite.Request{Root: p.root, Path: "f.txt", Content: []byte("v2\n")})
	if err != nil || prop.Snapshot() != base || base.SHA256 != sha("v1\n") {
		t.Fatalf("proposal snapshot %+v, Read %+v, %v", prop.Snapshot(), base, err)
	}
	if _, err := (&safewrite.Writer{}).Write(t.Context(), safewrite.Request{Root: p.root, Path: "f.txt", Content: []byte("v2\n"), Base: &base}); err != nil {
		t.Fatal(err)
	}
}

func TestEditStrategy(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	old := numbered("line", 1, 300)
	writeFile(t, p.path("big.go"), old)
	w := &safewrite.Writer{Auto: true} // refuses anything needing approval
	edited := strings.Replace(old, "line 150\n", "line 150 edited\n", 1)
	if _, err := w.Write(t.Context(), safewrite.Request{Root: p.root, Path: "big.go", Content: []byte(edited), Strategy: safewrite.Edit}); err == nil || !strings.Contains(err.Error(), "Base") {
		t.Fatalf("edit without a base: err = %v", err)
	}
	_, base, _ := safewrite.Read(p.root, "big.go")
	res, err := w.Write(t.Context(), safewrite.Request{Root: p.root, Path: "big.go", Content: []byte(edited), Strategy: safewrite.Edit, Base: &base, Actor: "implement:coder"})
	if err != nil {
		t.Fatal(err)
	}
	if res.ApprovalRequired || res.AddedLines != 1 || res.DeletedLines != 1 || readFile(t, p.path("big.go")) != edited {
		t.Fatalf("result %+v", res)
	}
	// A stale edit is refused.
	if _, err := w.Write(t.Context(), safewrite.Request{Root: p.root, Path: "big.go", Content: []byte(old), Strategy: safewrite.Edit, Base: &base}); err == nil {
		t.Fatal("a stale edit was written")
	}
	if _, err := w.Write(t.Context(), safewrite.Request{Root: p.root, Path: "new.go", Content: []byte("x"), Strategy: safewrite.Edit, Base: &safewrite.Snapshot{}}); err == nil {
		t.Fatal("an edit created a file")
	}
}

func TestModes(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	writeFile(t, p.path("run.sh"), "#!/bin/sh\necho old\n")
	if err := os.Chmod(p.path("run.sh"), 0o750); err != nil {
		t.Fatal(err)
	}
	w := &safewrite.Writer{}
	res, err := w.Write(t.Context(), safewrite.Request{Root: p.root, Path: "run.sh", Content: []byte("#!/bin/sh\necho new\n"), Mode: 0o600})
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p.path("run.sh")); fi.Mode().Perm() != 0o750 || res.Mode != "0750" {
		t.Fatalf("existing mode not kept: %v, result %s", fi.Mode().Perm(), res.Mode)
	}
	if _, err := w.Write(t.Context(), safewrite.Request{Root: p.root, Path: "secret/key.txt", Content: []byte("k\n"), Mode: 0o600}); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p.path("secret/key.txt")); fi.Mode().Perm() != 0o600 {
		t.Fatalf("new file mode %v, want 0600", fi.Mode().Perm())
	}
}

func TestUnchangedContentIsNotRewritten(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	content := numbered("line", 1, 200)
	writeFile(t, p.path("f.txt"), content)
	if err := os.Chmod(p.path("f.txt"), 0o604); err != nil {
		t.Fatal(err)
	}
	// Writing back what is there needs no approval, writes nothing, and
	// still reports the file.
	res, err := (&safewrite.Writer{}).Write(t.Context(), safewrite.Request{Root: p.root, Path: "f.txt", Content: []byte(content), Strategy: safewrite.Edit, Base: snapshotPtr(t, p, "f.txt")})
	if err != nil || !res.Unchanged || res.NewSHA256 != res.OldSHA256 || res.OldLines != 200 {
		t.Fatalf("result %+v, %v", res, err)
	}
	if tmp := tempFiles(t, p.root); len(tmp) > 0 {
		t.Fatalf("temporary files: %v", tmp)
	}
}

func snapshotPtr(t *testing.T, p project, rel string) *safewrite.Snapshot {
	t.Helper()
	_, snap, err := safewrite.Read(p.root, rel)
	if err != nil {
		t.Fatal(err)
	}
	return &snap
}

func TestDirectoryAndSpecialTargets(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	writeFile(t, p.path("dir/f.txt"), "x\n")
	w := &safewrite.Writer{Force: true}
	if _, err := w.Write(t.Context(), safewrite.Request{Root: p.root, Path: "dir", Content: []byte("x")}); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Fatalf("writing over a directory: %v", err)
	}
	if _, err := w.Write(t.Context(), safewrite.Request{Root: p.root, Path: "dir/f.txt/under-a-file", Content: []byte("x")}); err == nil {
		t.Fatal("wrote below a regular file")
	}
	if _, err := w.Write(t.Context(), safewrite.Request{Root: p.root, Path: "f.txt", Content: []byte("x"), Strategy: "merge"}); err == nil || !strings.Contains(err.Error(), "unknown strategy") {
		t.Fatalf("unknown strategy: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := w.Write(ctx, safewrite.Request{Root: p.root, Path: "late.txt", Content: []byte("x")}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	if _, err := os.Stat(p.path("late.txt")); !os.IsNotExist(err) {
		t.Fatal("written after cancellation")
	}
}

// The governance workflow moves docs/audit/active/<slug> to
// docs/audit/done/<n>-<slug>; lineage and issue files go into new
// directories; cleanup removes files.
func TestMoveAndRemove(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	log := newAuditLog()
	w := &safewrite.Writer{Audit: log.log}
	ctx := t.Context()
	for _, f := range []string{"brief.md", "draft-1.md", "verdict-1.md"} {
		if _, err := w.Write(ctx, safewrite.Request{Root: p.root, Path: "docs/audit/active/fix-login/" + f, Content: []byte(f + "\n"), Actor: "issue:drafter", RunID: "r1"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Move(ctx, p.root, "docs/audit/active/fix-login", "docs/audit/done/42-fix-login", "issue:file", "r1"); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, p.path("docs/audit/done/42-fix-login/draft-1.md")); got != "draft-1.md\n" {
		t.Fatalf("moved content %q", got)
	}
	if _, err := os.Stat(p.path("docs/audit/active/fix-login")); !os.IsNotExist(err) {
		t.Fatal("the source is still there")
	}
	// Never over an existing entry, never into itself, never from nothing.
	writeFile(t, p.path("docs/audit/active/other/x.md"), "x\n")
	for _, tt := range []struct{ from, to, want string }{
		{"docs/audit/active/other", "docs/audit/done/42-fix-login", "already exists"},
		{"docs/audit/active/other", "docs/audit/active/other/inner", "into itself"},
		{"docs/audit/active/missing", "docs/audit/done/1-missing", "no such file"},
	} {
		if err := w.Move(ctx, p.root, tt.from, tt.to, "issue:file", "r1"); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("move %s -> %s: %v, want %q", tt.from, tt.to, err, tt.want)
		}
	}
	if err := w.Remove(ctx, p.root, "docs/audit/done/42-fix-login/verdict-1.md", "cleanup", "r1"); err != nil {
		t.Fatal(err)
	}
	if err := w.Remove(ctx, p.root, "docs/audit/done/42-fix-login", "cleanup", "r1"); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Fatalf("removing a directory: %v", err)
	}
	if err := w.Remove(ctx, p.root, "nothing.txt", "cleanup", "r1"); err == nil {
		t.Fatal("removed nothing without an error")
	}
	var events []string
	for _, r := range log.records(t) {
		events = append(events, r["event"].(string))
	}
	want := "file_write file_write file_write file_move file_write_refused file_write_refused file_write_refused file_remove file_write_refused file_write_refused"
	if strings.Join(events, " ") != want {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(events, " "), want)
	}
	recs := log.records(t)
	checkRecord(t, recs[3], map[string]any{"path": "docs/audit/active/fix-login", "to": "docs/audit/done/42-fix-login", "kind": "directory", "actor": "issue:file", "run_id": "r1"})
	checkRecord(t, recs[7], map[string]any{"path": "docs/audit/done/42-fix-login/verdict-1.md", "old_lines": 1.0, "old_sha256": sha("verdict-1.md\n")})
	checkRecord(t, recs[4], map[string]any{"op": "move", "refusal": "error"})
}

// Leftovers of killed writers are removed by the next write into the
// directory; temporary files of live writers never are.
func TestLeftoverTempFiles(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	writeFile(t, p.path("d/.f.txt.azero-tmp-0123456789abcdef"), "half a write")
	writeFile(t, p.path("d/.other.azero-tmp-ffff"), "another")
	writeFile(t, p.path("d/keep.azero-tmp-notours"), "not hidden, not ours")
	if _, err := (&safewrite.Writer{}).Write(t.Context(), safewrite.Request{Root: p.root, Path: "d/f.txt", Content: []byte("x\n")}); err != nil {
		t.Fatal(err)
	}
	if left := tempFiles(t, p.path("d")); len(left) != 1 || left[0] != "keep.azero-tmp-notours" {
		t.Fatalf("left: %v", left)
	}

	// Many writers in one directory at once: none may lose its temporary
	// file to another's cleanup.
	var wg sync.WaitGroup
	errs := make(chan error, 8*25)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &safewrite.Writer{Force: true}
			for i := range 25 {
				content := fmt.Sprintf("writer %d round %d\n", g, i)
				if _, err := w.Write(context.Background(), safewrite.Request{Root: p.root, Path: fmt.Sprintf("shared/f%d.txt", g), Content: []byte(content)}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for g := range 8 {
		if got := readFile(t, p.path(fmt.Sprintf("shared/f%d.txt", g))); got != fmt.Sprintf("writer %d round 24\n", g) {
			t.Errorf("f%d = %q", g, got)
		}
	}
	if left := tempFiles(t, p.path("shared")); len(left) > 0 {
		t.Fatalf("left: %v", left)
	}
}

func TestDiffIsCapped(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	writeFile(t, p.path("huge.txt"), numbered("old line with some text", 1, 5000))
	prop, err := safewrite.Propose(safewrite.Request{Root: p.root, Path: "huge.txt", Content: []byte(numbered("new line with other text", 1, 5000))})
	if err != nil {
		t.Fatal(err)
	}
	if len(prop.Diff) > safewrite.MaxDiffBytes+200 {
		t.Fatalf("diff is %d bytes", len(prop.Diff))
	}
	if !strings.Contains(prop.Diff, "... diff truncated at 10 KB:") || !strings.Contains(prop.Diff, "more lines) not shown") {
		t.Fatalf("no truncation note: %q", prop.Diff[len(prop.Diff)-200:])
	}
	if prop.Deleted != 5000 || prop.Added != 5000 {
		t.Fatalf("-%d +%d", prop.Deleted, prop.Added)
	}
	// The cut is at a line end and the note counts what is missing.
	body, note, _ := strings.Cut(prop.Diff, "... diff truncated")
	var restBytes, restLines int
	fmt.Sscanf(note, " at 10 KB: %d more bytes (%d more lines)", &restBytes, &restLines)
	if !strings.HasSuffix(body, "\n") || restLines < 9000 || len(body)+restBytes < 5000*2*25 {
		t.Fatalf("body ends %q; rest %d bytes %d lines", body[len(body)-20:], restBytes, restLines)
	}
}

// fullDisk fails every write, like a full disk under the audit log.
type fullDisk struct{}

func (fullDisk) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// TestApprovalNotRecordedIsNotActedOn: a write that needed approval (here
// forced) is not made when its decision cannot be written to the audit log.
func TestApprovalNotRecordedIsNotActedOn(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	old := numbered("line", 1, 200)
	writeFile(t, p.path("big.txt"), old)
	w := &safewrite.Writer{Audit: audit.New(fullDisk{}, nil), Auto: true, Force: true}
	_, err := w.Write(t.Context(), safewrite.Request{Root: p.root, Path: "big.txt", Content: []byte("short\n")})
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "nothing was written") {
		t.Fatalf("err = %v, want the audit log's error and nothing written", err)
	}
	if got := readFile(t, p.path("big.txt")); got != old {
		t.Error("the file was replaced although its approval was not recorded")
	}
	// A small write needs no approval and is made (its record is best effort).
	if _, err := w.Write(t.Context(), safewrite.Request{Root: p.root, Path: "small.txt", Content: []byte("x\n")}); err != nil {
		t.Fatalf("a write without approval: %v", err)
	}
}
