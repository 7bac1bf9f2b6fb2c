package cli

// Tests of `azero write`: the flags (NewCmdWrite with a runF), the
// command in-process through Run with buffers or a real pseudo-terminal,
// and the real process (this test binary as azero, see main_test.go).

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/safewrite"
	"github.com/azero-dev/azero/internal/testenv"
)

func TestWriteCommandFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		args  []string
		want  WriteOptions
		usage bool
	}{
		{"defaults", []string{"a.go", "--content", "x"}, WriteOptions{Path: "a.go", Content: "x"}, false},
		{"stdin", []string{"a.go", "--content", "-"}, WriteOptions{Path: "a.go", Content: "-"}, false},
		{"all flags", []string{"a.go", "--content", "x", "--strategy", "insert", "--line", "7", "--root", "../p", "--auto", "--force", "--json"},
			WriteOptions{Path: "a.go", Content: "x", Strategy: safewrite.Insert, Line: 7, Root: "../p", Auto: true, Force: true, JSON: true}, false},
		{"strategy in capitals", []string{"a.go", "--content", "x", "--strategy", "EXTEND"}, WriteOptions{Path: "a.go", Content: "x", Strategy: safewrite.Extend}, false},
		{"content is required", []string{"a.go"}, WriteOptions{}, true},
		{"a path is required", []string{"--content", "x"}, WriteOptions{}, true},
		{"one path only", []string{"a.go", "b.go", "--content", "x"}, WriteOptions{}, true},
		{"unknown strategy", []string{"a.go", "--content", "x", "--strategy", "merge"}, WriteOptions{}, true},
		{"edit is not for the command line", []string{"a.go", "--content", "x", "--strategy", "edit"}, WriteOptions{}, true},
		{"insert needs a line", []string{"a.go", "--content", "x", "--strategy", "insert"}, WriteOptions{}, true},
		{"insert needs a positive line", []string{"a.go", "--content", "x", "--strategy", "insert", "--line", "0"}, WriteOptions{}, true},
		{"line only with insert", []string{"a.go", "--content", "x", "--line", "3"}, WriteOptions{}, true},
		{"no yes flag", []string{"a.go", "--content", "x", "--yes"}, WriteOptions{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, f, err := parseFlags(NewCmdWrite, tt.args)
			if tt.usage {
				wantUsageError(t, err, got != nil)
				return
			}
			if err != nil || got == nil {
				t.Fatalf("err = %v", err)
			}
			if got.Path != tt.want.Path || got.Content != tt.want.Content || got.Strategy != tt.want.Strategy || got.Line != tt.want.Line ||
				got.Root != tt.want.Root || got.Auto != tt.want.Auto || got.Force != tt.want.Force || got.JSON != tt.want.JSON {
				t.Errorf("options = %+v, want %+v", got, tt.want)
			}
			if got.IO != f.IO || got.Audit == nil || got.WorkDir != "/work" || got.TopLevel == nil {
				t.Errorf("dependencies not bound: %+v", got)
			}
			if got.Approver != nil {
				t.Error("an approver without a terminal")
			}
		})
	}
}

// writeEnv is one in-process azero: a project directory, an outside
// directory that must not change, a state directory with the audit log.
type writeEnv struct {
	t                    *testing.T
	root, outside, state string
	io                   *iostreams.IOStreams
	in, out, errOut      *bytes.Buffer
	workDir              string
}

func newWriteEnv(t *testing.T) *writeEnv {
	t.Helper()
	parent, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := &writeEnv{t: t, root: filepath.Join(parent, "project"), outside: filepath.Join(parent, "outside"), state: filepath.Join(parent, "state")}
	for _, d := range []string{e.root, e.outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	testenv.WriteFiles(t, e.outside, map[string]string{"secret.txt": "secret\n"})
	e.io, e.in, e.out, e.errOut = iostreams.Test()
	e.workDir = e.root
	return e
}

func (e *writeEnv) factory() *Factory {
	env := map[string]string{"AZERO_STATE_DIR": e.state}
	return &Factory{IO: e.io, Getenv: func(k string) string { return env[k] }, Environ: func() []string { return nil },
		LookPath: exec.LookPath, WorkDir: e.workDir, Now: time.Now, Version: "test"}
}

// run runs azero in-process and returns its exit code.
func (e *writeEnv) run(args ...string) int {
	e.t.Helper()
	e.out.Reset()
	e.errOut.Reset()
	return Run(e.t.Context(), e.factory(), args)
}

func (e *writeEnv) file(rel, content string) string {
	e.t.Helper()
	testenv.WriteFiles(e.t, e.root, map[string]string{rel: content})
	return filepath.Join(e.root, rel)
}

// content writes a content file outside the project and returns its path.
func (e *writeEnv) content(s string) string {
	e.t.Helper()
	p := filepath.Join(e.state, fmt.Sprintf("content-%d", time.Now().UnixNano()))
	if err := os.MkdirAll(e.state, 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *writeEnv) read(rel string) string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.root, rel))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

