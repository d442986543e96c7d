//go:build cgo

package emu

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet/cudaops/internal/launch"
	"github.com/gatejet/gatejet/cudaops/internal/testcase"
	"github.com/gatejet/gatejet/internal/dispatch"
	"github.com/gatejet/gatejet/internal/kernel"
)

// coordKernels returns the coordinate jets of every gate.
func coordKernels() []dispatch.Kernel { return kernelsOf(dispatch.FamilyCoordJet) }

// TestCoordJetsOnTheDevice: every gate's four coordinate jets have device entry points (a
// gate with device kernels has them all), in the gate's module.
func TestCoordJetsOnTheDevice(t *testing.T) {
	for _, g := range kernel.Gates() {
		if g.Device == nil {
			continue
		}
		for c := kernel.First; c < kernel.NumChannels; c++ {
			id := g.CoordKernel(c)
			require.True(t, id.OnDevice(), "%v", id)
			require.Equal(t, g.Device.Module, id.Spec().Device.Module, "%v", id)
		}
	}
	require.Len(t, coordKernels(), 8, "softmax and logistic, four channels each")
}

// TestCoordJetsHardRows: the coordinate jets of both gates, both element types, against the
// CPU kernels on rows that stress the gate: extreme inverse temperatures, near-ties, large
// logits, one-hot gates, logistic slopes large and small and of either sign, with K = 1 and
// P = 1 among the shapes, and tiles forced narrower than P. f64 within 1e-12 and f32 within 1e-5
// normwise; the worst error per kernel is logged.
func TestCoordJetsHardRows(t *testing.T) {
	rng := newRNG(71, 72)
	type rows struct {
		name   string
		logits func(i int) float64 // logit i of the flattened [N,K] logits
		floats func(K int) []float64
	}
	softmax := []rows{
		{"tiny invTau", func(i int) float64 { return 3 * math.Sin(float64(i)) }, func(int) []float64 { return []float64{1e-8} }},
		{"huge invTau, near-ties", func(i int) float64 { return 1e-9 * float64(i%3) }, func(int) []float64 { return []float64{1e6} }},
		{"exact ties", func(int) float64 { return 0.25 }, func(int) []float64 { return []float64{7} }},
		{"one-hot", func(i int) float64 { return float64(i % 5) }, func(int) []float64 { return []float64{500} }},
		{"large logits", func(i int) float64 { return 1e4 * math.Cos(float64(i)) }, func(int) []float64 { return []float64{0.7} }},
	}
	logistic := []rows{
		{"small slopes", func(i int) float64 { return math.Sin(float64(i)) }, func(K int) []float64 {
			f := make([]float64, 2*K)
			for k := range K {
				f[k], f[K+k] = 1e-6*float64(1-2*(k%2)), 0.1*float64(k)
			}
			return f
		}},
		{"steep, saturated", func(i int) float64 { return 2 * math.Cos(float64(i)) }, func(K int) []float64 {
			f := make([]float64, 2*K)
			for k := range K {
				f[k], f[K+k] = 40*float64(1-2*(k%2)), -3
			}
			return f
		}},
	}
	worst := map[string]float64{}
	for _, k := range coordKernels() {
		cases := softmax
		if kernel.ID(k).Spec().Gate == kernel.LogisticGate {
			cases = logistic
		}
		for _, rc := range cases {
			for _, sh := range [][3]int{{3, 1, 1}, {2, 1, 6}, {4, 5, 1}, {3, 7, 9}, {0, 4, 3}, {2, 33, 20}} {
				for _, tile := range []int{0, 4} {
					if tile > sh[2] {
						continue
					}
					for _, dt := range dtypes {
						c := testcase.New(k, dt, sh[:], rng)
						in, out := testcase.Inputs(c), testcase.Outputs(c)
						for i := range in[0] {
							in[0][i] = rc.logits(i)
						}
						testcase.Set(c, in, out)
						c.Floats = rc.floats(sh[1])
						emulate(t, c, launch.Options{Tile: tile})
						ref := reference(t, c)
						what := fmt.Sprintf("%s tile %d", rc.name, tile)
						requireClose(t, c, ref, what)
						e := testcase.RelErr(testcase.Outputs(c)[0], testcase.Outputs(ref)[0])
						key := k.String() + " " + dt.String()
						worst[key] = max(worst[key], e)
					}
				}
			}
		}
	}
	for _, k := range coordKernels() {
		for _, dt := range dtypes {
			key := k.String() + " " + dt.String()
			t.Logf("%-36s worst normwise relative error %.3g", key, worst[key])
		}
	}
}

// TestCoordJetsNonFiniteDerivatives: a NaN or an infinity in d1 or d2 of one row (the decoded
// rows' derivatives, which only the coordinate jets read) spoils that row where the CPU's does,
// and no other row.
func TestCoordJetsNonFiniteDerivatives(t *testing.T) {
	rng := newRNG(73, 74)
	const N, K, P = 4, 5, 3
	for _, k := range coordKernels() {
		nIn := len(kernel.ID(k).Spec().In)
		for _, in := range []int{2, 3} {
			if in >= nIn {
				continue
			}
			for _, bad := range []float64{math.NaN(), math.Inf(1)} {
				c := testcase.New(k, dispatch.Float64, []int{N, K, P}, rng)
				c.F64.In[in][(1*K+2)*P+1] = bad
				emulate(t, c, launch.Options{})
				ref := reference(t, c)
				g, w := append([]float64(nil), c.F64.Out[0]...), append([]float64(nil), ref.F64.Out[0]...)
				per := len(w) / N
				for j := range w {
					require.Equal(t, math.IsNaN(w[j]), math.IsNaN(g[j]), "%s input %d = %v [%d]: NaN pattern", k, in, bad, j)
					if !math.IsNaN(w[j]) {
						require.Equal(t, math.IsInf(w[j], 0), math.IsInf(g[j], 0), "%s input %d = %v [%d]: Inf pattern", k, in, bad, j)
					}
					if j/per != 1 {
						require.False(t, math.IsNaN(g[j]) || math.IsInf(g[j], 0), "%s input %d = %v: row %d spoilt", k, in, bad, j/per)
					}
					if math.IsInf(w[j], 0) && g[j] == w[j] {
						g[j], w[j] = 0, 0 // the same infinity; the finite rest compared below
					}
				}
				require.LessOrEqual(t, testcase.RelErr(g, w), 1e-12, "%s input %d = %v", k, in, bad)
			}
		}
	}
}
