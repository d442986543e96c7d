package graphs

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/check"
	"github.com/gatejet/gatejet/internal/graphmath"
	"github.com/gatejet/gatejet/internal/testkit"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func TestSoftArgminProbs(t *testing.T) {
	p := mustSlice(SoftArgminProbs([]float64{3, 1, 4, 1.5}, 1))
	sum := 0.0
	for _, x := range p {
		sum += x
	}
	require.InDelta(t, 1, sum, 1e-15)
	require.Equal(t, 1, Argmin([]float64{3, 1, 4, 1.5}))
	// order follows the costs
	require.Greater(t, p[1], p[3])
	require.Greater(t, p[3], p[0])
	require.Greater(t, p[0], p[2])
	// exact value: p_i ∝ exp(−c_i)
	z := math.Exp(-3) + math.Exp(-1) + math.Exp(-4) + math.Exp(-1.5)
	require.InDelta(t, math.Exp(-1)/z, p[1], 1e-15)

	// low temperature concentrates on the argmin, high temperature is uniform
	p = mustSlice(SoftArgminProbs([]float64{5, 1, 5}, 100))
	require.Greater(t, p[1], 1-1e-15)
	p = mustSlice(SoftArgminProbs([]float64{1, 5, 9}, 1e-4))
	for _, x := range p {
		require.InDelta(t, 1.0/3, x, 1e-3)
	}
	// shift invariance and huge offsets
	a := mustSlice(SoftArgminProbs([]float64{0.1, 0.2, 0.3}, 7))
	b := mustSlice(SoftArgminProbs([]float64{1e6 + 0.1, 1e6 + 0.2, 1e6 + 0.3}, 7))
	for i := range a {
		require.InDelta(t, a[i], b[i], 1e-9)
	}
	// +Inf costs get zero mass; NaN poisons the row
	p = mustSlice(SoftArgminProbs([]float64{math.Inf(1), 2, 2}, 3))
	require.Equal(t, []float64{0, 0.5, 0.5}, p)
	p = mustSlice(SoftArgminProbs([]float64{math.NaN(), 2}, 3))
	require.True(t, math.IsNaN(p[0]) && math.IsNaN(p[1]))
	p = mustSlice(SoftArgminProbs([]float64{math.Inf(1), math.Inf(1)}, 3))
	require.True(t, math.IsNaN(p[0]))
	require.Empty(t, mustSlice(SoftArgminProbs(nil, 1)))

	_, err := SoftArgminProbs([]float64{1}, 0)
	require.ErrorIs(t, err, gatejet.ErrTemperature)
	require.EqualError(t, err, check.Errorf(gatejet.ErrTemperature, "graphs.SoftArgminProbs", "invTau",
		"want 0 < invTau < +Inf, got 0").Error())
}

func TestArgmin(t *testing.T) {
	require.Equal(t, -1, Argmin(nil))
	require.Equal(t, -1, Argmin([]float64{math.NaN()}))
	require.Equal(t, 2, Argmin([]float64{math.NaN(), 3, -1, -1, 5}))
	require.Equal(t, 0, Argmin([]float64{math.Inf(1)}))
	require.Equal(t, 1, Argmin([]float64{0, math.Inf(-1)}))
}

// TestSoftArgminVJPFiniteDifferences checks J·v against central differences of
// SoftArgminProbs along v (JVP) and of ⟨v, p(c)⟩ along each e_i (VJP).
func TestSoftArgminVJPFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for trial := 0; trial < 20; trial++ {
		k := 1 + rng.IntN(8)
		s := math.Exp(rng.Float64()*4 - 2)
		c := make([]float64, k)
		v := make([]float64, k)
		for i := range c {
			c[i] = rng.NormFloat64()
			v[i] = rng.NormFloat64()
		}
		p := mustSlice(SoftArgminProbs(c, s))
		jv := mustSlice(SoftArgminVJP(p, v, s))
		const h = 1e-6
		jvp := testkit.FDAlong([][]float64{c}, [][]float64{v}, h, func() []float64 { return mustSlice(SoftArgminProbs(c, s)) })
		for i := range p {
			require.InDelta(t, jvp[i], jv[i], 1e-8, "JVP k=%d s=%g i=%d", k, s, i)
		}
		vjp := testkit.FDJacobian(c, func() []float64 {
			q := mustSlice(SoftArgminProbs(c, s))
			dot := 0.0
			for j := range q {
				dot += q[j] * v[j]
			}
			return []float64{dot}
		}, h)
		for i := range c {
			require.InDelta(t, vjp[i][0], jv[i], 1e-8, "VJP k=%d s=%g i=%d", k, s, i)
		}
		// Σ_i (J·v)_i = 0: J kills constants
		sum := 0.0
		for _, x := range jv {
			sum += x
		}
		require.InDelta(t, 0, sum, 1e-12)
	}
	_, err := SoftArgminVJP([]float64{1}, []float64{1, 2}, 1)
	require.ErrorIs(t, err, gatejet.ErrSize)
	_, err = SoftArgminVJP([]float64{1}, []float64{1}, math.Inf(1))
	require.ErrorIs(t, err, gatejet.ErrTemperature)
}

