package ops

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/backward"
)

// activationCase is f(x), f's backward (x, dy) or — through the backward's gradient — the
// double backward, as a graphCase.
func activationCase(a activation, backwardStage bool) graphCase {
	rng := rand.New(rand.NewSource(int64(200 + 2*int(a) + b2i(backwardStage))))
	shape := tensor.Shape{3, 4}
	x := randInput(rng, "x", shape, -3, 3)
	if a == actReLU {
		x = awayFromZero(x, 0.1)
	}
	ins := []input{x}
	name := actNames[a]
	if backwardStage {
		ins = append(ins, randInput(rng, "dy", shape, -1, 1))
		name += "Backward"
	}
	return graphCase{name: name, inputs: ins, build: func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		if backwardStage {
			return []func(x, dy *G.Node, opts ...Option) (*G.Node, error){ReLUBackward, GELUBackward, SiLUBackward}[a](in[0], in[1])
		}
		return []func(x *G.Node, opts ...Option) (*G.Node, error){ReLU, GELU, SiLU}[a](in[0])
	}}
}

func kernelActivation[T gatejet.Float](t *testing.T, a activation, backwardStage bool, ins []input) []float64 {
	x := typed[T](ins[0].vals)
	out := make([]T, len(x))
	if backwardStage {
		f := []func(dx, x, dy []T) error{backward.ReLUBackward[T], backward.GELUBackward[T], backward.SiLUBackward[T]}[a]
		require.NoError(t, f(out, x, typed[T](ins[1].vals)))
	} else {
		f := []func(y, x []T) error{backward.ReLU[T], backward.GELU[T], backward.SiLU[T]}[a]
		require.NoError(t, f(out, x))
	}
	return widen(out)
}

func TestActivationsMatchKernels(t *testing.T) {
	for a := actReLU; a < numActivations; a++ {
		for _, bw := range []bool{false, true} {
			c := activationCase(a, bw)
			requireKernelValue(t, c,
				func(t *testing.T) []float64 { return kernelActivation[float64](t, a, bw, c.inputs) },
				func(t *testing.T) []float64 { return kernelActivation[float32](t, a, bw, c.inputs) })
		}
	}
}

// TestActivationGradients checks the gradients of ReLU, GELU and SiLU (through their backward
// ops) and of their backward ops (the double backward) against finite differences.
func TestActivationGradients(t *testing.T) {
	for a := actReLU; a < numActivations; a++ {
		for _, bw := range []bool{false, true} {
			c := activationCase(a, bw)
			t.Run(c.name, func(t *testing.T) { checkGradients(t, c) })
		}
	}
}

// TestReLUMatchesRectify: ops.ReLU and its gradient agree with Gorgonia's Rectify.
func TestReLUMatchesRectify(t *testing.T) {
	c := activationCase(actReLU, false)
	rect := graphCase{name: "Rectify", inputs: c.inputs, build: func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		return G.Rectify(in[0])
	}}
	require.Equal(t, forwardValue(t, rect, tensor.Float64, tape), forwardValue(t, c, tensor.Float64, tape))
	_, want := analyticGrads(t, rect, tensor.Float64, tape)
	_, got := analyticGrads(t, c, tensor.Float64, tape)
	requireClose(t, want[0], got[0], 1e-14, "ReLU gradient")
}

// TestGELUGradientMatchesGorgoniaExpression: the gradient of ops.GELU equals Gorgonia's
// autodiff of the same tanh-form expression built from its own primitives.
func TestGELUGradientMatchesGorgoniaExpression(t *testing.T) {
	c := activationCase(actGELU, false)
	expr := graphCase{name: "expr", inputs: c.inputs, build: func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) {
		k := G.NewConstant(math.Sqrt(2 / math.Pi))
		x3 := G.Must(G.Cube(x[0]))
		u := G.Must(G.Mul(G.Must(G.Add(x[0], G.Must(G.Mul(x3, G.NewConstant(0.044715))))), k))
		return G.Mul(G.Must(G.HadamardProd(x[0], G.Must(G.Add(G.Must(G.Tanh(u)), G.NewConstant(1.0))))), G.NewConstant(0.5))
	}}
	requireClose(t, forwardValue(t, expr, tensor.Float64, tape), forwardValue(t, c, tensor.Float64, tape), 1e-14, "GELU value")
	_, want := analyticGrads(t, expr, tensor.Float64, tape)
	for _, m := range machines {
		_, got := analyticGrads(t, c, tensor.Float64, m)
		requireClose(t, want[0], got[0], 1e-12, "GELU gradient %v", m)
	}
}

