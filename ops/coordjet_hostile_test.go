package ops_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet/graphs"
	"github.com/gatejet/gatejet/internal/kernel"
	"github.com/gatejet/gatejet/ops"
)

// coordInputs are the inputs of channel c of a coordinate jet, n rows of K atoms and P
// columns, in a fresh graph: logits, d0, d1 (, d2) (, v), with the values of seed and with
// poison written at element 0 of row 1 of input bad (none when bad < 0).
func coordInputs(dt tensor.Dtype, c kernel.Channel, n, k, p int, seed uint64, bad int, poison float64) []*G.Node {
	rng := rand.New(rand.NewPCG(seed, 31))
	g := G.NewGraph()
	shapes := [][]int{{n, k}, {n, k, p}, {n, k, p}, {n, k, p}, {n, 2 * k}}
	in := make([]*G.Node, c.CoordIn())
	for i, name := range []string{"l", "d0", "d1", "d2", "v"}[:c.CoordIn()] {
		vals := normals(rng, tensor.Shape(shapes[i]).TotalSize())
		if i == bad {
			vals[len(vals)/n] = poison
		}
		in[i] = variable(g, dt, name, shapes[i], vals)
	}
	return in
}

var coordAlpha, coordBeta = []float64{1, -1.5, 2, 0.5}, []float64{0, 0.3, -0.2, 1}

// TestCoordJetRowIsolation: NaN or ±Inf in one row of any input of a coordinate jet leaves
// every other row of the output bit for bit what it is without it, for both gates, every
// channel and both dtypes.
func TestCoordJetRowIsolation(t *testing.T) {
	const n, k, p = 3, 4, 2
	for _, gate := range coordGates {
		for _, c := range coordChannels {
			for _, dt := range dtypes {
				want := eval(t, mustCoord(t, gate, c, coordInputs(dt, c, n, k, p, 5, -1, 0)))[0]
				w := len(want) / n
				for arg := range c.CoordIn() {
					for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
						got := eval(t, mustCoord(t, gate, c, coordInputs(dt, c, n, k, p, 5, arg, bad)))[0]
						for r := range n {
							if r == 1 {
								continue
							}
							require.Equal(t, want[r*w:(r+1)*w], got[r*w:(r+1)*w], "%s %v %v: %v in row 1 of input %d reaches row %d", gateName(gate), c, dt, bad, arg, r)
						}
					}
				}
			}
		}
	}
}

func mustCoord(t *testing.T, gate *kernel.Gate, c kernel.Channel, in []*G.Node, opts ...ops.Option) *G.Node {
	t.Helper()
	out, err := coordNode(gate, c, in, coordAlpha, coordBeta, opts...)
	require.NoError(t, err)
	return out
}

// TestCoordJetAliasedInputs: one node passed as d0, d1 and d2 gives the values of three
// nodes holding its values, and its gradient is the sum of theirs.
func TestCoordJetAliasedInputs(t *testing.T) {
	const n, k, p = 2, 4, 3
	for _, gate := range coordGates {
		for _, c := range coordChannels {
			name := fmt.Sprintf("%s %v", gateName(gate), c)
			run := func(aliased bool) ([]float64, []float64) {
				in := coordInputs(tensor.Float64, c, n, k, p, 9, -1, 0)
				d := in[1]
				if aliased {
					for i := 2; i < len(in) && i < 4; i++ {
						in[i].Graph().RemoveNode(in[i])
						in[i] = d
					}
				} else {
					for i := 2; i < len(in) && i < 4; i++ {
						require.NoError(t, G.Let(in[i], d.Value().(*tensor.Dense).Clone()))
					}
				}
				out := mustCoord(t, gate, c, in)
				cost := G.Must(G.Sum(G.Must(G.Tanh(out))))
				wrt := in[1:min(len(in), 4)]
				grads, err := graphs.Grad(cost, wrt...)
				require.NoError(t, err, name)
				m := G.NewTapeMachine(d.Graph())
				defer m.Close()
				require.NoError(t, m.RunAll(), name)
				sum := make([]float64, n*k*p)
				for i, gr := range grads {
					if aliased && i > 0 && wrt[i] == wrt[0] {
						continue // the same node, the same gradient
					}
					for j, x := range gr.Value().Data().([]float64) {
						sum[j] += x
					}
				}
				return slices.Clone(out.Value().Data().([]float64)), sum
			}
			v0, g0 := run(false)
			v1, g1 := run(true)
			require.Equal(t, v0, v1, name)
			for j := range g0 {
				require.InDelta(t, g0[j], g1[j], 1e-13*math.Max(1, math.Abs(g0[j])), "%s: d's gradient %d", name, j)
			}
		}
	}
}

// TestCoordJetConcurrentMachines: machines over graphs of their own, each with every
// coordinate jet and its gradient, run at once (with and without ReuseOutput, new values
// bound between runs), and each gives the bits of one machine run alone; meant for -race.
func TestCoordJetConcurrentMachines(t *testing.T) {
	const n, k, p = 3, 4, 5
	run := func(reuse bool) []float64 {
		var all []float64
		for _, gate := range coordGates {
			for _, c := range coordChannels {
				for _, dt := range dtypes {
					in := coordInputs(dt, c, n, k, p, 1, -1, 0)
					var opts []ops.Option
					if reuse {
						opts = append(opts, ops.ReuseOutput())
					}
					out := mustCoord(t, gate, c, in, opts...)
					grads, err := graphs.Grad(G.Must(G.Sum(G.Must(G.Tanh(out)))), in...)
					require.NoError(t, err)
					m := G.NewTapeMachine(in[0].Graph())
					for run := range 2 {
						rng := rand.New(rand.NewPCG(uint64(run), 37))
						for _, x := range in {
							require.NoError(t, G.Let(x, dense(dt, x.Shape(), normals(rng, x.Shape().TotalSize()))))
						}
						require.NoError(t, m.RunAll())
						for _, x := range append(G.Nodes{out}, grads...) {
							all = append(all, floatsOf(x.Value())...)
						}
						m.Reset()
					}
					m.Close()
				}
			}
		}
		return all
	}
	want := run(false)
	require.Equal(t, want, run(true), "ReuseOutput")
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got := run(w%2 == 1); !slices.Equal(got, want) {
				t.Errorf("worker %d: the results differ from a run alone", w)
			}
		}()
	}
	wg.Wait()
}

func floatsOf(v G.Value) []float64 {
	switch d := v.Data().(type) {
	case []float64:
		return slices.Clone(d)
	case []float32:
		out := make([]float64, len(d))
		for i, x := range d {
			out[i] = float64(x)
		}
		return out
	}
	return nil
}