func fisher(p []float64) *mat.Dense {
	k := len(p)
	f := mat.NewDense(k, k, nil)
	for i := 0; i < k; i++ {
		for j := 0; j < k; j++ {
			v := -p[i] * p[j]
			if i == j {
				v += p[i]
			}
			f.Set(i, j, v)
		}
	}
	return f
}

// naturalGradientCase draws 1 to 7 costs (normal, times scale) and a gradient g (standard
// normal), and returns g and p, the costs' soft-argmin at invTau. Every third trial, when
// there are more than inf+1 costs, cost inf is +Inf: a zero probability.
func naturalGradientCase(rng *rand.Rand, trial int, scale float64, inf int, invTau float64) (p, g []float64) {
	k := 1 + rng.IntN(7)
	c := make([]float64, k)
	g = make([]float64, k)
	for i := range c {
		c[i] = scale * rng.NormFloat64()
		g[i] = rng.NormFloat64()
	}
	if trial%3 == 0 && k > inf+1 {
		c[inf] = math.Inf(1)
	}
	return mustSlice(SoftArgminProbs(c, invTau)), g
}

func TestNaturalGradientDamped(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for trial := 0; trial < 30; trial++ {
		p, g := naturalGradientCase(rng, trial, 2, 0, 1)
		k := len(p)
		lambda := []float64{1e-8, 1e-3, 0.5, 10}[trial%4]
		x := mustSlice(NaturalGradient(p, g, lambda))

		a := fisher(p)
		for i := 0; i < k; i++ {
			a.Set(i, i, a.At(i, i)+lambda)
		}
		var want mat.VecDense
		require.NoError(t, want.SolveVec(a, mat.NewVecDense(k, append([]float64(nil), g...))))
		// residual of the returned x in the damped system
		var r mat.VecDense
		r.MulVec(a, mat.NewVecDense(k, x))
		xmax := 0.0
		for _, v := range x {
			xmax = math.Max(xmax, math.Abs(v))
		}
		for i := 0; i < k; i++ {
			// x can be as large as |g|/λ along 1, so the residual is relative to it
			require.InDelta(t, g[i], r.AtVec(i), 1e-12*(1+math.Abs(g[i]))+1e-15*xmax, "k=%d λ=%g", k, lambda)
			require.InDelta(t, want.AtVec(i), x[i], 1e-6*(1+math.Abs(want.AtVec(i))), "k=%d λ=%g", k, lambda)
		}
	}
}

