package softmaxjet

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

type logisticCase struct {
	jetCase
	alpha, beta []float64
}

func newLogisticCase(rng *rand.Rand, N, K, P int) logisticCase {
	c := logisticCase{jetCase: newCase(rng, N, K, P)}
	c.alpha = randn(rng, K, 1)
	c.beta = randn(rng, K, 0.5)
	return c
}

func naiveLogisticValue(l, d []float64, sh Shape, alpha, beta []float64) []float64 {
	out := make([]float64, sh.ValueLen())
	for n := 0; n < sh.N; n++ {
		for k := 0; k < sh.K; k++ {
			z := 1 / (1 + math.Exp(-(alpha[k]*l[n*sh.K+k] + beta[k])))
			for c := 0; c < sh.P; c++ {
				out[n*sh.P+c] += z * d[(n*sh.K+k)*sh.P+c]
			}
		}
	}
	return out
}

func logisticChannel(name string, c logisticCase) []float64 {
	sh := c.sh
	var out []float64
	var err error
	switch name {
	case "value":
		out = make([]float64, sh.ValueLen())
		err = LogisticValue(out, c.l, c.d, sh, c.alpha, c.beta)
	case "first":
		out = make([]float64, sh.FirstLen())
		err = LogisticFirst(out, c.l, c.d, sh, c.alpha, c.beta)
	case "second":
		out = make([]float64, sh.SecondLen())
		err = LogisticSecond(out, c.l, c.d, sh, c.alpha, c.beta)
	case "hvp":
		out = make([]float64, sh.FirstLen())
		err = LogisticHVP(out, c.l, c.d, c.v, sh, c.alpha, c.beta)
	case "gn":
		out = make([]float64, sh.GNLen())
		err = LogisticGaussNewton(out, c.l, c.d, sh, c.alpha, c.beta)
	}
	if err != nil {
		panic(err)
	}
	return out
}

func TestLogisticChannelsAgainstFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, K := range testKs {
		t.Run(fmt.Sprintf("K=%d", K), func(t *testing.T) {
			N, P := 2, 3
			c := newLogisticCase(rng, N, K, P)
			sh := c.sh
			require.Less(t, relErr(logisticChannel("value", c), naiveLogisticValue(c.l, c.d, sh, c.alpha, c.beta), 1), 1e-14)
			J := fdJacobian(c.l, func() []float64 { return naiveLogisticValue(c.l, c.d, sh, c.alpha, c.beta) }, 1e-5)
			first := logisticChannel("first", c)
			want := make([]float64, sh.FirstLen())
			for n := 0; n < N; n++ {
				for a := 0; a < K; a++ {
					for col := 0; col < P; col++ {
						want[(n*K+a)*P+col] = J[n*K+a][n*P+col]
					}
				}
			}
			require.Less(t, relErr(first, want, 1e-3), 1e-8, "first")
			J = fdJacobian(c.l, func() []float64 { return logisticChannel("first", c) }, 1e-5)
			second := logisticChannel("second", c)
			want = make([]float64, sh.SecondLen())
			for n := 0; n < N; n++ {
				for a := 0; a < K; a++ {
					for b := 0; b < K; b++ {
						for col := 0; col < P; col++ {
							want[((n*K+a)*K+b)*P+col] = J[n*K+a][(n*K+b)*P+col]
						}
					}
				}
			}
			require.Less(t, relErr(second, want, 1e-3), 1e-8, "second")
			hvp := logisticChannel("hvp", c)
			want = make([]float64, sh.FirstLen())
			gnWant := make([]float64, sh.GNLen())
			for n := 0; n < N; n++ {
				for a := 0; a < K; a++ {
					for b := 0; b < K; b++ {
						for col := 0; col < P; col++ {
							want[(n*K+a)*P+col] += second[((n*K+a)*K+b)*P+col] * c.v[n*K+b]
							gnWant[(n*K+a)*K+b] += first[(n*K+a)*P+col] * first[(n*K+b)*P+col]
						}
					}
				}
			}
			require.Less(t, relErr(hvp, want, 1e-12), 1e-13, "hvp")
			require.Less(t, relErr(logisticChannel("gn", c), gnWant, 1e-12), 1e-13, "gn")
		})
	}
}

func TestLogisticVJPsAgainstFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	type kern struct {
		name   string
		outLen func(Shape) int
		vjp    func(dl, dd, dv []float64, c logisticCase, g []float64) error
	}
	kerns := []kern{
		{"value", Shape.ValueLen, func(dl, dd, dv []float64, c logisticCase, g []float64) error {
			return LogisticValueVJP(dl, dd, c.l, c.d, g, c.sh, c.alpha, c.beta)
		}},
		{"first", Shape.FirstLen, func(dl, dd, dv []float64, c logisticCase, g []float64) error {
			return LogisticFirstVJP(dl, dd, c.l, c.d, g, c.sh, c.alpha, c.beta)
		}},
		{"second", Shape.SecondLen, func(dl, dd, dv []float64, c logisticCase, g []float64) error {
			return LogisticSecondVJP(dl, dd, c.l, c.d, g, c.sh, c.alpha, c.beta)
		}},
		{"hvp", Shape.FirstLen, func(dl, dd, dv []float64, c logisticCase, g []float64) error {
			return LogisticHVPVJP(dl, dd, dv, c.l, c.d, c.v, g, c.sh, c.alpha, c.beta)
		}},
		{"gn", Shape.GNLen, func(dl, dd, dv []float64, c logisticCase, g []float64) error {
			return LogisticGaussNewtonVJP(dl, dd, c.l, c.d, g, c.sh, c.alpha, c.beta)
		}},
	}
	for _, k := range kerns {
		for _, K := range []int{1, 2, 8, 17, 40} {
			t.Run(fmt.Sprintf("%s/K=%d", k.name, K), func(t *testing.T) {
				c := newLogisticCase(rng, 2, K, 3)
				g := randn(rng, k.outLen(c.sh), 1)
				dl, dd, dv := make([]float64, c.sh.LogitsLen()), make([]float64, c.sh.DecodedLen()), make([]float64, c.sh.LogitsLen())
				require.NoError(t, k.vjp(dl, dd, dv, c, g))
				L := func() float64 { return dot(g, logisticChannel(k.name, c)) }
				require.Less(t, relErr(dl, fdGrad(c.l, L, 1e-5), 1e-3), 1e-7, "dLogits")
				require.Less(t, relErr(dd, fdGrad(c.d, L, 1e-5), 1e-3), 1e-7, "dDecoded")
				if k.name == "hvp" {
					require.Less(t, relErr(dv, fdGrad(c.v, L, 1e-5), 1e-3), 1e-7, "dV")
				}
			})
		}
	}
}

func TestLogisticDerivsStable(t *testing.T) {
	for _, x := range []float64{-800, -40, -1, 0, 1, 40, 800} {
		s0, s1, s2, s3 := logisticDerivs(x)
		for _, v := range []float64{s0, s1, s2, s3} {
			require.False(t, math.IsNaN(v) || math.IsInf(v, 0), "x=%v", x)
		}
		if math.Abs(x) < 50 {
			h := 1e-5
			p0, p1, p2, _ := logisticDerivs(x + h)
			m0, m1, m2, _ := logisticDerivs(x - h)
			require.InDelta(t, (p0-m0)/(2*h), s1, 1e-9)
			require.InDelta(t, (p1-m1)/(2*h), s2, 1e-9)
			require.InDelta(t, (p2-m2)/(2*h), s3, 1e-9)
		}
	}
}
