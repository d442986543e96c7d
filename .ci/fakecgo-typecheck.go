//go:build ignore

// fakecgo-typecheck type-checks Go packages with go/types where a dependency's C side cannot
// be compiled: every package that uses cgo is checked with FakeImportC (its C.x names are
// accepted untyped, as cmd/api does for the standard library), so no C header is needed.
// Errors in the named packages fail; errors inside cgo dependencies, which the fake C package
// makes inevitable, are only counted. Used by .ci/cuda-checks for ./cudaops/cudadoer and
// ./ops, whose Gorgonia cuda build needs cuDNN's headers (gorgonia.org/cu/dnn), which Debian
// does not ship. With -test the named packages are checked with their tests too: the package
// with its _test.go files and the external test package (go list -test), each against the
// test variants of its dependencies; the generated test main is not checked.
//
//	go run .ci/fakecgo-typecheck.go -tags cuda ./cudaops/cudadoer
//	go run .ci/fakecgo-typecheck.go -tags cuda -test ./ops ./cudaops/cudadoer
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

type pkg struct {
	ImportPath string
	Name       string
	ForTest    string
	Dir        string
	GoFiles    []string
	CgoFiles   []string
	ImportMap  map[string]string
	DepOnly    bool
	Error      *struct{ Err string }
}

func main() {
	tags := flag.String("tags", "", "build tags")
	withTests := flag.Bool("test", false, "check the named packages' _test.go files too (in-package and external tests)")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "fakecgo-typecheck: no packages named")
		os.Exit(2)
	}
	args := []string{"list", "-e", "-deps", "-json", "-tags", *tags}
	if *withTests {
		args = append(args, "-test")
	}
	args = append(args, flag.Args()...)
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakecgo-typecheck: go list:", err)
		os.Exit(2)
	}
	var pkgs []*pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		p := new(pkg)
		if err := dec.Decode(p); err != nil {
			fmt.Fprintln(os.Stderr, "fakecgo-typecheck:", err)
			os.Exit(2)
		}
		pkgs = append(pkgs, p)
	}

	fset := token.NewFileSet()
	done := map[string]*types.Package{"unsafe": types.Unsafe}
	failed, depErrors, checked := false, 0, 0
	// go list -deps lists every package after its dependencies.
	for _, p := range pkgs {
		if p.ImportPath == "unsafe" {
			continue
		}
		if p.Name == "main" && strings.HasSuffix(p.ImportPath, ".test") {
			continue // the generated test main (go list -test), in the build cache
		}
		if p.Error != nil && !p.DepOnly {
			fmt.Fprintf(os.Stderr, "%s: %s\n", p.ImportPath, p.Error.Err)
			failed = true
			continue
		}
		var files []*ast.File
		for _, name := range append(append([]string{}, p.GoFiles...), p.CgoFiles...) {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				failed = true
				continue
			}
			files = append(files, f)
		}
		var errs []error
		conf := types.Config{
			FakeImportC: len(p.CgoFiles) > 0,
			Sizes:       types.SizesFor("gc", runtime.GOARCH),
			Importer:    importer{done, p.ImportMap},
			Error:       func(err error) { errs = append(errs, err) },
		}
		tp, _ := conf.Check(p.ImportPath, fset, files, nil)
		done[p.ImportPath] = tp
		if p.DepOnly {
			depErrors += len(errs)
			if len(errs) > 0 && os.Getenv("FAKECGO_VERBOSE") != "" {
				fmt.Printf("  dependency %s (cgo: %v): %d errors, first: %v\n", p.ImportPath, len(p.CgoFiles) > 0, len(errs), errs[0])
			}
			continue
		}
		for _, e := range errs {
			fmt.Fprintln(os.Stderr, e)
			failed = true
		}
		checked++
		fmt.Printf("fakecgo-typecheck: %s: %d files, %d errors (cgo: %v)\n", p.ImportPath, len(files), len(errs), len(p.CgoFiles) > 0)
	}
	if checked == 0 {
		fmt.Fprintln(os.Stderr, "fakecgo-typecheck: no package checked")
		failed = true
	}
	fmt.Printf("fakecgo-typecheck: %d packages; %d errors inside dependencies (expected with fake C names; not checked)\n", len(pkgs), depErrors)
	if failed {
		os.Exit(1)
	}
}

type importer struct {
	done      map[string]*types.Package
	importMap map[string]string
}

func (im importer) Import(path string) (*types.Package, error) {
	if p, ok := im.importMap[path]; ok {
		path = p
	}
	if p := im.done[path]; p != nil {
		return p, nil
	}
	return nil, fmt.Errorf("package %s not checked yet", path)
}
