package gitx_test

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/azero-dev/azero/internal/gitx"
)

// formatChange prints c the way `git diff --raw -z --no-abbrev` does.
func formatChange(c gitx.Change) string {
	st := string(c.Status)
	if c.Status == 'R' || c.Status == 'C' {
		st += fmt.Sprintf("%03d", c.Score)
	}
	s := fmt.Sprintf(":%06o %06o %s %s %s\x00", c.OldMode, c.NewMode, c.OldID, c.NewID, st)
	if c.Status == 'R' || c.Status == 'C' {
		s += c.OldPath + "\x00"
	}
	return s + c.Path + "\x00"
}

// formatStat prints s the way `git diff --numstat -z` does.
func formatStat(s gitx.NumStat) string {
	counts := fmt.Sprintf("%d\t%d\t", s.Added, s.Deleted)
	if s.Binary {
		counts = "-\t-\t"
	}
	if s.OldPath != "" {
		return counts + "\x00" + s.OldPath + "\x00" + s.Path + "\x00"
	}
	return counts + s.Path + "\x00"
}

func parseAll(data []byte) ([]gitx.Change, []gitx.NumStat, error) {
	var cs []gitx.Change
	var ss []gitx.NumStat
	err := gitx.ParseDiffZ(bytes.NewReader(data),
		func(c gitx.Change) error { cs = append(cs, c); return nil },
		func(s gitx.NumStat) error { ss = append(ss, s); return nil })
	return cs, ss, err
}

