package conformance

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/gatejet/gatejet"

// layerExceptions are the public packages that a package under internal/ may import (outside
// its tests), with the reason. The root package gatejet (errors, limits, Float) is the base
// of every layer and is always allowed.
var layerExceptions = map[string][]string{
	// The kernel table registers the maths kernels of the public maths packages.
	"internal/kernel":    {"softmaxjet", "backward"},
	"internal/graphmath": {"backward"}, // the table's batch kernels (graphs' maths)
}

// testSuites are the test-only packages under internal/ that may import the public package
// they test (a suite that every gate's test file calls, in the style of gonum's testblas). No
// package but tests and other test-only packages may import them. Other test support
// (golden files, the CPU reference, the test-case generator) keeps to the rule.
var testSuites = map[string]string{
	"internal/gatetest": "runs softmaxjet's gates",
	"internal/opstest":  "runs ops' constructors",
}

// alwaysAllowed are public packages every internal package may import: the root package and
// cudaops/kernels, the device source of the kernel table (data and NVRTC options only).
var alwaysAllowed = []string{"", "cudaops/kernels"}

// TestInternalImportsNoPublicPackage: no package under internal/ (or cudaops/internal/)
// imports a public package of the module, but for layerExceptions and testSuites: internal/
// is the lower layer, the public packages are built on it. Test files are not counted (go
// list's Imports are the non-test imports).
func TestInternalImportsNoPublicPackage(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := map[string][]string{} // module-relative package → its module-relative imports
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := rel(fields[0])
		imports[pkg] = nil
		for _, imp := range fields[1:] {
			if dep, ok := strings.CutPrefix(imp, module); ok && (dep == "" || dep[0] == '/') {
				imports[pkg] = append(imports[pkg], rel(imp))
			}
		}
	}
	testOnly := testOnlyPackages(imports)
	checked := 0
	for pkg, deps := range imports {
		if !isInternal(pkg) {
			continue
		}
		if _, ok := testSuites[pkg]; ok {
			if !testOnly[pkg] {
				t.Errorf("%s, a test suite free to import what it tests, is imported by non-test code", pkg)
			}
			continue
		}
		checked++
		for _, dep := range deps {
			if isInternal(dep) || slices.Contains(alwaysAllowed, dep) || slices.Contains(layerExceptions[pkg], dep) {
				continue
			}
			t.Errorf("%s imports the public package %s", pkg, dep)
		}
	}
	if checked < 10 {
		t.Fatalf("only %d internal packages listed; is the pattern right?", checked)
	}
}

// testOnlyPackages returns the internal packages that no package but other test-only ones
// imports (outside test files): starting from every internal package, it drops those that a
// package outside the set imports until none is left to drop.
func testOnlyPackages(imports map[string][]string) map[string]bool {
	set := map[string]bool{}
	for pkg := range imports {
		if isInternal(pkg) {
			set[pkg] = true
		}
	}
	for changed := true; changed; {
		changed = false
		for pkg, deps := range imports {
			if set[pkg] {
				continue
			}
			for _, dep := range deps {
				if set[dep] {
					delete(set, dep)
					changed = true
				}
			}
		}
	}
	return set
}

// rel is an import path of the module relative to the module ("" for the root package).
func rel(path string) string {
	return strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
}

// isInternal reports whether the module-relative path pkg is under an internal directory.
func isInternal(pkg string) bool {
	return strings.HasPrefix(pkg, "internal/") || strings.Contains(pkg, "/internal/")
}
