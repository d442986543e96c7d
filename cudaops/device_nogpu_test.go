//go:build gatejetcuda

package cudaops_test

import (
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/cudaops"
	"github.com/gatejet/gatejet/cudaops/internal/cudatest"
	"github.com/gatejet/gatejet/cudaops/internal/cudrv"
	"github.com/gatejet/gatejet/cudaops/internal/testcase"
	"github.com/gatejet/gatejet/internal/cpuref"
	"github.com/gatejet/gatejet/internal/dispatch"
)

// The standalone backend on machines without a GPU: without a usable driver (none at all, or
// one whose cuInit fails) it falls back to the CPU; with the fake driver of testdata/fakecuda
// its own code runs, the kernels on the host emulator.

// TestNoDeviceFallsBackToCPU is the gatejetcuda build on a machine without a usable device (CI:
// no libcuda.so.1 at all; or a driver library whose cuInit fails): the process started (the
// backend's initialisation did not exit), OpenDevice says why with an ErrDevice error, no
// backend is registered, ModeAuto runs the CPU with the right numbers and ModeRequired
// returns an ErrDevice error naming the cause.
func TestNoDeviceFallsBackToCPU(t *testing.T) {
	b, err := cudaops.Device()
	if err == nil {
		t.Skipf("a CUDA device answered (%v): this test is for machines without one", b)
	}
	require.Nil(t, b)
	require.ErrorIs(t, err, gatejet.ErrDevice)
	var le *cudrv.LoadError
	if errors.As(err, &le) {
		require.Contains(t, err.Error(), le.Lib, "the error names the library")
		if os.Getenv("GATEJET_CUDA_LIB") == "" {
			require.Contains(t, err.Error(), "libcuda.so.1")
		}
	} else {
		code, ok := cudrv.Code(err)
		require.True(t, ok, "without a load error the driver answered with a CUresult: %v", err)
		require.NotEqual(t, cudrv.Success, code)
	}
	t.Logf("no device: %v", err)

	_, again := cudaops.OpenDevice(0)
	require.ErrorIs(t, again, gatejet.ErrDevice)
	require.ErrorIs(t, cudaops.Prewarm(), gatejet.ErrDevice)
	require.Nil(t, dispatch.Active(), "no backend is registered")
	un := cudaops.Unavailable()
	require.ErrorIs(t, un, gatejet.ErrDevice)
	require.Contains(t, un.Error(), causeOf(err), "Unavailable gives the reason the device did not open")

	old := cudaops.SetMode(cudaops.ModeAuto)
	defer cudaops.SetMode(old)
	dispatch.SetBreakEven(dispatch.KernelJetSecond, 0)
	defer dispatch.SetBreakEven(dispatch.KernelJetSecond, -1)
	rng := rand.New(rand.NewPCG(11, 12))
	for _, dt := range []dispatch.DType{dispatch.Float64, dispatch.Float32} {
		c := testcase.New(dispatch.KernelJetSecond, dt, []int{33, 5, 7}, rng)
		poison(c)
		p, err := dispatch.Run(c)
		require.NoError(t, err)
		require.Equal(t, dispatch.PathCPU, p, "ModeAuto without a backend runs the CPU")
		ref := testcase.As64(c)
		require.NoError(t, cpuref.Run(ref))
		for i := range testcase.Outputs(c) {
			e := testcase.RelErr(testcase.Outputs(c)[i], testcase.Outputs(ref)[i])
			require.LessOrEqual(t, e, testcase.Tol(dt), "%s output %d", dt, i)
		}
	}

	cudaops.SetMode(cudaops.ModeRequired)
	c := testcase.New(dispatch.KernelJetSecond, dispatch.Float64, []int{4, 3, 2}, rng)
	before := dispatch.Stats()
	p, err := dispatch.Run(c)
	require.ErrorIs(t, err, gatejet.ErrDevice)
	require.Equal(t, dispatch.PathGPU, p)
	require.Equal(t, before.DeviceErrors+1, dispatch.Stats().DeviceErrors)
	require.Equal(t, before.CPU, dispatch.Stats().CPU, "ModeRequired never runs the CPU")
	_, why := cudaops.Device()
	require.Contains(t, err.Error(), causeOf(why), "ModeRequired names why there is no device")
}

// TestNoDeviceWhenCuInitFails runs TestNoDeviceFallsBackToCPU in a new process whose driver
// library is the CUDA toolkit's stub libcuda.so (GATEJET_CUDA_LIB), where every call fails
// (cuInit first): the path of a machine with a driver library but no usable driver.
func TestNoDeviceWhenCuInitFails(t *testing.T) {
	if os.Getenv("GATEJET_CUDA_LIB") != "" {
		t.Skip("GATEJET_CUDA_LIB is set: this is the child run")
	}
	stub := cudatest.ToolkitFile(t, cudatest.StubDriver)
	out := cudatest.Rerun(t, []string{"TestNoDeviceFallsBackToCPU"}, "GATEJET_CUDA_LIB="+stub)
	require.Contains(t, out, "cuInit", "%s", out)
}

