package graphs

import (
	"errors"
	"math"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/testkit"
	"github.com/gatejet/gatejet/ops"
)

// evalNodes runs the subgraph of the given nodes on a TapeMachine and returns their values
// as float64 slices.
func evalNodes(t *testing.T, ns ...*G.Node) [][]float64 {
	t.Helper()
	m := G.NewTapeMachine(ns[0].Graph().SubgraphRoots(ns...))
	defer m.Close()
	require.NoError(t, m.RunAll())
	out := make([][]float64, len(ns))
	for i, n := range ns {
		v, ok := floatsOf(n.Value())
		require.True(t, ok, "value of %v", n)
		out[i] = v
	}
	return out
}

// fdGrad is the central finite difference of the scalar f with respect to the input x
// (whose bound value it perturbs and restores).
func fdGrad(t *testing.T, f, x *G.Node, h float64) []float64 {
	t.Helper()
	J := testkit.FDJacobian(x.Value().(*tensor.Dense).Float64s(), func() []float64 { return evalNodes(t, f)[0] }, h)
	out := make([]float64, len(J))
	for i, row := range J {
		out[i] = row[0]
	}
	return out
}

func requireClose(t *testing.T, want, got []float64, tol float64, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range want {
		if d := math.Abs(want[i] - got[i]); d > tol*(1+math.Abs(want[i])) {
			t.Fatalf("%s[%d]: want %.12g, got %.12g (|diff| %.3g)", what, i, want[i], got[i], d)
		}
	}
}

// mixedCost builds c = Σ tanh(W·x)² + Σ x³/3 with Gorgonia's own ops; x is the input to
// differentiate.
func mixedCost(t *testing.T) (g *G.ExprGraph, x, c *G.Node) {
	t.Helper()
	g = G.NewGraph()
	w := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 4), G.WithName("W"),
		G.WithValue(tensor.New(tensor.WithShape(3, 4), tensor.WithBacking([]float64{
			0.3, -0.2, 0.5, 0.1, -0.4, 0.7, 0.2, -0.3, 0.6, 0.1, -0.5, 0.4}))))
	x = G.NewVector(g, tensor.Float64, G.WithShape(4), G.WithName("x"),
		G.WithValue(tensor.New(tensor.WithShape(4), tensor.WithBacking([]float64{0.9, -0.4, 0.3, 0.7}))))
	u := G.Must(G.Tanh(G.Must(G.Mul(w, x))))
	cube := G.Must(G.Div(G.Must(G.Mul(x, G.Must(G.Square(x)))), G.NewConstant(3.0)))
	c = G.Must(G.Add(G.Must(G.Sum(G.Must(G.Square(u)))), G.Must(G.Sum(cube))))
	return g, x, c
}

// TestGradOfGradient: a gradient penalty p = Σ (∇c)², differentiated again with Grad, agrees
// with central differences of p; gorgonia.Grad, asked the same, would return ∇c.
func TestGradOfGradient(t *testing.T) {
	_, x, c := mixedCost(t)
	gc, err := Grad(c, x)
	require.NoError(t, err)
	p := G.Must(G.Sum(G.Must(G.Square(gc[0]))))
	gp, err := Grad(p, x)
	require.NoError(t, err)

	// One machine each: a TapeMachine may overwrite an intermediate value (∇c, which p reads)
	// in place before the run ends.
	vals := [][]float64{evalNodes(t, gc[0])[0], evalNodes(t, gp[0])[0]}
	requireClose(t, fdGrad(t, c, x, 1e-6), vals[0], 1e-7, "∇c")
	requireClose(t, fdGrad(t, p, x, 1e-6), vals[1], 1e-7, "∇p")
	require.NotEqual(t, vals[0], vals[1], "the second gradient is the first one again")

	// Called twice on the same cost, Grad builds the same gradient again.
	gp2, err := Grad(p, x)
	require.NoError(t, err)
	requireClose(t, vals[1], evalNodes(t, gp2[0])[0], 0, "second call")
}

