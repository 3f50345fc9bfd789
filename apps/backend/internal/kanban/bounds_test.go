package kanban_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Where bounds are written: the schema builders (package schema's
// schema.go), the keywords only they set, the contracts and tool schemas
// that call them, and kanban's checks by index of the bound.
var (
	boundBuilders = []string{"Len", "Range", "Min", "Items", "Props", "Default"}
	boundKeywords = []string{`"minLength"`, `"maxLength"`, `"minimum"`, `"maximum"`,
		`"minItems"`, `"maxItems"`, `"minProperties"`, `"maxProperties"`}
	boundArgs = map[string]int{"CheckText": 3, "CheckLine": 3, "CheckSettings": 2, "Clip": 1}
	str       = types.ExprString
)

// decl is a package-level constant or variable (value nil without one).
type decl struct {
	id      *ast.Ident
	value   ast.Expr
	isConst bool
}

// TestBoundsWrittenOnce keeps each bound and enum that tool schemas, actions
// and the store share declared once, in package kanban: schema builders
// take kanban values and enums no literals; store and action checks use
// no literal or constant of their own; no package copies a kanban name.
func TestBoundsWrittenOnce(t *testing.T) {
	fset := token.NewFileSet()
	_, kanban := parse(t, fset, ".")
	report := func(n ast.Node, format string, args ...any) {
		t.Errorf("%s: %s", fset.Position(n.Pos()), fmt.Sprintf(format, args...))
	}
	for _, dir := range []string{"../schema", "../mcp/catalog", "../store", "../action"} {
		files, decls := parse(t, fset, dir)
		for name, d := range decls {
			_, derived := d.value.(*ast.CallExpr) // computed from kanban's value (converted), not a copy
			for kname := range kanban {
				if !ast.IsExported(name) && ast.IsExported(kname) && strings.EqualFold(name, kname) && !derived {
					report(d.id, "%s repeats kanban.%s: use kanban.%s", name, kname, kname)
				}
			}
		}
		for _, f := range files {
			v := &bounds{decls: decls, params: map[string]bool{},
				bad: func(e ast.Expr) { report(e, "bound %s: %s", str(e), suggest(kanban, decls, e)) }}
			if dir != "../store" { // the contracts (action), tool schemas (catalog) and builders (schema)
				v.schemas(f, dir == "../schema" && filepath.Base(fset.File(f.Pos()).Name()) == "schema.go", report)
			}
			if dir == "../store" || dir == "../action" {
				v.checks(f)
			}
		}
	}
}

// bounds checks the bound expressions of one file.
type bounds struct {
	decls  map[string]decl
	params map[string]bool // of the enclosing function: true for a kanban type
	bad    func(ast.Expr)
}

// check refuses, in bound e: an integer literal other than 0 or 1, a
// constant of the package and, strict (a schema), any identifier but
// kanban's, a kanban-typed parameter's field, len, true and false.
func (v *bounds) check(e ast.Expr, strict bool) {
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BasicLit:
			if n.Kind == token.INT && n.Value != "0" && n.Value != "1" {
				v.bad(n)
			}
		case *ast.SelectorExpr: // kanban.X, or a field (set where it is checked)
			if x := str(n.X); strict && x != "kanban" && !v.params[x] {
				v.bad(n)
			}
			return false
		case *ast.Ident:
			if v.decls[n.Name].isConst || strict && !slices.Contains([]string{"len", "true", "false"}, n.Name) {
				v.bad(n)
			}
		}
		return true
	})
}

