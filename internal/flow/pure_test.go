package flow_test

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A gate's decide must be pure: it may read and set the state, and nothing
// else (no files, processes, network, clock, terminal, store or model), so
// that any channel, on any engine, can answer a gate and the same answer
// routes the same way. The check below reads the source with its types:
// everything a decide function calls, directly or through functions of its
// own package, must be in the list of pure functions; a call through a
// function value, a goroutine or a channel fails it.

// purePackages are the packages whose every function and method is pure.
var purePackages = map[string]bool{
	"strings": true, "bytes": true, "errors": true, "slices": true, "maps": true, "sort": true,
	"strconv": true, "unicode": true, "unicode/utf8": true, "math": true, "path": true, "regexp": true,
	module + "/internal/human":  true,
	module + "/internal/slug":   true,
	module + "/internal/lazyre": true,
}

// pureFuncs are the pure functions of other packages.
var pureFuncs = map[string]bool{
	"fmt.Errorf": true, "fmt.Sprintf": true, "fmt.Sprint": true, "fmt.Sprintln": true,
	"path/filepath.Join": true, "path/filepath.Base": true, "path/filepath.Clean": true, "path/filepath.Dir": true,
	"path/filepath.Ext": true, "path/filepath.ToSlash": true, "path/filepath.FromSlash": true, "path/filepath.IsAbs": true,
	"path/filepath.Rel": true, "path/filepath.IsLocal": true,
	module + "/internal/workflow/gates.Flagged":  true,
	module + "/internal/workflow/gates.Decision": true,
	module + "/internal/workflow/gates.Eroded":   true,
}

// followPackages are the packages of azero whose functions a decide may
// call because the check follows them: it reads their source and checks
// the body of every function called, as it does the decide's own
// package's (the governance workflows share their gates' routing there).
var followPackages = map[string]bool{
	module + "/internal/workflow/governance": true,
}

// purity checks the decide functions of one type-checked package.
type purity struct {
	pkg   *types.Package
	info  *types.Info
	decls map[*types.Func]*ast.FuncDecl
	done  map[*types.Func]string // why each function checked is impure ("": pure)
	fset  *token.FileSet
	// byName finds this package's functions by their full name, for
	// another package's check following a call here.
	byName map[string]*types.Func
	parsed []*ast.File
	// world gives the followed packages (nil: calls into them are refused).
	world *universe
}

// universe type-checks the followed packages from their source, once.
type universe struct {
	t       *testing.T
	exports map[string]string
	pkgs    map[string]*purity
	checked int // functions of followed packages checked
}

// followed returns the check of the followed package path.
func (u *universe) followed(path string) *purity {
	if p, ok := u.pkgs[path]; ok {
		return p
	}
	dir, files := packageFiles(u.t, path)
	p := newPurity(u.t, path, dir, files, u.exports)
	p.world = u
	u.pkgs[path] = p
	return p
}

// typeCheck parses and checks the package in dir (its files named files),
// importing from the export data in exports.
func typeCheck(t *testing.T, fset *token.FileSet, path, dir string, files []string, exports map[string]string) (*types.Package, *types.Info, []*ast.File) {
	t.Helper()
	var parsed []*ast.File
	for _, name := range files {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, f)
	}
	imp := importer.ForCompiler(fset, "gc", func(p string) (io.ReadCloser, error) {
		file, ok := exports[p]
		if !ok || file == "" {
			return nil, fmt.Errorf("no export data for %s", p)
		}
		return os.Open(file)
	})
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}, Types: map[ast.Expr]types.TypeAndValue{}}
	conf := types.Config{Importer: imp}
	pkg, err := conf.Check(path, fset, parsed, info)
	if err != nil {
		t.Fatalf("type-check %s: %v", path, err)
	}
	return pkg, info, parsed
}

// decides returns, by gate, the decide argument of every Graph.Gate call
// in files.
func decides(info *types.Info, files []*ast.File) map[string]ast.Expr {
	out := map[string]ast.Expr{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Gate" || len(call.Args) < 3 {
				return true
			}
			fn, ok := info.Uses[sel.Sel].(*types.Func)
			if !ok || fn.Pkg() == nil || fn.Pkg().Path() != module+"/internal/flow" {
				return true
			}
			out[types.ExprString(call.Args[0])] = call.Args[2]
			return true
		})
	}
	return out
}

