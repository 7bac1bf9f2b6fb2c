package extend

import (
	"bytes"
	"errors"
	"fmt"
	"go/parser"
	"go/scanner"
	"go/token"
	"strconv"

	"github.com/dave/dst"
	"github.com/dave/dst/decorator"
)

// mergeGo merges the declarations of piece into the Go file existing:
// methods of a type already in the file go after that type's last method
// (or after the type), fields of a struct (and methods of an interface)
// already in the file join it, imports join the import block, everything
// else is appended. A member named like an existing one is an error, never
// a duplicate. dst keeps every comment of both sources.
func mergeGo(rel string, existing, piece []byte) ([]byte, error) {
	fail := func(format string, args ...any) error {
		return &Error{Path: rel, Reason: fmt.Sprintf(format, args...)}
	}
	base, err := decorator.Parse(existing)
	if err != nil {
		return nil, fail("the existing file does not parse as Go: %v", goParseError(err, 0))
	}
	src, shift := piece, 0
	if _, err := parser.ParseFile(token.NewFileSet(), "", piece, parser.PackageClauseOnly); err != nil {
		// A bare list of declarations: give it the file's package clause.
		// Two lines are added, which parse errors subtract again.
		src = append([]byte("package "+base.Name.Name+"\n\n"), piece...)
		shift = 2
	}
	add, err := decorator.Parse(src)
	if err != nil {
		return nil, fail("the new content does not parse as Go: %v", goParseError(err, shift))
	}
	if add.Name.Name != base.Name.Name {
		return nil, fail("the new content is package %s but the file is package %s", add.Name.Name, base.Name.Name)
	}

	idx := indexGo(base)
	after := map[int][]dst.Decl{} // new declarations to place after base.Decls[i]
	var tail []dst.Decl
	var imports []*dst.ImportSpec

	for _, d := range add.Decls {
		switch d := d.(type) {
		case *dst.FuncDecl:
			name := d.Name.Name
			if d.Recv == nil || len(d.Recv.List) == 0 {
				if name != "init" && name != "_" && idx.top[name] {
					return nil, fail("%s is already declared in the file; extend adds members, it does not replace them (use an edit or replace)", name)
				}
				idx.top[name] = true
				tail = append(tail, d)
				continue
			}
			tn := recvTypeName(d.Recv.List[0].Type)
			if tn == "" {
				return nil, fail("cannot tell the receiver type of method %s", name)
			}
			if idx.members[tn][name] {
				return nil, fail("%s.%s already exists; extend adds members, it does not replace them (use an edit or replace)", tn, name)
			}
			idx.addMember(tn, name)
			if i, ok := idx.lastMethod[tn]; ok {
				after[i] = append(after[i], d)
			} else if i, ok := idx.typeDecl[tn]; ok {
				after[i] = append(after[i], d)
			} else {
				tail = append(tail, d)
			}
		case *dst.GenDecl:
			switch d.Tok {
			case token.IMPORT:
				for _, s := range d.Specs {
					is := s.(*dst.ImportSpec)
					if key := importKey(is); !idx.imports[key] {
						idx.imports[key] = true
						imports = append(imports, is)
					}
				}
			case token.TYPE:
				var fresh []dst.Spec
				for _, s := range d.Specs {
					ts := s.(*dst.TypeSpec)
					name := ts.Name.Name
					old, ok := idx.types[name]
					if !ok {
						if idx.top[name] {
							return nil, fail("%s is already declared in the file", name)
						}
						idx.top[name] = true
						fresh = append(fresh, ts)
						continue
					}
					if err := mergeTypeMembers(idx, name, old, ts); err != nil {
						return nil, fail("%v", err)
					}
				}
				if len(fresh) > 0 {
					d.Specs = fresh
					if len(fresh) == 1 {
						d.Lparen, d.Rparen = false, false
					}
					tail = append(tail, d)
				}
			default: // var, const
				for _, s := range d.Specs {
					for _, n := range s.(*dst.ValueSpec).Names {
						if n.Name == "_" {
							continue
						}
						if idx.top[n.Name] {
							return nil, fail("%s is already declared in the file; extend adds members, it does not replace them", n.Name)
						}
						idx.top[n.Name] = true
					}
				}
				tail = append(tail, d)
			}
		}
	}

	addImports(base, imports)
	decls := make([]dst.Decl, 0, len(base.Decls)+len(tail)+len(after))
	for i, d := range base.Decls {
		decls = append(decls, d)
		for _, n := range after[i] {
			spaceBefore(n)
			decls = append(decls, n)
		}
	}
	for _, n := range tail {
		spaceBefore(n)
		decls = append(decls, n)
	}
	base.Decls = decls

	var out bytes.Buffer
	if err := decorator.Fprint(&out, base); err != nil {
		return nil, fail("print the merged file: %v", err)
	}
	return out.Bytes(), nil
}

// goParseError renders a parse error with line numbers of the caller's
// text (shift lines were prepended to it).
func goParseError(err error, shift int) error {
	var list scanner.ErrorList
	if !errors.As(err, &list) || len(list) == 0 {
		return err
	}
	e := list[0]
	return fmt.Errorf("line %d:%d: %s", e.Pos.Line-shift, e.Pos.Column, e.Msg)
}

// goIndex is what the existing file declares.
type goIndex struct {
	top        map[string]bool            // package-level names
	types      map[string]*dst.TypeSpec   // type declarations
	typeDecl   map[string]int             // index in Decls of each type's declaration
	members    map[string]map[string]bool // per type: its methods and fields
	lastMethod map[string]int             // index in Decls of each type's last method
	imports    map[string]bool            // importKey of each import
}

