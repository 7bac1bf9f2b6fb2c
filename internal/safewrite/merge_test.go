package safewrite_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/extend"
	"github.com/azero-dev/azero/internal/safewrite"
)

// propose runs Propose for content merged into a file holding existing.
func propose(t *testing.T, name, existing, content string, s safewrite.Strategy, line int) (safewrite.Proposal, error) {
	t.Helper()
	p := newProject(t)
	if existing != "" {
		writeFile(t, p.path(name), existing)
	}
	return safewrite.Propose(safewrite.Request{Root: p.root, Path: name, Content: []byte(content), Strategy: s, Line: line})
}

func TestAppendAndInsert(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, existing, content string
		strategy                safewrite.Strategy
		line                    int
		want                    string
		wantErr                 string
	}{
		{"append after final newline", "a\nb\n", "c\n", safewrite.Append, 0, "a\nb\nc\n", ""},
		{"append adds the missing newline", "a\nb", "c\n", safewrite.Append, 0, "a\nb\nc\n", ""},
		{"append to an empty file", "", "c\n", safewrite.Append, 0, "c\n", ""},
		{"append keeps CRLF", "a\r\nb\r\n", "c\nd\n", safewrite.Append, 0, "a\r\nb\r\nc\r\nd\r\n", ""},
		{"insert at the first line", "a\nb\n", "x\n", safewrite.Insert, 1, "x\na\nb\n", ""},
		{"insert in the middle", "a\nb\nc\n", "x\ny\n", safewrite.Insert, 2, "a\nx\ny\nb\nc\n", ""},
		{"insert without final newline in the piece", "a\nb\n", "x", safewrite.Insert, 2, "a\nx\nb\n", ""},
		{"insert at lines+1 appends", "a\nb", "x\n", safewrite.Insert, 3, "a\nb\nx\n", ""},
		{"insert keeps CRLF", "a\r\nb\r\n", "x\n", safewrite.Insert, 2, "a\r\nx\r\nb\r\n", ""},
		{"insert at 0 is out of range", "a\nb\n", "x\n", safewrite.Insert, 0, "", "between 1 and 3"},
		{"insert past the end is out of range", "a\nb\n", "x\n", safewrite.Insert, 4, "", "between 1 and 3"},
		{"insert into a new file at line 1", "", "x\n", safewrite.Insert, 1, "x\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			prop, ok := merged(t, "f.txt", tt.existing, tt.content, tt.strategy, tt.line, tt.wantErr, new(*safewrite.InsertRangeError))
			if !ok {
				return
			}
			if string(prop.Result) != tt.want {
				t.Fatalf("result %q, want %q", prop.Result, tt.want)
			}
		})
	}
}

// A merge that keeps every line of a large file needs no approval; one
// that changes an existing line does, like a replace.
func TestMergeApprovalRule(t *testing.T) {
	t.Parallel()
	big := numbered("line", 1, 150)
	tests := []struct {
		name     string
		file     string
		existing string
		content  string
		strategy safewrite.Strategy
		line     int
		want     bool
	}{
		{"replace over 100 lines", "f.txt", big, "x\n", safewrite.Replace, 0, true},
		{"default strategy over 100 lines", "f.txt", big, "x\n", "", 0, true},
		{"append", "f.txt", big, "x\n", safewrite.Append, 0, false},
		{"insert", "f.txt", big, "x\n", safewrite.Insert, 75, false},
		{"append to an unterminated last line", "f.txt", big + "tail", "x\n", safewrite.Append, 0, false},
		{"extend keeping a gofmt'ed file", "f.go", "package p\n\ntype T struct{}\n" + strings.Repeat("\n// c\n", 60), "func (T) M() {}\n", safewrite.Extend, 0, false},
		{"extend reformatting a file that was not gofmt'ed", "f.go", "package p\n\ntype T struct{}\nfunc  f( ) {}\n" + strings.Repeat("\n// c\n", 60), "func (T) M() {}\n", safewrite.Extend, 0, true},
		{"edit", "f.txt", big, "x\n", safewrite.Edit, 0, false},
		{"replace of exactly 100 lines", "f.txt", numbered("line", 1, 100), "x\n", safewrite.Replace, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			prop, err := propose(t, tt.file, tt.existing, tt.content, tt.strategy, tt.line)
			if err != nil {
				t.Fatal(err)
			}
			if prop.RequiresApproval != tt.want {
				t.Fatalf("RequiresApproval = %v, want %v (-%d +%d)", prop.RequiresApproval, tt.want, prop.Deleted, prop.Added)
			}
		})
	}
}

func TestExtendRefusals(t *testing.T) {
	t.Parallel()
	_, err := propose(t, "notes.md", "# notes\n", "more\n", safewrite.Extend, 0)
	var ee *extend.Error
	if !errors.As(err, &ee) || !strings.Contains(err.Error(), "Go (.go) and Python (.py)") {
		t.Fatalf("markdown: err = %v", err)
	}
	_, err = propose(t, "new.go", "", "func F() {}\n", safewrite.Extend, 0)
	if !errors.As(err, &ee) || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("missing file: err = %v", err)
	}
}

func TestParseStrategy(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]safewrite.Strategy{"": "", "append": safewrite.Append, " Insert ": safewrite.Insert,
		"EXTEND": safewrite.Extend, "replace": safewrite.Replace, "edit": safewrite.Edit} {
		if got, err := safewrite.ParseStrategy(in); err != nil || got != want {
			t.Errorf("ParseStrategy(%q) = %q, %v", in, got, err)
		}
	}
	for _, bad := range []string{"merge", "overwrite", "a"} {
		if _, err := safewrite.ParseStrategy(bad); err == nil || !strings.Contains(err.Error(), "use append, insert, extend or replace") {
			t.Errorf("ParseStrategy(%q): %v", bad, err)
		}
	}
}

// merged proposes a write of content over existing and returns the
// proposal. With wantErr it expects an error containing wantErr (of
// target's type when target is not nil) instead, and reports ok false.
func merged(t *testing.T, path, existing, content string, st safewrite.Strategy, line int, wantErr string, target any) (prop safewrite.Proposal, ok bool) {
	t.Helper()
	prop, err := propose(t, path, existing, content, st, line)
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) || (target != nil && !errors.As(err, target)) {
			t.Fatalf("err = %v, want an error (%T) containing %q", err, target, wantErr)
		}
		return prop, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return prop, true
}
