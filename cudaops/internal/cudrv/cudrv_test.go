//go:build gatejetcuda || cuda

package cudrv

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet/cudaops/internal/cudatest"
)

// The loads happen once per process, so the tests that load with another environment run
// this test binary again (cudatest.Rerun) with that environment and GATEJET_CUDRV_CHILD set.

// child runs the test named run in a child process with env added, and returns its output;
// the child fails when its checks fail.
func child(t *testing.T, run string, env ...string) string {
	t.Helper()
	return cudatest.Rerun(t, []string{run}, append(env, "GATEJET_CUDRV_CHILD=1")...)
}

// TestLoadDriverWithoutDriver: where libcuda.so.1 is missing (CI, any machine without the
// NVIDIA driver) LoadDriver returns a *LoadError naming it, the same one on every call, and
// the process goes on.
func TestLoadDriverWithoutDriver(t *testing.T) {
	if os.Getenv("GATEJET_CUDA_LIB") != "" {
		t.Skip("GATEJET_CUDA_LIB is set")
	}
	err := LoadDriver()
	if err == nil {
		t.Skip("the CUDA driver loaded and initialised: this test is for machines without it")
	}
	var le *LoadError
	if !errors.As(err, &le) {
		t.Skipf("the driver library loaded but cuInit failed (%v): this test is for machines without it", err)
	}
	require.Equal(t, DriverLib, le.Lib)
	require.Contains(t, err.Error(), "libcuda.so.1")
	require.Same(t, err, LoadDriver(), "the first failure is kept")
	var n int
	n, err = DeviceCount()
	require.Error(t, err, "no driver call succeeds without the driver")
	require.Zero(t, n)
	require.Contains(t, err.Error(), "not loaded")
}

// TestLoadDriverCuInitFails: a driver library whose cuInit fails (the toolkit's stub, named by
// GATEJET_CUDA_LIB) gives an *Error of cuInit with the stub's CUresult, not an exit.
func TestLoadDriverCuInitFails(t *testing.T) {
	stub := cudatest.ToolkitFile(t, cudatest.StubDriver)
	out := child(t, "TestChildCuInitFails", "GATEJET_CUDA_LIB="+stub)
	t.Logf("%s", out)
}

func TestChildCuInitFails(t *testing.T) {
	if os.Getenv("GATEJET_CUDRV_CHILD") == "" {
		t.Skip("run by TestLoadDriverCuInitFails")
	}
	err := LoadDriver()
	require.Error(t, err)
	code, ok := Code(err)
	require.True(t, ok, "%v", err)
	require.NotEqual(t, Success, code)
	require.True(t, strings.HasPrefix(err.Error(), "cuInit: "), "%v", err)
	t.Logf("cuInit through the stub: %v", err)
}

// TestLoadNVRTCExplicitMissing: GATEJET_NVRTC_LIB naming a missing file is the only library
// tried, and the error names it.
func TestLoadNVRTCExplicitMissing(t *testing.T) {
	child(t, "TestChildNVRTCMissing", "GATEJET_NVRTC_LIB=/nonexistent/libnvrtc.so.99")
}

func TestChildNVRTCMissing(t *testing.T) {
	if os.Getenv("GATEJET_CUDRV_CHILD") == "" {
		t.Skip("run by TestLoadNVRTCExplicitMissing")
	}
	err := LoadNVRTC()
	var le *LoadError
	require.ErrorAs(t, err, &le)
	require.Equal(t, "/nonexistent/libnvrtc.so.99", le.Lib)
	require.Contains(t, err.Error(), "/nonexistent/libnvrtc.so.99")
	_, err = Compile("extern \"C\" __global__ void k() {}", "k.cu", nil, false)
	require.ErrorAs(t, err, &le, "Compile reports the missing library")
	_, _, err = NVRTCVersion()
	require.Error(t, err)
}

// TestLoadNVRTCExplicitPath: GATEJET_NVRTC_LIB naming the toolkit's library by path loads it,
// and a kernel compiles to PTX and to a CUBIN for sm_80.
func TestLoadNVRTCExplicitPath(t *testing.T) {
	lib := cudatest.ToolkitFile(t, cudatest.NVRTCLib)
	child(t, "TestChildNVRTCPath", "GATEJET_NVRTC_LIB="+lib)
}

func TestChildNVRTCPath(t *testing.T) {
	if os.Getenv("GATEJET_CUDRV_CHILD") == "" {
		t.Skip("run by TestLoadNVRTCExplicitPath")
	}
	require.NoError(t, LoadNVRTC())
	major, _, err := NVRTCVersion()
	require.NoError(t, err)
	require.GreaterOrEqual(t, major, 11)
	out, err := Compile("extern \"C\" __global__ void k(double *x) { x[threadIdx.x] *= 2; }", "k.cu", []string{"--gpu-architecture=sm_80"}, true)
	require.NoError(t, err)
	require.Contains(t, out.PTX, ".entry k")
	require.True(t, strings.HasPrefix(out.CUBIN, "\x7fELF"))
	out, err = Compile("extern \"C\" __global__ void k() { int x = ; }", "broken.cu", []string{"--gpu-architecture=sm_80"}, false)
	var ne *NVRTCError
	require.ErrorAs(t, err, &ne)
	require.Contains(t, out.Log, "broken.cu", "the log comes with the error")
}

// TestLaunchRefusesBadArguments: Launch checks its arguments before calling the driver.
func TestLaunchRefusesBadArguments(t *testing.T) {
	for _, p := range [][]uint64{nil, make([]uint64, MaxParams+1)} {
		err := Function{}.Launch(1, 1, 0, Stream{}, p)
		code, ok := Code(err)
		require.True(t, ok)
		require.Equal(t, ErrorInvalidValue, code)
	}
	require.Error(t, Function{}.Launch(-1, 1, 0, Stream{}, []uint64{0}))
}
