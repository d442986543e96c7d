package graphs

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet/internal/testkit"
	"github.com/gatejet/gatejet/ops"
)

// evalEach evaluates each node on its own tape machine (a tape may reuse an intermediate's
// memory) and returns the values as float64.
func evalEach(t *testing.T, ns ...*gorgonia.Node) [][]float64 {
	t.Helper()
	out := make([][]float64, len(ns))
	for i, n := range ns {
		out[i] = evalNodes(t, n)[0]
	}
	return out
}

// hessianCheck builds ∇c in xs and, with Grad of ⟨∇c, v⟩, the Hessian-vector products H·v and
// H·u for random directions; it checks H·v against central differences of ∇c along v
// (relative to 1 + max |H·v|, within tol), and ⟨u, H·v⟩ = ⟨v, H·u⟩ to round-off.
func hessianCheck(t *testing.T, c *gorgonia.Node, xs gorgonia.Nodes, seed uint64, tol float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 29))
	grads, err := Grad(c, xs...)
	require.NoError(t, err)
	dir := func() ([][]float64, *gorgonia.Node) {
		vs := make([][]float64, len(xs))
		var s *gorgonia.Node
		for i, x := range xs {
			vs[i] = make([]float64, x.Shape().TotalSize())
			for j := range vs[i] {
				vs[i][j] = rng.NormFloat64()
			}
			v := gorgonia.NewConstant(denseOf(x.Dtype(), x.Shape(), vs[i]))
			term := gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.HadamardProd(grads[i], v))))
			if s == nil {
				s = term
			} else {
				s = gorgonia.Must(gorgonia.Add(s, term))
			}
		}
		return vs, s
	}
	vs, dv := dir()
	us, du := dir()
	hv, err := Grad(dv, xs...)
	require.NoError(t, err)
	hu, err := Grad(du, xs...)
	require.NoError(t, err)
	got, gotU := evalEach(t, hv...), evalEach(t, hu...)

	data := make([][]float64, len(xs))
	for i, x := range xs {
		data[i] = x.Value().(*tensor.Dense).Float64s()
	}
	fd := testkit.FDAlong(data, vs, 1e-5, func() []float64 { return slices.Concat(evalEach(t, grads...)...) })
	uHv, vHu := 0.0, 0.0
	for i, x := range xs {
		want := fd[:len(got[i])]
		fd = fd[len(got[i]):]
		scale, e := 1.0, 0.0
		for j := range got[i] {
			scale = math.Max(scale, 1+math.Abs(want[j]))
			e = math.Max(e, math.Abs(got[i][j]-want[j]))
			uHv += us[i][j] * got[i][j]
			vHu += vs[i][j] * gotU[i][j]
		}
		t.Logf("H·v in %s: max error %.2g (relative to 1 + max |H·v|)", x.Name(), e/scale)
		require.LessOrEqual(t, e/scale, tol, "H·v in %s: got %v", x.Name(), got[i])
	}
	sym := math.Abs(uHv-vHu) / (1 + math.Abs(uHv))
	t.Logf("symmetry: ⟨u,Hv⟩ = %.15g, ⟨v,Hu⟩ = %.15g, relative difference %.2g", uHv, vHu, sym)
	require.LessOrEqual(t, sym, 1e-12)
}

// hvpValues is H·v for v = (0.1·(i+1))_i in each input, evaluated.
func hvpValues(t *testing.T, c *gorgonia.Node, xs gorgonia.Nodes) [][]float64 {
	t.Helper()
	grads, err := Grad(c, xs...)
	require.NoError(t, err)
	var dir *gorgonia.Node
	for i, x := range xs {
		v := make([]float64, x.Shape().TotalSize())
		for j := range v {
			v[j] = 0.1 * float64(j+1)
		}
		term := gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.HadamardProd(grads[i], gorgonia.NewConstant(denseOf(x.Dtype(), x.Shape(), v))))))
		if dir == nil {
			dir = term
		} else {
			dir = gorgonia.Must(gorgonia.Add(dir, term))
		}
	}
	hv, err := Grad(dir, xs...)
	require.NoError(t, err)
	return evalEach(t, hv...)
}

// hessianGradCheck runs GradCheck on ⟨∇c, v⟩ for a random v: float64 with tight tolerances
// and the central-difference step step64, float32 with the default ones.
func hessianGradCheck(t *testing.T, c *gorgonia.Node, xs gorgonia.Nodes, seed uint64, step64 float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 31))
	grads, err := Grad(c, xs...)
	require.NoError(t, err)
	var dir *gorgonia.Node
	for i, x := range xs {
		v := gorgonia.NewConstant(randDense(x.Dtype(), rng, -1, 1, x.Shape()...))
		term := gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.HadamardProd(grads[i], v))))
		if dir == nil {
			dir = term
		} else {
			dir = gorgonia.Must(gorgonia.Add(dir, term))
		}
	}
	var opts []CheckOption
	if c.Dtype() == tensor.Float64 {
		opts = append(opts, WithStep(step64), WithTolerance(1e-7, 1e-8))
	}
	rep, err := GradCheck(dir, xs, opts...)
	require.NoError(t, err, "%v", rep)
	for _, n := range rep.Nodes {
		t.Logf("%s: max abs error %.2g, max rel error %.2g", n.Name, n.MaxAbsErr, n.MaxRelErr)
	}
}

