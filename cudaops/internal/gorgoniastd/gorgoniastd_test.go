package gorgoniastd

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPrepare(t *testing.T) {
	src := "#include <math.h>\n#include <stdio.h>\nx = M_E;\n"
	got := Prepare(src)
	require.NotContains(t, got, "#include <math.h>")
	require.Contains(t, got, "#include <stdio.h>\nx = M_E;\n")
	require.Contains(t, got, "#define M_E        2.7182818284590452354\n")
	require.Equal(t, 1, strings.Count(Prepare("  # include <math.h>  \n"), "#define M_PI "))
}

// TestFuncs: the .globl comments of PTX as NVRTC and nvcc write them, CRLF line ends included.
func TestFuncs(t *testing.T) {
	ptx := "\t// .globl\tadd_vv_f64\n.visible .entry add_vv_f64(\n)\n\t// .globl\tsub_ss_f32\r\n.visible .entry sub_ss_f32(\n"
	require.Equal(t, []string{"add_vv_f64", "sub_ss_f32"}, Funcs(ptx))
	require.Empty(t, Funcs(".version 7.8\n.target sm_90\n"))
}

func TestModuleNameAndOptions(t *testing.T) {
	require.Equal(t, "elembinop", ModuleName("/x/cuda modules/src/elembinop.cu"))
	require.Equal(t, "sigmoid32", ModuleName("sigmoid32.cu"))
	require.Equal(t, []string{"--gpu-architecture=compute_86", "--fmad=false", "--ftz=false", "--prec-div=true", "--prec-sqrt=true"}, Options("compute_86"))
}

// TestSourceDirEnv: the environment variable names the directory; one without .cu files is an
// ErrNoSources error, not a fall back to the module.
func TestSourceDirEnv(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(SourceEnv, dir)
	_, err := SourceDir()
	require.ErrorIs(t, err, ErrNoSources)
	require.Contains(t, err.Error(), SourceEnv)

	for _, n := range []string{"b.cu", "a.cu", "c.h"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), nil, 0o644))
	}
	got, err := SourceDir()
	require.NoError(t, err)
	require.Equal(t, dir, got)
	files, err := Sources(got)
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(dir, "a.cu"), filepath.Join(dir, "b.cu")}, files)
}

// TestSourceDirModule: without the variable, the module cache's copy of Gorgonia's sources
// (where the module cache holds Gorgonia, as on a machine that built this package with Go's
// module download; a vendored build has none and gets ErrNoSources).
func TestSourceDirModule(t *testing.T) {
	t.Setenv(SourceEnv, "")
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	dir, err := SourceDir()
	if errors.Is(err, ErrNoSources) {
		t.Skipf("Gorgonia's module is not in the module cache: %v", err)
	}
	require.NoError(t, err)
	files, err := Sources(dir)
	require.NoError(t, err)
	var names []string
	for _, f := range files {
		names = append(names, ModuleName(f))
	}
	// gorgonia v0.9.18's sources, as cmd/cudagen compiles them.
	require.Equal(t, []string{"elembinop", "elemunaryop", "misc", "sigmoid32", "sigmoid64"}, names)
}
