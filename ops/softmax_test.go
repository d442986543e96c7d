package ops

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/backward"
	"github.com/gatejet/gatejet/internal/axisref"
	"github.com/gatejet/gatejet/internal/dispatch"
)

// softmaxShapes are the shapes of ranks 1 to 4 whose every axis the tests run.
var softmaxShapes = []tensor.Shape{{5}, {3, 4}, {2, 3, 5}, {2, 3, 2, 3}}

// refSoftmax is the float64 reference of the forward map (axisref's).
func refSoftmax(log bool, x []float64, shape tensor.Shape, axis int) []float64 {
	if log {
		return axisref.LogSoftmax(x, shape, axis)
	}
	return axisref.Softmax(x, shape, axis)
}

// refSoftmaxGrad is the float64 reference gradient of costOf (Σ W⊙y + ½Σ y²) with respect to
// x: dy = W + y, then dx from the Jacobian of the map, line by line.
func refSoftmaxGrad(log bool, x []float64, shape tensor.Shape, axis int) []float64 {
	y := refSoftmax(log, x, shape, axis)
	w := weights(len(x))
	dx := make([]float64, len(x))
	for _, ln := range axisref.Lines(shape, axis) {
		var s float64
		for _, i := range ln {
			dy := w[i] + y[i]
			if log {
				s += dy
			} else {
				s += y[i] * dy
			}
		}
		for _, i := range ln {
			dy := w[i] + y[i]
			if log {
				dx[i] = dy - math.Exp(y[i])*s
			} else {
				dx[i] = y[i] * (dy - s)
			}
		}
	}
	return dx
}

func softmaxCase(log bool, shape tensor.Shape, axis int, seed int64) graphCase {
	rng := rand.New(rand.NewSource(seed))
	x := randInput(rng, "x", shape, -3, 3)
	build, name := Softmax, "Softmax"
	if log {
		build, name = LogSoftmax, "LogSoftmax"
	}
	return graphCase{name: fmt.Sprintf("%s%v/axis%d", name, shape, axis), inputs: []input{x},
		build: func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) { return build(in[0], axis) }}
}

// TestSoftmaxForwardAndGradientEveryAxis: forward and first-order gradient on every axis
// (positive and negative) of ranks 1 to 4, both dtypes, Tape (gorgonia.Grad, SymDiff) and
// Lisp (DoDiff) machines, against the float64 references.
func TestSoftmaxForwardAndGradientEveryAxis(t *testing.T) {
	seed := int64(300)
	for _, log := range []bool{false, true} {
		for _, sh := range softmaxShapes {
			for axis := -len(sh); axis < len(sh); axis++ {
				seed++
				c := softmaxCase(log, sh, axis, seed)
				pos := axis
				if pos < 0 {
					pos += len(sh)
				}
				wantY := refSoftmax(log, c.inputs[0].vals, sh, pos)
				wantDX := refSoftmaxGrad(log, c.inputs[0].vals, sh, pos)
				for _, dt := range dtypes {
					tol := 1e-13
					if dt == tensor.Float32 {
						tol = 1e-6
					}
					for _, m := range machines {
						requireClose(t, wantY, forwardValue(t, c, dt, m), tol, "%s %v %v forward", c.name, dt, m)
						_, grads := analyticGrads(t, c, dt, m)
						requireClose(t, wantDX, grads[0], 10*tol, "%s %v %v gradient", c.name, dt, m)
					}
				}
			}
		}
	}
}

// TestSoftmaxGradientFiniteDifferences: first-order gradients on both machines against
// central differences of the float64 graph (checkGradients).
func TestSoftmaxGradientFiniteDifferences(t *testing.T) {
	for _, log := range []bool{false, true} {
		for i, axis := range []int{0, 1, -1} {
			checkGradients(t, softmaxCase(log, tensor.Shape{2, 3, 4}, axis, int64(400+i+3*b2i(log))))
		}
	}
}