// schemas: a bound builder's arguments pass check, strict; no Enum value is
// a literal; only schema.go sets bound keywords.
func (v *bounds) schemas(f *ast.File, isSchemaGo bool, report func(ast.Node, string, ...any)) {
	for _, d := range f.Decls {
		clear(v.params)
		if fd, ok := d.(*ast.FuncDecl); ok {
			for _, p := range fd.Type.Params.List {
				for _, name := range p.Names {
					v.params[name.Name] = strings.HasPrefix(str(p.Type), "kanban.")
				}
			}
		}
		ast.Inspect(d, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && !isSchemaGo && slices.Contains(boundKeywords, lit.Value) {
				report(n, "schema keyword %s set by hand: use its builder (Len, Range, Min, Items, Props) with a kanban bound", lit.Value)
			}
			call, _ := n.(*ast.CallExpr)
			for i := 0; call != nil && i < len(call.Args); i++ {
				sel, isMethod := call.Fun.(*ast.SelectorExpr)
				if lit, isLit := call.Args[i].(*ast.BasicLit); isLit && strings.TrimPrefix(str(call.Fun), "schema.") == "Enum" && i > 0 {
					report(lit, "enum value %s: declare it in package kanban and use that constant", lit.Value)
				} else if isMethod && slices.Contains(boundBuilders, sel.Sel.Name) {
					v.check(call.Args[i], true)
				}
			}
			return true
		})
	}
}

// checks: the bound of each kanban check (boundArgs), both sides of each
// ordered comparison refusing input with kanban.FieldError, and the literal
// table (for _, c := range []struct{...}{...}) a bound is read from pass check.
func (v *bounds) checks(f *ast.File) {
	tables := map[string]ast.Expr{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.RangeStmt:
			if lit, ok := n.X.(*ast.CompositeLit); ok && n.Value != nil {
				tables[str(n.Value)] = lit
			}
		case *ast.CallExpr:
			name, isKanban := strings.CutPrefix(str(n.Fun), "kanban.")
			if i, known := boundArgs[name]; isKanban && known && i < len(n.Args) {
				v.check(n.Args[i], false)
				if s, ok := n.Args[i].(*ast.SelectorExpr); ok && tables[str(s.X)] != nil {
					v.check(tables[str(s.X)], false)
				}
			}
		case *ast.IfStmt:
			refuses := false
			ast.Inspect(n.Body, func(b ast.Node) bool {
				sel, ok := b.(*ast.SelectorExpr)
				refuses = refuses || ok && str(sel) == "kanban.FieldError"
				return !refuses
			})
			ast.Inspect(n.Cond, func(c ast.Node) bool {
				if b, ok := c.(*ast.BinaryExpr); ok && refuses && slices.Contains([]token.Token{token.LSS, token.LEQ, token.GTR, token.GEQ}, b.Op) {
					v.check(b, false)
				}
				return refuses
			})
		}
		return true
	})
}

// suggest names the exported kanban constants declared with e's value
// (a constant of the package stands for its value), for a failure message.
func suggest(kanban, decls map[string]decl, e ast.Expr) string {
	if d := decls[str(e)]; d.value != nil {
		e = d.value
	}
	var names []string
	for name, d := range kanban {
		if ast.IsExported(name) && d.isConst && str(d.value) == str(e) {
			names = append(names, "kanban."+name)
		}
	}
	if slices.Sort(names); len(names) == 0 {
		return "declare it in package kanban and use that constant"
	}
	return "use the kanban constant that names it (same value: " + strings.Join(names, ", ") + ") or declare one"
}

// parse reads the non-test files of dir and its package-level declarations.
func parse(t *testing.T, fset *token.FileSet, dir string) ([]*ast.File, map[string]decl) {
	paths, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	var files []*ast.File
	decls := map[string]decl{}
	for _, path := range slices.DeleteFunc(paths, func(s string) bool { return strings.HasSuffix(s, "_test.go") }) {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && (g.Tok == token.CONST || g.Tok == token.VAR) {
				for _, s := range g.Specs {
					vs := s.(*ast.ValueSpec)
					for i, id := range vs.Names {
						d := decl{id: id, isConst: g.Tok == token.CONST}
						if i < len(vs.Values) {
							d.value = vs.Values[i]
						}
						decls[id.Name] = d
					}
				}
			}
		}
	}
	if len(files) == 0 {
		t.Fatalf("no Go files in %s", dir)
	}
	return files, decls
}
