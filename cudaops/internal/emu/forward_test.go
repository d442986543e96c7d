//go:build cgo

package emu

import (
	"math"
	"testing"

	"github.com/gatejet/gatejet/cudaops/internal/launch"
	"github.com/gatejet/gatejet/cudaops/internal/testcase"
	"github.com/gatejet/gatejet/internal/dispatch"
	"github.com/stretchr/testify/require"
)

var forwardKernels = []dispatch.Kernel{dispatch.KernelSoftmaxForward, dispatch.KernelLogSoftmaxForward}

// TestAxisForwardMatchBackward: softmax_forward and log_softmax_forward against
// backward.Softmax and backward.LogSoftmax (f64 1e-12, f32 1e-5 normwise), on last-axis,
// middle-axis, long-axis and empty layouts, with the planner's block and with small blocks
// (several rows of lanes per column, so the max and sum trees run).
func TestAxisForwardMatchBackward(t *testing.T) {
	rng := newRNG(61, 62)
	shapes := [][3]int{
		{1, 1, 1}, {3, 7, 1}, {1, 1000, 1}, {2, 33, 5}, {4, 6, 40}, {5, 300, 3}, {2, 3, 100},
		{0, 5, 3}, {3, 0, 2}, {2, 5, 0}, {64, 4096, 1}, {1, 70000, 1},
	}
	for _, k := range forwardKernels {
		for _, sh := range shapes {
			for _, dt := range dtypes {
				for _, o := range []launch.Options{{}, {Block: 32}} {
					c := testcase.New(k, dt, sh[:], rng)
					emulate(t, c, o)
					requireClose(t, c, reference(t, c), "vs backward")
				}
			}
		}
	}
}

// TestAxisForwardNonFinite: a NaN, a +Inf or an all −Inf column makes that column NaN, −Inf
// beside finite values is a mask (0, or −Inf for log-softmax), exactly where the CPU kernel
// has them, and other columns are unaffected.
func TestAxisForwardNonFinite(t *testing.T) {
	rng := newRNG(63, 64)
	inf := math.Inf(1)
	const outer, n, inner = 3, 9, 4
	at := func(o, j, i int) int { return (o*n+j)*inner + i }
	poison := map[string]func(x []float64){
		"NaN":  func(x []float64) { x[at(1, 4, 2)] = math.NaN() },
		"+Inf": func(x []float64) { x[at(1, 0, 2)] = inf },
		"all -Inf": func(x []float64) {
			for j := 0; j < n; j++ {
				x[at(1, j, 2)] = -inf
			}
		},
		"masked": func(x []float64) { x[at(1, 0, 2)], x[at(1, 8, 2)], x[at(2, 3, 0)] = -inf, -inf, -inf },
	}
	for _, k := range forwardKernels {
		for name, f := range poison {
			for _, o := range []launch.Options{{}, {Block: 32}} {
				c := testcase.New(k, dispatch.Float64, []int{outer, n, inner}, rng)
				f(c.F64.In[0])
				emulate(t, c, o)
				ref := reference(t, c)
				g, w := c.F64.Out[0], ref.F64.Out[0]
				for j := range w {
					require.Equal(t, math.IsNaN(w[j]), math.IsNaN(g[j]), "%s %s [%d]: NaN pattern", k, name, j)
					if math.IsInf(w[j], 0) || w[j] == 0 {
						require.Equal(t, w[j], g[j], "%s %s [%d]", k, name, j)
					}
				}
				require.LessOrEqual(t, testcase.RelErr(g, w), 1e-12, "%s %s", k, name)
			}
		}
	}
}