func FuzzParseDiffZ(f *testing.F) {
	id := strings.Repeat("ab", 20)
	zero := strings.Repeat("0", 40)
	f.Add([]byte(":100644 100644 "+id+" "+zero+" M\x00a b\x00:100644 000000 "+id+" "+zero+" D\x00new\nline\x001\t2\ta b\x000\t3\tnew\nline\x00"), "p", "q", byte('R'), 90, 3, 4)
	f.Add([]byte(":100644 100644 "+id+" "+id+" R086\x00old\x00new\x001\t0\t\x00old\x00new\x00"), "\"q\"", "\t", byte('M'), 0, 0, 0)
	f.Add([]byte("-\t-\tbin\x00"), "ü", ":x", byte('C'), 100, 7, 1)
	f.Add([]byte(""), "", "", byte('A'), 0, 1, 0)
	f.Fuzz(func(t *testing.T, data []byte, p1, p2 string, status byte, score, added, deleted int) {
		// Arbitrary bytes: never a panic; whatever parses is stable when
		// printed again.
		cs, ss, err := parseAll(data)
		if err == nil {
			var again strings.Builder
			for _, c := range cs {
				again.WriteString(formatChange(c))
			}
			for _, s := range ss {
				again.WriteString(formatStat(s))
			}
			cs2, ss2, err := parseAll([]byte(again.String()))
			if err != nil || !reflect.DeepEqual(cs, cs2) || !reflect.DeepEqual(ss, ss2) {
				t.Fatalf("reprinted records do not parse the same: %v\n%+v\n%+v", err, cs, cs2)
			}
		}

		// Well-formed records round-trip, whatever the names hold.
		p1 = strings.ReplaceAll(p1, "\x00", "")
		p2 = strings.ReplaceAll(p2, "\x00", "")
		if p1 == "" {
			p1 = "p"
		}
		if p2 == "" {
			p2 = "q"
		}
		st := "ACDMRTUX"[int(status)%8]
		c := gitx.Change{OldMode: 0o100644, NewMode: 0o100755, OldID: id, NewID: zero, Status: st, Path: p1}
		s := gitx.NumStat{Added: abs(added) % 1000000, Deleted: abs(deleted) % 1000000, Path: p1}
		if st == 'R' || st == 'C' {
			c.Score = abs(score) % 101
			c.OldPath, s.OldPath = p2, p2
		}
		if status&0x80 != 0 {
			s = gitx.NumStat{Binary: true, Path: s.Path, OldPath: s.OldPath}
		}
		cs, ss, err = parseAll([]byte(formatChange(c) + formatStat(s)))
		if err != nil || len(cs) != 1 || len(ss) != 1 || cs[0] != c || ss[0] != s {
			t.Fatalf("round trip of %+v / %+v gave %+v / %+v, %v", c, s, cs, ss, err)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -(n + 1)
	}
	return n
}

func FuzzParseBatchHeader(f *testing.F) {
	f.Add(strings.Repeat("a", 40) + " blob 12")
	f.Add("abc missing")
	f.Add("x y z w")
	f.Fuzz(func(t *testing.T, line string) {
		obj, err := gitx.ParseBatchHeader(line)
		if err != nil {
			return
		}
		if obj.Size < 0 || obj.ID == "" || obj.Missing != (obj.Type == "") {
			t.Fatalf("ParseBatchHeader(%q) = %+v", line, obj)
		}
		if !obj.Missing {
			if back := fmt.Sprintf("%s %s %d", obj.ID, obj.Type, obj.Size); back != line {
				t.Fatalf("header %q reprints as %q", line, back)
			}
		}
	})
}

func FuzzQuotePath(f *testing.F) {
	for _, n := range oddNames {
		f.Add(n)
	}
	f.Add("\xff\xfe")
	f.Fuzz(func(t *testing.T, p string) {
		q := gitx.QuotePath(p)
		if strings.ContainsAny(q, "\n\r\t\x00") {
			t.Fatalf("QuotePath(%q) = %q holds a control character", p, q)
		}
		if q != p && !utf8.ValidString(q) {
			t.Fatalf("quoted form %q is not valid UTF-8", q)
		}
		back, err := gitx.UnquotePath(q)
		if err != nil || back != p {
			t.Fatalf("UnquotePath(QuotePath(%q)) = %q, %v", p, back, err)
		}
		// Two names make one unambiguous header.
		h := gitx.DiffHeader(p, p)
		if strings.Contains(h, "\n") {
			t.Fatalf("header %q spans lines", h)
		}
		// Arbitrary input never panics.
		_, _ = gitx.UnquotePath(p)
	})
}

func FuzzScanPatch(f *testing.F) {
	f.Add("diff --git a/x b/x\nindex 1..2\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n")
	f.Add("* Unmerged path x\ndiff --git \"a/new\\nline\" \"b/new\\nline\"\n+x")
	f.Add("")
	f.Fuzz(func(t *testing.T, in string) {
		var rebuilt []string
		err := gitx.ScanPatch(strings.NewReader(in), func(header, line string) error {
			if strings.Contains(line, "\n") || strings.Contains(header, "\n") {
				t.Fatalf("line %q / header %q holds a line feed", line, header)
			}
			if header != "" && !strings.HasPrefix(header, "diff --git ") {
				t.Fatalf("header %q is not a diff header", header)
			}
			if strings.HasPrefix(line, "diff --git ") && header != line {
				t.Fatalf("header line %q not its own header (%q)", line, header)
			}
			rebuilt = append(rebuilt, line)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := strings.TrimSuffix(in, "\n")
		if got := strings.Join(rebuilt, "\n"); got != want {
			t.Fatalf("lines do not rebuild the input:\n%q\n%q", got, want)
		}
	})
}

// formatWorktrees prints list the way `git worktree list --porcelain -z`
// does.
func formatWorktrees(list []gitx.Worktree) string {
	var b strings.Builder
	for _, w := range list {
		b.WriteString("worktree " + w.Path + "\x00")
		if w.Bare {
			b.WriteString("bare\x00")
		}
		if w.Head != "" {
			b.WriteString("HEAD " + w.Head + "\x00")
		}
		if w.Branch != "" {
			b.WriteString("branch refs/heads/" + w.Branch + "\x00")
		}
		if w.Detached {
			b.WriteString("detached\x00")
		}
		if w.Locked {
			if w.LockReason != "" {
				b.WriteString("locked " + w.LockReason + "\x00")
			} else {
				b.WriteString("locked\x00")
			}
		}
		if w.Prunable {
			b.WriteString("prunable gitdir file points to non-existent location\x00")
		}
		b.WriteString("\x00")
	}
	return b.String()
}

func FuzzParseWorktreeList(f *testing.F) {
	id := strings.Repeat("cd", 20)
	f.Add([]byte("worktree /r\x00HEAD "+id+"\x00branch refs/heads/main\x00\x00worktree /w t\x00HEAD "+id+"\x00detached\x00locked initializing\x00\x00"), "/p\nq", "azero/x", "why")
	f.Add([]byte("worktree /bare\x00bare\x00\x00"), "p", "b", "")
	f.Add([]byte("worktree /g\x00HEAD "+id+"\x00branch refs/heads/x\x00prunable gitdir file points to non-existent location\x00\x00"), "", "", "")
	f.Add([]byte("worktree \x00\x00"), "x", "y", "z")
	f.Fuzz(func(t *testing.T, data []byte, path, branch, reason string) {
		// Arbitrary bytes: never a panic; what parses reprints the same.
		list, err := gitx.ParseWorktreeList(data)
		if err == nil {
			again, err := gitx.ParseWorktreeList([]byte(formatWorktrees(list)))
			if err != nil || !reflect.DeepEqual(list, again) && !(len(list) == 0 && len(again) == 0) {
				t.Fatalf("reprinted list parses differently: %v\n%+v\n%+v", err, list, again)
			}
		}
		// A well-formed record round-trips whatever its names hold.
		clean := func(s, def string) string {
			s = strings.ReplaceAll(s, "\x00", "")
			if s == "" {
				return def
			}
			return s
		}
		w := gitx.Worktree{Path: clean(path, "/p"), Head: id, Branch: clean(branch, "b"), Locked: reason != "", LockReason: strings.ReplaceAll(reason, "\x00", "")}
		got, err := gitx.ParseWorktreeList([]byte(formatWorktrees([]gitx.Worktree{{Path: "/main", Head: id, Branch: "main"}, w})))
		if err != nil || len(got) != 2 || got[1] != w {
			t.Fatalf("round trip of %+v gave %+v, %v", w, got, err)
		}
	})
}

// FuzzParseListing: what parses reprints as the same records (untracked
// paths, then each conflicted path once), and any untracked path and
// stage round-trips.
func FuzzParseListing(f *testing.F) {
	id := strings.Repeat("ab", 20)
	f.Add([]byte("? new.txt\x00? dir/\x00M 100644 "+id+" 1\ta\x00M 100644 "+id+" 2\ta\x00"), "with\ttab", uint8(3))
	f.Add([]byte("? \x00"), "new\nline", uint8(1))
	f.Add([]byte("H cached\x00"), "? q", uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, path string, stage uint8) {
		l, err := gitx.ParseListing(data)
		if err == nil {
			for _, p := range append(l.Untracked, l.Unmerged...) {
				if p == "" {
					t.Fatalf("%q gave an empty path: %+v", data, l)
				}
			}
			for i := 1; i < len(l.Unmerged); i++ {
				if l.Unmerged[i] == l.Unmerged[i-1] {
					t.Fatalf("%q lists %s twice in a row", data, l.Unmerged[i])
				}
			}
		}
		path = strings.ReplaceAll(path, "\x00", "")
		if path == "" {
			path = "p"
		}
		rec := fmt.Sprintf("? %s\x00M 100644 %s %d\t%s\x00M 100755 %s 3\t%s\x00", path, id, stage%2+1, path, id, path)
		got, err := gitx.ParseListing([]byte(rec))
		if err != nil || len(got.Untracked) != 1 || got.Untracked[0] != path || len(got.Unmerged) != 1 || got.Unmerged[0] != path {
			t.Fatalf("round trip of %q gave %+v, %v", path, got, err)
		}
	})
}
