//go:build gatejetcuda

package cudaops_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/cudaops"
	"github.com/gatejet/gatejet/cudaops/internal/launch"
	"github.com/gatejet/gatejet/cudaops/internal/testcase"
	"github.com/gatejet/gatejet/internal/cpuref"
	"github.com/gatejet/gatejet/internal/dispatch"
	"github.com/gatejet/gatejet/internal/kernel"
)

// These tests need a CUDA device (the GPU bundle's run, scripts/gpu-bundle, runs them). Without
// one they skip, saying why, so that CI runs the package under the tag gatejetcuda; with
// GATEJET_REQUIRE_DEVICE=1 (the bundle's run) they fail instead, because a green run there
// must mean the kernels ran on the device.

func device(t *testing.T) *cudaops.DeviceBackend {
	t.Helper()
	b, err := cudaops.Device()
	if err != nil && os.Getenv("GATEJET_REQUIRE_DEVICE") != "1" {
		t.Skipf("needs a CUDA device (GATEJET_REQUIRE_DEVICE=1 makes this a failure): %v", err)
	}
	require.NoError(t, err, "GATEJET_REQUIRE_DEVICE=1 expects a CUDA device")
	t.Logf("device: %v", b)
	return b
}

func poison(c *dispatch.Call) {
	in, out := testcase.Inputs(c), testcase.Outputs(c)
	for _, v := range out {
		for i := range v {
			v[i] = math.NaN()
		}
	}
	testcase.Set(c, in, out)
}

func requireParity(t *testing.T, c *dispatch.Call, what string) {
	t.Helper()
	ref := testcase.As64(c)
	require.NoError(t, cpuref.Run(ref))
	for i := range kernel.ID(c.Kernel).Spec().Out {
		e := testcase.RelErr(testcase.Outputs(c)[i], testcase.Outputs(ref)[i])
		require.LessOrEqual(t, e, testcase.Tol(c.DType), "%s: %s %s Ints=%v output %d: normwise relative error %.3g",
			what, c.Kernel, c.DType, c.Ints, i, e)
	}
}

func shapeFor(k dispatch.Kernel) []int {
	switch k.Family() {
	case dispatch.FamilyRowJet, dispatch.FamilyCoordJet:
		return []int{257, 16, 16}
	case dispatch.FamilyAxis:
		return []int{64, 1000, 3}
	}
	return []int{100003}
}

