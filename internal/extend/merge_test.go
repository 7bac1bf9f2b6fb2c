package extend_test

import (
	"errors"
	"go/parser"
	"go/token"
	"os/exec"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/extend"
)

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
			got, ok := merged(t, "shop/cart.go", goFile, tt.content, tt.wantErr, new(*extend.Error))
			if !ok {
				return
			}
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
			got, ok := merged(t, "inventory.py", pyFile, tt.content, tt.wantErr, new(*extend.Error))
			if !ok {
				return
			}
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

// Without python3 the Python extend fails clearly (not run in parallel:
// it empties PATH).
func TestExtendPythonWithoutPython(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := extend.Merge(t.Context(), "a.py", []byte("class A:\n    pass\n"), []byte("class A:\n    def f(self): pass\n"))
	var ee *extend.Error
	if !errors.As(err, &ee) || !strings.Contains(err.Error(), "python3 is not on PATH") {
		t.Fatalf("err = %v", err)
	}
}

func TestExtendGoShapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, existing, content string
		want                    []string
		wantErr                 string
	}{
		{"generic receiver", "package p\n\ntype Stack[T any] struct{ items []T }\n\nfunc (s *Stack[T]) Push(v T) { s.items = append(s.items, v) }\n\nfunc Other() {}\n",
			"func (s *Stack[T]) Pop() T { return s.items[0] }\n",
			[]string{"func (s *Stack[T]) Push(v T)", "func (s *Stack[T]) Pop() T", "func Other()"}, ""},
		{"two type parameters", "package p\n\ntype Pair[K comparable, V any] struct{}\n\nfunc (Pair[K, V]) A() {}\n",
			"func (Pair[K, V]) A() {}\n", nil, "Pair.A already exists"},
		{"type without methods gets its first after it", "package p\n\ntype T struct{}\n\nvar x = 1\n",
			"func (t T) M() {}\n", []string{"type T struct{}\n\nfunc (t T) M() {}\n\nvar x = 1"}, ""},
		{"method of a type declared elsewhere goes at the end", "package p\n\nvar x = 1\n",
			"func (t *Elsewhere) M() {}\n", []string{"var x = 1\n\nfunc (t *Elsewhere) M() {}"}, ""},
		{"embedded field conflicts by type name", "package p\n\nimport \"io\"\n\ntype T struct{ io.Reader }\n",
			"type T struct{ Reader int }\n", nil, "T.Reader already exists"},
		{"imports into a file without any, with an alias", "package p\n\nfunc F() {}\n",
			"import (\n\tstr \"strings\"\n\t\"fmt\"\n)\n\nfunc G() { fmt.Println(str.ToUpper(\"x\")) }\n",
			[]string{"import (\n\t\"fmt\"\n\tstr \"strings\"\n)", "func F() {}", "func G()"}, ""},
		{"one import into a file without any", "package p\n\nfunc F() {}\n", "import \"os\"\n\nfunc G() { os.Exit(0) }\n",
			[]string{"package p\n\nimport \"os\"\n\nfunc F() {}"}, ""},
		{"an import already there is not repeated", "package p\n\nimport \"os\"\n\nfunc F() { os.Exit(1) }\n", "import \"os\"\n\nfunc G() { os.Exit(0) }\n",
			[]string{"import \"os\"\n\nfunc F()"}, ""},
		{"several init and blank functions may coexist", "package p\n\nfunc init() {}\n\nfunc _() {}\n", "func init() {}\n\nfunc _() {}\n",
			[]string{"func init() {}", "func _() {}", "func init() {}", "func _() {}"}, ""},
		{"const and var", "package p\n\nconst A = 1\n", "const B = 2\n\nvar (\n\tC = 3\n\t_ = 4\n)\n", []string{"const A = 1", "const B = 2", "C = 3"}, ""},
		{"const named like an existing one", "package p\n\nconst A = 1\n", "var A = 2\n", nil, "A is already declared"},
		{"type named like a function", "package p\n\nfunc A() {}\n", "type A int\n", nil, "A is already declared"},
		{"grouped types: one merged, one new", "package p\n\ntype S struct{ A int }\n",
			"type (\n\tS struct{ B int }\n\tN int\n)\n", []string{"A int", "B int", "type N int"}, ""},
		{"the existing file must parse", "package p\n\nfunc {\n", "func F() {}\n", nil, "existing file does not parse as Go"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := merged(t, "p.go", tt.existing, tt.content, tt.wantErr, nil)
			if !ok {
				return
			}
			at := 0
			for _, frag := range tt.want {
				i := strings.Index(got[at:], frag)
				if i < 0 {
					t.Fatalf("missing or out of order: %q\nin:\n%s", frag, got)
				}
				at += i + len(frag)
			}
			if _, err := parser.ParseFile(token.NewFileSet(), "", got, 0); err != nil {
				t.Fatalf("result does not parse: %v\n%s", err, got)
			}
		})
	}
}

