//go:build cgo

package emu

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gatejet/gatejet/cudaops/internal/launch"
	"github.com/gatejet/gatejet/cudaops/internal/testcase"
	"github.com/gatejet/gatejet/internal/dispatch"
	"github.com/gatejet/gatejet/internal/floats"
	"github.com/gatejet/gatejet/internal/kernel"
	"github.com/stretchr/testify/require"
)

// jetShapes are the [N, K, P] every row-jet kernel is checked on: K in {1, 8, 16, 40, 128},
// several P, and empty batches.
func jetShapes() [][3]int {
	var out [][3]int
	for _, K := range []int{1, 8, 16, 40, 128} {
		for _, np := range [][2]int{{0, 3}, {1, 1}, {3, 5}, {2, 17}} {
			if K == 128 && np[1] == 17 {
				np[1] = 9
			}
			out = append(out, [3]int{np[0], K, np[1]})
		}
	}
	return out
}

// TestJetsMatchSoftmaxjet: every row-jet kernel, both element types, against softmaxjet (the
// CPU implementation of docs/math.md), f64 within 1e-12 and f32 within 1e-5 normwise.
func TestJetsMatchSoftmaxjet(t *testing.T) {
	matchReference(t, newRNG(21, 22), jetKernels(), jetShapes(), "vs softmaxjet")
}

// TestJetsMultiTile: rows wider than one shared-memory tile (forced small tiles, and a P large
// enough that the planner itself tiles at K = 128).
func TestJetsMultiTile(t *testing.T) {
	rng := newRNG(23, 24)
	for _, k := range jetKernels() {
		for _, tc := range []struct {
			sh   [3]int
			tile int
		}{{[3]int{2, 8, 37}, 5}, {[3]int{1, 16, 64}, 7}, {[3]int{1, 128, 80}, 0}} {
			c := testcase.New(k, dispatch.Float64, tc.sh[:], rng)
			res := emulate(t, c, launch.Options{Tile: tc.tile})
			if tc.tile > 0 || 8*launch.SharedDoubles(kernel.ID(k), tc.sh[1], tc.sh[2], 0) > 48<<10 {
				require.Less(t, res.Config.Tile, tc.sh[2], "%s %v should be tiled", k, tc.sh)
			}
			requireClose(t, c, reference(t, c), fmt.Sprintf("tile %d", res.Config.Tile))
		}
	}
}

// TestAxisMatchBackward: the softmax-family backward kernels against package backward, on
// last-axis, middle-axis and degenerate layouts.
func TestAxisMatchBackward(t *testing.T) {
	shapes := [][3]int{
		{1, 1, 1}, {3, 7, 1}, {1, 1000, 1}, {2, 33, 5}, {4, 6, 40}, {5, 300, 3}, {2, 3, 100},
		{0, 5, 3}, {3, 0, 2}, {2, 5, 0}, {64, 4096, 1},
	}
	matchReference(t, newRNG(25, 26), kernelsOf(dispatch.FamilyAxis), shapes, "vs backward")
}

// TestActivationsMatchBackward: activations on random inputs and on the special values
// (zeros, the GELU cut-offs, huge, ±Inf, NaN) against package backward.
func TestActivationsMatchBackward(t *testing.T) {
	rng := newRNG(27, 28)
	specials := []float64{0, math.Copysign(0, -1), 1e-300, -1e-300, 1, -1, 29.9, 30, 30.1, -29.9, -30, -30.1,
		21.4, -21.4, 40, -40, 710, -710, 1e300, -1e300, math.Inf(1), math.Inf(-1), math.NaN(), 3.5, -3.5}
	for _, k := range kernelsOf(dispatch.FamilyElementwise) {
		for _, n := range []int{0, 1, 31, 1000, len(specials)} {
			for _, dt := range dtypes {
				c := testcase.New(k, dt, []int{n}, rng)
				if n == len(specials) {
					in, out := testcase.Inputs(c), testcase.Outputs(c)
					in[0] = specials
					testcase.Set(c, in, out)
				}
				emulate(t, c, launch.Options{})
				requireClose(t, c, reference(t, c), "vs backward")
			}
		}
	}
}

// TestNonFiniteStaysInItsRow: a NaN logit, a row of −Inf logits, a +Inf logit or a NaN decoded
// value spoil their own row exactly where softmaxjet's does, and no other row changes.
func TestNonFiniteStaysInItsRow(t *testing.T) {
	rng := newRNG(29, 30)
	const N, K, P = 4, 5, 3
	poison := map[string]func(l, d []float64){
		"NaN logit": func(l, d []float64) { l[1*K+2] = math.NaN() },
		"all -Inf":  func(l, d []float64) { setAll(l[K:2*K], math.Inf(-1)) },
		"+Inf":      func(l, d []float64) { l[1*K] = math.Inf(1) },
		"masked":    func(l, d []float64) { l[1*K+1], l[1*K+3] = math.Inf(-1), math.Inf(-1) },
		"NaN D":     func(l, d []float64) { d[(1*K+3)*P+1] = math.NaN() },
	}
	for _, k := range jetKernels() {
		for name, f := range poison {
			c := testcase.New(k, dispatch.Float64, []int{N, K, P}, rng)
			f(c.F64.In[0], c.F64.In[1])
			emulate(t, c, launch.Options{})
			ref := reference(t, c)
			for i := range kernel.ID(c.Kernel).Spec().Out {
				g, w := c.F64.Out[i], ref.F64.Out[i]
				for j := range w {
					require.Equal(t, math.IsNaN(w[j]), math.IsNaN(g[j]), "%s %s output %d [%d]: NaN pattern", k, name, i, j)
				}
				require.LessOrEqual(t, testcase.RelErr(g, w), 1e-12, "%s %s output %d", k, name, i)
			}
		}
	}
}

