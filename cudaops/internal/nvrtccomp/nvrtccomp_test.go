//go:build gatejetcuda || cuda

package nvrtccomp

import (
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/gatejet/gatejet/cudaops/internal/cudatest"
	"github.com/gatejet/gatejet/cudaops/internal/cudrv"
	"github.com/gatejet/gatejet/cudaops/kernels"
	"github.com/gatejet/gatejet/internal/kernel"
	"github.com/stretchr/testify/require"
)

// These tests need NVRTC (libnvrtc, found as cudrv.LoadNVRTC says), not a GPU. Without it they
// skip, saying so, unless GATEJET_REQUIRE_NVRTC=1 (CI), where they fail.

// needNVRTC skips t when NVRTC cannot be loaded (fails it under GATEJET_REQUIRE_NVRTC=1).
func needNVRTC(t *testing.T) {
	t.Helper()
	cudatest.NeedNVRTC(t, cudrv.LoadNVRTC())
}

var entryRE = regexp.MustCompile(`(?m)^\s*\.(?:visible\s+)?\.entry\s+([A-Za-z0-9_]+)`)

// familyKernels returns the kernels of a module, from the kernel table.
func familyKernels(t *testing.T, family string) []string {
	out := kernel.ModuleKernels(family)
	require.NotEmpty(t, out, family)
	return out
}

// module is one (family, element type) module of the kernel source.
type module struct {
	family string
	f32    bool
}

func (m module) suffix() string {
	if m.f32 {
		return "_f32"
	}
	return "_f64"
}

func modules() []module {
	var out []module
	for _, fam := range kernel.Modules() {
		out = append(out, module{fam, true}, module{fam, false})
	}
	return out
}

// ptxCache holds the PTX of each (module, arch) compiled so far in this test binary, so that
// TestCUDAPtxasResources reuses what TestCUDANVRTCCompilesEveryModule compiled.
var ptxCache sync.Map // string → *ptxResult

type ptxResult struct {
	once sync.Once
	ptx  string
	err  error
}

// compileModule compiles module m for arch with the device backend's options (memoised).
func compileModule(m module, arch string) (string, string, error) {
	name := strings.ToLower(m.family) + m.suffix() + "_" + arch + ".cu"
	v, _ := ptxCache.LoadOrStore(name, &ptxResult{})
	r := v.(*ptxResult)
	r.once.Do(func() {
		r.ptx, r.err = Compiler{}.Compile(kernels.Source, name, kernels.Options(arch, m.family, kernel.ModuleKernels(m.family), m.f32))
	})
	return name, r.ptx, r.err
}

// compileArchs are the architectures every module is compiled for: sm_80, sm_90 and every
// real architecture this NVRTC supports.
func compileArchs(t *testing.T) []string {
	supported, err := SupportedArchs()
	require.NoError(t, err)
	t.Logf("NVRTC %s supports %v", Version(), supported)
	archs := []string{"sm_80", "sm_90"}
	for _, a := range supported {
		if !slices.Contains(archs, a) {
			archs = append(archs, a)
		}
	}
	return archs
}

// TestCUDANVRTCCompilesEveryModule compiles every (family, element type) module of the kernel
// source for sm_80, sm_90 and every architecture NVRTC lists, with the options the device
// backend uses, and checks that the PTX targets the requested architecture and holds exactly
// the family's entry points. It needs libnvrtc, not a GPU.
func TestCUDANVRTCCompilesEveryModule(t *testing.T) {
	needNVRTC(t)
	for _, arch := range compileArchs(t) {
		t.Run(arch, func(t *testing.T) {
			t.Parallel()
			for _, m := range modules() {
				var want []string
				for _, n := range familyKernels(t, m.family) {
					want = append(want, "gj_"+n+m.suffix())
				}
				sort.Strings(want)
				name, ptx, err := compileModule(m, arch)
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
		})
	}
}

// TestCUDANVRTCReportsErrors: a broken source gives an error with NVRTC's log.
func TestCUDANVRTCReportsErrors(t *testing.T) {
	needNVRTC(t)
	_, err := Compiler{}.Compile("extern \"C\" __global__ void k() { int x = ; }", "broken.cu", []string{"--gpu-architecture=sm_80"})
	require.Error(t, err)
	require.Contains(t, err.Error(), "broken.cu")
}

// TestCUDANVRTCCompilesSeedPort: the benchmark's baseline (cudaops/gpubench/seedport.cu)
// compiles for the benchmark shape.
func TestCUDANVRTCCompilesSeedPort(t *testing.T) {
	needNVRTC(t)
	src, err := os.ReadFile("../../gpubench/seedport.cu")
	require.NoError(t, err)
	ptx, err := Compiler{}.Compile(string(src), "seedport.cu", []string{"--gpu-architecture=sm_90", "--fmad=false", "-DKK=16", "-DPP=16"})
	require.NoError(t, err)
	require.Contains(t, ptx, ".entry seedport_second_f64")
}
