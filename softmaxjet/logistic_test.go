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

// logisticChannel evaluates the logistic gate's channel name ("value", "first", "second",
// "hvp", "gn") on the case.
func logisticChannel(name string, c logisticCase) []float64 {
	l, d, v, sh, al, be := c.l, c.d, c.v, c.sh, c.alpha, c.beta
	return evalChannel(name, sh, map[string]func([]float64) error{
		"value":  func(o []float64) error { return Logistic[float64]{Alpha: al, Beta: be}.Value(o, l, d, sh) },
		"first":  func(o []float64) error { return Logistic[float64]{Alpha: al, Beta: be}.First(o, l, d, sh) },
		"second": func(o []float64) error { return Logistic[float64]{Alpha: al, Beta: be}.Second(o, l, d, sh) },
		"hvp":    func(o []float64) error { return Logistic[float64]{Alpha: al, Beta: be}.HVP(o, l, d, v, sh) },
		"gn":     func(o []float64) error { return Logistic[float64]{Alpha: al, Beta: be}.GaussNewton(o, l, d, sh) },
	})
}

func TestLogisticChannelsAgainstFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, K := range testKs {
		t.Run(fmt.Sprintf("K=%d", K), func(t *testing.T) {
			c := newLogisticCase(rng, 2, K, 3)
			requireChannelsMatchFD(t, c.jetCase, func(name string) []float64 { return logisticChannel(name, c) },
				func() []float64 { return naiveLogisticValue(c.l, c.d, c.sh, c.alpha, c.beta) }, 1e-13)
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
			return Logistic[float64]{Alpha: c.alpha, Beta: c.beta}.ValueVJP(dl, dd, c.l, c.d, g, c.sh)
		}},
		{"first", Shape.FirstLen, func(dl, dd, dv []float64, c logisticCase, g []float64) error {
			return Logistic[float64]{Alpha: c.alpha, Beta: c.beta}.FirstVJP(dl, dd, c.l, c.d, g, c.sh)
		}},
		{"second", Shape.SecondLen, func(dl, dd, dv []float64, c logisticCase, g []float64) error {
			return Logistic[float64]{Alpha: c.alpha, Beta: c.beta}.SecondVJP(dl, dd, c.l, c.d, g, c.sh)
		}},
		{"hvp", Shape.FirstLen, func(dl, dd, dv []float64, c logisticCase, g []float64) error {
			return Logistic[float64]{Alpha: c.alpha, Beta: c.beta}.HVPVJP(dl, dd, dv, c.l, c.d, c.v, g, c.sh)
		}},
		{"gn", Shape.GNLen, func(dl, dd, dv []float64, c logisticCase, g []float64) error {
			return Logistic[float64]{Alpha: c.alpha, Beta: c.beta}.GaussNewtonVJP(dl, dd, c.l, c.d, g, c.sh)
		}},
	}
	for _, k := range kerns {
		for _, K := range []int{1, 2, 8, 17, 40} {
			t.Run(fmt.Sprintf("%s/K=%d", k.name, K), func(t *testing.T) {
				c := newLogisticCase(rng, 2, K, 3)
				g := randn(rng, k.outLen(c.sh), 1)
				requireVJPMatchesFD(t, c.jetCase, k.name == "hvp", func(dl, dd, dv []float64) error { return k.vjp(dl, dd, dv, c, g) },
					func() float64 { return dot(g, logisticChannel(k.name, c)) })
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
