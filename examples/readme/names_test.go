package readme_test

import (
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// publicPackages are the packages a user imports, by directory from the repository root,
// with the name they are written with in docs.
var publicPackages = map[string]string{
	"gatejet": "../..", "ops": "../../ops", "graphs": "../../graphs", "cudaops": "../../cudaops",
	"softmaxjet": "../../softmaxjet", "backward": "../../backward",
}

// exportedNames returns, per public package, the exported identifiers of its non-test files
// and export_test.go (functions, types, constants, variables, methods and struct fields),
// and the doc comments
// of the package and of every exported declaration, keyed by where they are.
func exportedNames(t *testing.T) (names map[string]map[string]bool, docs map[string]string) {
	t.Helper()
	names, docs = map[string]map[string]bool{}, map[string]string{}
	for pkg, dir := range publicPackages {
		fset := token.NewFileSet()
		parsed, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool {
			// export_test.go exports internals to the package's tests, which
			// docs/adding-a-gate.md names.
			return !strings.HasSuffix(fi.Name(), "_test.go") || fi.Name() == "export_test.go"
		}, parser.ParseComments)
		require.NoError(t, err)
		set := map[string]bool{}
		names[pkg] = set
		for _, ap := range parsed {
			var files []*ast.File
			for name, f := range ap.Files {
				if filepath.Base(name) != "export_test.go" {
					files = append(files, f)
					continue
				}
				// go/doc leaves test files out: the names are read from the declarations.
				for _, d := range f.Decls {
					switch d := d.(type) {
					case *ast.FuncDecl:
						set[d.Name.Name] = true
					case *ast.GenDecl:
						for _, spec := range d.Specs {
							switch spec := spec.(type) {
							case *ast.ValueSpec:
								for _, n := range spec.Names {
									set[n.Name] = true
								}
							case *ast.TypeSpec:
								set[spec.Name.Name] = true
							}
						}
					}
				}
			}
			dp, err := doc.NewFromFiles(fset, files, "github.com/gatejet/gatejet/"+pkg)
			require.NoError(t, err)
			docs[pkg] = dp.Doc
			values := func(vs []*doc.Value) {
				for _, v := range vs {
					for _, n := range v.Names {
						set[n] = true
					}
					docs[pkg+"."+strings.Join(v.Names, ",")] = v.Doc
				}
			}
			values(dp.Consts)
			values(dp.Vars)
			for _, f := range dp.Funcs {
				set[f.Name] = true
				docs[pkg+"."+f.Name] = f.Doc
			}
			for _, ty := range dp.Types {
				set[ty.Name] = true
				docs[pkg+"."+ty.Name] = ty.Doc
				values(ty.Consts)
				values(ty.Vars)
				for _, f := range append(ty.Funcs, ty.Methods...) {
					set[f.Name] = true
					set[ty.Name+"."+f.Name] = true
					docs[pkg+"."+ty.Name+"."+f.Name] = f.Doc
				}
				for _, spec := range ty.Decl.Specs {
					if st, ok := spec.(*ast.TypeSpec).Type.(*ast.StructType); ok {
						for _, field := range st.Fields.List {
							for _, n := range field.Names {
								set[n.Name] = true
								set[ty.Name+"."+n.Name] = true
							}
						}
					}
				}
			}
		}
	}
	return names, docs
}

// otherNames are the CamelCase words the package docs use that are not gatejet's own
// identifiers: Gorgonia's, tensor's, the standard library's, and names of examples.
var otherNames = map[string]bool{
	"AllocsPerRun": true, "ApplyOp": true, "AsFortran": true, "BindDualValues": true,
	"CloneTo": true, "DiffWRT": true, "DoDiff": true, "ExprGraph": true, "HadamardProd": true,
	"InferShape": true, "LispMachine": true, "LogSoftMax": true, "MaxFloat32": true,
	"NewConstant": true, "NewLispMachine": true, "RunAll": true, "SoftMax": true,
	"SymDiff": true, "TapeMachine": true, "TraceExec": true, "UsePreallocDo": true,
	"WriteHash": true, "SaveAndRestore": true, "TestMyModel": true,
	"GiB": true, "MiB": true, "NaN": true,
	// families of names written with their members in braces or a star:
	// LogisticJet{Value,…}, LogisticCoordJet{First,…}, *BackwardGrad
	"LogisticJet": true, "LogisticCoordJet": true, "BackwardGrad": true,
}

