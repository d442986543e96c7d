package graphs

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/ops"
)

// evidenceCase is a latent-coordinate model with monomial decoders: t [N,K], B [K,nb,P],
// logits [N,K] and the hyperparameters.
type evidenceCase struct {
	N, K, P, nb            int
	s, logSigma, logLambda float64
	logits, t, B           []float64
	seed                   uint64
}

func newEvidenceCase(seed uint64, n, k, p, nb int, s, logSigma, logLambda float64) *evidenceCase {
	rng := rand.New(rand.NewPCG(seed, 25))
	u := func(m int, lo, hi float64) []float64 {
		x := make([]float64, m)
		for i := range x {
			x[i] = lo + (hi-lo)*rng.Float64()
		}
		return x
	}
	return &evidenceCase{N: n, K: k, P: p, nb: nb, s: s, logSigma: logSigma, logLambda: logLambda,
		logits: u(n*k, -1.5, 1.5), t: u(n*k, -0.9, 0.9), B: u(k*nb*p, -1, 1), seed: seed}
}

// direct is the reference: out[r] = log det(JᵀJ/σ² + λI) in float64 with gonum, J [P,2K] the
// Jacobian of ẑ_r in (ℓ, t) from the closed forms of the softmax gate and the monomial basis,
// written here from scratch (no op or kernel of the project).
func (c *evidenceCase) direct() []float64 {
	K, P, nb := c.K, c.P, c.nb
	sigma2, lambda := math.Exp(2*c.logSigma), math.Exp(c.logLambda)
	out := make([]float64, c.N)
	for r := range c.N {
		l := c.logits[r*K : (r+1)*K]
		z := make([]float64, K)
		mx := math.Inf(-1)
		for _, x := range l {
			mx = math.Max(mx, c.s*x)
		}
		sum := 0.0
		for k, x := range l {
			z[k] = math.Exp(c.s*x - mx)
			sum += z[k]
		}
		d0, d1 := mat.NewDense(K, P, nil), mat.NewDense(K, P, nil)
		for k := range K {
			z[k] /= sum
			t := c.t[r*K+k]
			for b := range nb {
				phi, dphi := math.Pow(t, float64(b)), 0.0
				if b > 0 {
					dphi = float64(b) * math.Pow(t, float64(b-1))
				}
				for col := range P {
					beta := c.B[(k*nb+b)*P+col]
					d0.Set(k, col, d0.At(k, col)+phi*beta)
					d1.Set(k, col, d1.At(k, col)+dphi*beta)
				}
			}
		}
		J := mat.NewDense(P, 2*K, nil)
		for col := range P {
			zhat := 0.0
			for k := range K {
				zhat += z[k] * d0.At(k, col)
			}
			for k := range K {
				J.Set(col, k, c.s*z[k]*(d0.At(k, col)-zhat))
				J.Set(col, K+k, z[k]*d1.At(k, col))
			}
		}
		A := mat.NewSymDense(2*K, nil)
		A.SymOuterK(1/sigma2, J.T())
		for a := range 2 * K {
			A.SetSym(a, a, A.At(a, a)+lambda)
		}
		var ch mat.Cholesky
		if !ch.Factorize(A) {
			panic("reference: not positive definite")
		}
		out[r] = ch.LogDet()
	}
	return out
}

// graph builds the evidence term from t and B by MonomialJets, with every input a variable.
func (c *evidenceCase) graph(t testing.TB, dt tensor.Dtype) (ld *gorgonia.Node, in gorgonia.Nodes) {
	t.Helper()
	g := gorgonia.NewGraph()
	scalar := func(name string, x float64) *gorgonia.Node {
		var v any = x
		if dt == tensor.Float32 {
			v = float32(x)
		}
		return gorgonia.NewScalar(g, dt, gorgonia.WithName(name), gorgonia.WithValue(v))
	}
	logits := gorgonia.NewMatrix(g, dt, gorgonia.WithShape(c.N, c.K), gorgonia.WithName("logits"), gorgonia.WithValue(denseOf(dt, []int{c.N, c.K}, c.logits)))
	tn := gorgonia.NewMatrix(g, dt, gorgonia.WithShape(c.N, c.K), gorgonia.WithName("t"), gorgonia.WithValue(denseOf(dt, []int{c.N, c.K}, c.t)))
	B := gorgonia.NewTensor(g, dt, 3, gorgonia.WithShape(c.K, c.nb, c.P), gorgonia.WithName("B"), gorgonia.WithValue(denseOf(dt, []int{c.K, c.nb, c.P}, c.B)))
	s, ls, ll := scalar("invTau", c.s), scalar("logSigma", c.logSigma), scalar("logLambda", c.logLambda)
	d0, d1, _, err := MonomialJets(tn, B)
	require.NoError(t, err)
	ld, err = CoordGaussNewtonLogDet(logits, d0, d1, s, ls, ll)
	require.NoError(t, err)
	require.Equal(t, tensor.Shape{c.N}, ld.Shape())
	return ld, gorgonia.Nodes{logits, tn, B, s, ls, ll}
}