// check reports why the code of n is not pure ("" when it is).
func (p *purity) check(n ast.Node) string {
	var why string
	ast.Inspect(n, func(n ast.Node) bool {
		if why != "" {
			return false
		}
		switch n := n.(type) {
		case *ast.GoStmt:
			why = "starts a goroutine"
		case *ast.SendStmt, *ast.SelectStmt:
			why = "uses a channel"
		case *ast.UnaryExpr:
			if n.Op == token.ARROW {
				why = "receives from a channel"
			}
		case *ast.CallExpr:
			if id := calledName(n.Fun); id != nil {
				if v, ok := p.info.Uses[id].(*types.Var); ok {
					why = "calls the function value " + v.Name() + ", which cannot be proven pure"
				}
			}
		case *ast.Ident:
			why = p.use(n)
		}
		if why != "" {
			why = fmt.Sprintf("%s: %s", p.fset.Position(n.Pos()), why)
		}
		return why == ""
	})
	return why
}

func calledName(fun ast.Expr) *ast.Ident {
	switch f := fun.(type) {
	case *ast.Ident:
		return f
	case *ast.SelectorExpr:
		return f.Sel
	case *ast.ParenExpr:
		return calledName(f.X)
	}
	return nil
}

// checkFunc reports why the body of obj, a function of this package, is
// not pure ("" when it is).
func (p *purity) checkFunc(obj *types.Func) string {
	if why, ok := p.done[obj]; ok {
		return why // "" also while obj is being checked (recursion)
	}
	p.done[obj] = ""
	why := obj.FullName() + " has no body to check"
	if decl := p.decls[obj]; decl != nil && decl.Body != nil {
		if why = p.check(decl.Body); why != "" {
			why = obj.Name() + " -> " + why
		}
	}
	p.done[obj] = why
	return why
}

// use checks what id names.
func (p *purity) use(id *ast.Ident) string {
	switch obj := p.info.Uses[id].(type) {
	case *types.Func:
		obj = obj.Origin()
		if obj.Pkg() == p.pkg {
			return p.checkFunc(obj)
		}
		if obj.Pkg() == nil { // error.Error
			return ""
		}
		if purePackages[obj.Pkg().Path()] || pureFuncs[obj.Pkg().Path()+"."+obj.Name()] && obj.Signature().Recv() == nil {
			return ""
		}
		if followPackages[obj.Pkg().Path()] && p.world != nil {
			q := p.world.followed(obj.Pkg().Path())
			fn := q.byName[obj.FullName()]
			if fn == nil {
				return obj.FullName() + " has no body to check"
			}
			if _, seen := q.done[fn]; !seen {
				p.world.checked++
			}
			return q.checkFunc(fn)
		}
		return "calls " + obj.FullName()
	case *types.Var:
		if obj.Pkg() == nil || obj.Pkg() == p.pkg || obj.IsField() || obj.Parent() != obj.Pkg().Scope() {
			return ""
		}
		if types.Identical(obj.Type(), types.Universe.Lookup("error").Type()) {
			return "" // a sentinel error
		}
		if purePackages[obj.Pkg().Path()] {
			return ""
		}
		return "reads the variable " + obj.Pkg().Path() + "." + obj.Name()
	case *types.Builtin:
		if obj.Name() == "print" || obj.Name() == "println" {
			return "prints"
		}
	}
	return ""
}

// newPurity type-checks the package in dir for the check.
func newPurity(t *testing.T, path, dir string, files []string, exports map[string]string) *purity {
	t.Helper()
	fset := token.NewFileSet()
	pkg, info, parsed := typeCheck(t, fset, path, dir, files, exports)
	p := &purity{pkg: pkg, info: info, decls: map[*types.Func]*ast.FuncDecl{}, done: map[*types.Func]string{}, fset: fset,
		byName: map[string]*types.Func{}, parsed: parsed}
	for _, f := range parsed {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok {
				if fn, ok := info.Defs[fd.Name].(*types.Func); ok {
					p.decls[fn] = fd
					p.byName[fn.FullName()] = fn
				}
			}
		}
	}
	return p
}

// impure returns, by gate, why the decide functions of the package in dir
// are not pure (and, keyed "mount PREFIX", the functions giving the state
// of the graphs it mounts, which the mounted gates route through); it
// fails the test when the package has no gate. world, when not nil,
// follows calls into the followed packages.
func impure(t *testing.T, path, dir string, files []string, exports map[string]string, world ...*universe) (gates, mounts int, problems map[string]string) {
	t.Helper()
	p := newPurity(t, path, dir, files, exports)
	if len(world) > 0 {
		p.world = world[0]
	}
	problems = map[string]string{}
	found := decides(p.info, p.parsed)
	for gate, expr := range found {
		if why := p.check(expr); why != "" {
			problems[gate] = why
		}
	}
	mounted := lenses(p.info, p.parsed)
	for prefix, expr := range mounted {
		if why := p.check(expr); why != "" {
			problems["mount "+prefix] = why
		}
	}
	return len(found), len(mounted), problems
}

