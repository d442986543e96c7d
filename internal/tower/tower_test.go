package tower_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet/internal/tower"
)

type jet = tower.Jet[float64]

// twVars returns jets of the primaries x_0 … x_{m-1} at the given values.
func twVars(x ...float64) []*jet {
	vs := make([]*jet, len(x))
	for i, v := range x {
		vs[i] = tower.Variable(len(x), i, v)
	}
	return vs
}

// twRequireJet checks a jet against its value, gradient and Hessian to a relative tolerance.
func twRequireJet(t *testing.T, got *jet, v float64, g []float64, h [][]float64, tol float64, msg string) {
	t.Helper()
	m := len(g)
	require.Equal(t, m, got.M(), msg)
	require.InDelta(t, v, got.V, tol*math.Max(1, math.Abs(v)), "%s: V", msg)
	for i := 0; i < m; i++ {
		require.InDelta(t, g[i], got.G[i], tol*math.Max(1, math.Abs(g[i])), "%s: G[%d]", msg, i)
		for j := 0; j < m; j++ {
			require.InDelta(t, h[i][j], got.H[i*m+j], tol*math.Max(1, math.Abs(h[i][j])), "%s: H[%d][%d]", msg, i, j)
		}
	}
}

func TestJetHandComputed(t *testing.T) {
	const a, b = 1.5, -0.7
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	cases := []struct {
		name string
		eval func(x, y *jet) *jet
		v    float64
		g    []float64
		h    [][]float64
	}{
		{"x+y", func(x, y *jet) *jet { return tower.NewJet[float64](2).Add(x, y) }, a + b, []float64{1, 1}, [][]float64{{0, 0}, {0, 0}}},
		{"x-y", func(x, y *jet) *jet { return tower.NewJet[float64](2).Sub(x, y) }, a - b, []float64{1, -1}, [][]float64{{0, 0}, {0, 0}}},
		{"3x", func(x, y *jet) *jet { return tower.NewJet[float64](2).Scale(x, 3) }, 3 * a, []float64{3, 0}, [][]float64{{0, 0}, {0, 0}}},
		{"x+2y", func(x, y *jet) *jet { return tower.NewJet[float64](2).AddScaled(x, 2, y) }, a + 2*b, []float64{1, 2}, [][]float64{{0, 0}, {0, 0}}},
		{"xy", func(x, y *jet) *jet { return tower.NewJet[float64](2).Mul(x, y) }, a * b, []float64{b, a}, [][]float64{{0, 1}, {1, 0}}},
		{"x²", func(x, y *jet) *jet { return tower.NewJet[float64](2).Mul(x, x) }, a * a, []float64{2 * a, 0}, [][]float64{{2, 0}, {0, 0}}},
		{"x²y", func(x, y *jet) *jet {
			z := tower.NewJet[float64](2).Mul(x, x)
			return z.Mul(z, y)
		}, a * a * b, []float64{2 * a * b, a * a}, [][]float64{{2 * b, 2 * a}, {2 * a, 0}}},
		{"exp(xy)", func(x, y *jet) *jet {
			z := tower.NewJet[float64](2).Mul(x, y)
			return z.Exp(z)
		}, math.Exp(a * b), []float64{b * math.Exp(a*b), a * math.Exp(a*b)},
			[][]float64{{b * b * math.Exp(a*b), (1 + a*b) * math.Exp(a*b)}, {(1 + a*b) * math.Exp(a*b), a * a * math.Exp(a*b)}}},
		{"1/(x+y²)", func(x, y *jet) *jet {
			z := tower.NewJet[float64](2).Mul(y, y)
			z.Add(z, x)
			return z.Recip(z)
		}, 1 / (a + b*b), []float64{-1 / math.Pow(a+b*b, 2), -2 * b / math.Pow(a+b*b, 2)},
			[][]float64{
				{2 / math.Pow(a+b*b, 3), 4 * b / math.Pow(a+b*b, 3)},
				{4 * b / math.Pow(a+b*b, 3), 8*b*b/math.Pow(a+b*b, 3) - 2/math.Pow(a+b*b, 2)},
			}},
		{"σ(2x−y)", func(x, y *jet) *jet {
			z := tower.NewJet[float64](2).AddScaled(tower.NewJet[float64](2).Scale(x, 2), -1, y)
			return z.Logistic(z)
		}, sig(2*a - b), func() []float64 {
			s := sig(2*a - b)
			d1 := s * (1 - s)
			return []float64{2 * d1, -d1}
		}(), func() [][]float64 {
			s := sig(2*a - b)
			d2 := s * (1 - s) * (1 - 2*s)
			return [][]float64{{4 * d2, -2 * d2}, {-2 * d2, d2}}
		}()},
		{"compose sin", func(x, y *jet) *jet {
			z := tower.NewJet[float64](2).Mul(x, y)
			u := z.V
			return z.Compose(z, math.Sin(u), math.Cos(u), -math.Sin(u))
		}, math.Sin(a * b), []float64{b * math.Cos(a*b), a * math.Cos(a*b)},
			[][]float64{{-b * b * math.Sin(a*b), math.Cos(a*b) - a*b*math.Sin(a*b)}, {math.Cos(a*b) - a*b*math.Sin(a*b), -a * a * math.Sin(a*b)}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := twVars(a, b)
			twRequireJet(t, tc.eval(v[0], v[1]), tc.v, tc.g, tc.h, 1e-14, tc.name)
		})
	}
}

