package gitx_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/testenv"
)

// oddNames are file names that break naive parsers.
var oddNames = []string{
	"plain.txt",
	"with space.txt",
	`with "quotes".txt`,
	"with\nnewline.txt",
	"with\ttab.txt",
	"ünïcödé-日本.txt",
	`back\slash.txt`,
	"-leading-dash.txt",
	":colon:start.txt",
	"trailing space ",
	"*.txt",
	"esc\x1b[2Jape.txt",
}

func diffZ(t *testing.T, repo string, args ...string) ([]gitx.Change, []gitx.NumStat) {
	t.Helper()
	var changes []gitx.Change
	var stats []gitx.NumStat
	err := gitx.Repo{Dir: repo}.Stream(t.Context(), nil, func(r io.Reader) error {
		return gitx.ParseDiffZ(r, func(c gitx.Change) error { changes = append(changes, c); return nil },
			func(s gitx.NumStat) error { stats = append(stats, s); return nil })
	}, append([]string{"diff", "--raw", "--numstat", "-z", "-M", "--no-abbrev"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	return changes, stats
}

func TestParseDiffZFromRealGit(t *testing.T) {
	t.Parallel()
	files := map[string]string{"renamed-from": strings.Repeat("same line\n", 30), "gone": "a\nb\nc\n",
		"bin": "\x00\x01\x02binary", "link-target": "x\n"}
	for _, n := range oddNames {
		files[n] = "one\ntwo\nthree\n"
	}
	repo := testenv.NewRepo(t, files)
	for _, n := range oddNames {
		write(t, repo, n, "one\nTWO\nthree\nfour\n")
	}
	testenv.Git(t, repo, "mv", "renamed-from", "renamed to\nhere")
	write(t, repo, "renamed to\nhere", strings.Repeat("same line\n", 30)+"extra\n")
	os.Remove(filepath.Join(repo, "gone"))
	write(t, repo, "bin", "\x00\x01\x03binary!")
	if err := os.Symlink("link-target", filepath.Join(repo, "link")); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, repo, "add", "-A")

	changes, stats := diffZ(t, repo, "--cached", "HEAD")
	if len(changes) != len(stats) {
		t.Fatalf("%d raw records but %d numstat records", len(changes), len(stats))
	}
	byPath := map[string]gitx.Change{}
	for i, c := range changes {
		byPath[c.Path] = c
		if s := stats[i]; s.Path != c.Path {
			t.Errorf("record %d: raw path %q, numstat path %q", i, c.Path, s.Path)
		}
	}
	for _, n := range oddNames {
		c, ok := byPath[n]
		if !ok {
			t.Errorf("%q missing from the parsed changes", n)
			continue
		}
		if c.Status != 'M' || c.OldMode != 0o100644 || len(c.OldID) != 40 {
			t.Errorf("%q: change %+v, want M 100644 with a full id", n, c)
		}
	}
	ren := byPath["renamed to\nhere"]
	if ren.Status != 'R' || ren.OldPath != "renamed-from" || ren.Score < 90 {
		t.Errorf("rename = %+v", ren)
	}
	if c := byPath["gone"]; c.Status != 'D' || c.NewMode != 0 || !gitx.ZeroID(c.NewID) {
		t.Errorf("deletion = %+v", c)
	}
	if c := byPath["link"]; c.Status != 'A' || c.NewMode != gitx.ModeSymlink {
		t.Errorf("symlink = %+v", c)
	}
	for i, s := range stats {
		switch s.Path {
		case "bin":
			if !s.Binary {
				t.Errorf("bin: %+v, want binary", s)
			}
		case "renamed to\nhere":
			if s.OldPath != "renamed-from" || s.Added != 1 || s.Deleted != 0 {
				t.Errorf("rename numstat = %+v", s)
			}
		case "gone":
			if s.Deleted != 3 {
				t.Errorf("gone numstat = %+v", s)
			}
		default:
			if slices.Contains(oddNames, s.Path) && (s.Added != 2 || s.Deleted != 1) {
				t.Errorf("numstat %d = %+v, want +2 -1", i, s)
			}
		}
	}
}

// TestDiffHeaderMatchesGit names files with every byte git can store in a
// name and checks that DiffHeader predicts git's patch header exactly.
func TestDiffHeaderMatchesGit(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	var names []string
	for c := 1; c < 256; c++ {
		if c == '/' {
			continue
		}
		name := fmt.Sprintf("f%c%02x", c, c)
		names = append(names, name)
		files[name] = "a\n"
	}
	names = append(names, oddNames...)
	for _, n := range oddNames {
		files[n] = "a\n"
	}
	files["old name\t1"] = strings.Repeat("x\n", 20)
	repo := testenv.NewRepo(t, files)
	for _, n := range names {
		write(t, repo, n, "b\n")
	}
	testenv.Git(t, repo, "mv", "old name\t1", "new \"name\"\n2")
	out := testenv.Git(t, repo, append([]string{"-c", "core.quotePath=true", "diff", "-p", "-M", "HEAD"}, gitx.PatchArgs...)...)
	var got []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "diff --git ") {
			got = append(got, line)
		}
	}
	want := []string{gitx.DiffHeader("old name\t1", "new \"name\"\n2")}
	for _, n := range names {
		want = append(want, gitx.DiffHeader(n, n))
	}
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Errorf("first difference: git %q, DiffHeader %q", got[i], want[i])
				break
			}
		}
		t.Fatalf("git printed %d headers, DiffHeader predicted %d", len(got), len(want))
	}
}