func TestNaturalGradientPseudoInverse(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	for trial := 0; trial < 30; trial++ {
		p, g := naturalGradientCase(rng, trial, 1, 1, 1.3)
		k := len(p)
		x := mustSlice(NaturalGradient(p, g, 0))

		// Moore–Penrose pseudo-inverse from the SVD, dropping singular values below 1e-12.
		var svd mat.SVD
		require.True(t, svd.Factorize(fisher(p), mat.SVDFull))
		if svd.Rank(1e-12) == 0 {
			for _, v := range x {
				require.Zero(t, v)
			}
			continue
		}
		var pinv mat.Dense
		svd.SolveTo(&pinv, mat.NewDense(k, 1, append([]float64(nil), g...)), svd.Rank(1e-12))
		for i := 0; i < k; i++ {
			require.InDelta(t, pinv.At(i, 0), x[i], 1e-8*(1+math.Abs(x[i])), "k=%d i=%d", k, i)
		}
		// x is orthogonal to 1
		sum := 0.0
		for _, v := range x {
			sum += v
		}
		require.InDelta(t, 0, sum, 1e-9)
	}
	// one candidate with all the mass: F = 0, F⁺g = 0
	require.Equal(t, []float64{0, 0}, mustSlice(NaturalGradient([]float64{1, 0}, []float64{3, 4}, 0)))
	// a gradient of a function of p (it lies in range(F)) is recovered exactly: F·x = g
	p := mustSlice(SoftArgminProbs([]float64{0.3, -0.2, 0.9}, 2))
	g := mustSlice(SoftArgminVJP(p, []float64{1, -2, 0.5}, 2))
	x := mustSlice(NaturalGradient(p, g, 0))
	var fx mat.VecDense
	fx.MulVec(fisher(p), mat.NewVecDense(3, x))
	for i := range g {
		require.InDelta(t, g[i], fx.AtVec(i), 1e-14)
	}

	for _, bad := range []struct {
		p, g   []float64
		lambda float64
		kind   error
	}{
		{[]float64{1}, []float64{1, 2}, 0, gatejet.ErrSize},
		{[]float64{1}, []float64{1}, -1, gatejet.ErrParam},
		{[]float64{-0.5, 1.5}, []float64{1, 1}, 0, gatejet.ErrParam},
		{[]float64{1}, []float64{1}, math.NaN(), gatejet.ErrParam},
	} {
		_, err := NaturalGradient(bad.p, bad.g, bad.lambda)
		require.True(t, errors.Is(err, bad.kind), "%v", err)
	}
}

func TestSoftArgminGraphForward(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		rng := rand.New(rand.NewPCG(8, 8))
		g := gorgonia.NewGraph()
		cv := randDense(dt, rng, -2, 2, 3, 5)
		c := gorgonia.NewMatrix(g, dt, gorgonia.WithShape(3, 5), gorgonia.WithName("c"), gorgonia.WithValue(cv))
		p, err := SoftArgmin(c, 2.5)
		require.NoError(t, err)
		require.Equal(t, tensor.Shape{3, 5}, p.Shape())
		m := gorgonia.NewTapeMachine(g)
		require.NoError(t, m.RunAll())
		got, _ := floatsOf(p.Value())
		all, _ := floatsOf(cv)
		for r := 0; r < 3; r++ {
			want := mustSlice(SoftArgminProbs(all[r*5:r*5+5], 2.5))
			for i := range want {
				tol := 1e-15
				if dt == tensor.Float32 {
					tol = 1e-7
				}
				require.InDelta(t, want[i], got[r*5+i], tol)
			}
		}
		m.Close()
	}
}

// TestSoftArgminRowsFloat32: a Float32 batch is computed in float64 and rounded once, so
// each probability is float32 of SoftArgminProbs on the same (float32) costs, bit for bit;
// the batch's rows are independent of each other.
func TestSoftArgminRowsFloat32(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 16))
	const n, k = 4, 7
	c := make([]float32, n*k)
	for i := range c {
		c[i] = float32(30 * (rng.Float64() - 0.5))
	}
	c[k+2] = float32(math.Inf(1))  // zero mass in row 1
	c[2*k+3] = float32(math.NaN()) // row 2 is NaN
	p := make([]float32, n*k)
	require.NoError(t, graphmath.SoftArgminRows("test", p, c, k, 3.7))
	for r := 0; r < n; r++ {
		row := make([]float64, k)
		for i := range row {
			row[i] = float64(c[r*k+i])
		}
		want := mustSlice(SoftArgminProbs(row, 3.7))
		for i := range want {
			if r == 2 {
				require.True(t, math.IsNaN(float64(p[r*k+i])), "row 2 col %d", i)
				continue
			}
			require.Equal(t, float32(want[i]), p[r*k+i], "row %d col %d", r, i)
		}
	}
	require.Zero(t, p[k+2])
}

