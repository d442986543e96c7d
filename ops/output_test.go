package ops

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Sentinels no computation produces: NaNs with a payload (arithmetic on finite inputs gives
// the default NaN, and NaN inputs propagate their own payload).
var (
	sentinel64 = math.Float64frombits(0x7ff8_dead_beef_0001)
	sentinel32 = math.Float32frombits(0x7fc0_beef)
)

// TestOutputsFullyWritten: every op's compute writes every element of its output, which is
// what lets Do allocate outputs without zeroing them (newOutput). Each op of a graph per
// constructor, its gradient ops included, computes into an output filled with a sentinel
// NaN, and no sentinel may be left.
func TestOutputsFullyWritten(t *testing.T) {
	cases := everyOpCases()
	rng := rand.New(rand.NewSource(17))
	cases = append(cases,
		graphCase{name: "SoftArgmin", inputs: []input{randInput(rng, "c", tensor.Shape{5, 7}, -2, 2)},
			build: func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return SoftArgmin(in[0], 1.5) }},
		graphCase{name: "LogDetPlusRidge", inputs: []input{randInput(rng, "H", tensor.Shape{3, 4, 4}, -1, 1)},
			build: func(_ *G.ExprGraph, in []*G.Node) (*G.Node, error) { return LogDetPlusRidge(in[0], 8) }})
	for _, c := range cases {
		for _, dt := range dtypes {
			t.Run(fmt.Sprintf("%s/%v", c.name, dt), func(t *testing.T) {
				g, nodes, out := buildCase(t, c, dt)
				cost, err := costOf(g, out)
				require.NoError(t, err)
				_, err = G.Grad(cost, nodes...)
				require.NoError(t, err)
				vm := G.NewTapeMachine(g)
				defer vm.Close()
				require.NoError(t, vm.RunAll())
				ran, comps := opsOf[computer](g)
				require.NotEmpty(t, ran)
				for i, n := range ran {
					kids := childrenOf(n)
					vals := make([]G.Value, len(kids))
					for j, ch := range kids {
						vals[j] = ch.Value()
					}
					o := tensor.New(tensor.Of(n.Dtype()), tensor.WithShape(n.Shape().Clone()...))
					if n.Dtype() == tensor.Float64 {
						for k := range o.Float64s() {
							o.Float64s()[k] = sentinel64
						}
					} else {
						for k := range o.Float32s() {
							o.Float32s()[k] = sentinel32
						}
					}
					require.NoError(t, comps[i].compute(o, vals), "%v", n)
					if n.Dtype() == tensor.Float64 {
						for k, x := range o.Float64s() {
							require.NotEqual(t, math.Float64bits(sentinel64), math.Float64bits(x), "%v left element %d unwritten", n, k)
						}
					} else {
						for k, x := range o.Float32s() {
							require.NotEqual(t, math.Float32bits(sentinel32), math.Float32bits(x), "%v left element %d unwritten", n, k)
						}
					}
				}
			})
		}
	}
}
