package launch

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet/internal/kernel"
)

func TestPlanRowJet(t *testing.T) {
	cfg, err := Plan(id("jet_second"), []int{65536, 16, 16}, "f64", DefaultLimits, Options{})
	require.NoError(t, err)
	require.Equal(t, "gj_jet_second_f64", cfg.Func)
	require.Equal(t, 65536, cfg.Grid)
	require.Equal(t, 256, cfg.Block)
	require.Equal(t, 16, cfg.Tile, "one tile covers the row")
	require.Equal(t, 8*(16+16+16*17), cfg.SharedBytes)

	cfg, err = Plan(id("jet_value"), []int{10, 3, 5}, "f32", DefaultLimits, Options{Warp: -1})
	require.NoError(t, err)
	require.Equal(t, "gj_jet_value_f32", cfg.Func)
	require.Equal(t, 32, cfg.Block)

	cfg, err = Plan(id("jet_first"), []int{0, 3, 5}, "f32", DefaultLimits, Options{})
	require.NoError(t, err)
	require.Zero(t, cfg.Grid, "N = 0: nothing to launch")
}

// TestPlanWarpRows: small rows of a kernel with a warp-per-row variant get it, eight rows a
// block of 256 threads and eight rows' shared memory; K > 32, K·P > WarpRowMax, a kernel
// without the variant, a block that is not whole warps or Options.Warp < 0 get the block
// variant; Options.Warp > 0 forces the variant where it exists.
func TestPlanWarpRows(t *testing.T) {
	cfg, err := Plan(id("jet_value"), []int{10, 3, 5}, "f32", DefaultLimits, Options{})
	require.NoError(t, err)
	require.Equal(t, Config{Func: "gj_jet_value_warp_f32", Grid: 2, Block: 256, Tile: 5, SharedBytes: 8 * 8 * SharedDoubles(id("jet_value"), 3, 5, 0)}, cfg)

	for _, tc := range []struct {
		k       string
		K, P    int
		warp    bool
		options Options
	}{
		{"jet_first", 32, 32, true, Options{}},
		{"jet_first", 32, 33, false, Options{}},
		{"jet_first", 33, 8, false, Options{}},
		{"jet_first", 16, 64, true, Options{}},
		{"jet_first", 16, 65, false, Options{}},
		{"logistic_hvp_vjp", 4, 64, true, Options{}},
		{"jet_hvp_vjp", 32, 32, false, Options{}}, // eight untiled rows do not fit 48 KiB
		{"jet_hvp_vjp", 16, 16, true, Options{}},
		{"jet_second", 2, 2, false, Options{}}, // no warp variant
		{"jet_first", 4, 4, false, Options{Block: 33}},
		{"jet_first", 4, 4, true, Options{Block: 64}},
		{"jet_first", 4, 4, false, Options{Warp: -1}},
		{"jet_first", 64, 64, true, Options{Warp: 1}},
	} {
		cfg, err := Plan(id(tc.k), []int{13, tc.K, tc.P}, "f64", DefaultLimits, tc.options)
		require.NoError(t, err, "%+v", tc)
		require.Equal(t, tc.warp, strings.Contains(cfg.Func, "_warp_"), "%+v: %s", tc, cfg.Func)
		if tc.options == (Options{}) {
			require.Equal(t, tc.warp, WarpRows(id(tc.k), tc.K, tc.P), "%+v", tc)
		}
		require.LessOrEqual(t, cfg.SharedBytes, 48<<10)
		if tc.warp {
			rows := cfg.Block / 32
			require.Equal(t, (13+rows-1)/rows, cfg.Grid)
			require.Equal(t, 8*rows*SharedDoubles(id(tc.k), tc.K, cfg.Tile, 0), cfg.SharedBytes)
		}
	}
	small := Limits{MaxSharedBytes: 8 * 8 * SharedDoubles(id("jet_hvp_vjp"), 16, 16, 0) / 2}
	cfg, err = Plan(id("jet_hvp_vjp"), []int{13, 16, 16}, "f64", small, Options{})
	require.NoError(t, err)
	require.Equal(t, "gj_jet_hvp_vjp_f64", cfg.Func, "eight untiled rows do not fit the device's limit: the block variant")
	_, err = Plan(id("jet_second"), []int{1, 2, 2}, "f64", DefaultLimits, Options{Warp: 1})
	require.Error(t, err, "no warp variant")
	_, err = Plan(id("jet_first"), []int{1, 2, 2}, "f64", DefaultLimits, Options{Warp: 1, Block: 48})
	require.Error(t, err, "not whole warps")
}