// TestGradHessianVectorProduct: Grad of ⟨∇c, v⟩ is the Hessian-vector product H·v, checked
// against central differences of ∇c along v.
func TestGradHessianVectorProduct(t *testing.T) {
	g, x, c := mixedCost(t)
	v := G.NewVector(g, tensor.Float64, G.WithShape(4), G.WithName("v"),
		G.WithValue(tensor.New(tensor.WithShape(4), tensor.WithBacking([]float64{0.5, -1, 0.25, 2}))))
	gc, err := Grad(c, x)
	require.NoError(t, err)
	hv, err := Grad(G.Must(G.Sum(G.Must(G.HadamardProd(gc[0], v)))), x)
	require.NoError(t, err)
	got := evalNodes(t, hv[0])[0]

	xs := x.Value().(*tensor.Dense).Float64s()
	vs := v.Value().(*tensor.Dense).Float64s()
	want := testkit.FDAlong([][]float64{xs}, [][]float64{vs}, 1e-5, func() []float64 { return evalNodes(t, gc[0])[0] })
	requireClose(t, want, got, 1e-7, "H·v")
}

// TestGradFloat32: the float32 cost is differentiated with a float32 seed.
func TestGradFloat32(t *testing.T) {
	g := G.NewGraph()
	x := G.NewVector(g, tensor.Float32, G.WithShape(3), G.WithName("x"),
		G.WithValue(tensor.New(tensor.WithShape(3), tensor.WithBacking([]float32{1, 2, 3}))))
	c := G.Must(G.Sum(G.Must(G.Square(x))))
	gx, err := Grad(c, x)
	require.NoError(t, err)
	require.Equal(t, tensor.Float32, gx[0].Dtype())
	requireClose(t, []float64{2, 4, 6}, evalNodes(t, gx[0])[0], 1e-6, "∇c")
}

func TestGradErrors(t *testing.T) {
	g, x, c := mixedCost(t)
	other := G.NewGraph()
	y := G.NewVector(other, tensor.Float64, G.WithShape(4), G.WithName("y"))
	unused := G.NewVector(g, tensor.Float64, G.WithShape(4), G.WithName("unused"))
	// Sign has no derivative: the cost reaches k only through it.
	k := G.NewVector(g, tensor.Float64, G.WithShape(4), G.WithName("k"))
	viaSign := G.Must(G.Add(G.Must(G.Sum(x)), G.Must(G.Sum(G.Must(G.Sign(k))))))

	for _, tc := range []struct {
		name      string
		cost      *G.Node
		wrt       []*G.Node
		kind      error
		arg, text string
	}{
		{"nil cost", nil, []*G.Node{x}, gatejet.ErrParam, "cost", "nil"},
		{"vector cost", x, []*G.Node{x}, gatejet.ErrRank, "cost", "scalar"},
		{"no wrt", c, nil, gatejet.ErrParam, "wrt", "no nodes"},
		{"nil wrt", c, []*G.Node{x, nil}, gatejet.ErrParam, "wrt", "node 1 is nil"},
		{"foreign wrt", c, []*G.Node{y}, gatejet.ErrParam, "wrt", "not in the cost's graph"},
		{"unused wrt", c, []*G.Node{unused}, gatejet.ErrParam, "wrt", "does not depend"},
		{"through sign", viaSign, []*G.Node{x, k}, ErrNotDifferentiable, "wrt", "node 1 (k) reaches the cost only through op sign"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Grad(tc.cost, tc.wrt...)
			require.Nil(t, got)
			require.ErrorIs(t, err, tc.kind)
			var ge *gatejet.Error
			require.True(t, errors.As(err, &ge))
			require.Equal(t, opGrad, ge.Op)
			require.Equal(t, tc.arg, ge.Arg)
			require.Contains(t, err.Error(), tc.text)
		})
	}
}

