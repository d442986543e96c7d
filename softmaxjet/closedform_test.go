package softmaxjet

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/testkit"
)

// testKs are the atom counts every closed form is proven on.
var testKs = []int{1, 2, 8, 16, 17, 40, 128}

type jetCase struct {
	sh      Shape
	s       float64
	l, d, v []float64
}

func newCase(rng *rand.Rand, N, K, P int) jetCase {
	c := jetCase{sh: Shape{N, K, P}, s: 0.5 + 1.5*rng.Float64()}
	c.l = randn(rng, N*K, 1.5)
	c.d = randn(rng, N*K*P, 1)
	c.v = randn(rng, N*K, 1)
	return c
}

func randn(rng *rand.Rand, n int, scale float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = scale * rng.NormFloat64()
	}
	return x
}

// naiveValue is an independent reference for the value channel: a textbook softmax (max
// subtracted) and a plain weighted sum.
func naiveValue(l, d []float64, sh Shape, s float64) []float64 {
	out := make([]float64, sh.N*sh.P)
	for n := 0; n < sh.N; n++ {
		row := l[n*sh.K : (n+1)*sh.K]
		mx := math.Inf(-1)
		for _, x := range row {
			mx = math.Max(mx, x)
		}
		w := make([]float64, sh.K)
		sum := 0.0
		for k, x := range row {
			w[k] = math.Exp(s * (x - mx))
			sum += w[k]
		}
		for k := range w {
			for c := 0; c < sh.P; c++ {
				out[n*sh.P+c] += w[k] / sum * d[(n*sh.K+k)*sh.P+c]
			}
		}
	}
	return out
}

// relErr is ‖got − want‖∞ / max(‖want‖∞, floor).
func relErr[T gatejet.Float](got []T, want []float64, floor float64) float64 {
	num, den := 0.0, floor
	for i := range want {
		num = math.Max(num, math.Abs(float64(got[i])-want[i]))
		den = math.Max(den, math.Abs(want[i]))
	}
	return num / den
}

// channelLens are the output lengths of the channels, by name.
var channelLens = map[string]func(Shape) int{
	"value": Shape.ValueLen, "first": Shape.FirstLen, "second": Shape.SecondLen, "hvp": Shape.FirstLen, "gn": Shape.GNLen,
}

// evalChannel runs kernels[name] on a new output of channel name's length and returns it; an
// unknown name or an error panics.
func evalChannel(name string, sh Shape, kernels map[string]func(out []float64) error) []float64 {
	run, ok := kernels[name]
	if !ok {
		panic(name)
	}
	out := make([]float64, channelLens[name](sh))
	if err := run(out); err != nil {
		panic(err)
	}
	return out
}

// callChannel evaluates the softmax gate's channel name ("value", "first", "second", "hvp",
// "gn") on the case.
func callChannel(name string, c jetCase) []float64 {
	l, d, v, sh, s := c.l, c.d, c.v, c.sh, c.s
	return evalChannel(name, sh, map[string]func([]float64) error{
		"value":  func(o []float64) error { return Softmax[float64]{InvTau: s}.Value(o, l, d, sh) },
		"first":  func(o []float64) error { return Softmax[float64]{InvTau: s}.First(o, l, d, sh) },
		"second": func(o []float64) error { return Softmax[float64]{InvTau: s}.Second(o, l, d, sh) },
		"hvp":    func(o []float64) error { return Softmax[float64]{InvTau: s}.HVP(o, l, d, v, sh) },
		"gn":     func(o []float64) error { return Softmax[float64]{InvTau: s}.GaussNewton(o, l, d, sh) },
	})
}

// TestChannelsAgainstFiniteDifferences proves each channel is the derivative of the one below
// it, starting from a value channel checked against a textbook softmax.
func TestChannelsAgainstFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, K := range testKs {
		t.Run(fmt.Sprintf("K=%d", K), func(t *testing.T) {
			c := newCase(rng, 2, K, 3)
			requireChannelsMatchFD(t, c, func(name string) []float64 { return callChannel(name, c) },
				func() []float64 { return naiveValue(c.l, c.d, c.sh, c.s) }, 1e-12)
		})
	}
}