// lenses returns, by prefix, the State function of every flow.Mount call
// in files.
func lenses(info *types.Info, files []*ast.File) map[string]ast.Expr {
	out := map[string]ast.Expr{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 2 {
				return true
			}
			id := calledName(call.Fun)
			if ix, ok := call.Fun.(*ast.IndexListExpr); ok {
				id = calledName(ix.X)
			}
			if id == nil || id.Name != "Mount" {
				return true
			}
			fn, ok := info.Uses[id].(*types.Func)
			if !ok || fn.Pkg() == nil || fn.Pkg().Path() != module+"/internal/flow" {
				return true
			}
			lit, ok := call.Args[1].(*ast.CompositeLit)
			if !ok {
				// Not written in place: check the whole expression.
				out[types.ExprString(call.Args[1])] = call.Args[1]
				return true
			}
			var prefix string
			var state ast.Expr
			for _, el := range lit.Elts {
				if kv, ok := el.(*ast.KeyValueExpr); ok {
					switch types.ExprString(kv.Key) {
					case "Prefix":
						prefix = types.ExprString(kv.Value)
					case "State":
						state = kv.Value
					}
				}
			}
			if state != nil {
				out[prefix] = state
			}
			return true
		})
	}
	return out
}

// TestDecideFunctionsArePure checks every gate of every graph in azero.
func TestDecideFunctionsArePure(t *testing.T) {
	t.Parallel()
	// The packages declaring gates, and the export data of everything
	// they import.
	var withGates []string
	for line := range strings.Lines(goList(t, "-f", "{{.ImportPath}} {{.Dir}} {{join .GoFiles \",\"}}", module+"/...")) {
		fields := strings.Fields(line)
		if len(fields) < 3 || strings.HasSuffix(fields[0], "/internal/flow") {
			continue
		}
		for _, name := range strings.Split(fields[2], ",") {
			src, err := os.ReadFile(filepath.Join(fields[1], name))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(src), ").Gate(") || strings.Contains(string(src), "\tGate(") {
				withGates = append(withGates, fields[0])
				break
			}
		}
	}
	for _, want := range []string{"implement", "issue", "design", "selftest"} {
		if !slices.Contains(withGates, module+"/internal/workflow/"+want) {
			t.Fatalf("the gates of workflow %s were not found (found %v): the test would prove nothing", want, withGates)
		}
	}
	exports := exportData(t, withGates...)
	world := &universe{t: t, exports: exports, pkgs: map[string]*purity{}}
	total, mounts := 0, 0
	for _, path := range withGates {
		dir, files := packageFiles(t, path)
		n, m, problems := impure(t, path, dir, files, exports, world)
		t.Logf("%s: %d gates, %d mounted graphs", path, n, m)
		total, mounts = total+n, mounts+m
		for gate, why := range problems {
			t.Errorf("%s: the decide function of gate %s is not pure: %s", path, gate, why)
		}
	}
	if total < 8 {
		t.Errorf("found %d gates in %v; the graphs have more", total, withGates)
	}
	// The issue and design gates route through the governance package:
	// the check must have read its functions, or it proved nothing there.
	if mounts == 0 {
		t.Error("no mounted graph was found (the design mounts the implementation): the check of their state functions proved nothing")
	}
	if world.checked == 0 {
		t.Errorf("no function of %v was followed: the shared gates' routing went unchecked", followPackages)
	}
	t.Logf("%d functions of followed packages checked", world.checked)
}

// exportData builds pkgs and their dependencies and returns where the
// export data of each is.
func exportData(t *testing.T, pkgs ...string) map[string]string {
	t.Helper()
	exports := map[string]string{}
	out := goList(t, append([]string{"-export", "-deps", "-f", "{{.ImportPath}} {{.Export}}"}, pkgs...)...)
	for line := range strings.Lines(out) {
		if path, file, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
			exports[path] = file
		}
	}
	return exports
}

func packageFiles(t *testing.T, path string) (string, []string) {
	t.Helper()
	fields := strings.Fields(goList(t, "-f", "{{.Dir}} {{join .GoFiles \" \"}}", path))
	return fields[0], fields[1:]
}

