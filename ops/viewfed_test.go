package ops

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet/internal/kernel"
)

// feeder makes an op's input of a given shape from learnable nodes through one of Gorgonia's
// shape ops, the way a user's graph reaches an op: params returns the learnables' shapes, and
// build the op's input from the learnable nodes.
type feeder struct {
	name   string
	params func(s tensor.Shape) []tensor.Shape
	build  func(s tensor.Shape, p []*G.Node) (*G.Node, error)
}

var feeders = []feeder{
	{ // a linear layer reshaped: A·B [1,size] → s
		name: "reshape",
		params: func(s tensor.Shape) []tensor.Shape {
			return []tensor.Shape{{1, 3}, {3, s.TotalSize()}}
		},
		build: func(s tensor.Shape, p []*G.Node) (*G.Node, error) {
			return G.Reshape(G.Must(G.Mul(p[0], p[1])), s.Clone())
		},
	},
	{ // a learnable of the reversed shape, every axis reversed
		name: "transpose",
		params: func(s tensor.Shape) []tensor.Shape {
			r := s.Clone()
			for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
				r[i], r[j] = r[j], r[i]
			}
			return []tensor.Shape{r}
		},
		build: func(_ tensor.Shape, p []*G.Node) (*G.Node, error) { return G.Transpose(p[0]) },
	},
	{ // the last axis of a wider learnable from its second element on (a strided view)
		name: "slice",
		params: func(s tensor.Shape) []tensor.Shape {
			w := s.Clone()
			w[len(w)-1]++
			return []tensor.Shape{w}
		},
		build: func(s tensor.Shape, p []*G.Node) (*G.Node, error) {
			sl := make([]tensor.Slice, len(s))
			sl[len(s)-1] = G.S(1, s[len(s)-1]+1)
			return G.Slice(p[0], sl...)
		},
	},
	{ // the first axis of a taller learnable from its second row on (a contiguous view)
		name: "slice0",
		params: func(s tensor.Shape) []tensor.Shape {
			w := s.Clone()
			w[0]++
			return []tensor.Shape{w}
		},
		build: func(s tensor.Shape, p []*G.Node) (*G.Node, error) {
			return G.Slice(p[0], G.S(1, s[0]+1))
		},
	},
}

// viewFedCase is an op whose every input is made by a feeder from learnables.
type viewFedCase struct {
	name   string
	inputs []tensor.Shape // the op's input shapes
	op     func(in []*G.Node) (*G.Node, error)
}

func viewFedCases() []viewFedCase {
	var cs []viewFedCase
	jetIn := []tensor.Shape{{tN, tK}, {tN, tK, tP}, {tN, tK}}
	for _, g := range kernel.Gates() {
		floats := jetFloats(g)
		for c := range kernel.NumChannels {
			in := jetIn[:2]
			if c.HasV() {
				in = jetIn
			}
			cs = append(cs, viewFedCase{name: g.Title + c.String(), inputs: in,
				op: func(in []*G.Node) (*G.Node, error) {
					var v *G.Node
					if c.HasV() {
						v = in[2]
					}
					return jetWith(c, g, in[0], in[1], v, floats)
				}})
		}
	}
	for _, axis := range []int{-1, 1} {
		cs = append(cs,
			viewFedCase{name: fmt.Sprintf("Softmax/axis=%d", axis), inputs: []tensor.Shape{{2, 3, 2}},
				op: func(in []*G.Node) (*G.Node, error) { return Softmax(in[0], axis) }},
			viewFedCase{name: fmt.Sprintf("LogSoftmax/axis=%d", axis), inputs: []tensor.Shape{{2, 3, 2}},
				op: func(in []*G.Node) (*G.Node, error) { return LogSoftmax(in[0], axis) }})
	}
	x := []tensor.Shape{{2, 3, 2}}
	for name, f := range map[string]func(*G.Node, ...Option) (*G.Node, error){"ReLU": ReLU, "GELU": GELU, "SiLU": SiLU} {
		cs = append(cs, viewFedCase{name: name, inputs: x, op: func(in []*G.Node) (*G.Node, error) { return f(in[0]) }})
	}
	xdy := []tensor.Shape{{2, 3, 2}, {2, 3, 2}}
	cs = append(cs,
		viewFedCase{name: "SoftmaxBackward", inputs: xdy,
			op: func(in []*G.Node) (*G.Node, error) { return SoftmaxBackward(in[0], in[1], 1) }},
		viewFedCase{name: "LogSoftmaxBackward", inputs: xdy,
			op: func(in []*G.Node) (*G.Node, error) { return LogSoftmaxBackward(in[0], in[1], -1) }},
		viewFedCase{name: "GELUBackward", inputs: xdy,
			op: func(in []*G.Node) (*G.Node, error) { return GELUBackward(in[0], in[1]) }})
	return cs
}

