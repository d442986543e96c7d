package conformance

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// notInCatalogue are the exported functions returning an error that the catalogue does not
// call, each with the reason: none of them has a bad input to refuse.
var notInCatalogue = map[string]string{
	"cudaops.EnvError":          "reports GATEJET_GPU as read at initialisation; takes no input",
	"cudaops.LastFallbackError": "reports the last device fallback; takes no input",
	"cudaops.Unavailable":       "reports why no device backend is registered; takes no input",
	"cudaops.Prewarm":           "takes no input; its device errors are device_test.go's",
}

// TestCatalogueCallsEveryFunction: the catalogue (catalogue*_test.go) calls every exported
// function of ops, softmaxjet, backward, graphs and cudaops that returns an error, in this
// build (no tags), but for those of notInCatalogue, so that a new function cannot go without
// its bad inputs.
func TestCatalogueCallsEveryFunction(t *testing.T) {
	called := catalogueCalls(t)
	var missing []string
	for _, pkg := range []string{"ops", "softmaxjet", "backward", "graphs", "cudaops"} {
		for _, fn := range errorFuncs(t, pkg) {
			_, exempt := notInCatalogue[fn]
			if i := strings.LastIndex(fn, "."); strings.Count(fn, ".") == 2 && called[fn[:i]+".*"] {
				continue // a gate's method, run by the gate suite
			}
			if called[fn] == exempt {
				missing = append(missing, fn)
			}
		}
	}
	for fn := range notInCatalogue {
		if called[fn] {
			missing = append(missing, fn+" (called, yet listed in notInCatalogue)")
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("exported functions returning an error that the error catalogue does not call:\n\t%s",
			strings.Join(missing, "\n\t"))
	}
}

// catalogueCalls returns the package-qualified functions (pkg.F) that the catalogue files
// and the ops test files that run the ops suite call, generic instantiations included.
func catalogueCalls(t *testing.T) map[string]bool {
	t.Helper()
	files, err := filepath.Glob("catalogue*_test.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no catalogue files: %v", err)
	}
	called := map[string]bool{}
	// The ops suite (internal/opstest) refuses the catalogue's bad inputs through every
	// constructor a gate's ops test file hands it: those files count as catalogue files.
	opsTests, err := filepath.Glob(filepath.Join("..", "..", "ops", "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	// Likewise the gate suite (internal/gatetest) refuses them through every method of a gate
	// that a test file hands it: a gate type built there counts as called, all its methods.
	gateTests, err := filepath.Glob(filepath.Join("..", "..", "softmaxjet", "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range append(gateTests, opsTests...) {
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !imports(f, "github.com/gatejet/gatejet/internal/gatetest") {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if typ := literalType(n, f.Name.Name); typ != "" {
				called[typ+".*"] = true
			}
			return true
		})
	}
	fset := token.NewFileSet()
	for _, name := range append(files, opsTests...) {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(filepath.Base(name), "catalogue") && !imports(f, "github.com/gatejet/gatejet/internal/opstest") {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			fun := call.Fun
			switch x := fun.(type) {
			case *ast.IndexExpr:
				fun = x.X
			case *ast.IndexListExpr:
				fun = x.X
			}
			if sel, ok := fun.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok {
					called[id.Name+"."+sel.Sel.Name] = true
				} else if typ := literalType(sel.X, ""); typ != "" {
					called[typ+"."+sel.Sel.Name] = true // a method of a composite literal
				}
			}
			return true
		})
	}
	return called
}

// imports reports whether f imports the package path.
func imports(f *ast.File, path string) bool {
	for _, im := range f.Imports {
		if im.Path.Value == `"`+path+`"` {
			return true
		}
	}
	return false
}

// literalType returns "pkg.T" for a composite literal of type pkg.T or pkg.T[…] (in
// parentheses or not), else ""; a literal of an unqualified type T gives "pkg.T" when pkg,
// the file's package, is given.
func literalType(x ast.Node, pkg string) string {
	for {
		p, ok := x.(*ast.ParenExpr)
		if !ok {
			break
		}
		x = p.X
	}
	lit, ok := x.(*ast.CompositeLit)
	if !ok {
		return ""
	}
	t := lit.Type
	switch g := t.(type) {
	case *ast.IndexExpr:
		t = g.X
	case *ast.IndexListExpr:
		t = g.X
	}
	if sel, ok := t.(*ast.SelectorExpr); ok {
		if id, ok := sel.X.(*ast.Ident); ok {
			return id.Name + "." + sel.Sel.Name
		}
	}
	if id, ok := t.(*ast.Ident); ok && pkg != "" && id.IsExported() {
		return pkg + "." + id.Name
	}
	return ""
}

// errorFuncs lists pkg.F for the exported functions of the package in ../../pkg, as built
// without tags, whose results include an error, and pkg.T.M for the exported methods of its
// exported types with value receivers (the gates' channels) that do.
func errorFuncs(t *testing.T, pkg string) []string {
	t.Helper()
	bp, err := build.ImportDir(filepath.Join("..", "..", pkg), 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	fset := token.NewFileSet()
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(bp.Dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || !fd.Name.IsExported() || fd.Type.Results == nil {
				continue
			}
			name := pkg + "." + fd.Name.Name
			if fd.Recv != nil {
				recv := valueReceiver(fd.Recv.List[0].Type)
				if recv == "" || !ast.IsExported(recv) {
					continue
				}
				name = pkg + "." + recv + "." + fd.Name.Name
			}
			for _, r := range fd.Type.Results.List {
				if id, ok := r.Type.(*ast.Ident); ok && id.Name == "error" {
					out = append(out, name)
					break
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("package %s: no exported function returns an error; is the path right?", pkg)
	}
	return out
}

// valueReceiver is the type name of a value receiver (T or T[…]), or "" for a pointer one.
func valueReceiver(x ast.Expr) string {
	switch g := x.(type) {
	case *ast.IndexExpr:
		x = g.X
	case *ast.IndexListExpr:
		x = g.X
	}
	if id, ok := x.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}