// TestSoftArgminRowsShape: rows that do not tile the costs, or probabilities of another
// length, are an ErrShape error naming the caller, not a panic or a loop without end.
func TestSoftArgminRowsShape(t *testing.T) {
	for _, tc := range []struct {
		p, c []float64
		k    int
	}{
		{make([]float64, 3), make([]float64, 3), 0},
		{make([]float64, 3), make([]float64, 3), 2},
		{make([]float64, 2), make([]float64, 3), 3},
		{make([]float64, 3), nil, 3},
	} {
		err := graphmath.SoftArgminRows("test", tc.p, tc.c, tc.k, 1)
		require.ErrorIs(t, err, gatejet.ErrShape, "k=%d len(p)=%d len(c)=%d", tc.k, len(tc.p), len(tc.c))
		require.Contains(t, err.Error(), "test")
	}
	require.NoError(t, graphmath.SoftArgminRows[float64]("test", nil, nil, 0, 1), "nothing to do")
}

func TestSoftArgminGraphGradient(t *testing.T) {
	eachDtypeMachine(t, func(t *testing.T, dt tensor.Dtype, m Machine) {
		for _, shape := range [][]int{{6}, {3, 4}, {2, 2, 3}} {
			t.Run(fmt.Sprintf("%v", shape), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(9, uint64(len(shape))))
				g := gorgonia.NewGraph()
				c := gorgonia.NewTensor(g, dt, len(shape), gorgonia.WithShape(shape...), gorgonia.WithName("costs"),
					gorgonia.WithValue(randDense(dt, rng, -1, 1, shape...)))
				w := gorgonia.NewTensor(g, dt, len(shape), gorgonia.WithShape(shape...), gorgonia.WithName("w"),
					gorgonia.WithValue(randDense(dt, rng, -2, 2, shape...)))
				p, err := SoftArgmin(c, 1.7)
				require.NoError(t, err)
				// a nonlinear function of p so the upstream gradient varies
				cost := gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.HadamardProd(gorgonia.Must(gorgonia.Square(p)), w))))
				RequireGradients(t, cost, gorgonia.Nodes{c, w}, WithMachine(m))
			})
		}
	})
}

// TestSoftArgminSecondOrder differentiates the soft-argmin's gradient graph once more:
// the gradient node dc = SymDiff(c, p, w) goes through ops.SoftmaxBackward and the
// soft-argmin itself, so ⟨dc, u⟩ has gradients with respect to c (a Hessian-vector
// product) and w that GradCheck can verify. The gradient node is built by calling SymDiff
// directly: a second gorgonia.Grad through the same nodes would reuse the first one's
// derivatives.
func TestSoftArgminSecondOrder(t *testing.T) {
	eachDtypeMachine(t, func(t *testing.T, dt tensor.Dtype, m Machine) {
		rng := rand.New(rand.NewPCG(10, 10))
		g := gorgonia.NewGraph()
		mk := func(name string) *gorgonia.Node {
			return gorgonia.NewMatrix(g, dt, gorgonia.WithShape(2, 5), gorgonia.WithName(name),
				gorgonia.WithValue(randDense(dt, rng, -1, 1, 2, 5)))
		}
		c, w, u := mk("costs"), mk("w"), mk("u")
		const s = 1.3
		p, err := SoftArgmin(c, s)
		require.NoError(t, err)
		dc, err := p.Op().(gorgonia.SDOp).SymDiff(gorgonia.Nodes{c}, p, w)
		require.NoError(t, err)
		cost := gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.HadamardProd(dc[0], u))))
		RequireGradients(t, cost, gorgonia.Nodes{c, w, u}, WithMachine(m))
	})
}

func TestSoftArgminErrors(t *testing.T) {
	g := gorgonia.NewGraph()
	v := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(3), gorgonia.WithName("v"))
	s := gorgonia.NewScalar(g, tensor.Float64, gorgonia.WithName("s"))
	i := gorgonia.NewVector(g, tensor.Int, gorgonia.WithShape(3), gorgonia.WithName("i"))
	_, err := SoftArgmin(nil, 1)
	require.ErrorIs(t, err, gatejet.ErrParam)
	_, err = SoftArgmin(v, 0)
	require.ErrorIs(t, err, gatejet.ErrTemperature)
	_, err = SoftArgmin(v, math.NaN())
	require.ErrorIs(t, err, gatejet.ErrTemperature)
	_, err = SoftArgmin(s, 1)
	require.ErrorIs(t, err, gatejet.ErrRank)
	_, err = SoftArgmin(i, 1)
	require.ErrorIs(t, err, gatejet.ErrDType)
}

// mustSlice unwraps a slice helper's result in tests whose arguments are valid.
func mustSlice(x []float64, err error) []float64 {
	if err != nil {
		panic(err)
	}
	return x
}
