package graphs

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/testkit"
)

// testKnots: clamped, with uneven interior knots; nb = 6.
var testKnots = []float64{0, 0, 0, 0, 0.3, 0.55, 1, 1, 1, 1}

// coordInputs builds t [N,K] and B [K,nb,P] inputs; t is drawn in (0,1) at least 0.02 from
// every knot, so central differences stay inside one knot interval.
func coordInputs(t *testing.T, dt tensor.Dtype, seed uint64, N, K, nb, P int) (*gorgonia.ExprGraph, *gorgonia.Node, *gorgonia.Node) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 5))
	g := gorgonia.NewGraph()
	tv := make([]float64, N*K)
	for i := range tv {
		for {
			tv[i] = 0.02 + 0.96*rng.Float64()
			if math.Abs(tv[i]-0.3) > 0.02 && math.Abs(tv[i]-0.55) > 0.02 {
				break
			}
		}
	}
	tn := gorgonia.NewMatrix(g, dt, gorgonia.WithShape(N, K), gorgonia.WithName("t"), gorgonia.WithValue(denseOf(dt, []int{N, K}, tv)))
	bn := gorgonia.NewTensor(g, dt, 3, gorgonia.WithShape(K, nb, P), gorgonia.WithName("B"), gorgonia.WithValue(randDense(dt, rng, -1, 1, K, nb, P)))
	return g, tn, bn
}

type jetBuilder func(t, B *gorgonia.Node) (d0, d1, d2 *gorgonia.Node, err error)

var jetBases = []struct {
	name string
	nb   int
	f    jetBuilder
}{
	{"monomial", 4, MonomialJets},
	{"bspline", len(testKnots) - 4, func(t, B *gorgonia.Node) (d0, d1, d2 *gorgonia.Node, err error) {
		return BSplineJets(t, B, testKnots)
	}},
}

// TestMonomialJetsValues: d0, d1, d2 against Σ_b B·t^b and its derivatives written out.
func TestMonomialJetsValues(t *testing.T) {
	const N, K, nb, P = 3, 2, 5, 3
	_, tn, bn := coordInputs(t, tensor.Float64, 1, N, K, nb, P)
	d0, d1, d2, err := MonomialJets(tn, bn)
	require.NoError(t, err)
	got := evalNodes(t, d0, d1, d2)
	tv, B := tn.Value().(*tensor.Dense).Float64s(), bn.Value().(*tensor.Dense).Float64s()
	for n := 0; n < N; n++ {
		for k := 0; k < K; k++ {
			x := tv[n*K+k]
			for c := 0; c < P; c++ {
				var w [3]float64
				for b := 0; b < nb; b++ {
					fb := float64(b)
					coef := B[(k*nb+b)*P+c]
					w[0] += coef * math.Pow(x, fb)
					if b >= 1 {
						w[1] += coef * fb * math.Pow(x, fb-1)
					}
					if b >= 2 {
						w[2] += coef * fb * (fb - 1) * math.Pow(x, fb-2)
					}
				}
				for m := range w {
					require.InDelta(t, w[m], got[m][(n*K+k)*P+c], 1e-14, "d%d[%d,%d,%d]", m, n, k, c)
				}
			}
		}
	}
}

