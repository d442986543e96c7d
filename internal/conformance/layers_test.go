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

// alwaysAllowed are public packages every internal package may import: the root package and
// cudaops/kernels, the device source of the kernel table (data and NVRTC options only).
var alwaysAllowed = []string{"", "cudaops/kernels"}

// TestInternalImportsNoPublicPackage: no package under internal/ (or cudaops/internal/)
// imports a public package of the module, but for layerExceptions: internal/ is the lower
// layer, the public packages are built on it. Test files are not counted (go list's Imports
// are the non-test imports).
func TestInternalImportsNoPublicPackage(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := rel(fields[0])
		if !isInternal(pkg) {
			continue
		}
		checked++
		for _, imp := range fields[1:] {
			dep, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			dep = strings.TrimPrefix(dep, "/")
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

// rel is an import path of the module relative to the module ("" for the root package).
func rel(path string) string {
	return strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
}

// isInternal reports whether the module-relative path pkg is under an internal directory.
func isInternal(pkg string) bool {
	return strings.HasPrefix(pkg, "internal/") || strings.Contains(pkg, "/internal/")
}