// TestCUDADeviceRunsEveryKernel is the anti-false-green test: it calls the device backend
// directly (no dispatcher, no fallback), with outputs poisoned with NaN, and requires each
// launch to succeed, to be counted by the device, and to match the CPU.
func TestCUDADeviceRunsEveryKernel(t *testing.T) {
	b := device(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, k := range dispatch.DeviceKernels() {
		for _, dt := range []dispatch.DType{dispatch.Float64, dispatch.Float32} {
			c := testcase.New(k, dt, shapeFor(k), rng)
			poison(c)
			before := b.Launches()
			require.NoError(t, b.Launch(c), "%s %s must run on the device", k, dt)
			require.Equal(t, before+1, b.Launches(), "%s %s: no device launch counted", k, dt)
			requireParity(t, c, "device")
		}
	}
	for _, name := range b.Modules() {
		require.True(t, strings.HasSuffix(name, "_"+b.Target()), "%s: every module is built for the backend's target %s", name, b.Target())
	}
}

// TestCUDAParityBlockAndWarp runs every row jet of the table, both dtypes, on both sides of the
// planner's warp-per-row switch (launch.WarpRows): a small row (K = 8, P = 24, 37 rows: not a
// multiple of a block's 8 warps) takes the warp-per-row entry point where the kernel has one,
// a row of K = 40 atoms the block-per-row one. Each launch goes through Time, whose Config
// names the entry point that ran, with outputs poisoned, and must match the CPU (f64 1e-12,
// f32 1e-5).
func TestCUDAParityBlockAndWarp(t *testing.T) {
	b := device(t)
	rng := rand.New(rand.NewPCG(19, 20))
	for _, k := range dispatch.DeviceKernels() {
		if k.Family() != dispatch.FamilyRowJet {
			continue
		}
		hasWarp := kernel.ID(k).Spec().Device.Warp
		for _, tc := range []struct {
			ints []int
			warp bool
		}{
			{[]int{37, 8, 24}, hasWarp},
			{[]int{13, 40, 8}, false},
		} {
			require.Equal(t, tc.warp, launch.WarpRows(kernel.ID(k), tc.ints[1], tc.ints[2]), "%s %v: planner switch", k, tc.ints)
			for _, dt := range []dispatch.DType{dispatch.Float64, dispatch.Float32} {
				c := testcase.New(k, dt, tc.ints, rng)
				poison(c)
				tm, err := b.Time(c, 1, 0)
				require.NoError(t, err, "%s %s %v", k, dt, tc.ints)
				require.Equal(t, tc.warp, strings.HasSuffix(strings.TrimSuffix(strings.TrimSuffix(tm.Config.Func, "_f64"), "_f32"), kernel.WarpSuffix),
					"%s %s %v ran %s", k, dt, tc.ints, tm.Config.Func)
				requireParity(t, c, tm.Config.Func)
			}
		}
	}
}

// TestCUDARequiredModeUsesTheDevice: through dispatch.Run under ModeRequired the registered
// backend is the device, the CPU function is never called and the GPU counter moves.
func TestCUDARequiredModeUsesTheDevice(t *testing.T) {
	b := device(t)
	require.Equal(t, b.Name(), dispatch.Active().Name(), "the device backend is registered at init")
	old := cudaops.SetMode(cudaops.ModeRequired)
	defer cudaops.SetMode(old)
	rng := rand.New(rand.NewPCG(3, 4))
	c := testcase.New(dispatch.KernelJetSecond, dispatch.Float64, []int{4096, 16, 16}, rng)
	poison(c)
	before := dispatch.Stats()
	p, err := dispatch.Run(c)
	require.NoError(t, err)
	require.Equal(t, dispatch.PathGPU, p)
	require.Equal(t, before.GPU+1, dispatch.Stats().GPU)
	requireParity(t, c, "Run required")
}

// TestCUDAParityLarge: the benchmark shapes and a tiled row (K = 128, P wider than a tile).
func TestCUDAParityLarge(t *testing.T) {
	b := device(t)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		k    dispatch.Kernel
		dt   dispatch.DType
		ints []int
	}{
		{dispatch.KernelJetSecond, dispatch.Float64, []int{65536, 16, 16}},
		{dispatch.KernelJetSecondVJP, dispatch.Float64, []int{8192, 16, 16}},
		{dispatch.KernelJetSecond, dispatch.Float64, []int{64, 128, 200}},
		{dispatch.KernelJetHVPVJP, dispatch.Float32, []int{64, 128, 200}},
		{dispatch.KernelJetGaussNewton, dispatch.Float64, []int{64, 128, 200}},
		{dispatch.KernelSoftmaxBackward, dispatch.Float32, []int{8192, 4096, 1}},
		{dispatch.KernelLogSoftmaxBackwardGrad, dispatch.Float64, []int{16, 4096, 33}},
		{dispatch.Kernel(kernel.JetCoordSecond), dispatch.Float64, []int{1024, 16, 16}},
		{dispatch.Kernel(kernel.JetCoordHVP), dispatch.Float32, []int{64, 128, 200}},
		{dispatch.Kernel(kernel.LogisticCoordGaussNewton), dispatch.Float64, []int{64, 128, 200}},
	} {
		c := testcase.New(tc.k, tc.dt, tc.ints, rng)
		poison(c)
		require.NoError(t, b.Launch(c))
		requireParity(t, c, "large")
	}
}

// TestCUDADeterministic: the same launch twice gives the same bits (no atomics, fixed-order
// reductions).
func TestCUDADeterministic(t *testing.T) {
	b := device(t)
	rng := rand.New(rand.NewPCG(7, 8))
	for _, k := range []dispatch.Kernel{dispatch.KernelJetSecondVJP, dispatch.KernelJetGaussNewton, dispatch.KernelSoftmaxBackwardGrad} {
		c := testcase.New(k, dispatch.Float64, shapeFor(k), rng)
		require.NoError(t, b.Launch(c))
		d := testcase.Clone(c)
		require.NoError(t, b.Launch(d))
		for i := range kernel.ID(c.Kernel).Spec().Out {
			x, y := c.F64.Out[i], d.F64.Out[i]
			for j := range x {
				require.Equal(t, math.Float64bits(x[j]), math.Float64bits(y[j]), "%s output %d [%d]", k, i, j)
			}
		}
	}
}