// TestBSplineJetsValues: with every coefficient 1 the decoded row is the basis's sum, 1, with
// zero derivatives (partition of unity); on clamped knots [0,0,0,0,1,1,1,1] the basis is
// Bernstein's, d0 = Σ_b C(3,b)·t^b·(1−t)^(3−b)·B_b; and d1, d2 are central differences of d0,
// d1.
func TestBSplineJetsValues(t *testing.T) {
	const N, K, P = 4, 3, 2
	nb := len(testKnots) - 4
	g, tn, _ := coordInputs(t, tensor.Float64, 2, N, K, nb, P)
	ones := gorgonia.NewTensor(g, tensor.Float64, 3, gorgonia.WithShape(K, nb, P), gorgonia.WithName("ones"), gorgonia.WithInit(gorgonia.Ones()))
	d0, d1, d2, err := BSplineJets(tn, ones, testKnots)
	require.NoError(t, err)
	got := evalNodes(t, d0, d1, d2)
	for i := range got[0] {
		require.InDelta(t, 1, got[0][i], 1e-15)
		require.InDelta(t, 0, got[1][i], 1e-13)
		require.InDelta(t, 0, got[2][i], 1e-12)
	}

	_, tn, bn := coordInputs(t, tensor.Float64, 3, N, K, 4, P)
	d0, _, _, err = BSplineJets(tn, bn, []float64{0, 0, 0, 0, 1, 1, 1, 1})
	require.NoError(t, err)
	v := evalNodes(t, d0)[0]
	tv, B := tn.Value().(*tensor.Dense).Float64s(), bn.Value().(*tensor.Dense).Float64s()
	binom := []float64{1, 3, 3, 1}
	for n := 0; n < N; n++ {
		for k := 0; k < K; k++ {
			x := tv[n*K+k]
			for c := 0; c < P; c++ {
				w := 0.0
				for b := 0; b < 4; b++ {
					w += B[(k*4+b)*P+c] * binom[b] * math.Pow(x, float64(b)) * math.Pow(1-x, float64(3-b))
				}
				require.InDelta(t, w, v[(n*K+k)*P+c], 1e-14)
			}
		}
	}

	for _, base := range jetBases {
		_, tn, bn := coordInputs(t, tensor.Float64, 4, N, K, base.nb, P)
		d0, d1, d2, err := base.f(tn, bn)
		require.NoError(t, err)
		want := evalNodes(t, d1, d2)
		x := tn.Value().(*tensor.Dense).Float64s()
		for i, f := range []*gorgonia.Node{d0, d1} {
			// ∂d/∂t[n,k] touches only atom k of row n: the sum over the rows of the Jacobian.
			J := testkit.FDJacobian(x, func() []float64 { return evalNodes(t, f)[0] }, 1e-6)
			for r := range x {
				for c := 0; c < P; c++ {
					require.InDelta(t, want[i][r*P+c], J[r][r*P+c], 1e-7*(1+math.Abs(want[i][r*P+c])), "%s d%d", base.name, i+1)
				}
			}
		}
	}
}

// coordCost is Σ w0·d0 + Σ w1·d1² + Σ w2·d2·d0 over the jets of one basis: every output, in
// t and B, linear and not.
func coordCost(t *testing.T, dt tensor.Dtype, f jetBuilder, nb int, seed uint64) (*gorgonia.Node, gorgonia.Nodes) {
	t.Helper()
	const N, K, P = 3, 2, 3
	_, tn, bn := coordInputs(t, dt, seed, N, K, nb, P)
	d0, d1, d2, err := f(tn, bn)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(seed, 9))
	w := func() *gorgonia.Node { return gorgonia.NewConstant(randDense(dt, rng, -1, 1, N, K, P)) }
	dot := func(a, b *gorgonia.Node) *gorgonia.Node {
		return gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.HadamardProd(a, b))))
	}
	c := gorgonia.Must(gorgonia.Add(dot(d0, w()), dot(gorgonia.Must(gorgonia.Square(d1)), w())))
	c = gorgonia.Must(gorgonia.Add(c, dot(gorgonia.Must(gorgonia.HadamardProd(d2, d0)), w())))
	return c, gorgonia.Nodes{tn, bn}
}