func TestPlanTilesWideRows(t *testing.T) {
	cfg, err := Plan(id("jet_second_vjp"), []int{1, 128, 1000}, "f64", DefaultLimits, Options{})
	require.NoError(t, err)
	require.Less(t, cfg.Tile, 1000)
	require.LessOrEqual(t, cfg.SharedBytes, 48<<10)
	require.Greater(t, 8*SharedDoubles(id("jet_second_vjp"), 128, cfg.Tile+1, 0), 48<<10, "largest tile that fits")

	_, err = Plan(id("jet_second_vjp"), []int{1, 4096, 2}, "f64", DefaultLimits, Options{})
	require.True(t, errors.Is(err, ErrTooLarge))

	_, err = Plan(id("jet_second"), []int{1, 8, 40}, "f64", DefaultLimits, Options{Tile: 41})
	require.Error(t, err)
	cfg, err = Plan(id("jet_second"), []int{1, 8, 40}, "f64", DefaultLimits, Options{Tile: 3, Block: 7, Grid: 1})
	require.NoError(t, err)
	require.Equal(t, Config{Func: "gj_jet_second_f64", Grid: 1, Block: 7, Tile: 3, SharedBytes: 8 * (8 + 8 + 8*3)}, cfg)
}

func TestPlanAxis(t *testing.T) {
	cfg, err := Plan(id("softmax_backward"), []int{8192, 4096, 1}, "f32", DefaultLimits, Options{})
	require.NoError(t, err)
	require.Equal(t, Config{Func: "gj_softmax_backward_f32", Grid: 8192, Block: 256, Tile: 1, SharedBytes: 8 * 512}, cfg)

	cfg, err = Plan(id("softmax_backward_grad"), []int{3, 5, 100}, "f64", DefaultLimits, Options{})
	require.NoError(t, err)
	require.Equal(t, 32, cfg.Tile)
	require.Equal(t, 32*8, cfg.Block, "W·R, R = pow2(n) capped by 256/W")
	require.Equal(t, 3*4, cfg.Grid)

	cfg, err = Plan(id("log_softmax_backward"), []int{3, 0, 2}, "f64", DefaultLimits, Options{})
	require.NoError(t, err)
	require.Zero(t, cfg.Grid)

	_, err = Plan(id("softmax_backward"), []int{3, 5, 4}, "f64", DefaultLimits, Options{Tile: 3})
	require.Error(t, err)
	_, err = Plan(id("softmax_backward"), []int{3, 5, 4}, "f64", DefaultLimits, Options{Block: 12})
	require.Error(t, err, "block must be W times a power of two")
}

func TestPlanElementwise(t *testing.T) {
	cfg, err := Plan(id("gelu_backward"), []int{1 << 30}, "f32", DefaultLimits, Options{})
	require.NoError(t, err)
	require.Equal(t, 256, cfg.Block)
	require.Equal(t, 1<<20, cfg.Grid, "grid-stride beyond 2^20 blocks")
	cfg, err = Plan(id("relu_forward"), []int{0}, "f32", DefaultLimits, Options{})
	require.NoError(t, err)
	require.Zero(t, cfg.Grid)
}