var evidenceCases = []struct {
	n, k, p, nb            int
	s, logSigma, logLambda float64
}{
	{3, 1, 2, 3, 1.0, 0, math.Log(0.1)},
	{2, 3, 4, 3, 1.7, math.Log(0.3), math.Log(2)},
	{2, 4, 1, 4, 0.5, math.Log(2), math.Log(1e-3)},
	{1, 5, 6, 2, 3.0, math.Log(0.05), math.Log(10)},
	{2, 3, 3, 3, 1e-3, 0.2, -0.4},
}

// TestCoordGaussNewtonLogDetValues: the [N] values against the gonum reference, float64 at
// 1e-12 relative and float32 at 1e-4.
func TestCoordGaussNewtonLogDetValues(t *testing.T) {
	for i, tc := range evidenceCases {
		c := newEvidenceCase(uint64(i+1), tc.n, tc.k, tc.p, tc.nb, tc.s, tc.logSigma, tc.logLambda)
		want := c.direct()
		for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			t.Run(fmt.Sprintf("case%d/%v", i, dt), func(t *testing.T) {
				ld, _ := c.graph(t, dt)
				m := gorgonia.NewTapeMachine(ld.Graph())
				defer m.Close()
				require.NoError(t, m.RunAll())
				got := denseFloat64s(ld.Value().(*tensor.Dense))
				tol := 1e-12
				if dt == tensor.Float32 {
					tol = 1e-4
				}
				worst := 0.0
				for r := range want {
					e := math.Abs(got[r]-want[r]) / math.Max(1, math.Abs(want[r]))
					worst = max(worst, e)
					require.LessOrEqual(t, e, tol, "row %d: got %v, want %v", r, got[r], want[r])
				}
				t.Logf("log det %v, max error %.2g (relative, absolute below 1)", want, worst)
			})
		}
	}
}

func denseFloat64s(d *tensor.Dense) []float64 {
	if d.Dtype() == tensor.Float32 {
		f := d.Float32s()
		out := make([]float64, len(f))
		for i, v := range f {
			out[i] = float64(v)
		}
		return out
	}
	return append([]float64(nil), d.Float64s()...)
}

// TestCoordGaussNewtonLogDetGradCheck: the gradients of a weighted evidence term −½·Σ_r w_r·out[r]
// in the raw logits, the coordinates, the coefficients B, the inverse temperature, log σ and
// log λ against central differences, float64 and float32.
func TestCoordGaussNewtonLogDetGradCheck(t *testing.T) {
	for i, tc := range evidenceCases {
		c := newEvidenceCase(uint64(10+i), tc.n, tc.k, tc.p, tc.nb, tc.s, tc.logSigma, tc.logLambda)
		for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			t.Run(fmt.Sprintf("case%d/%v", i, dt), func(t *testing.T) {
				ld, in := c.graph(t, dt)
				rng := rand.New(rand.NewPCG(uint64(i), 7))
				w := gorgonia.NewVector(ld.Graph(), dt, gorgonia.WithShape(c.N), gorgonia.WithName("w"),
					gorgonia.WithValue(randDense(dt, rng, 0.5, 1.5, c.N)))
				cost := gorgonia.Must(gorgonia.Mul(gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.HadamardProd(ld, w)))), scalarConst(dt, -0.5)))
				rep := RequireGradients(t, cost, in)
				for _, n := range rep.Nodes {
					t.Logf("%-9s max abs err %.2g, max rel err %.2g", n.Name, n.MaxAbsErr, n.MaxRelErr)
				}
			})
		}
	}
}