// TestCoordJetsGradients: each output alone and the mixed cost pass GradCheck in t and B
// (central differences of every output) in float64 and float32; second order, the Hessian-
// vector products of the cost through Grad twice match central differences of the gradient
// and are symmetric, ⟨∇c, v⟩ passes GradCheck (float64), and the float32 Hessian-vector
// products agree with the float64 ones.
func TestCoordJetsGradients(t *testing.T) {
	for i, base := range jetBases {
		t.Run(base.name, func(t *testing.T) {
			for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
				var opts []CheckOption
				if dt == tensor.Float64 {
					opts = append(opts, WithStep(1e-6), WithTolerance(1e-7, 1e-8))
				}
				for m := 0; m < 3; m++ {
					_, tn, bn := coordInputs(t, dt, uint64(10+m), 2, 3, base.nb, 2)
					ds := make([]*gorgonia.Node, 3)
					var err error
					ds[0], ds[1], ds[2], err = base.f(tn, bn)
					require.NoError(t, err)
					w := gorgonia.NewConstant(randDense(dt, rand.New(rand.NewPCG(uint64(m), 1)), -1, 1, 2, 3, 2))
					c := gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.HadamardProd(ds[m], w))))
					rep, err := GradCheck(c, gorgonia.Nodes{tn, bn}, opts...)
					require.NoError(t, err, "d%d %v: %v", m, dt, rep)
				}
				c, xs := coordCost(t, dt, base.f, base.nb, uint64(20+i))
				rep, err := GradCheck(c, xs, opts...)
				require.NoError(t, err, "%v: %v", dt, rep)
			}
			c, xs := coordCost(t, tensor.Float64, base.f, base.nb, uint64(30+i))
			// A float64 step of 1e-6: the spline's cubic pieces on knot gaps of 0.25 have large
			// higher derivatives, which a central difference of step 1e-5 resolves to only 3e-7
			// relative.
			hessianGradCheck(t, c, xs, uint64(i), 1e-6)
			c, xs = coordCost(t, tensor.Float64, base.f, base.nb, uint64(40+i))
			hessianCheck(t, c, xs, uint64(i), 1e-7)
			// Float32 second order against float64 on the same inputs: a float32 central
			// difference of a gradient is too noisy to check it to its precision.
			c, xs = coordCost(t, tensor.Float64, base.f, base.nb, uint64(50+i))
			want := hvpValues(t, c, xs)
			c, xs = coordCost(t, tensor.Float32, base.f, base.nb, uint64(50+i))
			got := hvpValues(t, c, xs)
			for j := range want {
				scale := 0.0
				for _, w := range want[j] {
					scale = math.Max(scale, math.Abs(w))
				}
				for e, w := range want[j] {
					require.InDelta(t, w, got[j][e], 1e-5*(1+scale), "H·v in %s", xs[j].Name())
				}
			}
		})
	}
}

// TestCoordJetsFloat32: the Float32 jets agree with the Float64 ones to float32 precision.
func TestCoordJetsFloat32(t *testing.T) {
	for _, base := range jetBases {
		var vals [2][][]float64
		for i, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			_, tn, bn := coordInputs(t, dt, 50, 5, 3, base.nb, 4)
			d0, d1, d2, err := base.f(tn, bn)
			require.NoError(t, err)
			require.Equal(t, dt, d0.Dtype())
			require.Equal(t, tensor.Shape{5, 3, 4}, d2.Shape())
			vals[i] = evalNodes(t, d0, d1, d2)
		}
		for m := range vals[0] {
			for j, w := range vals[0][m] {
				require.InDelta(t, w, vals[1][m][j], 1e-5*(1+math.Abs(w)), "%s d%d", base.name, m)
			}
		}
	}
}

func requireCoordErr(t *testing.T, err error, kind error, arg string) {
	t.Helper()
	require.ErrorIs(t, err, kind)
	var ge *gatejet.Error
	require.True(t, errors.As(err, &ge), "%T %v", err, err)
	require.Equal(t, arg, ge.Arg, "%v", err)
}

