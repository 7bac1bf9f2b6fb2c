package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/testenv"
)

func TestApplyCommand(t *testing.T) {
	t.Parallel()
	const original = "package x\r\n\r\nfunc A() int {\r\n\treturn 1\r\n}\r\n\r\nfunc B() int {\r\n\treturn 2\r\n}" // CRLF, no final newline
	const spec = "### CHANGE 1: A returns 10\nFIND:\n```go\nfunc A() int {\n    return 1\n}\n```\nREPLACE WITH:\n```go\nfunc A() int {\n    return 10\n}\n```\n"
	const aider = "x.go\n```go\n<<<<<<< SEARCH\n\treturn 2\n=======\n\treturn 20\n>>>>>>> REPLACE\n```\n"
	tests := []struct {
		name    string
		reply   string
		args    []string
		code    int
		want    string // file content after; "" means unchanged
		stdout  []string
		stderr  []string
		applied bool
	}{
		{"spec format, re-indented, CRLF kept, loose match shown", spec, nil, 0,
			"package x\r\n\r\nfunc A() int {\r\n\treturn 10\r\n}\r\n\r\nfunc B() int {\r\n\treturn 2\r\n}", nil,
			[]string{"block 1, lines 3-5: applied, loose match: indentation converted between tabs and spaces (one tab for 4 spaces), 2 lines", "applied 1 block"}, true},
		{"loose match in json", spec, []string{"--json"}, 0,
			"package x\r\n\r\nfunc A() int {\r\n\treturn 10\r\n}\r\n\r\nfunc B() int {\r\n\treturn 2\r\n}",
			[]string{`"status": "applied"`, `"match": "whitespace"`, `"loose": [`, `"kind": "indent_style"`, `"tab_width": 4`}, nil, true},
		{"numbered FIND applied and shown", "<<<<<<< SEARCH\n8 | \treturn 2\n9 | }\n=======\n8 | \treturn 20\n9 | }\n>>>>>>> REPLACE\n", nil, 0,
			"package x\r\n\r\nfunc A() int {\r\n\treturn 1\r\n}\r\n\r\nfunc B() int {\r\n\treturn 20\r\n}", nil,
			[]string{"block 1, lines 8-9: applied, loose match: line-number prefixes removed from 2 lines"}, true},
		{"no change writes nothing and says so", "<<<<<<< SEARCH\n\treturn 2\n=======\n\treturn 2\n>>>>>>> REPLACE\n", nil, 0, "", nil,
			[]string{"block 1, line 8: no change", "no change to x.go", "nothing written"}, false},
		{"no change in json", "<<<<<<< SEARCH\n\treturn 2\n=======\n\treturn 2\n>>>>>>> REPLACE\n", []string{"--json"}, 0, "",
			[]string{`"status": "no_change"`, `"applied": false`}, nil, false},
		{"one block changes nothing, the other applies", spec + "\n" + strings.Replace(aider, "return 20", "return 2", 1), nil, 0,
			"package x\r\n\r\nfunc A() int {\r\n\treturn 10\r\n}\r\n\r\nfunc B() int {\r\n\treturn 2\r\n}", nil,
			[]string{"block 2, line 8: no change", "applied 1 block(s)"}, true},
		{"uneven indentation refused with the lines to copy", "<<<<<<< SEARCH\nfunc B() int {\n  return 2\n    }\n=======\nfunc B() int {\n  return 3\n}\n>>>>>>> REPLACE\n", nil, 1, "", nil,
			[]string{"not one uniform shift", "```\nfunc B() int {\n\treturn 2\n}\n```", "unchanged"}, false},
		{"uneven indentation in json", "<<<<<<< SEARCH\nfunc B() int {\n  return 2\n    }\n=======\nx\n>>>>>>> REPLACE\n", []string{"--json"}, 1, "",
			[]string{`"status": "failed"`, `"uneven": [`}, nil, false},
		{"both formats in one reply", spec + "\nthen\n" + aider, nil, 0,
			"package x\r\n\r\nfunc A() int {\r\n\treturn 10\r\n}\r\n\r\nfunc B() int {\r\n\treturn 20\r\n}", nil, nil, true},
		{"dry run writes nothing", spec, []string{"--dry-run"}, 0, "", []string{"-\treturn 1", "+\treturn 10"}, []string{"loose match"}, false},
		{"dry run in json", spec, []string{"--dry-run", "--json"}, 0, "", []string{`"status": "dry_run"`, `"diff": "`, `"loose": [`}, nil, false},
		{"not found leaves the file byte-identical", strings.Replace(spec, "return 1\n", "return 7\n", 1), nil, 1, "",
			nil, []string{"edit block 1", "most like FIND are lines 1-7", "```\npackage x\n\nfunc A() int {\n\treturn 1\n}\n", "unchanged"}, false},
		{"second block failing applies none", spec + strings.Replace(aider, "return 2", "return 3", 1), nil, 1, "", nil, []string{"edit block 2"}, false},
		{"ambiguous", "<<<<<<< SEARCH\n}\n=======\n}\n>>>>>>> REPLACE\n", nil, 1, "", nil, []string{"lines 5 and 9"}, false},
		{"lazy elision refused", "<<<<<<< SEARCH\nfunc B() int {\n\treturn 2\n}\n=======\n// ... existing code ...\n>>>>>>> REPLACE\n", nil, 1, "", nil, []string{"existing code"}, false},
		{"malformed reply", "### CHANGE 1: x\nFIND:\n```\nfunc A() int {\n```\n", nil, 1, "", nil, []string{"REPLACE WITH"}, false},
		{"block for another file", strings.Replace(aider, "x.go", "other.go", 1), nil, 1, "", nil, []string{"other.go"}, false},
		{"json on failure", "<<<<<<< SEARCH\nnope\n=======\n>>>>>>> REPLACE\n", []string{"--json"}, 1, "", []string{`"applied": false`, `"status": "failed"`, `"closest"`}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := testenv.NewRepo(t, map[string]string{"x.go": original})
			os.Chmod(filepath.Join(dir, "x.go"), 0o640)
			replyPath := filepath.Join(t.TempDir(), "reply.md")
			os.WriteFile(replyPath, []byte(tt.reply), 0o644)
			res := runAzeroIn(t, t.TempDir(), dir, nil, append([]string{"apply", "x.go", "--edits", replyPath}, tt.args...)...)
			if res.code != tt.code {
				t.Fatalf("exit %d, want %d\n%s", res.code, tt.code, res.stderr)
			}
			got, _ := os.ReadFile(filepath.Join(dir, "x.go"))
			want := tt.want
			if want == "" {
				want = original
			}
			if string(got) != want {
				t.Errorf("file = %q\nwant %q", got, want)
			}
			if info, _ := os.Stat(filepath.Join(dir, "x.go")); info.Mode().Perm() != 0o640 {
				t.Errorf("mode = %v, want 0640 kept", info.Mode().Perm())
			}
			for _, s := range tt.stdout {
				if !strings.Contains(res.stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, res.stdout)
				}
			}
			for _, s := range tt.stderr {
				if !strings.Contains(res.stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, res.stderr)
				}
			}
			if strings.Contains(strings.Join(tt.args, " "), "--json") {
				var rep struct{ Applied bool }
				if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil || rep.Applied != tt.applied {
					t.Errorf("json %q: %v", res.stdout, err)
				}
			}
		})
	}
}

