//go:build gatejetcuda || cuda

package nvrtccomp

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet/cudaops/internal/cudatest"
	"github.com/gatejet/gatejet/cudaops/internal/cudrv"
	"github.com/gatejet/gatejet/cudaops/kernels"
	"github.com/gatejet/gatejet/internal/kernel"
)

// TestCUDANVRTCCubin: for the device's own architecture NVRTC gives a CUBIN (an ELF image the
// driver loads without compiling PTX) with PTX of the same target; for a virtual architecture,
// the target of a device newer than this NVRTC, it gives PTX for that architecture and no
// CUBIN. Needs libnvrtc, not a GPU.
func TestCUDANVRTCCubin(t *testing.T) {
	cudatest.NeedNVRTC(t, cudrv.LoadNVRTC())
	module := kernel.Modules()[0]
	opts := func(arch string) []string {
		return kernels.Options(arch, module, kernel.ModuleKernels(module), false)
	}
	ptx, cubin, err := Compiler{}.CompileCUBIN(kernels.Source, "cubin_sm_90.cu", opts("sm_90"))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(cubin, "\x7fELF"), "a CUBIN is an ELF image")
	require.Regexp(t, `(?m)^\s*\.target\s+sm_90\b`, ptx)
	require.NotContains(t, ptx, "\x00")

	ptx, err = Compiler{}.Compile(kernels.Source, "ptx_compute_90.cu", opts("compute_90"))
	require.NoError(t, err)
	require.Regexp(t, `(?m)^\s*\.target\s+sm_90\b`, ptx, "PTX for compute_90 targets sm_90")
	_, _, err = Compiler{}.CompileCUBIN(kernels.Source, "cubin_compute_90.cu", opts("compute_90"))
	require.ErrorContains(t, err, "no CUBIN")

	_, _, err = Compiler{}.CompileCUBIN("extern \"C\" __global__ void k() { int x = ; }", "broken.cu", []string{"--gpu-architecture=sm_80"})
	require.ErrorContains(t, err, "broken.cu")
	require.Positive(t, int(CudaErrorUnsupportedPTXVersion), "cuda.h's CUDA_ERROR_UNSUPPORTED_PTX_VERSION")
}

// TestCUDANVRTCCubinEveryModule compiles every (family, element type) module to a CUBIN for
// sm_80 and sm_90, the code the device backend loads on those architectures, through the
// dlopen'ed NVRTC, and checks the images are ELF files whose PTX targets the architecture.
func TestCUDANVRTCCubinEveryModule(t *testing.T) {
	cudatest.NeedNVRTC(t, cudrv.LoadNVRTC())
	for _, arch := range []string{"sm_80", "sm_90"} {
		t.Run(arch, func(t *testing.T) {
			t.Parallel()
			for _, m := range modules() {
				name := strings.ToLower(m.family) + m.suffix() + "_" + arch + "_cubin.cu"
				ptx, cubin, err := Compiler{}.CompileCUBIN(kernels.Source, name,
					kernels.Options(arch, m.family, kernel.ModuleKernels(m.family), m.f32))
				require.NoError(t, err, name)
				require.True(t, strings.HasPrefix(cubin, "\x7fELF"), "%s: a CUBIN is an ELF image", name)
				require.Regexp(t, `(?m)^\s*\.target\s+`+arch+`\b`, ptx, name)
				for _, k := range familyKernels(t, m.family) {
					require.Contains(t, cubin, "gj_"+k+m.suffix(), "%s: the CUBIN holds every entry point", name)
				}
			}
		})
	}
}

// TestCUDANVRTCSupportedArchs: NVRTC lists real architectures, sm_80 and sm_90 among them
// (CUDA 11.8), in increasing order, and its version is known.
func TestCUDANVRTCSupportedArchs(t *testing.T) {
	cudatest.NeedNVRTC(t, cudrv.LoadNVRTC())
	archs, err := Compiler{}.SupportedArchs()
	require.NoError(t, err)
	require.Contains(t, archs, "sm_80")
	require.Contains(t, archs, "sm_90")
	for i, a := range archs {
		require.Regexp(t, `^sm_[0-9]+$`, a)
		if i > 0 {
			require.Less(t, archNum(t, archs[i-1]), archNum(t, a), "%v in increasing order", archs)
		}
	}
	require.Regexp(t, `^[0-9]+\.[0-9]+$`, Version())
}

func archNum(t *testing.T, a string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(a, "sm_"))
	require.NoError(t, err)
	return n
}
