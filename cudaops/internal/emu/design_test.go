//go:build cgo

package emu

import (
	"github.com/stretchr/testify/require"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/gatejet/gatejet/cudaops/internal/launch"
	"github.com/gatejet/gatejet/cudaops/internal/testcase"
	"github.com/gatejet/gatejet/cudaops/kernels"
	"github.com/gatejet/gatejet/internal/dispatch"
	"github.com/gatejet/gatejet/internal/floats"
	"github.com/gatejet/gatejet/internal/kernel"
)

// TestEveryKernelCompiled: the emulator holds exactly one f32 and one f64 entry point for every
// kernel cudaops defines, the planner knows every kernel, and nothing else is there.
func TestEveryKernelCompiled(t *testing.T) {
	var want []string
	for _, k := range dispatch.DeviceKernels() {
		want = append(want, dispatch.EntryPoint(k, dispatch.Float32), dispatch.EntryPoint(k, dispatch.Float64))
		if kernel.ID(k).Spec().Device.Warp {
			stem := "gj_" + k.String() + kernel.WarpSuffix
			want = append(want, stem+"_f32", stem+"_f64")
		}
	}
	var got []string
	for _, n := range KernelNames() {
		if !strings.HasPrefix(n, "gj_emu_selftest_") {
			got = append(got, n)
		}
	}
	sort.Strings(want)
	sort.Strings(got)
	require.Equal(t, want, got)

	for _, k := range dispatch.DeviceKernels() {
		_, err := launch.Plan(kernel.ID(k), map[dispatch.Family][]int{dispatch.FamilyRowJet: {1, 2, 3}, dispatch.FamilyAxis: {1, 2, 3},
			dispatch.FamilyCoordJet: {1, 2, 3}, dispatch.FamilyElementwise: {4}}[k.Family()], "f64", launch.DefaultLimits, launch.Options{})
		require.NoError(t, err, "%s has a launch plan", k)
	}
}

// TestEmulatorCompilesTheEmbeddedSource: emu.cpp includes kernels/gatejet.cu itself, and that
// file is byte for byte the source the device backend hands to NVRTC.
func TestEmulatorCompilesTheEmbeddedSource(t *testing.T) {
	cpp, err := os.ReadFile("emu.cpp")
	require.NoError(t, err)
	require.Contains(t, string(cpp), `#include "../../kernels/gatejet.cu"`)
	cu, err := os.ReadFile("../../kernels/gatejet.cu")
	require.NoError(t, err)
	require.Equal(t, string(cu), kernels.Source)
}

// TestEmulatorBarrier: the emulated __syncthreads really orders a block's shared-memory writes
// before its reads; without it the reads see the NaN poison.
func TestEmulatorBarrier(t *testing.T) {
	const block = 64
	requireBarrierOrders(t, "gj_emu_selftest_barrier", 3, block, func(b, th int) float64 {
		return float64((th+1)%block) + 1000*float64(b)
	}, 1)
}

// requireBarrierOrders runs a barrier self-test, whose thread th of block b must write
// want(b, th): with its barrier (each of the arguments on) the result is right under every
// schedule; without it (argument 0) the result depends on the schedule, so the race shows
// under at least one.
func requireBarrierOrders(t *testing.T, entry string, grid, block int, want func(b, th int) float64, on ...int) {
	t.Helper()
	out := make([]float64, grid*block)
	ok := func() bool {
		for b := 0; b < grid; b++ {
			for th := 0; th < block; th++ {
				if out[b*block+th] != want(b, th) {
					return false
				}
			}
		}
		return true
	}
	for _, sched := range []Schedule{Forward, Reverse, Shuffled, 17} {
		for _, arg := range on {
			_, err := selfTest(entry, grid, block, 8*block, arg, out, sched)
			require.NoError(t, err)
			require.True(t, ok(), "%s with its barrier (%d), schedule %d", entry, arg, sched)
		}
	}
	wrong := 0
	for _, sched := range []Schedule{Forward, Reverse, Shuffled} {
		_, err := selfTest(entry, grid, block, 8*block, 0, out, sched)
		require.NoError(t, err)
		if !ok() {
			wrong++
		}
	}
	require.Positive(t, wrong, "%s: a missing barrier must show under some schedule", entry)
}

func TestEmulatorReportsDivergentBarrier(t *testing.T) {
	_, err := selfTest("gj_emu_selftest_divergent", 2, 32, 0, 0, nil, Forward)
	require.Error(t, err)
	require.Contains(t, err.Error(), "divergent __syncthreads")
}