// causeOf is the part of an OpenDevice error that names its cause.
func causeOf(err error) string {
	var ge *gatejet.Error
	if errors.As(err, &ge) {
		return ge.Detail
	}
	return err.Error()
}

// buildFakeDriver compiles testdata/fakecuda (a libcuda.so.1 stand-in running the kernels on
// the host emulator) into a temporary directory, with the emulator's compiler flags.
func buildFakeDriver(t *testing.T) string {
	t.Helper()
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("needs g++ to build the fake driver")
	}
	lib := filepath.Join(t.TempDir(), "libcuda-fake.so")
	cmd := exec.Command(gxx, "-std=c++17", "-O2", "-fno-omit-frame-pointer", "-shared", "-fPIC",
		"-Wall", "-Wno-unused-variable", "-Wno-unused-but-set-variable",
		"-o", lib, "testdata/fakecuda/fakecuda.cpp", "internal/emu/emu.cpp", "-lpthread")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "building the fake driver: %s", out)
	return lib
}

// TestFakeDriverRunsTheDeviceBackend runs the device backend's own code (driver loading through
// dlopen, device queries, NVRTC's CUBIN or PTX, module loading, pooled device and pinned
// buffers, copies, launch parameters, events) without a GPU: this test binary runs again with
// the fake driver of testdata/fakecuda as its libcuda (GATEJET_CUDA_LIB), whose launches run
// the kernels on the host emulator and whose calls check contexts, pinned staging and
// allocation bounds. The TestCUDA* device tests then must pass (GATEJET_REQUIRE_DEVICE=1)
// on an sm_90 device (CUBIN) and on an sm_100 one (PTX for compute_90, which the driver would
// compile); with a driver older than NVRTC the launch is refused with DriverTooOld's error.
// TestCUDAParityLarge (minutes on the emulator) and TestCUDATimeSource (the seed port is not
// an emulated entry point) are left to a GPU.
func TestFakeDriverRunsTheDeviceBackend(t *testing.T) {
	if os.Getenv("GATEJET_CUDA_LIB") != "" {
		t.Skip("GATEJET_CUDA_LIB is set: this is a child run")
	}
	cudatest.NeedNVRTC(t, cudrv.LoadNVRTC())
	lib := buildFakeDriver(t)
	deviceTests := []string{"TestCUDADeviceRunsEveryKernel", "TestCUDARequiredModeUsesTheDevice",
		"TestCUDADeterministic", "TestCUDAAutoFallsBackOnDeviceFailure", "TestCUDAPrewarm", "TestCUDATime",
		"TestCUDAParityBlockAndWarp"}
	for _, tc := range []struct {
		name  string
		env   []string
		tests []string
		log   string // a line the child must log
	}{
		{"sm_90 CUBIN", []string{"GATEJET_FAKECUDA_CC=90"}, deviceTests, "(host emulator):sm_90 "},
		{"sm_100 PTX for compute_90", []string{"GATEJET_FAKECUDA_CC=100"}, deviceTests[:2], "(host emulator):sm_100 "},
		{"driver older than NVRTC", []string{"GATEJET_FAKECUDA_CC=100", "GATEJET_FAKECUDA_OLD_DRIVER=1"},
			[]string{"TestFakeChildDriverTooOld"}, "upgrade the driver"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := cudatest.Rerun(t, tc.tests, append(tc.env, "GATEJET_CUDA_LIB="+lib, "GATEJET_REQUIRE_DEVICE=1")...)
			require.NotContains(t, out, "--- SKIP", "%s", out)
			require.Contains(t, out, tc.log, "%s", out)
		})
	}
}

// TestFakeChildDriverTooOld runs in TestFakeDriverRunsTheDeviceBackend's child whose fake
// driver (CUDA 11.4) refuses NVRTC 11.8's PTX: the launch is an ErrDevice error that says
// which driver and NVRTC versions met, and ModeAuto falls back to the CPU.
func TestFakeChildDriverTooOld(t *testing.T) {
	if os.Getenv("GATEJET_FAKECUDA_OLD_DRIVER") == "" {
		t.Skip("run by TestFakeDriverRunsTheDeviceBackend")
	}
	b := device(t)
	require.Equal(t, "compute_90", b.Target(), "an sm_100 device gets PTX for NVRTC 11.8's newest")
	c := testcase.New(dispatch.KernelSoftmaxBackward, dispatch.Float64, []int{4, 33, 2}, rand.New(rand.NewPCG(13, 14)))
	err := b.Launch(c)
	require.ErrorIs(t, err, gatejet.ErrDevice)
	require.Contains(t, err.Error(), "CUDA 11.4")
	t.Logf("%v", err)
	requireAutoFallsBack(t, c)
}
