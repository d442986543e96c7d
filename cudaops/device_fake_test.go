//go:build gatejetcuda

package cudaops_test

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/cudaops"
	"github.com/gatejet/gatejet/cudaops/internal/cudrv"
	"github.com/gatejet/gatejet/cudaops/internal/testcase"
)

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
	if err := cudrv.LoadNVRTC(); err != nil {
		if os.Getenv("GATEJET_REQUIRE_NVRTC") == "1" {
			t.Fatalf("NVRTC is required (GATEJET_REQUIRE_NVRTC=1): %v", err)
		}
		t.Skipf("needs NVRTC (eval \"$(bash .ci/cuda-tools)\" or GATEJET_NVRTC_LIB): %v", err)
	}
	lib := buildFakeDriver(t)
	deviceTests := []string{"TestCUDADeviceRunsEveryKernel", "TestCUDARequiredModeUsesTheDevice",
		"TestCUDADeterministic", "TestCUDAAutoFallsBackOnDeviceFailure", "TestCUDAPrewarm", "TestCUDATime"}
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
			cmd := exec.Command(os.Args[0], "-test.run=^("+strings.Join(tc.tests, "|")+")$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), append(tc.env, "GATEJET_CUDA_LIB="+lib, "GATEJET_REQUIRE_DEVICE=1")...)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			for _, name := range tc.tests {
				require.Contains(t, string(out), "--- PASS: "+name+" ", "%s", out)
			}
			require.NotContains(t, string(out), "--- SKIP", "%s", out)
			require.Contains(t, string(out), tc.log, "%s", out)
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
	c := testcase.New(cudaops.KernelSoftmaxBackward, cudaops.Float64, []int{4, 33, 2}, rand.New(rand.NewPCG(13, 14)))
	err := b.Launch(c)
	require.ErrorIs(t, err, gatejet.ErrDevice)
	require.Contains(t, err.Error(), "CUDA 11.4")
	t.Logf("%v", err)
	requireAutoFallsBack(t, c)
}
