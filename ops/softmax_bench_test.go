package ops_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet/ops"
)

// BenchmarkSoftmaxOp: ops.Softmax and ops.LogSoftmax on [4096 × 1024] along each axis, alone
// (tape, tape-reuse, prealloc as in benchOp).
func BenchmarkSoftmaxOp(b *testing.B) {
	shape := []int{4096, 1024}
	for _, axis := range []int{1, 0} {
		for _, dt := range dtypes {
			x := randDense(rand.New(rand.NewPCG(5, uint64(axis))), dt, 3, shape...)
			for _, k := range []struct {
				name string
				f    func(x *G.Node, axis int, opts ...ops.Option) (*G.Node, error)
			}{{"Softmax", ops.Softmax}, {"LogSoftmax", ops.LogSoftmax}} {
				benchOp(b, fmt.Sprintf("%s/%s/4096x1024/axis=%d", k.name, dtName(dt), axis), func(g *G.ExprGraph, o ...ops.Option) (*G.Node, []*G.Node, error) {
					xn := G.NewTensor(g, dt, 2, G.WithShape(shape...), G.WithName("x"))
					out, err := k.f(xn, axis, o...)
					return out, []*G.Node{xn}, err
				}, []*tensor.Dense{x})
			}
		}
	}
}

// softmaxStep builds the graph of one training step through a softmax along axis: the
// forward y = softmax(x) of an input x bound to xv, and the gradient dx of ⟨dy, y⟩ for an
// upstream gradient dy bound to dyv, by gorgonia.Backpropagate (reverse mode from a given
// output gradient, as gorgonia.Grad does after the ops above the softmax): nothing else is
// in the graph. gatejet selects ops.Softmax, else gorgonia.SoftMax. It returns y and dx.
func softmaxStep(g *G.ExprGraph, gatejet bool, axis int, xv, dyv *tensor.Dense, opts ...ops.Option) (y, dx *G.Node, err error) {
	shape := xv.Shape()
	x := G.NewTensor(g, xv.Dtype(), len(shape), G.WithShape(shape...), G.WithName("x"), G.WithValue(xv))
	dy := G.NewTensor(g, dyv.Dtype(), len(shape), G.WithShape(shape...), G.WithName("dy"), G.WithValue(dyv))
	if gatejet {
		y, err = ops.Softmax(x, axis, opts...)
	} else {
		y, err = G.SoftMax(x, axis)
	}
	if err != nil {
		return nil, nil, err
	}
	gs, err := G.Backpropagate(G.Nodes{y}, G.Nodes{dy}, G.Nodes{x})
	if err != nil {
		return nil, nil, err
	}
	return y, gs[0], nil
}

// BenchmarkSoftmaxStep: a TapeMachine step (forward and gradient, softmaxStep) on
// [4096 × 1024] float64 through ops.Softmax and through gorgonia.SoftMax along the last axis,
// through ops.Softmax built with ReuseOutput (no fresh output per run), and through
// ops.Softmax along the first axis.
func BenchmarkSoftmaxStep(b *testing.B) {
	shape := []int{4096, 1024}
	rng := rand.New(rand.NewPCG(6, 7))
	xv, dyv := randDense(rng, tensor.Float64, 3, shape...), randDense(rng, tensor.Float64, 1, shape...)
	for _, c := range []struct {
		name    string
		gatejet bool
		axis    int
		opts    []ops.Option
	}{
		{"ops.Softmax/axis=-1", true, -1, nil}, {"gorgonia.SoftMax/axis=-1", false, 1, nil},
		{"ops.Softmax-reuse/axis=-1", true, -1, []ops.Option{ops.ReuseOutput()}}, {"ops.Softmax/axis=0", true, 0, nil},
	} {
		b.Run(c.name, func(b *testing.B) {
			g := G.NewGraph()
			if _, _, err := softmaxStep(g, c.gatejet, c.axis, xv, dyv, c.opts...); err != nil {
				b.Fatal(err)
			}
			benchTape(b, g, 4, int64(xv.Shape().TotalSize())*8)
		})
	}
}

// TestSoftmaxStepAgrees: the two graphs of BenchmarkSoftmaxStep compute the same y and dx.
func TestSoftmaxStepAgrees(t *testing.T) {
	shape := []int{64, 33}
	rng := rand.New(rand.NewPCG(8, 9))
	xv, dyv := randDense(rng, tensor.Float64, 3, shape...), randDense(rng, tensor.Float64, 1, shape...)
	var vals [2][2][]float64
	for i, gatejet := range []bool{true, false} {
		g := G.NewGraph()
		y, dx, err := softmaxStep(g, gatejet, 1, xv, dyv)
		if err != nil {
			t.Fatal(err)
		}
		m := G.NewTapeMachine(g)
		if err := m.RunAll(); err != nil {
			t.Fatal(err)
		}
		vals[i] = [2][]float64{append([]float64(nil), y.Value().Data().([]float64)...), append([]float64(nil), dx.Value().Data().([]float64)...)}
		m.Close()
	}
	for k := range 2 {
		for i, w := range vals[1][k] {
			if d := math.Abs(vals[0][k][i] - w); d > 1e-12*(1+math.Abs(w)) {
				t.Fatalf("output %d [%d]: gatejet %v, gorgonia %v", k, i, vals[0][k][i], w)
			}
		}
	}
}