// TestDocNamesExist: every identifier the public packages' doc comments name — a qualified
// name such as graphs.GradCheck or softmaxjet.Softmax.Second, or a CamelCase word such as
// FirstVJP — and every qualified name in README.md and docs/*.md, is an exported
// identifier of a public package (or one of Gorgonia's and the standard library's, listed in
// otherNames), so that no doc points at a function that was renamed or removed.
func TestDocNamesExist(t *testing.T) {
	names, docs := exportedNames(t)
	anyPkg := func(w string) bool {
		for _, set := range names {
			if set[w] {
				return true
			}
		}
		return otherNames[w]
	}
	qualified := regexp.MustCompile(`\b(gatejet|ops|graphs|cudaops|softmaxjet|backward)\.([A-Z][A-Za-z0-9]*(?:\.[A-Z][A-Za-z0-9]*)?)`)
	camel := regexp.MustCompile(`\b[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*\b`)
	var missing []string
	checkQualified := func(where, text string) {
		for _, m := range qualified.FindAllStringSubmatch(text, -1) {
			set := names[m[1]]
			if !set[m[2]] && !set[strings.TrimSuffix(m[2], "s")] { // ops.Options: values of ops.Option
				missing = append(missing, where+": "+m[0])
			}
		}
	}
	for where, text := range docs {
		checkQualified(where, text)
		for _, w := range camel.FindAllString(qualified.ReplaceAllString(text, ""), -1) {
			if !anyPkg(w) {
				missing = append(missing, where+": "+w)
			}
		}
	}
	mds, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	for _, path := range append(mds, readmePath) {
		checkQualified(filepath.Base(path), readFile(t, path))
	}
	sort.Strings(missing)
	require.Empty(t, missing, "names in docs that no public package exports")
}

// docPointer is a pointer from a Go comment into a document: docs/gpu.md, "CUDADoer ops".
var docPointer = regexp.MustCompile(`((?:docs/[a-z-]+|README)\.md),? \(?"([^"]+)"`)

// headings returns the text of a Markdown document's headings (outside code blocks).
func headings(doc string) []string {
	var hs []string
	inCode := false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
		} else if !inCode && strings.HasPrefix(line, "#") {
			hs = append(hs, strings.TrimSpace(strings.TrimLeft(line, "#")))
		}
	}
	return hs
}

// TestDocCommentPointers: the package docs point at documents in a form that can be
// followed and checked — the path and a heading, docs/gpu.md, "CUDADoer ops" — and each
// such pointer in a Go comment of the repository names a document that has a heading
// starting with the quoted text. A package doc that says only "the README shows it" is
// refused: the README is short and changes, so what it showed moves elsewhere.
func TestDocCommentPointers(t *testing.T) {
	_, docs := exportedNames(t)
	var bad []string
	for where, text := range docs {
		text = docPointer.ReplaceAllString(text, "")
		if strings.Contains(text, "README") {
			bad = append(bad, where+": names the README without a heading to check (write README.md, \"Heading\")")
		}
	}
	n := 0
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		for _, m := range docPointer.FindAllStringSubmatch(readFile(t, path), -1) {
			n++
			want := strings.Join(strings.Fields(strings.ReplaceAll(m[2], "//", " ")), " ") // across comment lines
			found := false
			for _, h := range headings(readFile(t, filepath.Join("../..", m[1]))) {
				found = found || strings.HasPrefix(h, want)
			}
			if !found {
				bad = append(bad, fmt.Sprintf("%s: %s has no heading %q", path, m[1], want))
			}
		}
		return nil
	})
	require.NoError(t, err)
	sort.Strings(bad)
	require.Empty(t, bad)
	require.Greater(t, n, 1, "no pointers found")
}
