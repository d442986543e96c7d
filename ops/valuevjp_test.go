package ops_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/graphs"
	"github.com/gatejet/gatejet/ops"
)

// valueLoss builds c = Σ (ẑ − y)² + Σ tanh(ẑ) over the value channel of a softmax or logistic
// gate, with logits l [n,K] and decoded D [n,K,P] as inputs.
func valueLoss(t *testing.T, logistic bool) (l, d, c *G.Node) {
	t.Helper()
	const n, k, p = 3, 4, 2
	rng := rand.New(rand.NewPCG(5, 7))
	vals := func(m int) []float64 {
		x := make([]float64, m)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		return x
	}
	g := G.NewGraph()
	l = G.NewMatrix(g, tensor.Float64, G.WithShape(n, k), G.WithName("l"),
		G.WithValue(tensor.New(tensor.WithShape(n, k), tensor.WithBacking(vals(n*k)))))
	d = G.NewTensor(g, tensor.Float64, 3, G.WithShape(n, k, p), G.WithName("D"),
		G.WithValue(tensor.New(tensor.WithShape(n, k, p), tensor.WithBacking(vals(n*k*p)))))
	y := G.NewConstant(tensor.New(tensor.WithShape(n, p), tensor.WithBacking(vals(n*p))), G.WithName("y"))
	var z *G.Node
	var err error
	if logistic {
		z, err = ops.LogisticJetValue(l, d, []float64{0.7, 1.3, -0.9, 2}, []float64{0.1, -0.2, 0.3, 0})
	} else {
		z, err = ops.SoftmaxJetValue(l, d, 1.3)
	}
	require.NoError(t, err)
	r := G.Must(G.Sub(z, y))
	c = G.Must(G.Add(G.Must(G.Sum(G.Must(G.Square(r)))), G.Must(G.Sum(G.Must(G.Tanh(z))))))
	return l, d, c
}

func run(t *testing.T, ns ...*G.Node) [][]float64 {
	t.Helper()
	out := make([][]float64, len(ns))
	for i, n := range ns { // one machine a node: a tape may reuse an intermediate's memory
		m := G.NewTapeMachine(n.Graph().SubgraphRoots(n))
		require.NoError(t, m.RunAll())
		out[i] = append([]float64(nil), n.Value().Data().([]float64)...)
		m.Close()
	}
	return out
}

// TestValueVJPHessianVectorProduct: the Hessian-vector product of a loss on the value channel,
// Grad of ⟨∇c, v⟩ through the value channel's differentiable VJP, agrees with central
// differences of ∇c along v, for both gates, in the logits and the decoded values at once.
func TestValueVJPHessianVectorProduct(t *testing.T) {
	for _, logistic := range []bool{false, true} {
		l, d, c := valueLoss(t, logistic)
		grads, err := graphs.Grad(c, l, d)
		require.NoError(t, err)
		g := l.Graph()
		vl := G.NewMatrix(g, tensor.Float64, G.WithShape(l.Shape()...), G.WithName("vl"),
			G.WithValue(tensor.New(tensor.WithShape(l.Shape()...), tensor.WithBacking([]float64{
				0.3, -1, 0.5, 0.2, 1.1, 0.4, -0.6, 0.9, -0.2, 0.8, 0.1, -0.7}))))
		vdData := make([]float64, d.Shape().TotalSize())
		for i := range vdData {
			vdData[i] = math.Sin(float64(i) + 0.5)
		}
		vd := G.NewTensor(g, tensor.Float64, 3, G.WithShape(d.Shape()...), G.WithName("vd"),
			G.WithValue(tensor.New(tensor.WithShape(d.Shape()...), tensor.WithBacking(vdData))))
		dir := G.Must(G.Add(G.Must(G.Sum(G.Must(G.HadamardProd(grads[0], vl)))),
			G.Must(G.Sum(G.Must(G.HadamardProd(grads[1], vd))))))
		hv, err := graphs.Grad(dir, l, d)
		require.NoError(t, err)
		got := run(t, hv[0], hv[1])

		ls, ds := l.Value().Data().([]float64), d.Value().Data().([]float64)
		vls := vl.Value().Data().([]float64)
		l0, d0 := append([]float64(nil), ls...), append([]float64(nil), ds...)
		const h = 1e-5
		at := func(sign float64) [][]float64 {
			for i := range ls {
				ls[i] = l0[i] + sign*h*vls[i]
			}
			for i := range ds {
				ds[i] = d0[i] + sign*h*vdData[i]
			}
			return run(t, grads[0], grads[1])
		}
		plus, minus := at(1), at(-1)
		copy(ls, l0)
		copy(ds, d0)
		for j, name := range []string{"H·v in l", "H·v in D"} {
			for i := range got[j] {
				want := (plus[j][i] - minus[j][i]) / (2 * h)
				if diff := math.Abs(got[j][i] - want); diff > 1e-7*(1+math.Abs(want)) {
					t.Fatalf("logistic=%v %s[%d]: got %.12g, central difference %.12g", logistic, name, i, got[j][i], want)
				}
			}
		}
	}
}

// TestSecondVJPNotDifferentiable: the second channel's VJP is not differentiable (the value
// and first channels' are), and Grad says which op stops it.
func TestSecondVJPNotDifferentiable(t *testing.T) {
	g := G.NewGraph()
	l := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 3), G.WithName("l"),
		G.WithValue(tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float64{1, 2, 3, 4, 5, 6}))))
	d := G.NewTensor(g, tensor.Float64, 3, G.WithShape(2, 3, 1), G.WithName("D"),
		G.WithValue(tensor.New(tensor.WithShape(2, 3, 1), tensor.WithBacking([]float64{1, 0, 2, 1, 3, 0}))))
	f, err := ops.SoftmaxJetSecond(l, d, 1)
	require.NoError(t, err)
	c := G.Must(G.Sum(G.Must(G.Square(f))))
	gl, err := graphs.Grad(c, l)
	require.NoError(t, err)
	_, err = graphs.Grad(G.Must(G.Sum(G.Must(G.Square(gl[0])))), l)
	require.ErrorIs(t, err, graphs.ErrNotDifferentiable)
	var ge *gatejet.Error
	require.True(t, errors.As(err, &ge))
	require.Contains(t, err.Error(), "SoftmaxJetSecondVJP")
}
