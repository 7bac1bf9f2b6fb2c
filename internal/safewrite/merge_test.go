package safewrite_test

import (
	"errors"
	"go/parser"
	"go/token"
	"os/exec"
	"strings"
	"testing"

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
			prop, err := propose(t, "f.txt", tt.existing, tt.content, tt.strategy, tt.line)
			if tt.wantErr != "" {
				var re *safewrite.InsertRangeError
				if !errors.As(err, &re) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want an InsertRangeError naming %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
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

const goFile = `// Package shop sells things.
package shop

import "fmt"

// Cart holds items.
type Cart struct {
	// Items are the things in the cart.
	Items []string // never nil
}

// Add puts an item in the cart.
func (c *Cart) Add(item string) {
	c.Items = append(c.Items, item)
}

// Len counts the items.
func (c *Cart) Len() int { return len(c.Items) }

// Pricer prices items.
type Pricer interface {
	Price(item string) int
}

// Helper is unrelated.
func Helper() string { return fmt.Sprint("h") }
`

func TestExtendGo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		content string
		want    []string // fragments, in this order
		wantErr string
	}{
		{"method goes after the type's last method", `
// Clear empties the cart.
// It keeps the capacity.
func (c *Cart) Clear() {
	c.Items = c.Items[:0] // reuse
}
`, []string{"func (c *Cart) Len() int", "// Clear empties the cart.\n// It keeps the capacity.\nfunc (c *Cart) Clear() {\n\tc.Items = c.Items[:0] // reuse\n}", "// Pricer prices items."}, ""},
		{"struct fields join the struct", `
type Cart struct {
	// Owner pays.
	Owner string ` + "`json:\"owner\"`" + `
	Total int
}
`, []string{"Items []string // never nil", "// Owner pays.\n\tOwner string `json:\"owner\"`", "Total int\n}", "// Add puts an item"}, ""},
		{"interface methods join the interface", "type Pricer interface {\n\tDiscount(item string) int\n}\n",
			[]string{"Price(item string) int\n\tDiscount(item string) int\n}"}, ""},
		{"new declarations and imports are added", `package shop

import (
	"fmt"
	"strings"
)

// Upper shouts.
func Upper(s string) string { return strings.ToUpper(fmt.Sprint(s)) }

// Wallet is new.
type Wallet struct{ Cash int }

func (w Wallet) Spend() {}
`, []string{"import (\n\t\"fmt\"\n\t\"strings\"\n)", "func Helper()", "// Upper shouts.\nfunc Upper", "// Wallet is new.\ntype Wallet struct{ Cash int }", "func (w Wallet) Spend() {}"}, ""},
		{"existing method is an error", "func (c *Cart) Add(item string) {}\n", nil, "Cart.Add already exists"},
		{"method named like a field is an error", "func (c Cart) Items() {}\n", nil, "Cart.Items already exists"},
		{"existing field is an error", "type Cart struct{ Items []int }\n", nil, "Cart.Items already exists"},
		{"existing function is an error", "func Helper() string { return \"\" }\n", nil, "Helper is already declared"},
		{"a type that cannot be extended", "type Cart int\n", nil, "only structs"},
		{"another package", "package other\n\nfunc X() {}\n", nil, "package other"},
		{"invalid Go names the line", "func (c *Cart) Broken( {\n", nil, "does not parse as Go: line 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			prop, err := propose(t, "shop/cart.go", goFile, tt.content, safewrite.Extend, 0)
			if tt.wantErr != "" {
				var ee *safewrite.ExtendError
				if !errors.As(err, &ee) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want an ExtendError with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := string(prop.Result)
			at := 0
			for _, frag := range tt.want {
				i := strings.Index(got[at:], frag)
				if i < 0 {
					t.Fatalf("missing or out of order: %q\nin:\n%s", frag, got)
				}
				at += i + len(frag)
			}
			// Nothing of the original is lost: every comment survives.
			for _, keep := range []string{"// Package shop sells things.", "// Items are the things in the cart.", "// never nil", "// Len counts the items.", "// Helper is unrelated."} {
				if !strings.Contains(got, keep) {
					t.Errorf("lost %q", keep)
				}
			}
			if _, err := parser.ParseFile(token.NewFileSet(), "", got, parser.AllErrors); err != nil {
				t.Fatalf("result does not parse: %v\n%s", err, got)
			}
			if prop.RequiresApproval {
				t.Error("a gofmt'ed file extended needs approval")
			}
		})
	}
}