func (x *goIndex) addMember(typ, name string) {
	if x.members[typ] == nil {
		x.members[typ] = map[string]bool{}
	}
	x.members[typ][name] = true
}

func indexGo(f *dst.File) *goIndex {
	x := &goIndex{top: map[string]bool{}, types: map[string]*dst.TypeSpec{}, typeDecl: map[string]int{},
		members: map[string]map[string]bool{}, lastMethod: map[string]int{}, imports: map[string]bool{}}
	for i, d := range f.Decls {
		switch d := d.(type) {
		case *dst.FuncDecl:
			if d.Recv == nil || len(d.Recv.List) == 0 {
				x.top[d.Name.Name] = true
				continue
			}
			if tn := recvTypeName(d.Recv.List[0].Type); tn != "" {
				x.addMember(tn, d.Name.Name)
				x.lastMethod[tn] = i
			}
		case *dst.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *dst.ImportSpec:
					x.imports[importKey(s)] = true
				case *dst.TypeSpec:
					x.top[s.Name.Name] = true
					x.types[s.Name.Name] = s
					x.typeDecl[s.Name.Name] = i
					for _, name := range typeMemberNames(s) {
						x.addMember(s.Name.Name, name)
					}
				case *dst.ValueSpec:
					for _, n := range s.Names {
						x.top[n.Name] = true
					}
				}
			}
		}
	}
	return x
}

// mergeTypeMembers adds the fields of struct add to struct old, or the
// methods of interface add to interface old.
func mergeTypeMembers(x *goIndex, name string, old, add *dst.TypeSpec) error {
	var oldList, addList *dst.FieldList
	switch o := old.Type.(type) {
	case *dst.StructType:
		if a, ok := add.Type.(*dst.StructType); ok {
			oldList, addList = o.Fields, a.Fields
		}
	case *dst.InterfaceType:
		if a, ok := add.Type.(*dst.InterfaceType); ok {
			oldList, addList = o.Methods, a.Methods
		}
	}
	if oldList == nil || addList == nil {
		return fmt.Errorf("type %s already exists and only structs (new fields) and interfaces (new methods) can be extended", name)
	}
	for _, fld := range addList.List {
		for _, n := range fieldNames(fld) {
			if x.members[name][n] {
				return fmt.Errorf("%s.%s already exists; extend adds members, it does not replace them", name, n)
			}
			x.addMember(name, n)
		}
		fld.Decs.Before = dst.NewLine
		fld.Decs.After = dst.NewLine
		oldList.List = append(oldList.List, fld)
	}
	return nil
}

func typeMemberNames(ts *dst.TypeSpec) []string {
	var list *dst.FieldList
	switch t := ts.Type.(type) {
	case *dst.StructType:
		list = t.Fields
	case *dst.InterfaceType:
		list = t.Methods
	}
	if list == nil {
		return nil
	}
	var out []string
	for _, f := range list.List {
		out = append(out, fieldNames(f)...)
	}
	return out
}

// fieldNames returns a field's names; an embedded field is named by its
// type.
func fieldNames(f *dst.Field) []string {
	if len(f.Names) > 0 {
		out := make([]string, len(f.Names))
		for i, n := range f.Names {
			out[i] = n.Name
		}
		return out
	}
	if n := recvTypeName(f.Type); n != "" {
		return []string{n}
	}
	return nil
}

// recvTypeName returns T for receivers T, *T, T[P], *T[P, Q] and
// qualified embedded types pkg.T.
func recvTypeName(e dst.Expr) string {
	for {
		switch t := e.(type) {
		case *dst.Ident:
			return t.Name
		case *dst.StarExpr:
			e = t.X
		case *dst.IndexExpr:
			e = t.X
		case *dst.IndexListExpr:
			e = t.X
		case *dst.ParenExpr:
			e = t.X
		case *dst.SelectorExpr:
			return t.Sel.Name
		default:
			return ""
		}
	}
}

func importKey(is *dst.ImportSpec) string {
	path, err := strconv.Unquote(is.Path.Value)
	if err != nil {
		path = is.Path.Value
	}
	if is.Name != nil {
		return is.Name.Name + " " + path
	}
	return path
}

// addImports puts specs into the file's first import declaration, or a
// new one before every other declaration.
func addImports(f *dst.File, specs []*dst.ImportSpec) {
	if len(specs) == 0 {
		return
	}
	for _, d := range f.Decls {
		if g, ok := d.(*dst.GenDecl); ok && g.Tok == token.IMPORT {
			if !g.Lparen {
				// import "x" becomes a block: its one spec gets a line.
				for _, s := range g.Specs {
					s.Decorations().Before = dst.NewLine
					s.Decorations().After = dst.NewLine
				}
			}
			for _, s := range specs {
				s.Decs.Before = dst.NewLine
				s.Decs.After = dst.NewLine
				g.Specs = append(g.Specs, s)
			}
			g.Lparen, g.Rparen = true, true
			return
		}
	}
	g := &dst.GenDecl{Tok: token.IMPORT, Lparen: len(specs) > 1, Rparen: len(specs) > 1}
	for _, s := range specs {
		if len(specs) > 1 {
			s.Decs.Before = dst.NewLine
			s.Decs.After = dst.NewLine
		}
		g.Specs = append(g.Specs, s)
	}
	g.Decs.Before = dst.EmptyLine
	g.Decs.After = dst.EmptyLine
	f.Decls = append([]dst.Decl{g}, f.Decls...)
}

func spaceBefore(d dst.Decl) {
	decs := d.Decorations()
	decs.Before = dst.EmptyLine
	decs.After = dst.EmptyLine
}
