package testenv_test

import (
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/testenv"
)

// TestNoTestAssertsWallClockTime reads every test file of the module: a
// test that fails when the machine is slow fails on a loaded 2-core
// machine, whatever the code does. So no test may
//
//   - compare a measured duration (time.Since, a Sub of two times, an
//     Elapsed) with a bound: timing belongs in benchmarks;
//   - give something a deadline of a second or more but less than
//     testenv.Patience (time.After, time.Now().Add, context.WithTimeout):
//     such a wait is a guard against a hang, and only a hang may exhaust it.
//
// Benchmarks are exempt. Sub-second waits are polls and ticks.
func TestNoTestAssertsWallClockTime(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	var problems []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil || strings.HasPrefix(fn.Name.Name, "Benchmark") {
				continue
			}
			problems = append(problems, wallClockProblems(fset, fn.Body)...)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// wallClockProblems lists the places in body that assert wall-clock time.
func wallClockProblems(fset *token.FileSet, body ast.Node) []string {
	// Variables holding a measured duration ("elapsed := time.Since(t0)").
	held := map[string]bool{}
	ast.Inspect(body, func(n ast.Node) bool {
		if a, ok := n.(*ast.AssignStmt); ok && len(a.Lhs) == len(a.Rhs) {
			for i, r := range a.Rhs {
				if id, ok := a.Lhs[i].(*ast.Ident); ok && measured(r, nil) {
					held[id.Name] = true
				}
			}
		}
		return true
	})
	var out []string
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BinaryExpr:
			switch n.Op {
			case token.LSS, token.GTR, token.LEQ, token.GEQ:
				if measured(n.X, held) || measured(n.Y, held) {
					out = append(out, fset.Position(n.Pos()).String()+": a measured duration compared with a bound")
				}
			}
		case *ast.CallExpr:
			var arg ast.Expr
			switch name := callName(n.Fun); {
			case name == "time.After" && len(n.Args) == 1:
				arg = n.Args[0]
			case name == "context.WithTimeout" && len(n.Args) == 2:
				arg = n.Args[1]
			case strings.HasSuffix(name, "time.Now().Add") && len(n.Args) == 1:
				arg = n.Args[0]
			}
			if d, ok := constDuration(arg); ok && d >= time.Second && d < testenv.Patience {
				out = append(out, fset.Position(n.Pos()).String()+": a deadline of "+d.String()+" (use testenv.Patience: only a hang may exhaust a wait)")
			}
		}
		return true
	})
	return out
}

// measured reports whether e measures elapsed time, or reads a variable
// in held that does.
func measured(e ast.Expr, held map[string]bool) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			found = held[n.Name]
		case *ast.CallExpr:
			name := callName(n.Fun)
			if name == "time.Since" || name == "time.Until" || strings.HasSuffix(name, ".Sub") && len(n.Args) == 1 && !isLiteral(n.Args[0]) {
				found = true
			}
		case *ast.SelectorExpr:
			if n.Sel.Name == "Elapsed" {
				found = true
			}
		}
		return !found
	})
	return found
}

func isLiteral(e ast.Expr) bool {
	_, ok := e.(*ast.BasicLit)
	return ok
}

// callName renders a call's function as written: "time.After",
// "time.Now().Add", "d.Sub".
func callName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return callName(e.X) + "." + e.Sel.Name
	case *ast.CallExpr:
		return callName(e.Fun) + "()"
	}
	return ""
}

// constDuration evaluates a duration written with constants only
// ("10 * time.Second", "2*time.Minute").
func constDuration(e ast.Expr) (time.Duration, bool) {
	if e == nil {
		return 0, false
	}
	units := map[string]time.Duration{"time.Nanosecond": time.Nanosecond, "time.Microsecond": time.Microsecond,
		"time.Millisecond": time.Millisecond, "time.Second": time.Second, "time.Minute": time.Minute, "time.Hour": time.Hour}
	var eval func(e ast.Expr) (constant.Value, bool)
	eval = func(e ast.Expr) (constant.Value, bool) {
		switch e := e.(type) {
		case *ast.BasicLit:
			v := constant.MakeFromLiteral(e.Value, e.Kind, 0)
			return v, v.Kind() != constant.Unknown
		case *ast.SelectorExpr:
			if u, ok := units[callName(e)]; ok {
				return constant.MakeInt64(int64(u)), true
			}
		case *ast.ParenExpr:
			return eval(e.X)
		case *ast.BinaryExpr:
			x, okX := eval(e.X)
			y, okY := eval(e.Y)
			if okX && okY && (e.Op == token.MUL || e.Op == token.ADD) {
				return constant.BinaryOp(x, e.Op, y), true
			}
		case *ast.CallExpr: // time.Duration(5)
			if callName(e.Fun) == "time.Duration" && len(e.Args) == 1 {
				return eval(e.Args[0])
			}
		}
		return nil, false
	}
	v, ok := eval(e)
	if !ok {
		return 0, false
	}
	f, _ := constant.Float64Val(constant.ToFloat(v))
	return time.Duration(f), true
}

// moduleRoot is the directory of go.mod above this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test")
		}
		dir = parent
	}
}

func TestWallClockProblemsFound(t *testing.T) {
	t.Parallel()
	tests := []struct {
		src  string
		want int
	}{
		{`if time.Since(start) > 2*time.Second { t.Fatal("slow") }`, 1},
		{`if d := end.Sub(start); d < time.Second { t.Fatal("fast") }`, 1},
		{`if ev.Elapsed >= 1.5 { t.Fatal("slow") }`, 1},
		{`select { case <-done: case <-time.After(10 * time.Second): t.Fatal("hang") }`, 1},
		{`ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute); _ = ctx; cancel()`, 1},
		{`for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {}`, 1},
		{`select { case <-done: case <-time.After(testenv.Patience): t.Fatal("hang") }`, 0},
		{`select { case <-tick: case <-time.After(20 * time.Millisecond): }`, 0},
		{`ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond); _ = ctx; cancel()`, 0},
		{`past := time.Now().Add(-time.Hour); _ = past`, 0},
		{`if len(a) > len(b) { t.Fatal("x") }`, 0},
	}
	for _, tt := range tests {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "x_test.go", "package x\nfunc TestX(t *testing.T) {\n"+tt.src+"\n}\n", 0)
		if err != nil {
			t.Fatalf("%s: %v", tt.src, err)
		}
		if got := wallClockProblems(fset, f.Decls[0].(*ast.FuncDecl).Body); len(got) != tt.want {
			t.Errorf("%s: %d problems %v, want %d", tt.src, len(got), got, tt.want)
		}
	}
}