// TestSoftmaxLargeLogits: logits of ±1e4 (exp overflows without the max subtracted) give the
// reference values on both machines and dtypes.
func TestSoftmaxLargeLogits(t *testing.T) {
	for _, log := range []bool{false, true} {
		c := softmaxCase(log, tensor.Shape{2, 3}, 1, 7)
		c.inputs[0].vals = []float64{1e4, -1e4, 0, 9999, 1e4, -5}
		want := refSoftmax(log, c.inputs[0].vals, tensor.Shape{2, 3}, 1)
		for _, dt := range dtypes {
			for _, m := range machines {
				got := forwardValue(t, c, dt, m)
				requireClose(t, want, got, 1e-6, "%s %v %v", c.name, dt, m)
				for _, v := range got {
					require.False(t, math.IsNaN(v) || math.IsInf(v, 0), "%s %v %v: %v", c.name, dt, m, got)
				}
			}
		}
	}
}

// TestSoftmaxRunsThroughCudaops: the forward runs through dispatch.Run (its path is recorded),
// and the Lisp machine's DoDiff too.
func TestSoftmaxRunsThroughCudaops(t *testing.T) {
	for _, log := range []bool{false, true} {
		c := softmaxCase(log, tensor.Shape{3, 4}, 1, 9)
		g, _, out := buildCase(t, c, tensor.Float64)
		_, err := costOf(g, out)
		require.NoError(t, err)
		vm := G.NewLispMachine(g)
		require.NoError(t, vm.RunAll())
		vm.Close()
		r := out.Op().(dispatch.PathReporter)
		p, ok := r.LastPath()
		require.True(t, ok)
		require.Equal(t, dispatch.PathCPU, p)
		p, ok = r.LastDiffPath()
		require.True(t, ok, "DoDiff ran")
		require.Equal(t, dispatch.PathCPU, p)
	}
}

// TestSoftmaxConstructorErrors: bad arguments are typed errors naming the argument.
func TestSoftmaxConstructorErrors(t *testing.T) {
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 3), G.WithName("x"))
	xi := G.NewMatrix(g, tensor.Int, G.WithShape(2, 3), G.WithName("xi"))
	s := G.NewScalar(g, tensor.Float64, G.WithName("s"))
	for _, f := range []func(*G.Node, int, ...Option) (*G.Node, error){Softmax, LogSoftmax} {
		for _, c := range []struct {
			x    *G.Node
			axis int
			opts []Option
			want error
			arg  string
		}{
			{nil, 0, nil, gatejet.ErrParam, "x"},
			{x, 2, nil, gatejet.ErrAxis, "axis"},
			{x, -3, nil, gatejet.ErrAxis, "axis"},
			{xi, 0, nil, gatejet.ErrDType, "x"},
			{s, 0, nil, gatejet.ErrRank, "x"},
			{x, 0, []Option{nil}, gatejet.ErrParam, "opts"},
		} {
			n, err := f(c.x, c.axis, c.opts...)
			require.Nil(t, n)
			require.ErrorIs(t, err, c.want)
			var ge *gatejet.Error
			require.True(t, errors.As(err, &ge))
			require.Equal(t, c.arg, ge.Arg, "%v", err)
		}
	}
}

// The softmax-family backward along an axis (SoftmaxBackward, LogSoftmaxBackward) and its
// double backward.

var axisShape = tensor.Shape{2, 3, 4}

// axisCase is SoftmaxBackward or LogSoftmaxBackward along axis as a graphCase; y is a random
// positive tensor (a free variable, as the double backward treats it) or, for log-softmax, a
// random negative one.
func axisCase(log bool, axis int) graphCase {
	rng := rand.New(rand.NewSource(int64(100 + axis + 7*b2i(log))))
	y := randInput(rng, "y", axisShape, 0.05, 0.6)
	if log {
		y = randInput(rng, "y", axisShape, -3, -0.2)
	}
	dy := randInput(rng, "dy", axisShape, -1, 1)
	name := fmt.Sprintf("SoftmaxBackward/axis%d", axis)
	build := SoftmaxBackward
	if log {
		name = fmt.Sprintf("LogSoftmaxBackward/axis%d", axis)
		build = LogSoftmaxBackward
	}
	return graphCase{name: name, inputs: []input{y, dy}, build: func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
		return build(in[0], in[1], axis)
	}}
}

func axisCases() []graphCase {
	var cs []graphCase
	for _, log := range []bool{false, true} {
		for _, axis := range []int{0, 1, -1} {
			cs = append(cs, axisCase(log, axis))
		}
	}
	return cs
}

func kernelAxis[T gatejet.Float](t *testing.T, log bool, axis int, ins []input) []float64 {
	dx := make([]T, axisShape.TotalSize())
	f := backward.SoftmaxBackward[T]
	if log {
		f = backward.LogSoftmaxBackward[T]
	}
	require.NoError(t, f(dx, typed[T](ins[0].vals), typed[T](ins[1].vals), axisShape, axis))
	return widen(dx)
}