// TestGradThroughGorgoniaSoftMax: the gradient of gorgonia.SoftMax (its SoftmaxDiff op) cannot
// be differentiated (its DiffWRT panics). A second-order gradient through it is an
// ErrNotDifferentiable error that names the op and points to ops.Softmax, whether the node
// differentiated with respect to reaches the cost only through it or also along other paths
// (where dropping the path would give a silently wrong gradient). With ops.Softmax the same
// graphs are differentiated twice.
func TestGradThroughGorgoniaSoftMax(t *testing.T) {
	for _, alsoDirect := range []bool{false, true} {
		for _, ours := range []bool{false, true} {
			g := G.NewGraph()
			x := G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("x"),
				G.WithValue(tensor.New(tensor.WithBacking([]float64{0.1, 0.5, -0.3}))))
			w := G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("w"),
				G.WithValue(tensor.New(tensor.WithBacking([]float64{1, 2, 3}))))
			z := G.Must(G.HadamardProd(x, w))
			var p *G.Node
			var err error
			if ours {
				p, err = ops.Softmax(z, -1)
			} else {
				p, err = G.SoftMax(z)
			}
			require.NoError(t, err)
			weight := x
			if alsoDirect {
				weight = w // the loss depends on w along a second path as well
			}
			loss := G.Must(G.Sum(G.Must(G.HadamardProd(p, weight))))
			grad, err := Grad(loss, w)
			require.NoError(t, err)
			penalty := G.Must(G.Sum(G.Must(G.Square(grad[0]))))
			got, err := Grad(penalty, w)
			if ours {
				require.NoError(t, err, "ops.Softmax, also direct %v", alsoDirect)
				RequireGradients(t, penalty, G.Nodes{w})
				continue
			}
			require.Nil(t, got)
			require.ErrorIs(t, err, ErrNotDifferentiable, "also direct %v", alsoDirect)
			require.Contains(t, err.Error(), "SoftmaxDiff")
			require.Contains(t, err.Error(), "build the softmax with ops.Softmax(x, axis)")
		}
	}
}

// TestGradSizeRefusal: a gradient op whose output exceeds gatejet.MaxBytes is an ErrSize
// error of Grad naming the node whose op refused, not ErrNotDifferentiable: the gradient
// exists and is built once the limit is raised.
func TestGradSizeRefusal(t *testing.T) {
	g := G.NewGraph()
	l := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 3), G.WithName("l"))
	d := G.NewTensor(g, tensor.Float64, 3, G.WithShape(4, 3, 16), G.WithName("d"))
	prev := gatejet.SetMaxBytes(1024) // the value channel [4,16] fits; its gradient in d, [4,3,16], does not
	defer gatejet.SetMaxBytes(prev)
	out, err := ops.SoftmaxJetValue(l, d, 1)
	require.NoError(t, err)
	cost := G.Must(G.Sum(out))
	got, err := Grad(cost, l, d)
	require.Nil(t, got)
	require.ErrorIs(t, err, gatejet.ErrSize)
	require.False(t, errors.Is(err, ErrNotDifferentiable))
	var ge *gatejet.Error
	require.True(t, errors.As(err, &ge))
	require.Equal(t, opGrad, ge.Op)
	require.Equal(t, out.Name(), ge.Arg)
	require.Contains(t, err.Error(), "1.5 KiB) exceed the limit of 1.0 KiB")
	gatejet.SetMaxBytes(prev)
	got, err = Grad(cost, l, d)
	require.NoError(t, err)
	require.Len(t, got, 2)
}

// TestGradTwiceConcurrent: Grad, first and second order, on separate graphs from several goroutines at once is race-free
// (go test -race) and gives each graph its own right answer.
func TestGradTwiceConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				_, x, c := mixedCost(t)
				gc, err := Grad(c, x)
				if err == nil {
					_, err = Grad(G.Must(G.Sum(G.Must(G.Square(gc[0])))), x)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestGradCheckLispSecondOrder: a cost that holds a gradient (which repeats a scalar) is
// checked on the Tape machine, and refused with ErrMachine on the Lisp machine, whose reverse
// pass of that Repeat panics in a goroutine of Gorgonia's and would end the process.
func TestGradCheckLispSecondOrder(t *testing.T) {
	_, x, c := mixedCost(t)
	gc, err := Grad(c, x)
	require.NoError(t, err)
	p := G.Must(G.Sum(G.Must(G.Square(gc[0]))))
	rep, err := GradCheck(p, G.Nodes{x})
	require.NoError(t, err)
	require.True(t, rep.OK())
	rep, err = GradCheck(p, G.Nodes{x}, WithMachine(Lisp))
	require.ErrorIs(t, err, ErrMachine)
	require.Nil(t, rep)
	require.Contains(t, err.Error(), "Tape machine")
}
