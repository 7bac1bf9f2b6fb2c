package edit_test

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/azero-dev/azero/internal/edit"
	"github.com/azero-dev/azero/internal/testenv"
)

// TestOutlineGolden outlines a realistic file in every language (the
// testdata/outline files are named as the file they stand for, plus
// ".txt") and compares the declarations found, with their kinds, with the
// golden files (go test -run TestOutlineGolden -update rewrites them).
// Every file holds the traps of its language: declarations in strings,
// comments and bodies, signatures over several lines, nested types.
func TestOutlineGolden(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "outline", "*.txt"))
	if err != nil || len(files) < 9 {
		t.Fatalf("outline samples: %v, %v", files, err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".txt")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for _, d := range edit.Declarations(name, string(data)) {
				fmt.Fprintf(&b, "%4d %-11s %s\n", d.Line, d.Kind, d.Text)
			}
			golden := filepath.Join("testdata", "outline", name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), b.String()); diff != "" {
				t.Errorf("%s (-want +got):\n%s", golden, diff)
			}
			// Each declaration is the file's line, as it is.
			lines := strings.Split(string(data), "\n")
			for _, d := range edit.Declarations(name, string(data)) {
				if d.Text != strings.TrimRight(lines[d.Line-1], " \t") {
					t.Errorf("line %d is %q, declaration says %q", d.Line, lines[d.Line-1], d.Text)
				}
			}
		})
	}
}

func TestOutline(t *testing.T) {
	t.Parallel()
	var big strings.Builder
	big.WriteString("package big\n\n")
	for i := range 120 {
		fmt.Fprintf(&big, "// F%d does %d.\nfunc F%d() int {\n\treturn %d\n}\n\n", i, i, i, i)
	}
	got := edit.Outline("pkg/big.go", big.String())
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != 121 || lines[0] != "  1 | package big" || lines[1] != "  4 | func F0() int {" || lines[120] != "599 | func F119() int {" {
		t.Errorf("Outline = %d lines:\n%s", len(lines), got)
	}
	if edit.Outline("a.go", "// only a comment\n") != "" {
		t.Error("an outline of nothing is not empty")
	}
	long := "const x = \"" + strings.Repeat("ü", 300) + "\"\n"
	if d := edit.Declarations("x.go", long); len(d) != 1 || len(d[0].Text) > 250 || !strings.HasSuffix(d[0].Text, " …") {
		t.Errorf("a long line is not cut: %+v", d)
	}
	// CRLF and a byte-order mark change nothing but the text.
	crlf := "\uFEFFpackage a\r\n\r\nfunc F() {}\r\n"
	if d := edit.Declarations("a.go", crlf); len(d) != 2 || d[1] != (edit.Declaration{Line: 3, Kind: "func", Text: "func F() {}"}) {
		t.Errorf("CRLF: %+v", d)
	}
}

// TestDeclarationsEdges: the traps of each language, one by one.
func TestDeclarationsEdges(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, path, content string
		want                []int // lines
	}{
		{"python type alias and tabs", "a.py", "type Vec = list[float]\nclass A:\n\tx = 1\n\tdef f(self):\n\t\ty = 2\n", []int{1, 2, 3, 4}},
		{"python string over lines", "a.py", "x = '''\nclass B:\n'''\ndef g(): pass\n", []int{1, 4}},
		{"python statement on its header's line", "a.py", "if x: y = 1\nz = 2\n", []int{2}},
		{"python soft keywords as names", "a.py", "match = 1\ncase = 2\ntype = 3\n", []int{1, 2, 3}},
		{"python function body", "a.py", "def f():\n    x = 1\n    class Local:\n        pass\ny = 2\n", []int{1, 5}},
		{"go raw string", "a.go", "package a\nvar s = `\nfunc F() {}\n`\nfunc G() {}\n", []int{1, 2, 5}},
		{"go rune", "a.go", "package a\nvar r = '{'\nfunc G() {}\n", []int{1, 2, 3}},
		{"js regular expression with a brace", "a.js", "const re = /}/\nexport const a = 1\n", []int{1, 2}},
		{"js string with a brace", "a.js", "const s = 'it\\'s {'\nfunction f() {}\n", []int{1, 2}},
		{"js template over lines", "a.ts", "const t = `${a}\nexport function fake() {}\n`\nexport function real() {}\n", []int{1, 4}},
		{"js statement over lines", "a.ts", "export const x =\n  compute()\nexport type T =\n  | 'a'\n  | 'b'\nlet y = 1\n", []int{1, 3, 6}},
		{"rust lifetimes and characters", "a.rs", "fn f<'a>(x: &'a str) -> char { '{' }\nconst C: char = '}';\nstatic S: &str = r#\"}\"#;\nfn g() {}\n", []int{1, 2, 3, 4}},
		{"kotlin nested comment", "a.kt", "/* /* */ fun hidden() {} */\nfun shown() {}\n", []int{2}},
		{"c# verbatim string", "a.cs", "class A {\n  string s = @\"a \"\" }\";\n  void M() {}\n}\n", []int{1, 2, 3}},
		{"java annotation line", "A.java", "class A {\n  @Override\n  public String toString() { return \"}\"; }\n  int x;\n}\n", []int{1, 3, 4}},
		{"java generic method", "A.java", "class A {\n  public <T extends Comparable<T>> List<T> sorted(List<T> in) { return in; }\n}\n", []int{1, 2}},
		{"another language", "a.rb", "def f\n  1\nend\n", []int{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := []int{}
			for _, d := range edit.Declarations(tt.path, tt.content) {
				got = append(got, d.Line)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("lines %v, want %v in\n%s", got, tt.want, tt.content)
			}
		})
	}
}