func (e *writeEnv) auditEvents() []audit.Record {
	e.t.Helper()
	recs, err := audit.Read(filepath.Join(e.state, audit.FileName))
	if err != nil {
		e.t.Fatal(err)
	}
	return recs
}

func TestWriteCommandEndToEnd(t *testing.T) {
	t.Parallel()
	big := numberedLines("old", 150)
	tests := []struct {
		name     string
		files    map[string]string
		stdin    string
		args     func(e *writeEnv) []string
		code     int
		check    func(t *testing.T, e *writeEnv)
		stderrIn string
	}{
		{"creates a new file in new directories", nil, "", func(e *writeEnv) []string {
			return []string{"write", "pkg/deep/new.go", "--content", e.content("package deep\n")}
		}, ExitOK, func(t *testing.T, e *writeEnv) {
			if e.read("pkg/deep/new.go") != "package deep\n" {
				t.Fatal("not written")
			}
		}, "Created pkg/deep/new.go (1 lines)"},
		{"content from stdin, appended", map[string]string{"log.txt": "a\nb"}, "c\n", func(e *writeEnv) []string {
			return []string{"write", "log.txt", "--content", "-", "--strategy", "append"}
		}, ExitOK, func(t *testing.T, e *writeEnv) {
			if got := e.read("log.txt"); got != "a\nb\nc\n" {
				t.Fatalf("log.txt = %q", got)
			}
		}, "Wrote log.txt (append: 2 -> 3 lines"},
		{"insert at a line", map[string]string{"big.txt": big}, "new\n", func(e *writeEnv) []string {
			return []string{"write", "big.txt", "--content", "-", "--strategy", "insert", "--line", "2"}
		}, ExitOK, func(t *testing.T, e *writeEnv) {
			if got := e.read("big.txt"); !strings.HasPrefix(got, "old 1\nnew\nold 2\n") {
				t.Fatalf("big.txt starts %q", got[:20])
			}
		}, ""},
		{"insert out of range", map[string]string{"small.txt": "a\n"}, "new\n", func(e *writeEnv) []string {
			return []string{"write", "small.txt", "--content", "-", "--strategy", "insert", "--line", "9"}
		}, ExitError, nil, "between 1 and 2"},
		{"extend a Go type", map[string]string{"t.go": "package t\n\ntype T struct{}\n"}, "func (T) M() {}\n", func(e *writeEnv) []string {
			return []string{"write", "t.go", "--content", "-", "--strategy", "extend"}
		}, ExitOK, func(t *testing.T, e *writeEnv) {
			if got := e.read("t.go"); got != "package t\n\ntype T struct{}\n\nfunc (T) M() {}\n" {
				t.Fatalf("t.go = %q", got)
			}
		}, ""},
		{"large file without a terminal needs a human", map[string]string{"big.py": big}, "new\n", func(e *writeEnv) []string {
			return []string{"write", "big.py", "--content", "-"}
		}, ExitNeedsHuman, func(t *testing.T, e *writeEnv) {
			if e.read("big.py") != big {
				t.Fatal("replaced without approval")
			}
		}, "needs approval"},
		{"auto without force refuses", map[string]string{"big.py": big}, "new\n", func(e *writeEnv) []string {
			return []string{"write", "big.py", "--content", "-", "--auto"}
		}, ExitNeedsHuman, func(t *testing.T, e *writeEnv) {
			if e.read("big.py") != big {
				t.Fatal("replaced in auto mode")
			}
		}, "pass --force"},
		{"auto with force replaces", map[string]string{"big.py": big}, "new\n", func(e *writeEnv) []string {
			return []string{"write", "big.py", "--content", "-", "--auto", "--force"}
		}, ExitOK, func(t *testing.T, e *writeEnv) {
			if e.read("big.py") != "new\n" {
				t.Fatal("not replaced")
			}
		}, "replaced with --force"},
		{"a missing content file", nil, "", func(e *writeEnv) []string {
			return []string{"write", "x.txt", "--content", filepath.Join(e.state, "missing")}
		}, ExitError, nil, "--content: read /"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newWriteEnv(t)
			testenv.WriteFiles(t, e.root, tt.files)
			e.in.WriteString(tt.stdin)
			if code := e.run(tt.args(e)...); code != tt.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tt.code, e.errOut)
			}
			if !strings.Contains(e.errOut.String(), tt.stderrIn) {
				t.Errorf("stderr %q does not say %q", e.errOut, tt.stderrIn)
			}
			if tt.check != nil {
				tt.check(t, e)
			}
			var recs []map[string]any
			for _, r := range e.auditEvents() {
				// A write that needed approval records the decision first.
				if r["event"] != "file_write_approval" {
					recs = append(recs, r)
				}
			}
			if len(recs) != 1 && tt.name != "a missing content file" {
				t.Fatalf("audit records: %v", recs)
			}
			for _, r := range recs {
				if r["actor"] != "azero write" || (r["event"] != "file_write") != (tt.code != ExitOK) {
					t.Errorf("audit record %v", r)
				}
			}
		})
	}
}