// TestBackwardGradientsMatchKernels: with the linear cost Σ W⊙out the upstream gradient is
// exactly W, so the gradients from gorgonia.Grad (TapeMachine) and DoDiff (LispMachine) must be
// exactly the double-backward kernels' (and, for the activations' forward maps, their
// backward kernels').
func TestBackwardGradientsMatchKernels(t *testing.T) {
	type kcase struct {
		c    graphCase
		want func(w []float64, dt tensor.Dtype) [][]float64
	}
	var cases []kcase
	for _, log := range []bool{false, true} {
		for _, axis := range []int{0, -1} {
			c := axisCase(log, axis)
			cases = append(cases, kcase{c, func(w []float64, dt tensor.Dtype) [][]float64 {
				if dt == tensor.Float64 {
					return axisGradKernel[float64](t, log, axis, c.inputs, w)
				}
				return axisGradKernel[float32](t, log, axis, c.inputs, w)
			}})
		}
	}
	for a := actReLU; a < numActivations; a++ {
		for _, bw := range []bool{false, true} {
			c := activationCase(a, bw)
			cases = append(cases, kcase{c, func(w []float64, dt tensor.Dtype) [][]float64 {
				if dt == tensor.Float64 {
					return actGradKernel[float64](t, a, bw, c.inputs, w)
				}
				return actGradKernel[float32](t, a, bw, c.inputs, w)
			}})
		}
	}
	for _, kc := range cases {
		w := weights(kc.c.inputs[0].shape.TotalSize())
		for _, dt := range dtypes {
			want := kc.want(w, dt)
			require.Equal(t, want, linearGrads(t, kc.c, dt, w), "%s %v tape", kc.c.name, dt)
			require.Equal(t, want, linearGradsLisp(t, kc.c, dt, w), "%s %v lisp", kc.c.name, dt)
		}
	}
}

func axisGradKernel[T gatejet.Float](t *testing.T, log bool, axis int, ins []input, w []float64) [][]float64 {
	n := axisShape.TotalSize()
	gy, gdy := make([]T, n), make([]T, n)
	f := backward.SoftmaxBackwardGrad[T]
	if log {
		f = backward.LogSoftmaxBackwardGrad[T]
	}
	require.NoError(t, f(gy, gdy, typed[T](ins[0].vals), typed[T](ins[1].vals), typed[T](w), axisShape, axis))
	return [][]float64{widen(gy), widen(gdy)}
}

func actGradKernel[T gatejet.Float](t *testing.T, a activation, bw bool, ins []input, w []float64) [][]float64 {
	x := typed[T](ins[0].vals)
	if !bw {
		dx := make([]T, len(x))
		f := []func(dx, x, dy []T) error{backward.ReLUBackward[T], backward.GELUBackward[T], backward.SiLUBackward[T]}[a]
		require.NoError(t, f(dx, x, typed[T](w)))
		return [][]float64{widen(dx)}
	}
	gx, gdy := make([]T, len(x)), make([]T, len(x))
	f := []func(gx, gdy, x, dy, g []T) error{backward.ReLUBackwardGrad[T], backward.GELUBackwardGrad[T], backward.SiLUBackwardGrad[T]}[a]
	require.NoError(t, f(gx, gdy, x, typed[T](ins[1].vals), typed[T](w)))
	return [][]float64{widen(gx), widen(gdy)}
}