// TestOutlineGoMatchesGoParser: on every Go file of this repository, the
// outline lists exactly the lines go/parser finds a top-level declaration
// on: the package clause, each import, func and method, each declaration
// and, in a parenthesised const, var or type declaration, each entry.
func TestOutlineGoMatchesGoParser(t *testing.T) {
	t.Parallel()
	var files []string
	err := filepath.WalkDir(filepath.Join("..", ".."), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != filepath.Join("..", "..") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, ".go") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil || len(files) < 100 {
		t.Fatalf("%d Go files: %v", len(files), err)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, f, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		line := func(p token.Pos) int { return fset.Position(p).Line }
		want := []int{line(file.Package)}
		for _, decl := range file.Decls {
			want = append(want, line(decl.Pos()))
			if g, ok := decl.(*ast.GenDecl); ok && g.Lparen.IsValid() && g.Tok != token.IMPORT {
				for _, s := range g.Specs {
					want = append(want, line(s.Pos()))
				}
			}
		}
		slices.Sort(want)
		want = slices.Compact(want)
		var got []int
		for _, d := range edit.Declarations(f, string(src)) {
			got = append(got, d.Line)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: declaration lines (-go/parser +outline):\n%s", f, diff)
		}
	}
}

// pyOracle lists, with Python's own ast, the lines of a module's
// top-level statements that declare something (imports, definitions,
// classes, assignments to names and attributes, type aliases, decorators)
// and of those in class bodies, looking into if, try, with, for, while
// and match blocks at those levels; a statement after others on its line
// (if x: y = 1, else: y = 2) is left out.
const pyOracle = `
import ast, json, sys

def names(t):
    if isinstance(t, ast.Name): return True
    if isinstance(t, ast.Attribute): return names(t.value)
    if isinstance(t, ast.Starred): return names(t.value)
    if isinstance(t, ast.Tuple): return all(names(e) for e in t.elts)
    return False

def walk(body, header, out):
    for n in body:
        if lines[n.lineno - 1][:n.col_offset].strip(): continue
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.extend(d.lineno for d in n.decorator_list)
            out.append(n.lineno)
            if isinstance(n, ast.ClassDef): walk(n.body, n.lineno, out)
        elif isinstance(n, (ast.Import, ast.ImportFrom)) or type(n).__name__ == "TypeAlias":
            out.append(n.lineno)
        elif isinstance(n, ast.Assign) and all(names(t) for t in n.targets):
            out.append(n.lineno)
        elif isinstance(n, (ast.AnnAssign, ast.AugAssign)) and names(n.target):
            out.append(n.lineno)
        elif isinstance(n, (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith)):
            walk(n.body, n.lineno, out); walk(getattr(n, "orelse", []), n.lineno, out)
        elif isinstance(n, ast.Try) or type(n).__name__ == "TryStar":
            walk(n.body, n.lineno, out)
            for h in n.handlers: walk(h.body, h.lineno, out)
            walk(n.orelse, n.lineno, out); walk(n.finalbody, n.lineno, out)
        elif type(n).__name__ == "Match":
            for c in n.cases: walk(c.body, c.pattern.lineno, out)

result = {}
for path in sys.argv[1:]:
    try:
        with open(path, "rb") as f:
            src = f.read()
        tree = ast.parse(src)
        lines = src.split(b"\n")
    except (SyntaxError, ValueError):
        continue
    out = []
    walk(tree.body, 0, out)
    result[path] = sorted(set(out))
json.dump(result, sys.stdout)
`