// TestHVPDirectionalDerivative checks the HVP against a finite difference of first along v,
// a route that never builds second.
func TestHVPDirectionalDerivative(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, K := range testKs {
		c := newCase(rng, 3, K, 5)
		h := 1e-5
		lp, lm := make([]float64, len(c.l)), make([]float64, len(c.l))
		for i := range c.l {
			lp[i], lm[i] = c.l[i]+h*c.v[i], c.l[i]-h*c.v[i]
		}
		fp, fm := callChannel("first", jetCase{sh: c.sh, s: c.s, l: lp, d: c.d}), callChannel("first", jetCase{sh: c.sh, s: c.s, l: lm, d: c.d})
		want := make([]float64, len(fp))
		for i := range fp {
			want[i] = (fp[i] - fm[i]) / (2 * h)
		}
		require.Less(t, relErr(callChannel("hvp", c), want, 1e-3), 1e-8, "K=%d", K)
	}
}

// vjpCase evaluates one VJP and the scalar ⟨g, channel⟩ it differentiates.
type vjpKernel struct {
	name    string
	outLen  func(Shape) int
	channel string
	vjp     func(dl, dd, dv []float64, c jetCase, g []float64) error
}

var vjpKernels = []vjpKernel{
	{"value", Shape.ValueLen, "value", func(dl, dd, dv []float64, c jetCase, g []float64) error {
		return Softmax[float64]{InvTau: c.s}.ValueVJP(dl, dd, c.l, c.d, g, c.sh)
	}},
	{"first", Shape.FirstLen, "first", func(dl, dd, dv []float64, c jetCase, g []float64) error {
		return Softmax[float64]{InvTau: c.s}.FirstVJP(dl, dd, c.l, c.d, g, c.sh)
	}},
	{"second", Shape.SecondLen, "second", func(dl, dd, dv []float64, c jetCase, g []float64) error {
		return Softmax[float64]{InvTau: c.s}.SecondVJP(dl, dd, c.l, c.d, g, c.sh)
	}},
	{"hvp", Shape.FirstLen, "hvp", func(dl, dd, dv []float64, c jetCase, g []float64) error {
		return Softmax[float64]{InvTau: c.s}.HVPVJP(dl, dd, dv, c.l, c.d, c.v, g, c.sh)
	}},
	{"gn", Shape.GNLen, "gn", func(dl, dd, dv []float64, c jetCase, g []float64) error {
		return Softmax[float64]{InvTau: c.s}.GaussNewtonVJP(dl, dd, c.l, c.d, g, c.sh)
	}},
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// fdGrad is the central-difference gradient of f with respect to x (perturbed in place): the
// one column of testkit.FDJacobian.
func fdGrad(x []float64, f func() float64, h float64) []float64 {
	J := testkit.FDJacobian(x, func() []float64 { return []float64{f()} }, h)
	g := make([]float64, len(x))
	for i := range g {
		g[i] = J[i][0]
	}
	return g
}

func TestVJPsAgainstFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, kern := range vjpKernels {
		for _, K := range testKs {
			t.Run(fmt.Sprintf("%s/K=%d", kern.name, K), func(t *testing.T) {
				c := newCase(rng, 2, K, 3)
				g := randn(rng, kern.outLen(c.sh), 1)
				dd := requireVJPMatchesFD(t, c, kern.name == "hvp", func(dl, dd, dv []float64) error { return kern.vjp(dl, dd, dv, c, g) },
					func() float64 { return dot(g, callChannel(kern.channel, c)) })
				// Optional outputs: nil skips, and the other output is unchanged.
				dd2 := make([]float64, len(dd))
				require.NoError(t, kern.vjp(nil, dd2, nil, c, g))
				require.Equal(t, dd, dd2)
			})
		}
	}
}

// TestFirstVJPIsSecondContracted checks FirstVJP's logit gradient against the materialised
// second channel: dl_b = Σ_{a,c} G[a][c]·second[b][a][c].
func TestFirstVJPIsSecondContracted(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, K := range testKs {
		c := newCase(rng, 2, K, 4)
		g := randn(rng, c.sh.FirstLen(), 1)
		second := callChannel("second", c)
		want := make([]float64, c.sh.LogitsLen())
		for n := 0; n < c.sh.N; n++ {
			for b := 0; b < K; b++ {
				for a := 0; a < K; a++ {
					for col := 0; col < c.sh.P; col++ {
						want[n*K+b] += g[(n*K+a)*c.sh.P+col] * second[((n*K+b)*K+a)*c.sh.P+col]
					}
				}
			}
		}
		dl := make([]float64, c.sh.LogitsLen())
		require.NoError(t, Softmax[float64]{InvTau: c.s}.FirstVJP(dl, nil, c.l, c.d, g, c.sh))
		require.Less(t, relErr(dl, want, 1e-12), 1e-12, "K=%d", K)
	}
}

func TestInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, K := range testKs {
		c := newCase(rng, 4, K, 6)
		sh := c.sh
		first, second, gn := callChannel("first", c), callChannel("second", c), callChannel("gn", c)
		scale := 0.0
		for _, x := range second {
			scale = math.Max(scale, math.Abs(x))
		}
		for n := 0; n < sh.N; n++ {
			for col := 0; col < sh.P; col++ {
				sum := 0.0
				for a := 0; a < K; a++ {
					sum += first[(n*K+a)*sh.P+col]
				}
				require.InDelta(t, 0, sum, 1e-14*float64(K), "Σ_a first, K=%d", K)
				for a := 0; a < K; a++ {
					sum := 0.0
					for b := 0; b < K; b++ {
						x := second[((n*K+a)*K+b)*sh.P+col]
						y := second[((n*K+b)*K+a)*sh.P+col]
						require.Equal(t, x, y, "symmetry is exact, K=%d", K)
						sum += x
					}
					require.InDelta(t, 0, sum, 1e-14*scale*float64(K), "Σ_b second, K=%d", K)
				}
			}
			slab := gn[n*K*K : (n+1)*K*K]
			for a := 0; a < K; a++ {
				for b := 0; b < K; b++ {
					require.Equal(t, slab[a*K+b], slab[b*K+a], "slab symmetric")
				}
			}
			requirePSD(t, slab, K)
		}
	}
}

// requirePSD checks xᵀHx ≥ −tol for random x and the unit vectors, and the Cholesky-like
// criterion that every diagonal entry is non-negative.
func requirePSD(t *testing.T, H []float64, K int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(K), 11))
	scale := 0.0
	for _, x := range H {
		scale = math.Max(scale, math.Abs(x))
	}
	for trial := 0; trial < 20+K; trial++ {
		x := randn(rng, K, 1)
		if trial < K {
			clear(x)
			x[trial] = 1
		}
		q := 0.0
		for a := 0; a < K; a++ {
			for b := 0; b < K; b++ {
				q += x[a] * H[a*K+b] * x[b]
			}
		}
		require.GreaterOrEqual(t, q, -1e-12*scale*dot(x, x), "xᵀHx")
	}
}

func TestFloat32MatchesFloat64(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 13))
	for _, K := range testKs {
		c := newCase(rng, 3, K, 5)
		// Round the inputs once, so both precisions see the same numbers.
		l32, d32, v32 := to32(c.l), to32(c.d), to32(c.v)
		c.l, c.d, c.v = to64(l32), to64(d32), to64(v32)
		sh := c.sh
		check := func(name string, got []float32, want []float64) {
			require.Less(t, relErr(got, want, 1e-30), 1e-5, "%s K=%d", name, K)
		}
		out := make([]float32, sh.SecondLen())
		require.NoError(t, Softmax[float32]{InvTau: c.s}.Second(out, l32, d32, sh))
		check("second", out, callChannel("second", c))
		out = make([]float32, sh.FirstLen())
		require.NoError(t, Softmax[float32]{InvTau: c.s}.First(out, l32, d32, sh))
		check("first", out, callChannel("first", c))
		require.NoError(t, Softmax[float32]{InvTau: c.s}.HVP(out, l32, d32, v32, sh))
		check("hvp", out, callChannel("hvp", c))
		out = make([]float32, sh.GNLen())
		require.NoError(t, Softmax[float32]{InvTau: c.s}.GaussNewton(out, l32, d32, sh))
		check("gn", out, callChannel("gn", c))
		out = make([]float32, sh.ValueLen())
		require.NoError(t, Softmax[float32]{InvTau: c.s}.Value(out, l32, d32, sh))
		check("value", out, callChannel("value", c))

		g64 := randn(rng, sh.SecondLen(), 1)
		g32 := to32(g64)
		g64 = to64(g32)
		dl32, dd32 := make([]float32, sh.LogitsLen()), make([]float32, sh.DecodedLen())
		dl64, dd64 := make([]float64, sh.LogitsLen()), make([]float64, sh.DecodedLen())
		require.NoError(t, Softmax[float32]{InvTau: c.s}.SecondVJP(dl32, dd32, l32, d32, g32, sh))
		require.NoError(t, Softmax[float64]{InvTau: c.s}.SecondVJP(dl64, dd64, c.l, c.d, g64, sh))
		check("secondVJP dl", dl32, dl64)
		check("secondVJP dd", dd32, dd64)
	}
}

func to32(x []float64) []float32 {
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = float32(v)
	}
	return y
}

func to64(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}