// TestEmulatorReportsDivergentBarrierSameLine: barriers reached from different places that
// share a source line (in a helper such as gj_tree_sum called from two branches, or two
// barriers in one macro expansion) are divergent too; all threads on one branch are fine.
func TestEmulatorReportsDivergentBarrierSameLine(t *testing.T) {
	const block = 32
	for _, name := range []string{"gj_emu_selftest_helper_divergent", "gj_emu_selftest_macro_divergent"} {
		for _, sched := range []Schedule{Forward, Reverse, Shuffled} {
			out := make([]float64, block)
			_, err := selfTest(name, 2, block, 8*8, 0, out, sched)
			require.NoError(t, err, "%s: every thread on one branch", name)
			if name == "gj_emu_selftest_helper_divergent" {
				for i, v := range out {
					require.Equal(t, 8.0, v, "out[%d]", i)
				}
			}
			for _, split := range []int{1, block / 2, block - 1} {
				_, err = selfTest(name, 2, block, 8*8, split, out, sched)
				require.Error(t, err, "%s split %d schedule %d", name, split, sched)
				require.Contains(t, err.Error(), "divergent __syncthreads")
			}
		}
	}
}

// TestEmulatorWarpBarrier: __syncwarp separates a warp's writes from its reads, whatever the
// schedule, also in a block whose last warp is partial and whose first warp meets more often
// than the others (warps do not wait for each other); without it the race shows.
func TestEmulatorWarpBarrier(t *testing.T) {
	const block = 80
	requireBarrierOrders(t, "gj_emu_selftest_warp_barrier", 2, block, func(b, th int) float64 {
		w0, n := th&^31, min(32, block-th&^31)
		return float64(w0+(th-w0+1)%n) + 1000*float64(b)
	}, 1, 3)
}

// TestEmulatorReportsDivergentWarpBarrier: a lane that returns, or waits at another
// __syncwarp, while the rest of its warp waits at one is reported.
func TestEmulatorReportsDivergentWarpBarrier(t *testing.T) {
	for _, i0 := range []int{0, 5, 31, 32, 37} {
		_, err := selfTest("gj_emu_selftest_warp_divergent", 2, 64, 0, i0, nil, Shuffled)
		require.Error(t, err, "lane %d", i0)
		require.Contains(t, err.Error(), "divergent __syncwarp")
	}
}

func TestEmulatorReportsSharedOverrun(t *testing.T) {
	hw, err := selfTest("gj_emu_selftest_overrun", 1, 4, 8*10, 10, nil, Forward)
	require.NoError(t, err)
	require.Equal(t, 80, hw)
	_, err = selfTest("gj_emu_selftest_overrun", 1, 4, 8*10, 11, nil, Forward)
	require.Error(t, err)
	require.Contains(t, err.Error(), "shared memory overrun")
}

// TestSharedLayoutMatchesKernels: for every kernel and a range of K and tiles, the shared memory
// the planner reserves is exactly what the kernel carves (the emulator measures it).
func TestSharedLayoutMatchesKernels(t *testing.T) {
	rng := newRNG(3, 4)
	for _, k := range dispatch.DeviceKernels() {
		switch k.Family() {
		case dispatch.FamilyRowJet, dispatch.FamilyCoordJet:
			for _, K := range []int{1, 3, 16, 40} {
				for _, tile := range []int{1, 2, 7} {
					c := testcase.New(k, dispatch.Float64, []int{1, K, 7}, rng)
					res := emulate(t, c, launch.Options{Tile: tile, Block: 32})
					require.Equal(t, res.Config.SharedBytes, res.HighWater, "%s K=%d tile=%d", k, K, tile)
				}
			}
		case dispatch.FamilyAxis:
			c := testcase.New(k, dispatch.Float64, []int{2, 9, 3}, rng)
			res := emulate(t, c, launch.Options{})
			require.Equal(t, res.Config.SharedBytes, res.HighWater, "%s", k)
		default:
			c := testcase.New(k, dispatch.Float64, []int{9}, rng)
			res := emulate(t, c, launch.Options{})
			require.Zero(t, res.HighWater)
		}
	}
}