// TestOutlinePythonMatchesAST: on the modules of the Python standard
// library installed here (and this package's sample), the outline lists
// exactly the lines Python's ast finds declarations on (pyOracle).
func TestOutlinePythonMatchesAST(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "python3")
	out, err := exec.Command("python3", "-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])").Output()
	if err != nil {
		t.Fatal(err)
	}
	stdlib := strings.TrimSpace(string(out))
	files, _ := filepath.Glob(filepath.Join(stdlib, "*.py"))
	if len(files) < 100 {
		t.Fatalf("only %d modules in %s", len(files), stdlib)
	}
	sample, err := filepath.Abs(filepath.Join("testdata", "outline", "inventory.py.txt"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, sample)
	out, err = exec.Command("python3", append([]string{"-c", pyOracle}, files...)...).Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	var want map[string][]int
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) < 100 || want[sample] == nil {
		t.Fatalf("the oracle read %d modules", len(want))
	}
	failed := 0
	for _, f := range files {
		w, ok := want[f]
		if !ok {
			continue // Python cannot parse it either
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got := []int{}
		for _, d := range edit.Declarations(strings.TrimSuffix(f, ".txt"), string(src)) {
			got = append(got, d.Line)
		}
		if w == nil {
			w = []int{}
		}
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("%s: declaration lines (-ast +outline):\n%s", f, diff)
			if failed++; failed == 10 {
				t.Fatal("and more")
			}
		}
	}
}

// tsOracle lists, with the TypeScript compiler's own parser (its module
// directory the first argument), for each file the declarations the
// outline must show: imports and exports, functions, classes, interfaces,
// type aliases, enums, variable statements and namespaces at the top
// level and in namespaces, and the members of classes and interfaces
// (properties, methods, constructors, accessors, index signatures). Each
// is the range of lines from its first token after any decorators to its
// name, any of which the outline may list.
const tsOracle = `const ts = require(process.argv[1]); // node -e SCRIPT -- MODULE FILE...
const fs = require('fs');
const out = {};
for (const path of process.argv.slice(2)) {
  const text = fs.readFileSync(path, 'utf8');
  const name = path.replace(/\.txt$/, '');
  const kind = /\.(m|c)?tsx?$/.test(name) ? (name.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS) : ts.ScriptKind.JS;
  const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, kind);
  if (sf.parseDiagnostics && sf.parseDiagnostics.length) continue;
  const line = (pos) => sf.getLineAndCharacterOfPosition(pos).line + 1;
  const ranges = [];
  const add = (node, end) => {
    let start = node.getStart(sf);
    if (node.modifiers) {
      const m = node.modifiers.find((m) => m.kind !== ts.SyntaxKind.Decorator);
      const d = node.modifiers.filter((m) => m.kind === ts.SyntaxKind.Decorator);
      if (d.length) start = m ? m.getStart(sf) : (node.name ? Math.min(node.name.getStart(sf), keywordStart(node)) : keywordStart(node));
    }
    ranges.push([line(start), line(end !== undefined ? end : (node.name ? node.name.getStart(sf) : start))]);
  };
  const keywordStart = (node) => {
    for (const c of node.getChildren(sf)) {
      if (c.kind === ts.SyntaxKind.SyntaxList && c.getChildren(sf).every((x) => x.kind === ts.SyntaxKind.Decorator)) continue;
      return c.getStart(sf);
    }
    return node.getStart(sf);
  };
  const members = (list) => {
    for (const m of list) {
      switch (m.kind) {
        case ts.SyntaxKind.PropertyDeclaration: case ts.SyntaxKind.MethodDeclaration: case ts.SyntaxKind.Constructor:
        case ts.SyntaxKind.GetAccessor: case ts.SyntaxKind.SetAccessor: case ts.SyntaxKind.IndexSignature:
        case ts.SyntaxKind.PropertySignature: case ts.SyntaxKind.MethodSignature:
          add(m); break;
      }
    }
  };
  const statements = (list) => {
    for (const s of list) {
      switch (s.kind) {
        case ts.SyntaxKind.ImportDeclaration: case ts.SyntaxKind.ImportEqualsDeclaration: case ts.SyntaxKind.ExportDeclaration:
        case ts.SyntaxKind.ExportAssignment: case ts.SyntaxKind.FunctionDeclaration: case ts.SyntaxKind.TypeAliasDeclaration:
        case ts.SyntaxKind.EnumDeclaration: case ts.SyntaxKind.VariableStatement:
          add(s, s.kind === ts.SyntaxKind.VariableStatement ? s.declarationList.declarations[0].name.getStart(sf) : undefined); break;
        case ts.SyntaxKind.ClassDeclaration: case ts.SyntaxKind.InterfaceDeclaration:
          add(s); members(s.members); break;
        case ts.SyntaxKind.ModuleDeclaration: {
          add(s);
          let b = s.body;
          while (b && b.kind === ts.SyntaxKind.ModuleDeclaration) b = b.body;
          if (b && b.statements) statements(b.statements);
          break;
        }
      }
    }
  };
  statements(sf.statements);
  out[path] = ranges;
}
process.stdout.write(JSON.stringify(out));
`