func TestJetConstructors(t *testing.T) {
	c := tower.Constant(3, 2.5)
	assert.Equal(t, 2.5, c.V)
	assert.Equal(t, []float64{0, 0, 0}, c.G)
	assert.Equal(t, make([]float64, 9), c.H)
	v := tower.Variable(3, 1, -4.0)
	assert.Equal(t, -4.0, v.V)
	assert.Equal(t, []float64{0, 1, 0}, v.G)
	assert.Equal(t, make([]float64, 9), v.H)
	z := tower.NewJet[float32](0)
	assert.Equal(t, 0, z.M())
	z.SetConst(7)
	assert.Equal(t, float32(7), z.V)
	w := tower.NewJet[float64](3).Set(v)
	assert.Equal(t, v, w)
	w.G[0] = 9
	assert.Equal(t, 0.0, v.G[0], "Set copies")
}

func TestJetPanicsOnMisuse(t *testing.T) {
	assert.Panics(t, func() { tower.NewJet[float64](-1) })
	assert.Panics(t, func() { tower.Variable(2, 2, 1.0) })
	assert.Panics(t, func() { tower.Variable(2, -1, 1.0) })
	assert.Panics(t, func() {
		tower.NewJet[float64](2).Mul(tower.NewJet[float64](2), tower.NewJet[float64](3))
	})
	assert.Panics(t, func() {
		tower.NewJet[float64](2).Add(tower.NewJet[float64](3), tower.NewJet[float64](3))
	})
	assert.Panics(t, func() { (&jet{G: make([]float64, 2), H: make([]float64, 3)}).SetConst(1) })
	assert.Panics(t, func() { tower.NewTower[float64](-1) })
}

// twExpr is a test expression of three primaries, as a jet program and as plain float64:
//
//	f(x) = exp(x0·x1)/(1 + x2²) · σ(x0 − 2·x2) − 3·x1·x2 + x0
func twExpr(z *jet, x []*jet) *jet {
	m := z.M()
	t1 := tower.NewJet[float64](m).Mul(x[0], x[1])
	t1.Exp(t1)
	t2 := tower.NewJet[float64](m).Mul(x[2], x[2])
	t2.AddScaled(tower.Constant(m, 1.0), 1, t2)
	t2.Recip(t2)
	t3 := tower.NewJet[float64](m).AddScaled(x[0], -2, x[2])
	t3.Logistic(t3)
	z.Mul(t1, t2)
	z.Mul(z, t3)
	t4 := tower.NewJet[float64](m).Mul(x[1], x[2])
	z.AddScaled(z, -3, t4)
	return z.Add(z, x[0])
}