// build makes the case's graph with feeder f in front of every input, its learnables bound to
// the same pseudo-random values for every call, and costOf of the op's output.
// With flat, the op's output is reshaped to a vector before the cost, so that the output's own
// gradient passes through a Reshape too.
func (c viewFedCase) build(t *testing.T, f feeder, flat bool, dt tensor.Dtype) (*G.ExprGraph, G.Nodes, *G.Node) {
	t.Helper()
	g := G.NewGraph()
	rng := rand.New(rand.NewSource(23))
	var learn G.Nodes
	in := make([]*G.Node, len(c.inputs))
	for i, s := range c.inputs {
		var ps []*G.Node
		for j, ps0 := range f.params(s) {
			v := randInput(rng, fmt.Sprintf("p%d_%d", i, j), ps0, -1, 1)
			ps = append(ps, G.NewTensor(g, dt, len(ps0), G.WithShape(ps0...), G.WithName(v.name),
				G.WithValue(toDense(dt, ps0, v.vals))))
		}
		learn = append(learn, ps...)
		n, err := f.build(s, ps)
		require.NoError(t, err)
		require.True(t, n.Shape().Eq(s), "%s makes %v, want %v", f.name, n.Shape(), s)
		in[i] = n
	}
	out, err := c.op(in)
	require.NoError(t, err)
	if flat {
		out, err = G.Reshape(out, tensor.Shape{out.Shape().TotalSize()})
		require.NoError(t, err)
	}
	cost, err := costOf(g, out)
	require.NoError(t, err)
	return g, learn, cost
}

// TestViewFedOps runs every jet channel of every gate, Softmax and LogSoftmax (and the
// activations and backward ops) with their inputs
// made by Gorgonia's Reshape, Transpose and Slice (and their output reshaped or not), on a TapeMachine and on three new
// LispMachines in a row over one graph (as a training loop does, zeroing the gradients between
// steps as a solver does): every run succeeds, and every LispMachine's gradients are the
// TapeMachine's.
func TestViewFedOps(t *testing.T) {
	for _, c := range viewFedCases() {
		for _, f := range feeders {
			for _, flat := range []bool{false, true} {
				for _, dt := range dtypes {
					t.Run(fmt.Sprintf("%s/%s/flat=%v/%v", c.name, f.name, flat, dt), func(t *testing.T) {
						g, learn, cost := c.build(t, f, flat, dt)
						_, err := G.Grad(cost, learn...)
						require.NoError(t, err)
						vm := G.NewTapeMachine(g, G.BindDualValues(learn...))
						defer vm.Close()
						require.NoError(t, vm.RunAll())
						want := make([][]float64, len(learn))
						for i, n := range learn {
							gv, err := n.Grad()
							require.NoError(t, err)
							want[i] = floats(t, gv)
						}

						g, learn, cost = c.build(t, f, flat, dt)
						for run := range 3 {
							m := G.NewLispMachine(g)
							require.NoError(t, m.RunAll(), "LispMachine run %d", run)
							m.Close()
							for i, n := range learn {
								gv, err := n.Grad()
								require.NoError(t, err)
								requireClose(t, want[i], floats(t, gv), roundoffTol(dt), "run %d: gradient of %s", run, n.Name())
								gv.(tensor.Tensor).Zero()
							}
						}
					})
				}
			}
		}
	}
}