func TestWriteCommandJSON(t *testing.T) {
	t.Parallel()
	e := newWriteEnv(t)
	old := numberedLines("old", 150)
	e.file("state.py", old)
	e.in.WriteString(numberedLines("new", 56))
	if code := e.run("write", "state.py", "--content", "-", "--auto", "--force", "--json"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, e.errOut)
	}
	var doc map[string]any
	if err := json.Unmarshal(e.out.Bytes(), &doc); err != nil {
		t.Fatalf("stdout is not one JSON document: %v\n%s", err, e.out)
	}
	want := map[string]any{"written": true, "root": e.root, "path": "state.py", "strategy": "replace", "created": false,
		"original_lines": 150.0, "lines_after": 56.0, "approval_required": true, "approval": "forced",
		"old_sha256": sha256Hex(old), "new_sha256": sha256Hex(numberedLines("new", 56))}
	for k, v := range want {
		if doc[k] != v {
			t.Errorf("%s = %v, want %v", k, doc[k], v)
		}
	}

	// A refusal is a JSON document too, with the exit code.
	e.in.WriteString("x\n")
	if code := e.run("write", "../escape.txt", "--content", "-", "--json"); code != ExitError {
		t.Fatalf("exit %d", code)
	}
	doc = nil
	if err := json.Unmarshal(e.out.Bytes(), &doc); err != nil {
		t.Fatalf("refusal: %v\n%s", err, e.out)
	}
	if doc["written"] != false || doc["exit_code"] != 1.0 || !strings.Contains(doc["error"].(string), "refusing path \"../escape.txt\"") {
		t.Fatalf("refusal document %v", doc)
	}
}

