//go:build cuda

package nvrtccomp

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/gatejet/gatejet/cudaops/kernels"
	"github.com/stretchr/testify/require"
)

// This test imports cudaops/kernels, not cudaops: cudaops under the cuda tag imports
// gorgonia.org/cu, whose initialisation exits the process when no CUDA driver answers.

var entryRE = regexp.MustCompile(`(?m)^\s*\.(?:visible\s+)?\.entry\s+([A-Za-z0-9_]+)`)

// familyKernels parses the family's X-macro list of kernel names from the source.
func familyKernels(t *testing.T, family string) []string {
	// The list is one macro: its lines end in a backslash, except the last.
	re := regexp.MustCompile(`#define GJ_` + family + `_KERNELS\(X\)((?:[^\n]*\\\n)*[^\n]*)`)
	m := re.FindStringSubmatch(kernels.Source)
	require.NotNil(t, m, family)
	var out []string
	for _, x := range regexp.MustCompile(`X\(([a-z_]+)\)`).FindAllStringSubmatch(m[1], -1) {
		out = append(out, x[1])
	}
	require.NotEmpty(t, out, family)
	return out
}

// TestCUDANVRTCCompilesEveryModule compiles every (family, element type) module of the kernel
// source for several architectures, with the options the device backend uses, and checks that
// the PTX targets the requested architecture and holds exactly the family's entry points. It
// needs libnvrtc, not a GPU.
func TestCUDANVRTCCompilesEveryModule(t *testing.T) {
	t.Logf("NVRTC %s", Version())
	for _, arch := range []string{"sm_80", "sm_90"} {
		for _, fam := range kernels.Families {
			names := familyKernels(t, fam)
			for _, f32 := range []bool{true, false} {
				suffix := "_f64"
				if f32 {
					suffix = "_f32"
				}
				var want []string
				for _, n := range names {
					want = append(want, "gj_"+n+suffix)
				}
				sort.Strings(want)
				name := strings.ToLower(fam) + suffix + "_" + arch + ".cu"
				ptx, err := Compiler{}.Compile(kernels.Source, name, kernels.Options(arch, fam, f32))
				require.NoError(t, err, name)
				require.Regexp(t, `(?m)^\s*\.target\s+`+arch+`\b`, ptx, name)
				require.NotContains(t, ptx, ".local", "%s: no local memory (spills or stack arrays)", name)
				var got []string
				for _, m := range entryRE.FindAllStringSubmatch(ptx, -1) {
					got = append(got, m[1])
				}
				sort.Strings(got)
				require.Equal(t, want, got, name)
			}
		}
	}
}

// TestCUDANVRTCReportsErrors: a broken source gives an error with NVRTC's log.
func TestCUDANVRTCReportsErrors(t *testing.T) {
	_, err := Compiler{}.Compile("extern \"C\" __global__ void k() { int x = ; }", "broken.cu", []string{"--gpu-architecture=sm_80"})
	require.Error(t, err)
	require.Contains(t, err.Error(), "broken.cu")
}

// TestCUDANVRTCCompilesSeedPort: the benchmark's baseline (cudaops/gpubench/seedport.cu)
// compiles for the benchmark shape.
func TestCUDANVRTCCompilesSeedPort(t *testing.T) {
	src, err := os.ReadFile("../../gpubench/seedport.cu")
	require.NoError(t, err)
	ptx, err := Compiler{}.Compile(string(src), "seedport.cu", []string{"--gpu-architecture=sm_90", "--fmad=false", "-DKK=16", "-DPP=16"})
	require.NoError(t, err)
	require.Contains(t, ptx, ".entry seedport_second_f64")
}