func setAll(x []float64, v float64) {
	for i := range x {
		x[i] = v
	}
}

// TestLargeLogitsStable: the max is subtracted, so logits of ±1e4 neither overflow nor
// underflow the gate; results match softmaxjet.
func TestLargeLogitsStable(t *testing.T) {
	rng := newRNG(31, 32)
	for _, k := range kernelsOfGate(kernel.SoftmaxGate) {
		c := testcase.New(k, dispatch.Float64, []int{2, 6, 4}, rng)
		l := c.F64.In[0]
		for i := range l {
			l[i] *= 1e4
		}
		emulate(t, c, launch.Options{})
		ref := reference(t, c)
		for i := range kernel.ID(c.Kernel).Spec().Out {
			g := c.F64.Out[i]
			for _, x := range g {
				require.False(t, math.IsNaN(x) || math.IsInf(x, 0), "%s output %d", k, i)
			}
			require.LessOrEqual(t, testcase.RelErr(g, ref.F64.Out[i]), 1e-12, "%s", k)
		}
	}
}

// TestSecondF32OutOfRangeRows: the float32 second channel computes a row in float only while
// the row passes softmaxjet's float32 range checks; a row with a gate coefficient below 2⁻⁹⁹
// (ζ ≈ e⁻⁵⁰ twice: s²ζ_aζ_b ≈ 4·10⁻⁴⁴, a float denormal), or with |e| > 2¹⁰⁰, is computed in
// double and rounded once. Every element whose float64 value is a normal float32 must then be
// within 1e-5 relative of it, the tiny-coefficient blocks included (in float they would be off
// by percents). (Rows in range are checked normwise by TestJetsMatchSoftmaxjet: in float,
// e[a][c] + e[b][c] may cancel, as in softmaxjet's float32 rows.)
func TestSecondF32OutOfRangeRows(t *testing.T) {
	rng := newRNG(33, 34)
	for _, tc := range []struct {
		name   string
		logits []float64 // per row of K = 3
		scale  float64   // of D
	}{
		{"tiny coefficient", []float64{0, -50, -50}, 1e25},
		{"huge e", []float64{0.3, -0.2, 0.1}, 1e32},
	} {
		for _, P := range []int{5, 300} {
			c := testcase.New(dispatch.KernelJetSecond, dispatch.Float32, []int{2, 3, P}, rng)
			c.Floats = []float64{1}
			in, out := testcase.Inputs(c), testcase.Outputs(c)
			for i := range in[0] {
				in[0][i] = tc.logits[i%3]
			}
			for i := range in[1] {
				in[1][i] = float64(float32(in[1][i] * tc.scale))
			}
			testcase.Set(c, in, out)
			emulate(t, c, launch.Options{})
			got, want := testcase.Outputs(c)[0], testcase.Outputs(reference(t, c))[0]
			for i, w := range want {
				if math.Abs(w) < 0x1p-126 || math.Abs(w) > math.MaxFloat32 {
					continue
				}
				require.LessOrEqual(t, math.Abs(got[i]-w), 1e-5*math.Abs(w), "%s P=%d [%d]: %g, want %g", tc.name, P, i, got[i], w)
			}
		}
	}
}

// TestWarpVariantsMatch: every kernel with a warp-per-row variant, on shapes on each side of
// launch.WarpRows' switch (K·P at and past 1024, K at and past 32, rows that fit eight to a
// block untiled or not) and with N not a multiple of 8: the planner's own choice is the one
// WarpRows states, and the warp variant (forced, with eight, one or three warps a block and a
// grid too small for the rows) and the block variant (forced) both match softmaxjet and agree
// bit for bit: they sum in the same order. Every warp carves exactly its share of the shared
// memory the planner gives the block.
func TestWarpVariantsMatch(t *testing.T) {
	rng := newRNG(35, 36)
	shapes := [][3]int{{13, 32, 32}, {13, 32, 33}, {9, 33, 8}, {11, 16, 64}, {11, 16, 65}, {1, 1, 1}, {7, 5, 3}, {17, 3, 300}}
	for _, k := range jetKernels() {
		if !kernel.ID(k).Spec().Device.Warp {
			continue
		}
		for _, sh := range shapes {
			for _, dt := range dtypes {
				c := testcase.New(k, dt, sh[:], rng)
				res := emulate(t, c, launch.Options{})
				ref := reference(t, c)
				requireClose(t, c, ref, "planner's choice")
				require.Equal(t, launch.WarpRows(kernel.ID(k), sh[1], sh[2]), strings.Contains(res.Config.Func, "_warp_"),
					"%s %v: %s", k, sh, res.Config.Func)
				var outs [][][]float64
				for _, o := range []launch.Options{{Warp: -1}, {Warp: 1}, {Warp: 1, Block: 32}, {Warp: 1, Block: 96, Grid: 2}} {
					d := testcase.Clone(c)
					res := emulate(t, d, o)
					require.Equal(t, o.Warp > 0, strings.Contains(res.Config.Func, "_warp_"), "%s %+v", k, o)
					require.Equal(t, res.Config.SharedBytes, res.HighWater, "%s %+v: the planner's shared memory is what the warps carve", k, o)
					requireClose(t, d, ref, fmt.Sprintf("%+v", o))
					outs = append(outs, testcase.Outputs(d))
				}
				for i := range kernel.ID(k).Spec().Out {
					for j := 1; j < len(outs); j++ {
						require.True(t, floats.BitsEqual(outs[0][i], outs[j][i]), "%s %s %v output %d: variant %d differs", k, dt, sh, i, j)
					}
				}
			}
		}
	}
}