// TestJetsInvariantToLaunchShape: a row-jet kernel's output does not depend, to the last bit,
// on the block size, the column tile or the grid size: every reduction has a fixed order.
func TestJetsInvariantToLaunchShape(t *testing.T) {
	rng := newRNG(5, 6)
	shapes := []launch.Options{
		{Block: 1}, {Block: 32, Tile: 1}, {Block: 33, Tile: 2, Grid: 1}, {Block: 64, Tile: 3, Grid: 2},
		{Block: 256},
	}
	for _, k := range jetKernels() {
		for _, dt := range dtypes {
			c := testcase.New(k, dt, []int{3, 5, 7}, rng)
			emulate(t, c, launch.Options{})
			for _, o := range shapes {
				d := testcase.Clone(c)
				emulate(t, d, o)
				for i := range kernel.ID(c.Kernel).Spec().Out {
					require.True(t, floats.BitsEqual(testcase.Outputs(c)[i], testcase.Outputs(d)[i]),
						"%s %s output %d differs under %+v", k, dt, i, o)
				}
			}
		}
	}
}

// TestRaceFreeUnderEverySchedule: every kernel gives the same bits whichever order the
// emulator runs a block's threads in between barriers, which it would not if a barrier were
// missing (a thread reading shared memory another thread of the same phase writes).
func TestRaceFreeUnderEverySchedule(t *testing.T) {
	rng := newRNG(11, 12)
	for _, k := range dispatch.DeviceKernels() {
		var ints []int
		switch k.Family() {
		case dispatch.FamilyRowJet, dispatch.FamilyCoordJet:
			ints = []int{2, 6, 9}
		case dispatch.FamilyAxis:
			ints = []int{2, 19, 3}
		default:
			ints = []int{77}
		}
		c := testcase.New(k, dispatch.Float64, ints, rng)
		o := launch.Options{Tile: 4}
		if k.Family() == dispatch.FamilyAxis || k.Family() == dispatch.FamilyElementwise {
			o = launch.Options{}
		}
		_, err := LaunchScheduled(c, o, Forward)
		require.NoError(t, err)
		for _, sched := range []Schedule{Reverse, Shuffled, 99} {
			d := testcase.Clone(c)
			_, err := LaunchScheduled(d, o, sched)
			require.NoError(t, err)
			for i := range kernel.ID(c.Kernel).Spec().Out {
				require.True(t, floats.BitsEqual(testcase.Outputs(c)[i], testcase.Outputs(d)[i]),
					"%s output %d differs under schedule %d", k, i, sched)
			}
		}
	}
}

// TestAxisAndActivationsInvariantToGrid: the grid-stride loops give the same bits whatever the
// grid; activations, which reduce nothing, whatever the block too.
func TestAxisAndActivationsInvariantToGrid(t *testing.T) {
	rng := newRNG(7, 8)
	for _, k := range kernelsOf(dispatch.FamilyAxis) {
		c := testcase.New(k, dispatch.Float64, []int{3, 40, 37}, rng)
		emulate(t, c, launch.Options{})
		for _, o := range []launch.Options{{Grid: 1}, {Grid: 5}} {
			d := testcase.Clone(c)
			emulate(t, d, o)
			for i := range kernel.ID(c.Kernel).Spec().Out {
				require.True(t, floats.BitsEqual(testcase.Outputs(c)[i], testcase.Outputs(d)[i]), "%s %+v", k, o)
			}
		}
	}
	for _, k := range kernelsOf(dispatch.FamilyElementwise) {
		c := testcase.New(k, dispatch.Float32, []int{1000}, rng)
		emulate(t, c, launch.Options{})
		for _, o := range []launch.Options{{Grid: 1, Block: 32}, {Grid: 3, Block: 7}} {
			d := testcase.Clone(c)
			emulate(t, d, o)
			for i := range kernel.ID(c.Kernel).Spec().Out {
				require.True(t, floats.BitsEqual(testcase.Outputs(c)[i], testcase.Outputs(d)[i]), "%s %+v", k, o)
			}
		}
	}
}

// TestGaussNewtonExactlySymmetric: out[a][b] and out[b][a] are the same sum in the same order.
func TestGaussNewtonExactlySymmetric(t *testing.T) {
	rng := newRNG(9, 10)
	for _, k := range []dispatch.Kernel{dispatch.KernelJetGaussNewton, dispatch.KernelLogisticGaussNewton} {
		const N, K, P = 2, 9, 11
		c := testcase.New(k, dispatch.Float64, []int{N, K, P}, rng)
		emulate(t, c, launch.Options{Tile: 4})
		g := c.F64.Out[0]
		for n := 0; n < N; n++ {
			for a := 0; a < K; a++ {
				for b := 0; b < K; b++ {
					require.Equal(t, g[(n*K+a)*K+b], g[(n*K+b)*K+a])
				}
			}
		}
	}
}