// Held-out style attacks through --root: all refused with exit 1 and
// nothing written outside the root.
func TestWriteCommandRootRefusals(t *testing.T) {
	t.Parallel()
	e := newWriteEnv(t)
	e.file("src/app.py", "x = 1\n")
	e.file(".git/config", "[core]\n")
	for name, dest := range map[string]string{"out-file": filepath.Join(e.outside, "secret.txt"), "out-dir": e.outside, "src/up": "../../outside", "loop": "loop"} {
		if err := os.Symlink(dest, filepath.Join(e.root, name)); err != nil {
			t.Fatal(err)
		}
	}
	e.workDir = t.TempDir() // a relative path is relative to --root, not here
	content := e.content("pwned\n")
	before := dirState(t, e.outside)
	for _, path := range []string{"../outside/secret.txt", "../../../../../../etc/passwd", "/etc/passwd", filepath.Join(e.outside, "x"),
		"out-file", "out-dir/new.txt", "src/up/new.txt", "loop", ".git/config", "src/.GIT/hooks/x", ".", "", "src/..", "a\x00b", e.root} {
		for _, extra := range [][]string{nil, {"--auto"}, {"--auto", "--force"}, {"--strategy", "append", "--auto", "--force"}} {
			args := append([]string{"write", path, "--root", e.root, "--content", content}, extra...)
			if code := e.run(args...); code != ExitError {
				t.Fatalf("write %q %v: exit %d, want 1; stderr %s", path, extra, code, e.errOut)
			}
			if !strings.Contains(e.errOut.String(), "refusing path") {
				t.Fatalf("write %q: %s", path, e.errOut)
			}
		}
	}
	if got := dirState(t, e.outside); got != before {
		t.Fatalf("outside changed:\n%s\n%s", before, got)
	}
	if e.read(".git/config") != "[core]\n" {
		t.Fatal(".git/config changed")
	}
	// A relative --root is relative to the working directory; a legitimate
	// path with odd characters is written.
	rel, err := filepath.Rel(e.workDir, e.root)
	if err != nil {
		t.Fatal(err)
	}
	if code := e.run("write", "odd dir/it's \"ok\" ü.txt", "--root", rel, "--content", content); code != ExitOK {
		t.Fatalf("exit %d: %s", code, e.errOut)
	}
	if e.read("odd dir/it's \"ok\" ü.txt") != "pwned\n" {
		t.Fatal("not written")
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func dirState(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v %d\n", p, fi.Mode(), fi.Size())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Without --root the root is the git work tree and a relative path is
// relative to the working directory; outside git the working directory is
// the root.
func TestWriteCommandDefaultRoot(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "git")
	e := newWriteEnv(t)
	testenv.Git(t, e.root, "init", "-q")
	e.file("sub/keep.txt", "k\n")
	e.workDir = filepath.Join(e.root, "sub")
	content := e.content("top\n")
	if code := e.run("write", "../top.txt", "--content", content); code != ExitOK {
		t.Fatalf("exit %d: %s", code, e.errOut)
	}
	if e.read("top.txt") != "top\n" {
		t.Fatal("not written relative to the working directory")
	}
	if code := e.run("write", "../../outside/x.txt", "--content", content); code != ExitError {
		t.Fatalf("climbing out of the work tree: exit %d", code)
	}

	plain := newWriteEnv(t) // no repository: the working directory is the root
	plain.file("a/b.txt", "b\n")
	plain.workDir = filepath.Join(plain.root, "a")
	if code := plain.run("write", "../escape.txt", "--content", plain.content("x\n")); code != ExitError {
		t.Fatalf("outside git, ../ from the working directory: exit %d", code)
	}
	if _, err := os.Stat(filepath.Join(plain.root, "escape.txt")); !os.IsNotExist(err) {
		t.Fatal("written above the working directory outside a repository")
	}
}

func TestWriteCommandHelp(t *testing.T) {
	t.Parallel()
	e := newWriteEnv(t)
	if code := e.run("write", "--help"); code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	help := e.out.String()
	// 130: Ctrl-C while --content is read from a pipe or a FIFO nobody
	// writes to (TestEveryNamedInputIsBoundedAndStops).
	for _, want := range []string{"Exit codes:", "  0  success", "  1  error", "  2  usage error", "  3  human approval needed", "  4  rejected", "130  interrupted",
		"append", "insert", "extend", "replace", "--line", "--root", "--auto", "--force", "about to replace N lines with M lines"} {
		if !strings.Contains(help, want) {
			t.Errorf("help lacks %q", want)
		}
	}
	if strings.Contains(help, "  5  tests failed") || strings.Contains(help, "checkpointed") {
		t.Error("help lists exit codes write never returns")
	}
}

// onTerminal attaches the in-process azero's stdin and stderr to a real
// pseudo-terminal; stdout stays a buffer, as when --json is piped.
func (e *writeEnv) onTerminal(t *testing.T) *testenv.Terminal {
	t.Helper()
	term := testenv.NewTerminal(t)
	e.io = term.Streams(false)
	e.io.Out = e.out
	return term
}

func TestWriteCommandOnATerminal(t *testing.T) {
	t.Parallel()
	big := numberedLines("old", 150)
	tests := []struct {
		name    string
		args    []string
		answers [][2]string // wait for [0], then type [1]
		code    int
		want    string
	}{
		{"replace approved", nil, [][2]string{{"[C]ancel? ", "r"}, {"Type 'approve'", "approve"}}, ExitOK, "new\n"},
		{"append chosen", nil, [][2]string{{"[C]ancel? ", "a"}, {"Type 'approve'", "approve"}}, ExitOK, big + "new\n"},
		{"cancel", nil, [][2]string{{"[C]ancel? ", "c"}}, ExitRejected, big},
		{"reject", nil, [][2]string{{"[C]ancel? ", "r"}, {"Type 'approve'", "reject"}}, ExitRejected, big},
		{"auto with a terminal is an error, not a question", []string{"--auto"}, nil, ExitError, big},
		{"force asks nobody", []string{"--auto", "--force"}, nil, ExitOK, "new\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newWriteEnv(t)
			e.file("big.py", big)
			content := e.content("new\n")
			screen := e.onTerminal(t)
			code := make(chan int, 1)
			go func() {
				code <- Run(context.Background(), e.factory(), append([]string{"write", "big.py", "--content", content}, tt.args...))
			}()
			for _, a := range tt.answers {
				screen.WaitFor(t, a[0], 1)
				if a[0] == "[C]ancel? " && !strings.Contains(screen.Text(), "about to replace 150 lines with 1 lines") {
					t.Errorf("no warning before the question:\n%s", screen.Text())
				}
				screen.Type(t, a[1])
			}
			select {
			case c := <-code:
				if c != tt.code {
					t.Fatalf("exit %d, want %d; screen:\n%s", c, tt.code, screen.Text())
				}
			case <-time.After(testenv.Patience):
				t.Fatalf("azero write did not finish; screen:\n%s", screen.Text())
			}
			if got := e.read("big.py"); got != tt.want {
				t.Fatalf("big.py holds %d bytes, want %d", len(got), len(tt.want))
			}
			if tt.name == "auto with a terminal is an error, not a question" {
				for deadline := time.Now().Add(testenv.Patience); time.Now().Before(deadline) && !strings.Contains(screen.Text(), "drop --auto"); {
					time.Sleep(10 * time.Millisecond)
				}
				if !strings.Contains(screen.Text(), "pass --force to replace it, or drop --auto") || strings.Contains(screen.Text(), "[C]ancel") {
					t.Fatalf("screen:\n%s", screen.Text())
				}
			}
		})
	}
}

// The real process: stdin from /dev/null means nobody can approve (exit
// 3, nothing written); on a real terminal the human approves.
func TestWriteProcess(t *testing.T) {
	t.Parallel()
	e := newWriteEnv(t)
	big := numberedLines("old", 150)
	e.file("big.py", big)
	content := e.content("new\n")
	res := runAzeroIn(t, e.state, e.root, nil, "write", "big.py", "--content", content, "--json")
	if res.code != ExitNeedsHuman || e.read("big.py") != big || !strings.Contains(res.stdout, `"exit_code": 3`) {
		t.Fatalf("exit %d, stdout %s, stderr %s", res.code, res.stdout, res.stderr)
	}
	screen := startOnTerminal(t, e.root, azeroEnv(e.state, "NO_COLOR=1"), os.Args[0], "write", "big.py", "--content", content)
	screen.WaitFor(t, "[C]ancel? ", 1)
	screen.Type(t, "R")
	screen.WaitFor(t, "Type 'approve'", 1)
	screen.Type(t, "approve")
	if code := screen.exit(t); code != ExitOK {
		t.Fatalf("exit %d; screen:\n%s", code, screen.Text())
	}
	if e.read("big.py") != "new\n" {
		t.Fatal("not replaced after approval")
	}
	var events []string
	for _, r := range e.auditEvents() {
		events = append(events, fmt.Sprint(r["event"], ":", r["approval"], r["refusal"]))
	}
	if strings.Join(events, " ") != "file_write_refused:<nil>needs_approval file_write_approval:approved<nil> file_write:approved<nil>" {
		t.Fatalf("audit events %v", events)
	}
}

// Writing back exactly what a large file holds is no change: nobody is
// asked (not even without a terminal), nothing is written, and both the
// message and --json say so.
func TestWriteIdenticalContentIsUnchanged(t *testing.T) {
	t.Parallel()
	for _, nl := range []string{"\n", "\r\n", "\r"} {
		t.Run(fmt.Sprintf("%q", nl), func(t *testing.T) {
			t.Parallel()
			e := newWriteEnv(t)
			big := strings.ReplaceAll(numberedLines("old", 150), "\n", nl)
			path := e.file("big.py", big)
			before, _ := os.Stat(path)
			if code := e.run("write", "big.py", "--content", e.content(big)); code != ExitOK {
				t.Fatalf("exit %d; stderr:\n%s", code, e.errOut)
			}
			if !strings.Contains(e.errOut.String(), "big.py already holds this content; nothing was written.") {
				t.Errorf("stderr %q", e.errOut)
			}
			e.in.WriteString(big)
			if code := e.run("write", "big.py", "--content", "-", "--json"); code != ExitOK {
				t.Fatalf("--json: exit %d; stderr:\n%s", code, e.errOut)
			}
			var doc map[string]any
			if err := json.Unmarshal(e.out.Bytes(), &doc); err != nil {
				t.Fatalf("stdout: %v\n%s", err, e.out)
			}
			want := map[string]any{"written": false, "unchanged": true, "approval_required": false, "approval": "not_required",
				"original_lines": 150.0, "lines_after": 150.0, "lines_added": 0.0, "lines_deleted": 0.0}
			for k, v := range want {
				if doc[k] != v {
					t.Errorf("%s = %v, want %v", k, doc[k], v)
				}
			}
			after, _ := os.Stat(path)
			if !os.SameFile(before, after) || e.read("big.py") != big {
				t.Error("big.py was rewritten")
			}
			for _, r := range e.auditEvents() {
				if r["event"] != "file_write" || r["unchanged"] != true {
					t.Errorf("audit record %v, want an unchanged file_write", r)
				}
			}
		})
	}
}

// A 150-line file with classic Mac OS line endings is over 100 lines.
func TestWriteCROnlyFileNeedsApproval(t *testing.T) {
	t.Parallel()
	e := newWriteEnv(t)
	big := strings.ReplaceAll(numberedLines("old", 150), "\n", "\r")
	e.file("mac.txt", big)
	e.in.WriteString("new\n")
	if code := e.run("write", "mac.txt", "--content", "-"); code != ExitNeedsHuman {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, ExitNeedsHuman, e.errOut)
	}
	if !strings.Contains(e.errOut.String(), "150 lines") || e.read("mac.txt") != big {
		t.Fatalf("stderr %q; file kept: %v", e.errOut, e.read("mac.txt") == big)
	}
}