const pyFile = `"""Inventory."""
import os
from typing import Optional


class Inventory:
    """Holds stock."""

    def __init__(self):
        self.items = {}

    @property
    def size(self):
        return len(self.items)
    # trailing comment of the class


def helper():
    return os.getcwd()
`

func TestExtendPython(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	tests := []struct {
		name, content string
		want          string
		wantErr       string
	}{
		{"methods go at the end of the class with its indentation", `class Inventory:
  """New docstring is not a member."""

  # Adds stock.
  @staticmethod
  def add(inv, name, n):
    if n:
      inv.items[name] = n

  def remove(self, name):
    del self.items[name]
`, `"""Inventory."""
import os
from typing import Optional


class Inventory:
    """Holds stock."""

    def __init__(self):
        self.items = {}

    @property
    def size(self):
        return len(self.items)

    # Adds stock.
    @staticmethod
    def add(inv, name, n):
        if n:
            inv.items[name] = n

    def remove(self, name):
        del self.items[name]
    # trailing comment of the class


def helper():
    return os.getcwd()
`, ""},
		{"imports join the imports, new functions and classes are appended", `import os
import json

def dump(inv):
    return json.dumps(inv.items)

class Report:
    pass
`, `"""Inventory."""
import os
from typing import Optional
import json


class Inventory:
    """Holds stock."""

    def __init__(self):
        self.items = {}

    @property
    def size(self):
        return len(self.items)
    # trailing comment of the class


def helper():
    return os.getcwd()


def dump(inv):
    return json.dumps(inv.items)


class Report:
    pass
`, ""},
		{"tabs become the class's spaces", "class Inventory:\n\tdef count(self):\n\t\treturn 0\n", "", ""},
		{"existing method is an error", "class Inventory:\n    def size(self):\n        return 0\n", "", "Inventory.size already exists"},
		{"existing function is an error", "def helper():\n    pass\n", "", "helper is already defined"},
		{"invalid new content names the line", "class Inventory:\n    def broken(self:\n", "", "does not parse as Python: line 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			prop, err := propose(t, "inventory.py", pyFile, tt.content, safewrite.Extend, 0)
			if tt.wantErr != "" {
				var ee *safewrite.ExtendError
				if !errors.As(err, &ee) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want an ExtendError with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := string(prop.Result)
			if tt.want != "" && got != tt.want {
				t.Fatalf("got:\n%s\nwant:\n%s", got, tt.want)
			}
			if tt.want == "" && !strings.Contains(got, "        return len(self.items)\n\n    def count(self):\n        return 0\n") {
				t.Fatalf("got:\n%s", got)
			}
			check := exec.Command("python3", "-c", "import ast,sys; ast.parse(sys.stdin.read())")
			check.Stdin = strings.NewReader(got)
			if out, err := check.CombinedOutput(); err != nil {
				t.Fatalf("result is not valid Python: %v %s", err, out)
			}
		})
	}
}

func TestExtendRefusals(t *testing.T) {
	t.Parallel()
	_, err := propose(t, "notes.md", "# notes\n", "more\n", safewrite.Extend, 0)
	var ee *safewrite.ExtendError
	if !errors.As(err, &ee) || !strings.Contains(err.Error(), "Go (.go) and Python (.py)") {
		t.Fatalf("markdown: err = %v", err)
	}
	_, err = propose(t, "new.go", "", "func F() {}\n", safewrite.Extend, 0)
	if !errors.As(err, &ee) || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("missing file: err = %v", err)
	}
}

// Without python3 the Python extend fails clearly (not run in parallel:
// it empties PATH).
func TestExtendPythonWithoutPython(t *testing.T) {
	p := newProject(t)
	writeFile(t, p.path("a.py"), "class A:\n    pass\n")
	t.Setenv("PATH", t.TempDir())
	_, err := safewrite.Propose(safewrite.Request{Root: p.root, Path: "a.py", Content: []byte("class A:\n    def f(self): pass\n"), Strategy: safewrite.Extend})
	var ee *safewrite.ExtendError
	if !errors.As(err, &ee) || !strings.Contains(err.Error(), "python3 is not on PATH") {
		t.Fatalf("err = %v", err)
	}
}