func twExprPlain(x []float64) float64 {
	return math.Exp(x[0]*x[1])/(1+x[2]*x[2])/(1+math.Exp(-(x[0]-2*x[2]))) - 3*x[1]*x[2] + x[0]
}

func TestJetAgainstFiniteDifferences(t *testing.T) {
	const h = 1e-5
	for _, x0 := range [][]float64{{0.3, -0.8, 0.5}, {-1.2, 0.4, -0.9}, {0.05, 1.1, 2.0}} {
		m := len(x0)
		at := func(x []float64) *jet { return twExpr(tower.NewJet[float64](m), twVars(x...)) }
		j := at(x0)
		require.InDelta(t, twExprPlain(x0), j.V, 1e-14)
		for i := 0; i < m; i++ {
			xp := append([]float64(nil), x0...)
			xm := append([]float64(nil), x0...)
			xp[i] += h
			xm[i] -= h
			fd := (twExprPlain(xp) - twExprPlain(xm)) / (2 * h)
			require.InDelta(t, fd, j.G[i], 1e-8*math.Max(1, math.Abs(fd)), "G[%d] at %v", i, x0)
			jp, jm := at(xp), at(xm)
			for a := 0; a < m; a++ {
				fd := (jp.G[a] - jm.G[a]) / (2 * h)
				require.InDelta(t, fd, j.H[a*m+i], 1e-8*math.Max(1, math.Abs(fd)), "H[%d][%d] at %v", a, i, x0)
			}
		}
		for a := 0; a < m; a++ {
			for b := 0; b < m; b++ {
				require.Equal(t, j.H[a*m+b], j.H[b*m+a], "H is exactly symmetric")
			}
		}
	}
}

func TestJetAliasing(t *testing.T) {
	x := twVars(0.7, -0.3, 1.1)
	a := tower.NewJet[float64](3).Mul(x[0], x[1])
	a.Exp(a)
	a.Add(a, x[2])
	b := tower.NewJet[float64](3).Mul(x[2], x[2])
	b.AddScaled(b, 0.5, x[0])
	b.Logistic(b)
	b.Add(b, a)

	ops := []struct {
		name string
		op   func(z, p, q *jet) *jet
	}{
		{"Add", func(z, p, q *jet) *jet { return z.Add(p, q) }},
		{"Sub", func(z, p, q *jet) *jet { return z.Sub(p, q) }},
		{"AddScaled", func(z, p, q *jet) *jet { return z.AddScaled(p, -1.5, q) }},
		{"Mul", func(z, p, q *jet) *jet { return z.Mul(p, q) }},
		{"Scale", func(z, p, _ *jet) *jet { return z.Scale(p, 0.25) }},
		{"Exp", func(z, p, _ *jet) *jet { return z.Exp(p) }},
		{"Recip", func(z, p, _ *jet) *jet { return z.Recip(p) }},
		{"Logistic", func(z, p, _ *jet) *jet { return z.Logistic(p) }},
	}
	for _, o := range ops {
		t.Run(o.name, func(t *testing.T) {
			want := o.op(tower.NewJet[float64](3), a, b)
			z := tower.NewJet[float64](3).Set(a)
			assert.Equal(t, want, o.op(z, z, b), "z aliases the first operand")
			z = tower.NewJet[float64](3).Set(b)
			assert.Equal(t, want, o.op(z, a, z), "z aliases the second operand")
			sq := o.op(tower.NewJet[float64](3), a, a)
			z = tower.NewJet[float64](3).Set(a)
			assert.Equal(t, sq, o.op(z, z, z), "z aliases both operands")
		})
	}
}