// zeroReader is an endless standard input.
type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// sparseFile creates a 200 MB file that takes no room on disk.
func sparseFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "huge.bin")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 200<<20); err != nil {
		t.Fatal(err)
	}
	return path
}

// Endless or huge content is refused with an error naming the input and
// the limit, before anything is written.
func TestWriteContentIsBounded(t *testing.T) {
	t.Parallel()
	huge := sparseFile(t)
	tests := []struct {
		name    string
		content string
		stdin   io.Reader
		want    []string
	}{
		{"/dev/zero", "/dev/zero", nil, []string{"--content: /dev/zero is larger than 32 MiB", "pass a smaller one"}},
		{"a sparse 200 MB file", huge, nil, []string{huge + " is larger than 32 MiB"}},
		{"endless stdin", "-", zeroReader{}, []string{"standard input sent more than 32 MiB", "check what is piped in"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newWriteEnv(t)
			if tt.stdin != nil {
				e.io.In = tt.stdin
			}
			if code := e.run("write", "out.txt", "--content", tt.content, "--json"); code != ExitError {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, ExitError, e.errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(e.errOut.String(), w) {
					t.Errorf("stderr %q does not say %q", e.errOut, w)
				}
			}
			var doc map[string]any
			if err := json.Unmarshal(e.out.Bytes(), &doc); err != nil || doc["written"] != false || doc["exit_code"] != 1.0 {
				t.Errorf("--json %s: %v", e.out, err)
			}
			if _, err := os.Stat(filepath.Join(e.root, "out.txt")); !os.IsNotExist(err) {
				t.Error("out.txt was created")
			}
		})
	}
}

