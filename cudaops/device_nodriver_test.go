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
	"github.com/gatejet/gatejet/cudaops/internal/cudrv"
	"github.com/gatejet/gatejet/cudaops/internal/testcase"
	"github.com/gatejet/gatejet/internal/cpuref"
)

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
	require.Error(t, cudaops.Prewarm(cudaops.KernelJetSecond))
	require.ErrorIs(t, cudaops.Prewarm(), gatejet.ErrDevice)
	require.Nil(t, cudaops.Active(), "no backend is registered")
	un := cudaops.Unavailable()
	require.ErrorIs(t, un, gatejet.ErrDevice)
	require.Contains(t, un.Error(), causeOf(err), "Unavailable gives the reason the device did not open")

	old := cudaops.SetMode(cudaops.ModeAuto)
	defer cudaops.SetMode(old)
	cudaops.SetBreakEven(cudaops.KernelJetSecond, 0)
	defer cudaops.SetBreakEven(cudaops.KernelJetSecond, -1)
	rng := rand.New(rand.NewPCG(11, 12))
	for _, dt := range []cudaops.DType{cudaops.Float64, cudaops.Float32} {
		c := testcase.New(cudaops.KernelJetSecond, dt, []int{33, 5, 7}, rng)
		poison(c)
		p, err := cudaops.Run(c)
		require.NoError(t, err)
		require.Equal(t, cudaops.PathCPU, p, "ModeAuto without a backend runs the CPU")
		ref := testcase.As64(c)
		require.NoError(t, cpuref.Run(ref))
		for i := range testcase.Outputs(c) {
			e := testcase.RelErr(testcase.Outputs(c)[i], testcase.Outputs(ref)[i])
			require.LessOrEqual(t, e, tolerance(dt), "%s output %d", dt, i)
		}
	}

	cudaops.SetMode(cudaops.ModeRequired)
	c := testcase.New(cudaops.KernelJetSecond, cudaops.Float64, []int{4, 3, 2}, rng)
	before := cudaops.Stats()
	p, err := cudaops.Run(c)
	require.ErrorIs(t, err, gatejet.ErrDevice)
	require.Equal(t, cudaops.PathGPU, p)
	require.Equal(t, before.DeviceErrors+1, cudaops.Stats().DeviceErrors)
	require.Equal(t, before.CPU, cudaops.Stats().CPU, "ModeRequired never runs the CPU")
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
	root := os.Getenv("GATEJET_CUDA_ROOT")
	stub := filepath.Join(root, "usr/lib/x86_64-linux-gnu/stubs/libcuda.so")
	if _, err := os.Stat(stub); root == "" || err != nil {
		t.Skip("no stub libcuda.so under GATEJET_CUDA_ROOT (eval \"$(bash .ci/cuda-tools)\")")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestNoDeviceFallsBackToCPU$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "GATEJET_CUDA_LIB="+stub)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "--- PASS: TestNoDeviceFallsBackToCPU", "%s", out)
	require.Contains(t, string(out), "cuInit", "%s", out)
}

// causeOf is the part of an OpenDevice error that names its cause.
func causeOf(err error) string {
	var ge *gatejet.Error
	if errors.As(err, &ge) {
		return ge.Detail
	}
	return err.Error()
}