// TestPurityCheckFindsIO: the check finds I/O however deep in the
// package's own functions it hides, and accepts what only reads and sets
// the state.
func TestPurityCheckFindsIO(t *testing.T) {
	t.Parallel()
	const header = `package wf

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/human"
)

type S struct{ Note string }

type nodes struct{ log func(string) }

func ask(context.Context, *S) (human.Question, error) { return human.Question{}, nil }

var _, _, _, _ = os.Stdout, time.Now, fmt.Println, strings.TrimSpace
`
	tests := []struct {
		name, decide, code, want string
	}{
		{"pure", "decide", `func decide(s *S, q human.Question, a human.Answer) (string, error) {
	s.Note = strings.TrimSpace(a.Text)
	if _, ok := q.Option(a.Key); !ok {
		return "", fmt.Errorf("no %s: %w", a.Key, flow.ErrAborted)
	}
	return flow.End, nil
}`, ""},
		{"writes a file two calls down", "decide", `func decide(s *S, q human.Question, a human.Answer) (string, error) { return route(s), nil }
func route(s *S) string { note(s); return flow.End }
func note(s *S) { _ = os.WriteFile("x", nil, 0o600) }`, "route -> "},
		{"reads the clock", "decide", `func decide(s *S, q human.Question, a human.Answer) (string, error) { s.Note = time.Now().String(); return flow.End, nil }`, "time.Now"},
		{"prints", "decide", `func decide(s *S, q human.Question, a human.Answer) (string, error) { fmt.Println(a.Key); return flow.End, nil }`, "fmt.Println"},
		{"a method calling its dependencies", "(&nodes{}).decide", `func (n *nodes) decide(s *S, q human.Question, a human.Answer) (string, error) { n.log(a.Key); return flow.End, nil }`, "function value log"},
		{"a function literal", `func(s *S, q human.Question, a human.Answer) (string, error) { _ = os.Remove("x"); return flow.End, nil }`, "", "os.Remove"},
		{"a goroutine", "decide", `func decide(s *S, q human.Question, a human.Answer) (string, error) { go func() {}(); return flow.End, nil }`, "goroutine"},
		{"standard output", "decide", `func decide(s *S, q human.Question, a human.Answer) (string, error) { _ = os.Stdout; return flow.End, nil }`, "os.Stdout"},
	}
	exports := exportData(t, "os", "time", "fmt", "strings", "context", module+"/internal/flow", module+"/internal/human")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			src := header + tt.code + "\n\nvar _ = flow.New[S](\"wf\", \"g\").Gate(\"g\", ask, " + tt.decide + ", flow.End)\n"
			if err := os.WriteFile(filepath.Join(dir, "wf.go"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			n, _, problems := impure(t, "example.com/wf", dir, []string{"wf.go"}, exports)
			if n != 1 {
				t.Fatalf("found %d gates, want 1", n)
			}
			why := problems[`"g"`]
			switch {
			case tt.want == "" && why != "":
				t.Errorf("a pure decide was refused: %s", why)
			case tt.want != "" && !strings.Contains(why, tt.want):
				t.Errorf("why = %q, want it to mention %q", why, tt.want)
			}
		})
	}
}

// TestPurityCheckFindsIOInALens: the function giving a mounted graph its
// state is checked as a decide is (the mounted gates route through it).
func TestPurityCheckFindsIOInALens(t *testing.T) {
	t.Parallel()
	const src = `package wf

import (
	"context"
	"os"

	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/human"
)

type In struct{ Note string }

type S struct{ In *In }

func ask(context.Context, *In) (human.Question, error) { return human.Question{}, nil }

func decide(s *In, q human.Question, a human.Answer) (string, error) { return flow.End, nil }

func pure(s *S) *In { return s.In }

func reads(s *S) *In { s.In.Note = os.Getenv("HOME"); return s.In }

var inner = flow.New[In]("in", "g").Gate("g", ask, decide, flow.End)

var _ = flow.Mount(flow.New[S]("wf", "a"), flow.Mounted[S, In]{Prefix: "p/", Graph: inner, State: pure, Exit: flow.End})
var _ = flow.Mount(flow.New[S]("wf", "a"), flow.Mounted[S, In]{Prefix: "q/", Graph: inner, State: reads, Exit: flow.End})
`
	exports := exportData(t, "os", "context", module+"/internal/flow", module+"/internal/human")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "wf.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, mounts, problems := impure(t, "example.com/wf", dir, []string{"wf.go"}, exports)
	if mounts != 2 {
		t.Errorf("found %d mounted graphs, want 2", mounts)
	}
	if why := problems[`mount "p/"`]; why != "" {
		t.Errorf("a pure lens was refused: %s", why)
	}
	if why := problems[`mount "q/"`]; !strings.Contains(why, "os.Getenv") {
		t.Errorf("the lens reading the environment: %q, want it refused for os.Getenv (problems %v)", why, problems)
	}
}