func TestApplyFromStdinAndRefusals(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	dir := filepath.Join(base, "proj")
	testenv.WriteFiles(t, dir, map[string]string{"a.txt": "one\ntwo\n"})
	testenv.WriteFiles(t, base, map[string]string{"outside.txt": "one\n"})
	res := gateRunPipedStdin(t, dir, "<<<<<<< SEARCH\ntwo\n=======\n2\n>>>>>>> REPLACE\n", "apply", "a.txt", "--edits", "-")
	if res.code != 0 {
		t.Fatalf("stdin: exit %d\n%s", res.code, res.stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(got) != "one\n2\n" {
		t.Errorf("a.txt = %q", got)
	}
	res = gateRunPipedStdin(t, dir, "<<<<<<< SEARCH\none\n=======\n1\n>>>>>>> REPLACE\n", "apply", "../outside.txt", "--edits", "-", "--root", dir)
	if res.code != 1 || !strings.Contains(res.stderr, "outside.txt") {
		t.Errorf("outside the root: exit %d\n%s", res.code, res.stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(base, "outside.txt")); string(got) != "one\n" {
		t.Errorf("a file outside the root changed: %q", got)
	}
	res = gateRunPipedStdin(t, dir, "", "apply", "missing.txt", "--edits", "-")
	if res.code != 1 || !strings.Contains(res.stderr, "does not exist") {
		t.Errorf("missing file: exit %d\n%s", res.code, res.stderr)
	}
	if res := runAzeroIn(t, t.TempDir(), dir, nil, "apply", "a.txt"); res.code != 2 {
		t.Errorf("no --edits: exit %d, want 2", res.code)
	}
}

// gateRunPipedStdin runs azero in dir with stdin from a string.
func gateRunPipedStdin(t *testing.T, dir, stdin string, args ...string) runResult {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	cmd.Env = azeroEnv(t.TempDir())
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	res := runResult{stdout: out.String(), stderr: errOut.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		res.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return res
}

// An endless or huge reply is refused naming it and the limit, and the
// first Ctrl-C stops a reply that never comes; the file is untouched.
func TestApplyEditsAreBounded(t *testing.T) {
	t.Parallel()
	huge := sparseFile(t)
	tests := []struct {
		name  string
		edits string
		stdin io.Reader
		code  int
		want  []string
	}{
		{"/dev/zero", "/dev/zero", nil, ExitError, []string{"/dev/zero is larger than 32 MiB", "pass a smaller one"}},
		{"a sparse 200 MB file", huge, nil, ExitError, []string{huge + " is larger than 32 MiB"}},
		{"endless stdin", "-", zeroReader{}, ExitError, []string{"standard input sent more than 32 MiB"}},
		{"stdin that never comes, cancelled", "-", nil, ExitInterrupted, []string{"read standard input", "context canceled"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newWriteEnv(t)
			e.file("a.txt", "one\ntwo\n")
			ctx := t.Context()
			switch {
			case tt.stdin != nil:
				e.io.In = tt.stdin
			case tt.edits == "-":
				r, w := io.Pipe()
				t.Cleanup(func() { w.Close() })
				e.io.In = r // nobody ever writes
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				time.AfterFunc(50*time.Millisecond, cancel)
			}
			code := make(chan int, 1)
			go func() { code <- Run(ctx, e.factory(), []string{"apply", "a.txt", "--edits", tt.edits, "--json"}) }()
			select {
			case c := <-code:
				if c != tt.code {
					t.Fatalf("exit %d, want %d; stderr:\n%s", c, tt.code, e.errOut)
				}
			case <-time.After(testenv.Patience):
				t.Fatal("azero apply did not finish")
			}
			for _, w := range tt.want {
				if !strings.Contains(e.errOut.String(), w) {
					t.Errorf("stderr %q does not say %q", e.errOut, w)
				}
			}
			var rep struct {
				Applied bool
				Error   string
			}
			if err := json.Unmarshal(e.out.Bytes(), &rep); err != nil || rep.Applied || !strings.Contains(rep.Error, tt.want[0]) {
				t.Errorf("--json %s: %v", e.out, err)
			}
			if e.read("a.txt") != "one\ntwo\n" {
				t.Error("a.txt changed")
			}
		})
	}
}