func TestScanPatchSplitsFiles(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for _, n := range oddNames {
		// Content that looks like a header must stay inside its file.
		files[n] = "diff --git a/x b/x\n" + strings.Repeat("line\n", 5)
	}
	repo := testenv.NewRepo(t, files)
	for _, n := range oddNames {
		write(t, repo, n, "diff --git a/y b/y\n"+strings.Repeat("line\n", 5))
	}
	var out bytes.Buffer
	err := gitx.Repo{Dir: repo}.Stream(t.Context(), nil, func(r io.Reader) error {
		_, err := io.Copy(&out, r)
		return err
	}, append([]string{"-c", "core.quotePath=true", "diff", "-p", "HEAD"}, gitx.PatchArgs...)...)
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]int{}
	err = gitx.ScanPatch(&out, func(header, line string) error {
		lines[header]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range oddNames {
		// header, index, ---, +++, @@, -diff, +diff, 3 context lines
		if got := lines[gitx.DiffHeader(n, n)]; got != 10 {
			t.Errorf("%q: %d lines, want 10", n, got)
		}
	}
	if len(lines) != len(oddNames) {
		t.Errorf("%d patches found, want %d: %v", len(lines), len(oddNames), lines)
	}
}

func TestParseDiffZRejectsMalformed(t *testing.T) {
	t.Parallel()
	id := strings.Repeat("a", 40)
	tests := []struct {
		name, in string
	}{
		{"truncated field", ":100644 100644 " + id + " " + id + " M\x00pa"},
		{"missing path", ":100644 100644 " + id + " " + id + " M\x00"},
		{"bad mode", ":10064x 100644 " + id + " " + id + " M\x00p\x00"},
		{"bad id", ":100644 100644 xyz " + id + " M\x00p\x00"},
		{"unknown status", ":100644 100644 " + id + " " + id + " Q\x00p\x00"},
		{"rename without target", ":100644 100644 " + id + " " + id + " R100\x00a\x00"},
		{"bad score", ":100644 100644 " + id + " " + id + " R1x\x00a\x00b\x00"},
		{"numstat without tabs", "12 3 p\x00"},
		{"numstat bad count", "1x\t3\tp\x00"},
		{"numstat half binary", "-\t3\tp\x00"},
		{"numstat rename cut", "1\t2\t\x00old\x00"},
		{"fields count", ":100644 100644 " + id + " M\x00p\x00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if err := gitx.ParseDiffZ(strings.NewReader(tt.in), nil, nil); err == nil {
				t.Errorf("ParseDiffZ(%q) succeeded", tt.in)
			}
		})
	}
}

func TestCallbackErrorStopsParsing(t *testing.T) {
	t.Parallel()
	stop := fmt.Errorf("stop")
	in := "1\t2\ta\x002\t3\tb\x00"
	n := 0
	err := gitx.ParseDiffZ(strings.NewReader(in), nil, func(gitx.NumStat) error { n++; return stop })
	if err != stop || n != 1 {
		t.Errorf("err = %v after %d records, want stop after 1", err, n)
	}
}

func TestQuotePath(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"plain/path.go", "plain/path.go"},
		{"with space", "with space"},
		{"new\nline", `"new\nline"`},
		{`q"uote`, `"q\"uote"`},
		{`back\slash`, `"back\\slash"`},
		{"é", `"\303\251"`},
		{"\x01\x7f", `"\001\177"`},
		{"\a\b\t\v\f\r", `"\a\b\t\v\f\r"`},
	}
	for _, tt := range tests {
		if got := gitx.QuotePath(tt.in); got != tt.want {
			t.Errorf("QuotePath(%q) = %s, want %s", tt.in, got, tt.want)
		}
		if back, err := gitx.UnquotePath(gitx.QuotePath(tt.in)); err != nil || back != tt.in {
			t.Errorf("UnquotePath(QuotePath(%q)) = %q, %v", tt.in, back, err)
		}
	}
	for _, bad := range []string{`"\q"`, `"\`, `"a"b"`, `"\12"`, `"\"`} {
		if _, err := gitx.UnquotePath(bad); err == nil && len(bad) > 1 && bad[0] == '"' && bad[len(bad)-1] == '"' {
			t.Errorf("UnquotePath(%s) accepted a malformed string", bad)
		}
	}
}

func TestParseBatchHeader(t *testing.T) {
	t.Parallel()
	id := strings.Repeat("b", 40)
	tests := []struct {
		in   string
		want gitx.Object
		ok   bool
	}{
		{id + " blob 12", gitx.Object{ID: id, Type: "blob", Size: 12}, true},
		{id + " missing", gitx.Object{ID: id, Missing: true}, true},
		{"abc ambiguous", gitx.Object{ID: "abc", Missing: true}, true},
		{id + " blob -1", gitx.Object{}, false},
		{id + " blob +1", gitx.Object{}, false},
		{id + " blob", gitx.Object{}, false},
		{"zz blob 1", gitx.Object{}, false},
		{"", gitx.Object{}, false},
	}
	for _, tt := range tests {
		got, err := gitx.ParseBatchHeader(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseBatchHeader(%q) = %+v, %v; want %+v ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestSplitZ(t *testing.T) {
	t.Parallel()
	got, err := gitx.SplitZ([]byte("a\x00b c\x00new\nline\x00"))
	if err != nil || !slices.Equal(got, []string{"a", "b c", "new\nline"}) {
		t.Errorf("SplitZ = %q, %v", got, err)
	}
	if got, err := gitx.SplitZ(nil); err != nil || got != nil {
		t.Errorf("SplitZ(nil) = %q, %v", got, err)
	}
	if _, err := gitx.SplitZ([]byte("a\x00b")); err == nil {
		t.Error("SplitZ accepted output without a final NUL")
	}
}