// TestOutlineTypeScriptMatchesTSC: on the declaration files that come
// with the TypeScript compiler installed here (lib.dom.d.ts, the ES
// libraries, typescript.d.ts: over 20,000 declarations) and this
// package's samples, the outline lists a line of every declaration the
// compiler's parser finds (tsOracle), and few others (call and construct
// signatures, module.exports assignments).
func TestOutlineTypeScriptMatchesTSC(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "node")
	tsc, err := filepath.EvalSymlinks(testenv.RequireTool(t, "tsc"))
	if err != nil {
		t.Fatal(err)
	}
	module := filepath.Dir(filepath.Dir(tsc)) // typescript/bin/tsc
	files, _ := filepath.Glob(filepath.Join(module, "lib", "*.d.ts"))
	if len(files) < 50 {
		t.Fatalf("only %d declaration files in %s", len(files), module)
	}
	for _, s := range []string{"checkout.ts.txt", "legacy.js.txt"} {
		abs, err := filepath.Abs(filepath.Join("testdata", "outline", s))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, abs)
	}
	out, err := exec.Command("node", append([]string{"-e", tsOracle, "--", module}, files...)...).Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var want map[string][][2]int
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	expected, listed, extra := 0, 0, 0
	for _, f := range files {
		ranges, ok := want[f]
		if !ok {
			t.Errorf("the compiler could not parse %s", f)
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		decls := edit.Declarations(strings.TrimSuffix(f, ".txt"), string(src))
		lines := map[int]bool{}
		for _, d := range decls {
			lines[d.Line] = true
		}
		covered := map[int]bool{}
		for _, r := range ranges {
			expected++
			found := false
			for l := r[0]; l <= r[1]; l++ {
				if lines[l] {
					found, covered[l] = true, true
				}
			}
			if !found {
				t.Errorf("%s:%d: a declaration the outline does not list", f, r[0])
			}
		}
		for _, d := range decls {
			listed++
			if !covered[d.Line] {
				extra++
			}
		}
	}
	if expected < 10000 || extra > listed/50 {
		t.Errorf("%d declarations expected; %d listed, %d of them not declarations to the compiler", expected, listed, extra)
	}
}

// FuzzDeclarations: whatever the text, in every language, Declarations
// does not panic and lists lines of the text, in order, each once, as the
// text has them.
func FuzzDeclarations(f *testing.F) {
	for _, seed := range []string{
		"package a\n\nfunc F() {}\n",
		"const (\n\tA = iota\n\tB\n)\nvar x = `\n}\n`\n",
		"class A:\n    def f(self):\n        '''\nclass B:\n'''\n    x = 1\n",
		"export class A {\n  #x = 1;\n  get y() { return `${this.#x}}`; }\n}\n",
		"impl<'a> X<'a> {\n    fn f(&self) -> char { '}' }\n}\nconst S: &str = r#\"}\"#;\n",
		"public class A {\n    String s = \"\"\"\n    }\n    \"\"\";\n}\n",
		"namespace N {\n  class C { int X { get; } = @\"}\"; }\n}\n",
		"/* /* */ fun f() {}\n",
		"x = (\n1,\n)\nif a:\n\tdef f(): pass\n",
		"}}}))) {{{((( '\"` /* \"\"\" '''",
	} {
		f.Add(seed, uint8(0))
	}
	exts := []string{".go", ".py", ".js", ".ts", ".rs", ".java", ".kt", ".cs", ".md", ".rb"}
	f.Fuzz(func(t *testing.T, content string, lang uint8) {
		path := "file" + exts[int(lang)%len(exts)]
		decls := edit.Declarations(path, content)
		lines := strings.Split(strings.TrimPrefix(content, "\uFEFF"), "\n")
		prev := 0
		for _, d := range decls {
			if d.Line <= prev || d.Line > len(lines) || d.Kind == "" {
				t.Fatalf("%s: declaration %+v after line %d of %d", path, d, prev, len(lines))
			}
			prev = d.Line
			text := strings.TrimRight(strings.TrimSuffix(lines[d.Line-1], "\r"), " \t\r\v\f")
			if d.Text != text && !(strings.HasSuffix(d.Text, " …") && strings.HasPrefix(text, strings.TrimSuffix(d.Text, " …"))) {
				t.Fatalf("%s: line %d is %q, declaration says %q", path, d.Line, text, d.Text)
			}
		}
		if o := edit.Outline(path, content); strings.Count(o, "\n") != len(decls) {
			t.Fatalf("outline of %d lines for %d declarations", strings.Count(o, "\n"), len(decls))
		}
	})
}