func TestCoordJetsHostile(t *testing.T) {
	g := gorgonia.NewGraph()
	f64 := func(name string, shape ...int) *gorgonia.Node {
		return gorgonia.NewTensor(g, tensor.Float64, len(shape), gorgonia.WithShape(shape...), gorgonia.WithName(name))
	}
	tn, bn := f64("t", 2, 3), f64("B", 3, 4, 2)
	_, _, _, err := MonomialJets(nil, bn)
	requireCoordErr(t, err, gatejet.ErrParam, "t")
	_, _, _, err = MonomialJets(tn, nil)
	requireCoordErr(t, err, gatejet.ErrParam, "B")
	other := gorgonia.NewTensor(gorgonia.NewGraph(), tensor.Float64, 3, gorgonia.WithShape(3, 4, 2))
	_, _, _, err = MonomialJets(tn, other)
	requireCoordErr(t, err, gatejet.ErrParam, "B")
	_, _, _, err = MonomialJets(f64("t1", 6), bn)
	requireCoordErr(t, err, gatejet.ErrRank, "t")
	_, _, _, err = MonomialJets(tn, f64("B2", 12, 2))
	requireCoordErr(t, err, gatejet.ErrRank, "B")
	_, _, _, err = MonomialJets(tn, f64("B3", 2, 4, 2))
	requireCoordErr(t, err, gatejet.ErrShape, "B")
	_, _, _, err = MonomialJets(tn, f64("B4", 3, 0, 2))
	requireCoordErr(t, err, gatejet.ErrShape, "B")
	_, _, _, err = MonomialJets(f64("t0", 2, 0), f64("B5", 0, 4, 2))
	requireCoordErr(t, err, gatejet.ErrShape, "t")
	b32 := gorgonia.NewTensor(g, tensor.Float32, 3, gorgonia.WithShape(3, 4, 2), gorgonia.WithName("B32"))
	_, _, _, err = MonomialJets(tn, b32)
	requireCoordErr(t, err, gatejet.ErrDType, "B")
	ti := gorgonia.NewMatrix(g, tensor.Int, gorgonia.WithShape(2, 3), gorgonia.WithName("ti"))
	_, _, _, err = MonomialJets(ti, bn)
	requireCoordErr(t, err, gatejet.ErrDType, "t")

	// Knots, and B's nb against them.
	_, _, _, err = BSplineJets(tn, bn, []float64{0, 1, 2, 3, 4, 5, 6, 7})
	require.NoError(t, err)
	_, _, _, err = BSplineJets(tn, bn, testKnots)
	requireCoordErr(t, err, gatejet.ErrShape, "B")
	for _, k := range [][]float64{nil, {0, 1, 2, 3, 4, 5, 6}, {0, 1, 2, 3, 5, 4, 6, 7}, {0, 0, 0, 0, 0, 1, 1, 1}} {
		_, _, _, err = BSplineJets(tn, bn, k)
		requireCoordErr(t, err, gatejet.ErrParam, "knots")
	}
	_, _, _, err = BSplineJets(tn, bn, []float64{0, 1, 2, math.NaN(), 4, 5, 6, 7})
	requireCoordErr(t, err, gatejet.ErrNonFinite, "knots")

	// Sizes beyond MaxBytes, refused before anything is allocated.
	huge := f64("huge", 1<<40, 1<<10)
	_, _, _, err = MonomialJets(huge, f64("Bh", 1<<10, 4, 2))
	require.ErrorIs(t, err, gatejet.ErrSize)
	prev := gatejet.SetMaxBytes(1024)
	_, _, _, err = MonomialJets(f64("t7", 20, 3), bn) // [20,3,4] of float64: 1,920 bytes
	gatejet.SetMaxBytes(prev)
	requireCoordErr(t, err, gatejet.ErrSize, "basis")
}

// TestBSplineJetsOutsideSpan: running the graph with a coordinate outside the span is an
// ErrParam error naming t; NaN propagates to its row only; the span's ends are inside.
func TestBSplineJetsOutsideSpan(t *testing.T) {
	for _, x := range []float64{-1e-9, 1.5, math.Inf(1), math.Inf(-1)} {
		g := gorgonia.NewGraph()
		tn := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(1, 2), gorgonia.WithName("t"), gorgonia.WithValue(tensor.New(tensor.WithShape(1, 2), tensor.WithBacking([]float64{0.5, x}))))
		bn := gorgonia.NewTensor(g, tensor.Float64, 3, gorgonia.WithShape(2, 6, 1), gorgonia.WithName("B"), gorgonia.WithInit(gorgonia.Ones()))
		d0, _, _, err := BSplineJets(tn, bn, testKnots)
		require.NoError(t, err)
		m := gorgonia.NewTapeMachine(g)
		err = m.RunAll()
		m.Close()
		require.Error(t, err, "t = %v", x)
		requireCoordErr(t, OpError(err), gatejet.ErrParam, "t")
		require.ErrorContains(t, OpError(err), "span [0, 1]")
		require.Equal(t, "graphs.BSplineJets", OpError(err).Op)
		_ = d0
	}
	g := gorgonia.NewGraph()
	tn := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(2, 2), gorgonia.WithName("t"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float32{0, 1, float32(math.NaN()), 0.5}))))
	bn := gorgonia.NewTensor(g, tensor.Float32, 3, gorgonia.WithShape(2, 6, 1), gorgonia.WithName("B"), gorgonia.WithInit(gorgonia.Ones()))
	d0, d1, _, err := BSplineJets(tn, bn, testKnots)
	require.NoError(t, err)
	v := evalNodes(t, d0, d1)
	require.InDelta(t, 1, v[0][0], 1e-6)
	require.InDelta(t, 1, v[0][1], 1e-6)
	require.True(t, math.IsNaN(v[0][2]) && math.IsNaN(v[1][2]))
	require.InDelta(t, 1, v[0][3], 1e-6)
	require.InDelta(t, 0, v[1][3], 1e-5)
}