// TestCoordGaussNewtonLogDetConstantTemperature: with the temperature a constant the term is
// that of the op run at that temperature, log det(H/σ² + λI) = LogDetPlusRidge(c·H, 1) +
// 2K·log λ, a second route through the graph's scaling of the logit rows.
func TestCoordGaussNewtonLogDetConstantTemperature(t *testing.T) {
	c := newEvidenceCase(3, 2, 3, 4, 3, 2.5, math.Log(0.4), math.Log(0.2))
	ld, in := c.graph(t, tensor.Float64)
	d0, d1, _, err := MonomialJets(in[1], in[2])
	require.NoError(t, err)
	h, err := ops.SoftmaxCoordJetGaussNewton(in[0], d0, d1, c.s)
	require.NoError(t, err)
	cst := math.Exp(-2*c.logSigma - c.logLambda)
	scaled := gorgonia.Must(gorgonia.Mul(h, scalarConst(tensor.Float64, cst)))
	ref, err := LogDetPlusRidge(scaled, 1)
	require.NoError(t, err)
	m := gorgonia.NewTapeMachine(ld.Graph())
	defer m.Close()
	require.NoError(t, m.RunAll())
	got, want := ld.Value().(*tensor.Dense).Float64s(), ref.Value().(*tensor.Dense).Float64s()
	for r := range want {
		w := want[r] + float64(2*c.K)*c.logLambda
		require.InDelta(t, w, got[r], 1e-12*math.Max(1, math.Abs(w)), "row %d", r)
	}
}

// TestCoordGaussNewtonLogDetConstants: the scalars and the decoder may be constants
// (gorgonia.NewConstant, which belong to no graph): the values are the gonum reference's, the
// gradient in the logits and t still runs, and arguments that are all constants are refused.
func TestCoordGaussNewtonLogDetConstants(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		c := newEvidenceCase(6, 2, 3, 4, 3, 1.7, math.Log(0.3), math.Log(2))
		want := c.direct()
		cst := func(x float64) *gorgonia.Node {
			if dt == tensor.Float32 {
				return gorgonia.NewConstant(float32(x))
			}
			return gorgonia.NewConstant(x)
		}
		g := gorgonia.NewGraph()
		logits := gorgonia.NewMatrix(g, dt, gorgonia.WithShape(c.N, c.K), gorgonia.WithName("logits"), gorgonia.WithValue(denseOf(dt, []int{c.N, c.K}, c.logits)))
		tn := gorgonia.NewMatrix(g, dt, gorgonia.WithShape(c.N, c.K), gorgonia.WithName("t"), gorgonia.WithValue(denseOf(dt, []int{c.N, c.K}, c.t)))
		B := gorgonia.NewConstant(denseOf(dt, []int{c.K, c.nb, c.P}, c.B), gorgonia.WithName("B"))
		d0, d1, _, err := MonomialJets(tn, B)
		require.NoError(t, err, "%v: a constant decoder", dt)
		ld, err := CoordGaussNewtonLogDet(logits, d0, d1, cst(c.s), cst(c.logSigma), cst(c.logLambda))
		require.NoError(t, err, "%v: constant scalars", dt)
		grads, err := Grad(gorgonia.Must(gorgonia.Sum(ld)), logits, tn)
		require.NoError(t, err)
		m := gorgonia.NewTapeMachine(g)
		require.NoError(t, m.RunAll())
		m.Close()
		got := denseFloat64s(ld.Value().(*tensor.Dense))
		tol := map[tensor.Dtype]float64{tensor.Float64: 1e-12, tensor.Float32: 1e-4}[dt]
		for r := range want {
			require.InDelta(t, want[r], got[r], tol*math.Max(1, math.Abs(want[r])), "%v row %d", dt, r)
		}
		for _, gr := range grads {
			require.NotNil(t, gr.Value())
		}

		_, err = CoordGaussNewtonLogDet(cst(1), cst(1), cst(1), cst(1), cst(1), cst(1))
		requireCoordErr(t, err, gatejet.ErrParam, "logits")
		_, _, _, err = MonomialJets(gorgonia.NewConstant(denseOf(dt, []int{c.N, c.K}, c.t)), B)
		requireCoordErr(t, err, gatejet.ErrParam, "t")
	}
}