func TestExtendPythonShapes(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	tests := []struct {
		name, existing, content string
		want                    string
		wantErr                 string
	}{
		{"a one-line class cannot be extended", "class A: pass\n", "class A:\n    def f(self): pass\n", "", "body is on the header's line"},
		{"content without a final newline", "class A:\n    x = 1\n", "class A:\n    y = 2", "class A:\n    x = 1\n\n    y = 2\n", ""},
		{"a file without a final newline", "class A:\n    x = 1", "class A:\n    y = 2\n", "class A:\n    x = 1\n\n    y = 2\n", ""},
		{"imports into a file with a docstring only", "\"\"\"Doc.\"\"\"\n", "import os\n", "\"\"\"Doc.\"\"\"\nimport os\n", ""},
		{"imports above the first statement, below a leading comment", "#!/usr/bin/env python3\n# comment\nx = 1\n", "import os\n", "#!/usr/bin/env python3\nimport os\n# comment\nx = 1\n", ""},
		{"an empty class body in the new content adds nothing", "class A:\n    x = 1\n", "class A:\n    \"\"\"Only a docstring.\"\"\"\n", "class A:\n    x = 1\n", ""},
		{"CRLF file stays CRLF", "class A:\r\n    x = 1\r\n", "class A:\n    y = 2\n", "class A:\r\n    x = 1\r\n\r\n    y = 2\r\n", ""},
		{"CR file stays CR", "class A:\r    x = 1\r", "class A:\n    y = 2\n", "class A:\r    x = 1\r\r    y = 2\r", ""},
		{"the existing file must parse", "def (:\n", "x = 1\n", "", "existing file does not parse as Python"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := merged(t, "m.py", tt.existing, tt.content, tt.wantErr, nil)
			if !ok {
				return
			}
			if got != tt.want {
				t.Fatalf("got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// Merge refuses a file in a language it does not read, whatever its
// content: extend adds members only where it can tell what they are.
func TestMergeRefusesOtherLanguages(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"notes.md", "Makefile", "main.rs", "a.go.txt"} {
		_, err := extend.Merge(t.Context(), path, []byte("x\n"), []byte("y\n"))
		var ee *extend.Error
		if !errors.As(err, &ee) || ee.Path != path || !strings.Contains(err.Error(), "Go (.go) and Python (.py)") {
			t.Errorf("%s: err = %v", path, err)
		}
	}
}

// merged merges content into existing, the file at path, and returns the
// result. With wantErr it expects an error containing wantErr (of
// target's type when target is not nil) instead, and reports ok false.
func merged(t *testing.T, path, existing, content, wantErr string, target any) (got string, ok bool) {
	t.Helper()
	out, err := extend.Merge(t.Context(), path, []byte(existing), []byte(content))
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) || (target != nil && !errors.As(err, target)) {
			t.Fatalf("err = %v, want an error (%T) containing %q", err, target, wantErr)
		}
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(out), true
}