// TestBSplineJetsFloat32Ends: a Float32 coordinate at an end of a span whose ends float32
// cannot represent (0.7 and 1.1, which round outwards) is accepted as that end.
func TestBSplineJetsFloat32Ends(t *testing.T) {
	knots := []float64{0.7, 0.7, 0.7, 0.7, 0.9, 1.1, 1.1, 1.1, 1.1}
	require.Less(t, float64(float32(0.7)), 0.7)
	require.Greater(t, float64(float32(1.1)), 1.1)
	g := gorgonia.NewGraph()
	tn := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(1, 2), gorgonia.WithName("t"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(1, 2), tensor.WithBacking([]float32{0.7, 1.1}))))
	bn := gorgonia.NewTensor(g, tensor.Float32, 3, gorgonia.WithShape(2, 5, 1), gorgonia.WithName("B"), gorgonia.WithInit(gorgonia.Ones()))
	d0, _, _, err := BSplineJets(tn, bn, knots)
	require.NoError(t, err)
	require.Equal(t, []float64{1, 1}, evalNodes(t, d0)[0])
}

// TestCoordJetsEmptyBatch: N = 0 is refused at build time with ErrShape, as by the ops:
// Gorgonia's machines do not run empty tensors (a loss on an empty output panics in the
// TapeMachine), so an empty batch must not reach a graph.
func TestCoordJetsEmptyBatch(t *testing.T) {
	for _, base := range jetBases {
		t.Run(base.name, func(t *testing.T) {
			g := gorgonia.NewGraph()
			tn := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(0, 2), gorgonia.WithName("t"),
				gorgonia.WithValue(tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(0, 2))))
			bn := gorgonia.NewTensor(g, tensor.Float64, 3, gorgonia.WithShape(2, base.nb, 3), gorgonia.WithName("B"), gorgonia.WithInit(gorgonia.Ones()))
			_, _, _, err := base.f(tn, bn)
			require.ErrorIs(t, err, gatejet.ErrShape)
			var ge *gatejet.Error
			require.ErrorAs(t, err, &ge)
			require.Equal(t, "t", ge.Arg)
		})
	}
}

// TestCoordJetsGorgoniaGrad: gorgonia.Grad (which Gorgonia's solvers read) gives the same
// first-order gradients as Grad.
func TestCoordJetsGorgoniaGrad(t *testing.T) {
	for i, base := range jetBases {
		c, xs := coordCost(t, tensor.Float64, base.f, base.nb, uint64(60+i))
		want, err := Grad(c, xs...)
		require.NoError(t, err)
		wantV := evalEach(t, want...)
		c, xs = coordCost(t, tensor.Float64, base.f, base.nb, uint64(60+i))
		gradMu.Lock()
		got, err := gorgonia.Grad(c, xs...)
		gradMu.Unlock()
		require.NoError(t, err)
		gotV := evalEach(t, got...)
		for j := range wantV {
			require.InDeltaSlice(t, wantV[j], gotV[j], 1e-12, "%s %s", base.name, xs[j].Name())
		}
	}
}

// BenchmarkBSplineJets: the three jets at N=4096, K=16, nb=8, P=16 (float64) on a tape
// machine: three basis evaluations and three contractions.
func BenchmarkBSplineJets(b *testing.B) {
	const N, K, P = 4096, 16, 16
	knots := []float64{0, 0, 0, 0, 0.2, 0.4, 0.6, 0.8, 1, 1, 1, 1}
	rng := rand.New(rand.NewPCG(1, 1))
	g := gorgonia.NewGraph()
	tn := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(N, K), gorgonia.WithName("t"), gorgonia.WithValue(randDense(tensor.Float64, rng, 0, 1, N, K)))
	bn := gorgonia.NewTensor(g, tensor.Float64, 3, gorgonia.WithShape(K, len(knots)-4, P), gorgonia.WithName("B"), gorgonia.WithValue(randDense(tensor.Float64, rng, -1, 1, K, len(knots)-4, P)))
	if _, _, _, err := BSplineJets(tn, bn, knots); err != nil {
		b.Fatal(err)
	}
	m := gorgonia.NewTapeMachine(g)
	defer m.Close()
	b.SetBytes(3 * N * K * P * 8)
	for i := 0; i < b.N; i++ {
		if err := m.RunAll(); err != nil {
			b.Fatal(err)
		}
		m.Reset()
	}
}