func TestCoordGaussNewtonLogDetArgErrors(t *testing.T) {
	c := newEvidenceCase(4, 2, 3, 2, 2, 1, 0, 0)
	ld, in := c.graph(t, tensor.Float64)
	d0, d1, _, err := MonomialJets(in[1], in[2])
	require.NoError(t, err)
	logits, s, ls, ll := in[0], in[3], in[4], in[5]
	g := logits.Graph()
	other := gorgonia.NewScalar(gorgonia.NewGraph(), tensor.Float64, gorgonia.WithName("x"))
	f32 := gorgonia.NewScalar(g, tensor.Float32, gorgonia.WithName("f32"))
	vec := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(1), gorgonia.WithName("vec"))
	// A refusal of the Gauss-Newton op (d1 of another P, a nil option) leaves the graph as it
	// was, the scaled logits of the valid term above included.
	d1P := gorgonia.NewTensor(g, tensor.Float64, 3, gorgonia.WithShape(2, 3, 3), gorgonia.WithName("d1P"))
	before := len(g.AllNodes())
	_, err = CoordGaussNewtonLogDet(logits, d0, d1P, s, ls, ll)
	requireCoordErr(t, err, gatejet.ErrShape, "d1")
	_, err = CoordGaussNewtonLogDet(logits, d0, d1, s, ls, ll, nil)
	requireCoordErr(t, err, gatejet.ErrParam, "opts")
	_, err = CoordGaussNewtonLogDet(logits, d0, d1P, gorgonia.NewConstant(1.5), ls, ll)
	requireCoordErr(t, err, gatejet.ErrShape, "d1")
	require.Len(t, g.AllNodes(), before)
	m := gorgonia.NewTapeMachine(g.SubgraphRoots(ld))
	require.NoError(t, m.RunAll(), "the valid term still runs")
	m.Close()
	for _, e := range []struct {
		name                  string
		l, a, b, sv, lsv, llv *gorgonia.Node
		kind                  error
		arg                   string
	}{
		{"nil logits", nil, d0, d1, s, ls, ll, gatejet.ErrParam, "logits"},
		{"nil lambda", logits, d0, d1, s, ls, nil, gatejet.ErrParam, "logLambda"},
		{"other graph", logits, d0, d1, s, other, ll, gatejet.ErrParam, "logSigma"},
		{"dtype", logits, d0, d1, f32, ls, ll, gatejet.ErrDType, "invTau"},
		{"not scalar", logits, d0, d1, s, ls, vec, gatejet.ErrShape, "logLambda"},
		{"rank", d0, d0, d1, s, ls, ll, gatejet.ErrRank, "logits"},
		{"d0 shape", logits, d1, logits, s, ls, ll, nil, ""},
	} {
		_, err := CoordGaussNewtonLogDet(e.l, e.a, e.b, e.sv, e.lsv, e.llv)
		require.Error(t, err, e.name)
		if e.kind == nil {
			continue
		}
		require.ErrorIs(t, err, e.kind, e.name)
		var ge *gatejet.Error
		require.ErrorAs(t, err, &ge, e.name)
		require.Equal(t, e.arg, ge.Arg, e.name)
	}
}

// TestCoordGaussNewtonLogDetSecondOrder: the evidence term's Hessian-vector product in every
// argument, ⟨∇c, v⟩ differentiated again, against central differences: the gradients are
// themselves differentiable, so a Newton step on the hyperparameters is available.
func TestCoordGaussNewtonLogDetSecondOrder(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		t.Run(dt.String(), func(t *testing.T) {
			c := newEvidenceCase(21, 2, 3, 2, 3, 1.4, math.Log(0.5), math.Log(0.3))
			ld, in := c.graph(t, dt)
			cost := gorgonia.Must(gorgonia.Sum(ld))
			hessianGradCheck(t, cost, in, 22, 1e-5)
		})
	}
}

// BenchmarkCoordGaussNewtonLogDet: the evidence term and its gradient in every argument, at a
// size of the digits example's (N rows of P = 64 columns, K = 8 atoms, cubic monomials).
func BenchmarkCoordGaussNewtonLogDet(b *testing.B) {
	for _, grad := range []bool{false, true} {
		b.Run(map[bool]string{false: "value", true: "value+grad"}[grad], func(b *testing.B) {
			c := newEvidenceCase(1, 512, 8, 64, 4, 1.3, math.Log(0.3), math.Log(0.1))
			ld, in := c.graph(b, tensor.Float64)
			cost := gorgonia.Must(gorgonia.Sum(ld))
			if grad {
				if _, err := Grad(cost, in...); err != nil {
					b.Fatal(err)
				}
			}
			m := gorgonia.NewTapeMachine(ld.Graph())
			defer m.Close()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := m.RunAll(); err != nil {
					b.Fatal(err)
				}
				m.Reset()
			}
		})
	}
}