// TestCUDAAutoFallsBackOnDeviceFailure: a call the device kernels cannot take (K too large for a
// row's shared memory) fails on the device with ErrDevice, and ModeAuto then runs the CPU.
func TestCUDAAutoFallsBackOnDeviceFailure(t *testing.T) {
	b := device(t)
	rng := rand.New(rand.NewPCG(9, 10))
	c := testcase.New(dispatch.KernelJetSecondVJP, dispatch.Float32, []int{2, 4096, 1}, rng)
	err := b.Launch(c)
	require.True(t, errors.Is(err, gatejet.ErrDevice), "%v", err)
	requireAutoFallsBack(t, c)
}

// requireAutoFallsBack: under ModeAuto, a call the device fails on runs on the CPU instead
// (PathCPUFallback, the device's ErrDevice recorded) and gives the CPU's outputs.
func requireAutoFallsBack(t *testing.T, c *dispatch.Call) {
	t.Helper()
	old := cudaops.SetMode(cudaops.ModeAuto)
	defer cudaops.SetMode(old)
	dispatch.SetBreakEven(c.Kernel, 0)
	defer dispatch.SetBreakEven(c.Kernel, -1)
	p, err := dispatch.Run(c)
	require.NoError(t, err)
	require.Equal(t, dispatch.PathCPUFallback, p)
	require.True(t, errors.Is(dispatch.LastFallbackError(), gatejet.ErrDevice))
	requireParity(t, c, "fallback")
}

// TestCUDAPrewarm loads every module, each for the device's architecture.
func TestCUDAPrewarm(t *testing.T) {
	b := device(t)
	require.NoError(t, cudaops.Prewarm())
	require.Len(t, b.Modules(), 2*len(dispatch.Modules()), "every module × 2 element types")
}

// TestCUDATime: Time launches the kernel reps+1 times on resident inputs, reports event times
// of the kernel and of the reference copy, counts the bytes the kernel moves, and leaves the
// outputs of the call correct.
func TestCUDATime(t *testing.T) {
	b := device(t)
	rng := rand.New(rand.NewPCG(15, 16))
	c := testcase.New(dispatch.KernelJetFirst, dispatch.Float64, []int{64, 16, 16}, rng)
	poison(c)
	before := b.Launches()
	const reps = 3
	tm, err := b.Time(c, reps, 1<<20)
	require.NoError(t, err)
	require.Equal(t, before+reps+1, b.Launches(), "a warm-up launch and reps timed ones")
	require.Positive(t, tm.Kernel)
	require.Positive(t, tm.Copy)
	require.EqualValues(t, 1<<20, tm.CopyLen)
	var bytes int64
	for _, v := range append(testcase.Inputs(c), testcase.Outputs(c)...) {
		bytes += int64(8 * len(v))
	}
	require.Equal(t, bytes, tm.Bytes)
	want := "gj_jet_first_f64"
	if launch.WarpRows(kernel.JetFirst, 16, 16) {
		want = "gj_jet_first_warp_f64" // the planner's variant for a small K·P
	}
	require.Equal(t, want, tm.Config.Func)
	requireParity(t, c, "Time")
}

// TestCUDATimeSource: a reference design compiled from other source (the benchmark's port of
// the seed's row jet) runs on the backend's context and gives the kernel's outputs.
func TestCUDATimeSource(t *testing.T) {
	b := device(t)
	src, err := os.ReadFile("gpubench/seedport.cu")
	require.NoError(t, err)
	const N, K, P = 64, 16, 16
	c := testcase.New(dispatch.KernelJetSecond, dispatch.Float64, []int{N, K, P}, rand.New(rand.NewPCG(17, 18)))
	poison(c)
	d, err := b.TimeSource(string(src), "seedport_second_f64", []string{"-DKK=16", "-DPP=16"},
		launch.Config{Grid: N, Block: P}, c, 2)
	require.NoError(t, err)
	require.Positive(t, d)
	requireParity(t, c, "seedport")
}