func TestJetFloat32MatchesFloat64(t *testing.T) {
	x := []float64{0.3, -0.8, 0.5}
	j64 := twExpr(tower.NewJet[float64](3), twVars(x...))
	// The same expression in float32 through the Tower arena.
	tw := tower.NewTower[float32](3)
	v := []*tower.Jet[float32]{tw.Variable(0, 0.3), tw.Variable(1, -0.8), tw.Variable(2, 0.5)}
	t1 := tw.Jet().Mul(v[0], v[1])
	t1.Exp(t1)
	t2 := tw.Jet().Mul(v[2], v[2])
	t2.AddScaled(tw.Constant(1), 1, t2)
	t2.Recip(t2)
	t3 := tw.Jet().AddScaled(v[0], -2, v[2])
	t3.Logistic(t3)
	z := tw.Jet().Mul(t1, t2)
	z.Mul(z, t3)
	z.AddScaled(z, -3, tw.Jet().Mul(v[1], v[2]))
	z.Add(z, v[0])
	assert.InDelta(t, j64.V, float64(z.V), 1e-6)
	for i := range j64.G {
		assert.InDelta(t, j64.G[i], float64(z.G[i]), 1e-6)
	}
	for i := range j64.H {
		assert.InDelta(t, j64.H[i], float64(z.H[i]), 1e-6)
	}
}

func TestTowerArena(t *testing.T) {
	tw := tower.NewTower[float64](3)
	require.Equal(t, 3, tw.M())
	a := tw.Variable(2, 4)
	require.Equal(t, 1, tw.Len())
	mark := tw.Len()
	b := tw.Jet().Mul(a, a)
	require.Equal(t, 16.0, b.V)
	require.Equal(t, 2, tw.Len())
	tw.ReleaseTo(mark)
	require.Equal(t, 1, tw.Len())
	c := tw.Jet()
	require.Same(t, b, c, "released memory is handed out again")
	require.Equal(t, 0.0, c.V, "handed-out jets are zero")
	require.Equal(t, make([]float64, 9), c.H)
	require.Equal(t, 4.0, a.V, "unreleased jets are untouched")
	tw.ReleaseTo(5)
	require.Equal(t, 2, tw.Len())
	tw.Reset(5)
	require.Equal(t, 0, tw.Len())
	d := tw.Variable(4, 1)
	require.Equal(t, 5, d.M())
	require.Len(t, d.H, 25)
	tw.ReleaseTo(-1)
	require.Equal(t, 0, tw.Len())

	// Steady state: a whole expression evaluated again in a reset arena allocates nothing.
	eval := func() {
		tw.Reset(4)
		x := []*tower.Jet[float64]{tw.Variable(0, 0.1), tw.Variable(1, 0.2), tw.Variable(2, 0.3), tw.Variable(3, 0.4)}
		den := tw.Constant(0)
		for _, xi := range x {
			den.Add(den, tw.Jet().Exp(xi))
		}
		r := tw.Jet().Recip(den)
		for _, xi := range x {
			g := tw.Jet().Exp(xi)
			g.Mul(g, r)
			g.Logistic(g)
		}
	}
	eval()
	require.Zero(t, testing.AllocsPerRun(20, eval))
}

// ExampleTowerChannels evaluates the jet of one row with two atoms and one output column.
func ExampleTowerChannels() {
	sh := tower.Shape{N: 1, K: 2, P: 1}
	logits := []float64{0, math.Log(3)} // ζ = softmax(l) = (1/4, 3/4)
	decoded := []float64{1, 3}          // decoded[k][0]
	value := make([]float64, sh.N*sh.P)
	first := make([]float64, sh.N*sh.K*sh.P)
	second := make([]float64, sh.N*sh.K*sh.K*sh.P)
	if err := tower.TowerChannels(value, first, second, logits, decoded, sh, 1); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("value  %.4f\n", value)
	fmt.Printf("first  %.4f\n", first)
	fmt.Printf("second %.4f\n", second)
	// Output:
	// value  [2.5000]
	// first  [-0.3750 0.3750]
	// second [-0.1875 0.1875 0.1875 -0.1875]
}
