//go:build cuda

package nvrtccomp

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet/cudaops/kernels"
	"github.com/gatejet/gatejet/internal/kernel"
)

// TestCUDANVRTCCubin: for the device's own architecture NVRTC gives a CUBIN (an ELF image the
// driver loads without compiling PTX) with PTX of the same target; for a virtual architecture,
// the target of a device newer than this NVRTC, it gives PTX for that architecture and no
// CUBIN. Needs libnvrtc, not a GPU.
func TestCUDANVRTCCubin(t *testing.T) {
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
