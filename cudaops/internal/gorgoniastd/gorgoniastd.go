// Package gorgoniastd builds Gorgonia's own CUDA functions (its device Add, Sub, Mul,
// HadamardProd, Exp, Sigmoid …) from the sources Gorgonia ships in its module, "cuda
// modules/src/*.cu", as Gorgonia's cmd/cudagen does, but with NVRTC instead of nvcc: one module
// per source file, named after the file, compiled for compute_XY of the device with cudagen's
// flags, holding the functions its PTX declares .globl. Gorgonia v0.9.18 loads these into its
// CUDA machines only when they are registered with gorgonia.AddToStdLib (cudadoer does that).
//
// Locating the sources and reading the PTX are pure Go; compiling needs NVRTC (build tag cuda
// or gatejetcuda).
package gorgoniastd

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// SourceEnv names a directory holding Gorgonia's .cu sources, used instead of the module's own
// (a GPU machine that builds from vendored modules has no copy: `go mod vendor` keeps package
// directories only, and "cuda modules/src" holds no Go package).
const SourceEnv = "GATEJET_GORGONIA_CUDA_SRC"

// Module is Gorgonia's module path, and SourceSubdir the sources' directory inside it.
const (
	Module       = "gorgonia.org/gorgonia"
	SourceSubdir = "cuda modules/src"
)

// ErrNoSources means Gorgonia's CUDA sources were not found.
var ErrNoSources = errors.New("gorgoniastd: Gorgonia's CUDA sources not found")

// SourceDir returns the directory of Gorgonia's .cu sources: $GATEJET_GORGONIA_CUDA_SRC when
// set, else "cuda modules/src" of the gorgonia.org/gorgonia module in the module cache (`go
// list -m`, run without network and ignoring -mod=vendor). An error wraps ErrNoSources and says
// how to provide them.
func SourceDir() (string, error) {
	if dir := os.Getenv(SourceEnv); dir != "" {
		if _, err := Sources(dir); err != nil {
			return "", fmt.Errorf("%s=%q: %w", SourceEnv, dir, err)
		}
		return dir, nil
	}
	cmd := exec.Command("go", "list", "-mod=mod", "-m", "-f", "{{.Dir}}", Module)
	// GOPROXY=off: look in the module cache only, never download; GOFLAGS cleared so that a
	// -mod=vendor there does not apply.
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=")
	out, err := cmd.Output()
	mod := strings.TrimSpace(string(out))
	if err != nil || mod == "" {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = fmt.Errorf("%w: %s", err, strings.TrimSpace(string(ee.Stderr)))
		}
		return "", fmt.Errorf("%w: %s is not in the module cache (go list -m: %v); "+
			"set %s to a copy of its %q directory", ErrNoSources, Module, err, SourceEnv, SourceSubdir)
	}
	dir := filepath.Join(mod, filepath.FromSlash(SourceSubdir))
	if _, err := Sources(dir); err != nil {
		return "", fmt.Errorf("%w; set %s to a copy of %s's %q directory", err, SourceEnv, Module, SourceSubdir)
	}
	return dir, nil
}

// Sources returns the .cu files of dir, sorted (cmd/cudagen compiles every one); none is an
// ErrNoSources error.
func Sources(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.cu"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: no .cu file in %q", ErrNoSources, dir)
	}
	return files, nil // Glob sorts
}

// ModuleName is the name cmd/cudagen registers a source file under: its base name without the
// extension ("elembinop" for elembinop.cu); Gorgonia's ops look their functions up as
// "<module>.<function>".
func ModuleName(file string) string {
	base := filepath.Base(file)
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// funcName is cmd/cudagen's pattern for the functions of a module: every ".globl" comment
// of the PTX.
var funcName = regexp.MustCompile("// .globl\t(.+?)\r?\n")

// Funcs returns the functions of a module's PTX as cmd/cudagen lists them.
func Funcs(ptx string) []string {
	var out []string
	for _, m := range funcName.FindAllStringSubmatch(ptx, -1) {
		out = append(out, m[1])
	}
	return out
}

// Options are the NVRTC options equivalent to cmd/cudagen's nvcc flags (-arch=compute_XY
// -fmad=false -ftz=false -prec-div=true -prec-sqrt=true; its -Xptxas flags do not apply to
// PTX) for the virtual architecture arch, e.g. "compute_90".
func Options(arch string) []string {
	return []string{"--gpu-architecture=" + arch, "--fmad=false", "--ftz=false", "--prec-div=true", "--prec-sqrt=true"}
}

// mathInclude is the one header the sources include. NVRTC has no system headers; it declares
// the math functions itself, but not math.h's constants (the sources use M_E).
var mathInclude = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*include[ \t]*<math\.h>[ \t]*$`)

// mathConstants are glibc math.h's M_* constants, in its spelling (the literals nvcc compiles).
const mathConstants = `#ifndef M_E
#define M_E        2.7182818284590452354
#define M_LOG2E    1.4426950408889634074
#define M_LOG10E   0.43429448190325182765
#define M_LN2      0.69314718055994530942
#define M_LN10     2.30258509299404568402
#define M_PI       3.14159265358979323846
#define M_PI_2     1.57079632679489661923
#define M_PI_4     0.78539816339744830962
#define M_1_PI     0.31830988618379067154
#define M_2_PI     0.63661977236758134308
#define M_2_SQRTPI 1.12837916709551257390
#define M_SQRT2    1.41421356237309504880
#define M_SQRT1_2  0.70710678118654752440
#endif`

// Prepare returns a source as NVRTC compiles it: its #include <math.h> replaced by math.h's
// constants.
func Prepare(src string) string {
	return mathInclude.ReplaceAllLiteralString(src, "// <math.h>: NVRTC declares the math functions; its constants:\n"+mathConstants)
}

// Lib is one module of Gorgonia's CUDA standard library: the arguments of
// gorgonia.AddToStdLib.
type Lib struct {
	Name  string
	PTX   string
	Funcs []string
}