// Cancelling (the first Ctrl-C) stops a read of content that never comes.
func TestWriteContentReadIsCancelled(t *testing.T) {
	t.Parallel()
	e := newWriteEnv(t)
	r, w := io.Pipe()
	defer w.Close()
	e.io.In = r // nobody ever writes
	ctx, cancel := context.WithCancel(t.Context())
	code := make(chan int, 1)
	go func() { code <- Run(ctx, e.factory(), []string{"write", "out.txt", "--content", "-"}) }()
	time.Sleep(50 * time.Millisecond) // let the read begin
	cancel()
	select {
	case c := <-code:
		if c != ExitInterrupted {
			t.Fatalf("exit %d, want %d; stderr:\n%s", c, ExitInterrupted, e.errOut)
		}
	case <-time.After(testenv.Patience):
		t.Fatal("azero write went on reading after its context was cancelled")
	}
	if _, err := os.Stat(filepath.Join(e.root, "out.txt")); !os.IsNotExist(err) {
		t.Error("out.txt was created")
	}
}

// readingStdin reports whether a thread of process pid is blocked in
// read(0, ...): the process got as far as reading its standard input.
func readingStdin(pid int) bool {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/syscall", pid))
	for _, task := range tasks {
		b, err := os.ReadFile(task)
		if err == nil && strings.HasPrefix(string(b), "0 0x0 ") {
			return true
		}
	}
	return false
}