func TestPlanErrors(t *testing.T) {
	for _, tc := range []struct {
		k      string
		ints   []int
		suffix string
		o      Options
	}{
		{"nope", []int{1}, "f32", Options{}},
		{"relu_forward", []int{1}, "f16", Options{}},
		{"jet_first", []int{1, 2}, "f32", Options{}},
		{"jet_first", []int{1, 0, 2}, "f32", Options{}},
		{"softmax_backward", []int{1, 2}, "f32", Options{}},
		{"relu_forward", []int{1, 2}, "f32", Options{}},
		{"relu_forward", []int{4}, "f32", Options{Block: 1024}},
		{"relu_forward", []int{4}, "f32", Options{Grid: -1}},
	} {
		_, err := Plan(id(tc.k), tc.ints, tc.suffix, DefaultLimits, tc.o)
		require.Error(t, err, "%+v", tc)
	}
}

func TestMakeParams(t *testing.T) {
	p := MakeParams([]uint64{1, 2, 3}, []uint64{4, 5}, 6, []int{7, 8, 9}, Config{Tile: 10}, 0.5)
	require.Equal(t, Params{1, 2, 3, 0, 4, 5, 0, 6, 7, 8, 9, 10, 0x3fe0000000000000}, p)
	p = MakeParams(nil, []uint64{4}, 0, []int{11}, Config{}, 0)
	require.Equal(t, Params{4: 4, 8: 11}, p)
	p = MakeParams([]uint64{1, 2, 3, 4, 5}, []uint64{6}, 0, []int{7, 8, 9}, Config{Tile: 10}, 0)
	require.Equal(t, Params{1, 2, 3, 4, 6, 0, 0, 0, 7, 8, 9, 10, 0, 5}, p, "the fifth input is the last parameter")
}

// id returns the kernel called name (the zero ID, no kernel, for an unknown name).
func id(name string) kernel.ID {
	k, _ := kernel.ByName(name)
	return k
}

// TestPlanWarpSwitchSizes pins the sizes of ops' TestCUDAWarpAndBlockRows (tag cuda, on a
// GPU) on both sides of the switch: K = P = 4 runs the warp-per-row entry points of its
// kernels, K = 64, P = 32 the block-per-row ones.
func TestPlanWarpSwitchSizes(t *testing.T) {
	for _, name := range []string{"jet_value", "jet_first", "jet_hvp", "logistic_first", "jet_first_vjp"} {
		k := id(name)
		require.True(t, k.OnDevice(), name)
		for _, suffix := range []string{"f32", "f64"} {
			cfg, err := Plan(k, []int{11, 4, 4}, suffix, DefaultLimits, Options{})
			require.NoError(t, err, name)
			require.Equal(t, "gj_"+name+"_warp_"+suffix, cfg.Func)
			require.Equal(t, 2, cfg.Grid, "%s: 11 rows, 8 a block", name)
			cfg, err = Plan(k, []int{11, 64, 32}, suffix, DefaultLimits, Options{})
			require.NoError(t, err, name)
			require.Equal(t, "gj_"+name+"_"+suffix, cfg.Func)
			require.Equal(t, 11, cfg.Grid, "%s: a block a row", name)
		}
	}
}

var unmeasured atomic.Int32

// TestPlanRefusesUnmeasuredLayout: a row jet whose shared-memory layout has not been
// generated (a gate registered after the last go generate) has no plan, rather than a plan
// with no shared memory.
func TestPlanRefusesUnmeasuredLayout(t *testing.T) {
	n := unmeasured.Add(1) // a fresh name for each run (-count)
	s := kernel.SoftmaxGate
	g := kernel.Gate{Name: fmt.Sprintf("unmeasured%d_jet", n), Title: fmt.Sprintf("Unmeasured%dJet", n), Params: s.Params,
		Check: s.Check, CPU: s.CPU, Device: s.Device, Sample: s.Sample}
	kernel.Register(&g)
	k := g.Kernel(kernel.First, false)
	require.Nil(t, k.Spec().Device.Shared)
	_, err := Plan(k, []int{4, 3, 5}, "f64", DefaultLimits, Options{})
	require.ErrorContains(t, err, "no measured shared-memory layout")
	require.False(t, WarpRows(k, 3, 5))
	require.Zero(t, SharedDoubles(k, 3, 5, 0))
}