func TestAxisBackwardMatchesKernels(t *testing.T) {
	for _, log := range []bool{false, true} {
		for _, axis := range []int{0, 1, 2, -1, -3} {
			c := axisCase(log, axis)
			requireKernelValue(t, c,
				func(t *testing.T) []float64 { return kernelAxis[float64](t, log, axis, c.inputs) },
				func(t *testing.T) []float64 { return kernelAxis[float32](t, log, axis, c.inputs) })
		}
	}
}

// TestAxisDoubleBackward checks the gradients of SoftmaxBackward and LogSoftmaxBackward with
// respect to both y and dy (the double backward) against finite differences.
func TestAxisDoubleBackward(t *testing.T) {
	for _, c := range axisCases() {
		t.Run(c.name, func(t *testing.T) { checkGradients(t, c) })
	}
}

func TestAxisHashSeparatesAxes(t *testing.T) {
	g := G.NewGraph()
	y := G.NewTensor(g, tensor.Float64, 2, G.WithShape(3, 3), G.WithName("y"))
	dy := G.NewTensor(g, tensor.Float64, 2, G.WithShape(3, 3), G.WithName("dy"))
	a0, err := SoftmaxBackward(y, dy, 0)
	require.NoError(t, err)
	a1, err := SoftmaxBackward(y, dy, 1)
	require.NoError(t, err)
	am1, err := SoftmaxBackward(y, dy, -1)
	require.NoError(t, err)
	l1, err := LogSoftmaxBackward(y, dy, 1)
	require.NoError(t, err)
	require.NotSame(t, a0, a1)
	require.Same(t, a1, am1, "axis -1 is axis 1 of a rank-2 tensor")
	require.NotSame(t, a1, l1)
	require.NotEqual(t, a0.Op().Hashcode(), a1.Op().Hashcode())
	require.NotEqual(t, a1.Op().Hashcode(), l1.Op().Hashcode())
}

// TestSoftmaxBackwardMatchesGorgonia: the gradient Gorgonia's own SoftMax computes for
// Σ W⊙softmax(x) is SoftmaxBackward(softmax(x), W); likewise for LogSoftMax.
func TestSoftmaxBackwardMatchesGorgonia(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	shape := tensor.Shape{3, 5}
	x := randInput(rng, "x", shape, -2, 2)
	w := randInput(rng, "w", shape, -1, 1)
	for _, log := range []bool{false, true} {
		for _, dt := range dtypes {
			t.Run(fmt.Sprintf("log=%v/%v", log, dt), func(t *testing.T) {
				// Gorgonia's route.
				g := G.NewGraph()
				xn := G.NewMatrix(g, dt, G.WithShape(shape...), G.WithName("x"), G.WithValue(toDense(dt, shape, x.vals)))
				wn := G.NewMatrix(g, dt, G.WithShape(shape...), G.WithName("w"), G.WithValue(toDense(dt, shape, w.vals)))
				var y *G.Node
				var err error
				if log {
					y, err = G.LogSoftMax(xn, 1)
				} else {
					y, err = G.SoftMax(xn, 1)
				}
				require.NoError(t, err)
				cost := G.Must(G.Sum(G.Must(G.HadamardProd(y, wn))))
				_, err = G.Grad(cost, xn)
				require.NoError(t, err)
				var yv G.Value
				G.Read(y, &yv)
				vm := G.NewTapeMachine(g, G.BindDualValues(xn))
				require.NoError(t, vm.RunAll())
				gx, err := xn.Grad()
				require.NoError(t, err)
				want := floats(t, gx)
				ys := floats(t, yv)
				vm.Close()

				// Ours, from the saved output.
				c := graphCase{name: "ours", inputs: []input{{"y", shape, ys}, {"dy", shape, w.vals}},
					build: func(g *G.ExprGraph, in []*G.Node) (*G.Node, error) {
						if log {
							return LogSoftmaxBackward(in[0], in[1], 1)
						}
						return SoftmaxBackward(in[0], in[1], 1)
					}}
				for _, m := range machines {
					requireClose(t, want, forwardValue(t, c, dt, m), roundoffTol(dt), "%v", m)
				}
			})
		}
	}
}