// The real process: `azero write --content -` waits for the terminal to
// send content; the first Ctrl-C ends it with 130, having written
// nothing, instead of leaving it blocked.
func TestWriteProcessCtrlCWhileReadingStdin(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("needs /proc to see the process wait for input")
	}
	e := newWriteEnv(t)
	screen := startOnTerminal(t, e.root, azeroEnv(e.state, "NO_COLOR=1"), os.Args[0], "write", "out.txt", "--content", "-")
	for deadline := time.Now().Add(testenv.Patience); !readingStdin(screen.cmd.Process.Pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("azero never read its standard input; screen:\n%s", screen.Text())
		}
	}
	screen.Type(t, "\x03") // Ctrl-C: the terminal sends SIGINT
	screen.exit(t)
	ws, _ := screen.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() || ws.ExitStatus() != ExitInterrupted {
		t.Fatalf("wait status %v (signalled %v), want exit %d from azero itself; screen:\n%s", ws, ws.Signaled(), ExitInterrupted, screen.Text())
	}
	if _, err := os.Stat(filepath.Join(e.root, "out.txt")); !os.IsNotExist(err) {
		t.Error("out.txt was created")
	}
}

// The real process on a real terminal: "R" and "approve" typed before
// azero even started (so before any diff was shown) are discarded; the
// human's "C" typed at the menu cancels, and nothing is written.
func TestWriteProcessIgnoresTypedAheadApproval(t *testing.T) {
	t.Parallel()
	e := newWriteEnv(t)
	big := numberedLines("old", 150)
	e.file("big.py", big)
	content := e.content("new\n")
	term := testenv.NewTerminal(t)
	term.Type(t, "R")
	term.Type(t, "approve")
	term.WaitFor(t, "approve\r\n", 1) // in the terminal's input queue, unread
	cmd := exec.Command(os.Args[0], "write", "big.py", "--content", content)
	cmd.Dir, cmd.Env = e.root, azeroEnv(e.state, "NO_COLOR=1")
	term.Start(t, cmd)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	term.WaitFor(t, "[C]ancel? ", 1)
	term.Type(t, "C")
	select {
	case err := <-done:
		if code := exitCode(err); code != ExitRejected {
			t.Fatalf("exit %d, want %d; screen:\n%s", code, ExitRejected, term.Text())
		}
	case <-time.After(testenv.Patience):
		t.Fatalf("azero write did not finish; screen:\n%s", term.Text())
	}
	if e.read("big.py") != big {
		t.Fatal("big.py was replaced by keys typed before the diff was shown")
	}
}