// logDetCost is Σ_r w_r·log det(sym(H_r) + 0.1·I) with H [n,K,K] (not symmetric) and w [n]
// inputs.
func logDetCost(t *testing.T, dt tensor.Dtype, n, k int, seed uint64) (c *gorgonia.Node, xs gorgonia.Nodes) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, uint64(k)))
	g := gorgonia.NewGraph()
	H := gorgonia.NewTensor(g, dt, 3, gorgonia.WithShape(n, k, k), gorgonia.WithName("H"),
		gorgonia.WithValue(denseOf(dt, []int{n, k, k}, spdBatch(rng, n, k))))
	w := gorgonia.NewVector(g, dt, gorgonia.WithShape(n), gorgonia.WithName("w"),
		gorgonia.WithValue(randDense(dt, rng, -1, 1, n)))
	ld, err := LogDetPlusRidge(H, 0.1)
	require.NoError(t, err)
	return gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.HadamardProd(ld, w)))), gorgonia.Nodes{H, w}
}

// TestLogDetPlusRidgeHessian: the gradient op of LogDetPlusRidge is differentiable, so a cost
// on the log-determinant has exact Hessian-vector products in H and in the weights:
// against central differences, symmetric, and through GradCheck in float64 and float32.
func TestLogDetPlusRidgeHessian(t *testing.T) {
	for _, k := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("K=%d", k), func(t *testing.T) {
			c, xs := logDetCost(t, tensor.Float64, 3, k, 40)
			hessianCheck(t, c, xs, uint64(k), 1e-7)
			for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
				c, xs := logDetCost(t, dt, 3, k, 41)
				hessianGradCheck(t, c, xs, uint64(k), 1e-5)
			}
		})
	}
}

// gnLogDetCost is −½·Σ_r w_r·log det(GN_r + λI) over the Gauss-Newton slabs
// of the softmax gate (through GaussNewtonLogDet) or the logistic gate: the Laplace evidence's
// log-determinant term, with logits and decoded inputs.
func gnLogDetCost(t *testing.T, dt tensor.Dtype, logistic bool, sh [3]int, seed uint64, opts ...ops.Option) (*gorgonia.Node, gorgonia.Nodes) {
	t.Helper()
	n, k, p := sh[0], sh[1], sh[2]
	_, logits, decoded := jetInputs(t, dt, seed, n, k, p)
	const lambda = 0.05
	var ld *gorgonia.Node
	var err error
	if logistic {
		var gn *gorgonia.Node
		gn, err = ops.LogisticJetGaussNewton(logits, decoded, []float64{0.8, -1.3, 1.1, 0.6}[:k], []float64{0.2, 0, -0.4, 0.1}[:k], opts...)
		require.NoError(t, err)
		ld, err = LogDetPlusRidge(gn, lambda, opts...)
	} else {
		ld, err = GaussNewtonLogDet(logits, decoded, 1.7, lambda, opts...)
	}
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(seed, 7))
	w := gorgonia.NewConstant(randDense(dt, rng, 0.5, 1.5, n), gorgonia.WithName("w"))
	cost := gorgonia.Must(gorgonia.Mul(gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.HadamardProd(ld, w)))), scalarConst(dt, -0.5)))
	return cost, gorgonia.Nodes{logits, decoded}
}

var gnLogDetShapes = [][3]int{{2, 3, 4}, {3, 2, 1}, {1, 4, 6}, {2, 1, 2}, {2, 4, 3}}

// TestGaussNewtonLogDetHessianVectorProduct: the Laplace evidence's log-determinant term
// −½·Σ w·log det(GN + λI), built by GaussNewtonLogDet (and, for the logistic gate, by
// LogisticJetGaussNewton and LogDetPlusRidge), has exact Hessian-vector products in logits
// and decoded through Grad twice: against central differences, symmetric, through GradCheck
// in float64 and float32, and unchanged by ops.ReuseOutput.
func TestGaussNewtonLogDetHessianVectorProduct(t *testing.T) {
	for _, logistic := range []bool{false, true} {
		for i, sh := range gnLogDetShapes {
			t.Run(fmt.Sprintf("logistic=%v/%v", logistic, sh), func(t *testing.T) {
				c, xs := gnLogDetCost(t, tensor.Float64, logistic, sh, uint64(60+i))
				hessianCheck(t, c, xs, uint64(i), 1e-6)
				for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
					c, xs := gnLogDetCost(t, dt, logistic, sh, uint64(70+i))
					hessianGradCheck(t, c, xs, uint64(i), 1e-5)
				}
				c, xs = gnLogDetCost(t, tensor.Float64, logistic, sh, uint64(80+i))
				want := hvpValues(t, c, xs)
				c, xs = gnLogDetCost(t, tensor.Float64, logistic, sh, uint64(80+i), ops.ReuseOutput())
				require.Equal(t, want, hvpValues(t, c, xs), "with ReuseOutput")
			})
		}
	}
}
