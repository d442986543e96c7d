package ops_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet/graphs"
	"github.com/gatejet/gatejet/ops"
)

// softmaxGraph builds c = Σ W⊙f(x) + ½Σ f(x)² for f = Softmax or LogSoftmax along axis, on
// a float64 input x with values in [-2, 2].
func softmaxGraph(t *testing.T, log bool, shape tensor.Shape, axis int, dt tensor.Dtype) (x, c *G.Node) {
	t.Helper()
	g := G.NewGraph()
	n := shape.TotalSize()
	xs, ws := make([]float64, n), make([]float64, n)
	for i := range xs {
		xs[i] = 2 * math.Sin(float64(7*i+3))
		ws[i] = math.Cos(float64(5*i + 1))
	}
	x = G.NewTensor(g, dt, len(shape), G.WithShape(shape...), G.WithName("x"), G.WithValue(dense(dt, shape, xs)))
	w := G.NewTensor(g, dt, len(shape), G.WithShape(shape...), G.WithName("W"), G.WithValue(dense(dt, shape, ws)))
	f := ops.Softmax
	if log {
		f = ops.LogSoftmax
	}
	y, err := f(x, axis)
	require.NoError(t, err)
	half := G.NewConstant(0.5)
	if dt == tensor.Float32 {
		half = G.NewConstant(float32(0.5))
	}
	c = G.Must(G.Add(G.Must(G.Sum(G.Must(G.HadamardProd(w, y)))), G.Must(G.Mul(G.Must(G.Sum(G.Must(G.Square(y)))), half))))
	return x, c
}

func dense(dt tensor.Dtype, shape tensor.Shape, v []float64) *tensor.Dense {
	if dt == tensor.Float32 {
		f := make([]float32, len(v))
		for i, x := range v {
			f[i] = float32(x)
		}
		return tensor.New(tensor.WithShape(shape.Clone()...), tensor.WithBacking(f))
	}
	return tensor.New(tensor.WithShape(shape.Clone()...), tensor.WithBacking(append([]float64(nil), v...)))
}

func valueOf(t *testing.T, n *G.Node) []float64 {
	t.Helper()
	switch v := n.Value().(type) {
	case *tensor.Dense:
		return append([]float64(nil), v.Float64s()...)
	case *G.F64:
		return []float64{float64(*v)}
	}
	t.Fatalf("unexpected value %T", n.Value())
	return nil
}

// TestSoftmaxDoubleBackward: the gradient penalty p = Σ V⊙∇c (∇c from graphs.Grad through
// Softmax's SymDiff, i.e. SoftmaxBackward of the output) differentiated again with graphs.Grad
// agrees on a TapeMachine with central differences of p, on every axis of ranks 1 to 4.
func TestSoftmaxDoubleBackward(t *testing.T) {
	for _, log := range []bool{false, true} {
		for _, sh := range []tensor.Shape{{5}, {3, 4}, {2, 3, 4}, {2, 2, 3, 2}} {
			for axis := -1; axis < len(sh); axis++ {
				name := fmt.Sprintf("log=%v/%v/axis%d", log, sh, axis)
				x, c := softmaxGraph(t, log, sh, axis, tensor.Float64)
				g := x.Graph()
				gc, err := graphs.Grad(c, x)
				require.NoError(t, err, name)
				vs := make([]float64, sh.TotalSize())
				for i := range vs {
					vs[i] = math.Sin(float64(3*i + 2))
				}
				v := G.NewTensor(g, tensor.Float64, len(sh), G.WithShape(sh...), G.WithName("V"), G.WithValue(dense(tensor.Float64, sh, vs)))
				p := G.Must(G.Sum(G.Must(G.HadamardProd(v, gc[0]))))
				gp, err := graphs.Grad(p, x)
				require.NoError(t, err, name)

				m := G.NewTapeMachine(g)
				run := func() {
					require.NoError(t, m.RunAll(), name)
					m.Reset()
				}
				run()
				got := valueOf(t, gp[0])
				xs := x.Value().(*tensor.Dense).Float64s()
				const h = 1e-5
				for i := range xs {
					x0 := xs[i]
					xs[i] = x0 + h
					run()
					fp := valueOf(t, p)[0]
					xs[i] = x0 - h
					run()
					fm := valueOf(t, p)[0]
					xs[i] = x0
					num := (fp - fm) / (2 * h)
					require.InDelta(t, num, got[i], 1e-7*(1+math.Abs(num)), "%s: ∂p/∂x[%d]", name, i)
				}
				m.Close()
			}
		}
	}
}

// TestSoftmaxGradCheck: graphs.GradCheck on both machines and dtypes, along a middle and the
// last axis.
func TestSoftmaxGradCheck(t *testing.T) {
	for _, log := range []bool{false, true} {
		for _, axis := range []int{1, -1} {
			for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
				for _, m := range []graphs.Machine{graphs.Tape, graphs.Lisp} {
					x, c := softmaxGraph(t, log, tensor.Shape{2, 3, 4}, axis, dt)
					rep, err := graphs.GradCheck(c, G.Nodes{x}, graphs.WithMachine(m))
					require.NoError(t, err, "log=%v axis %d %v %v", log, axis, dt, m)
					require.True(t, rep.OK(), "%v", rep)
				}
			}
		}
	}
}
