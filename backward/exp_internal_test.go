package backward

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// ulps returns |a − b| in units of b's last place.
func ulps(a, b float64) float64 {
	if a == b {
		return 0
	}
	_, e := math.Frexp(b)
	return math.Abs(a-b) / math.Ldexp(1, e-53)
}

func TestExpMatchesMathExp(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	var worst, worstX float64
	check := func(x float64) {
		u := ulps(exp(x), math.Exp(x))
		if u > worst {
			worst, worstX = u, x
		}
		require.LessOrEqual(t, u, 3.0, "x=%v: exp %v, math.Exp %v", x, exp(x), math.Exp(x))
	}
	for i := 0; i < 200_000; i++ {
		check(-710 + 1420*r.Float64())
		check(-10 + 20*r.Float64())
		check((r.Float64() - 0.5) * 1e-3)
	}
	for _, x := range []float64{0, -0.0, 1, -1, expMin, expMax, math.Nextafter(expMin, 0), math.Nextafter(expMax, 0),
		math.Ln2 / 128, -math.Ln2 / 128, 5e-324, -5e-324} {
		check(x)
	}
	t.Logf("worst difference from math.Exp %.2f ulp at x=%v", worst, worstX)
	for _, x := range []float64{math.Inf(1), math.Inf(-1), math.NaN(), 709.5, 709.8, 710, -708.5, -745, -746, 1e300, -1e300} {
		want := math.Exp(x)
		if math.IsNaN(want) {
			require.True(t, math.IsNaN(exp(x)))
			continue
		}
		require.Equal(t, want, exp(x), "x=%v", x)
	}
}

// TestExpOfMatchesExp checks that the loop form (with AVX2, the vector loop where all four
// values of a group are in its range) agrees with the scalar form bit for bit, for float64
// and float32 sources.
func TestExpOfMatchesExp(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	src := make([]float64, 10000)
	for i := range src {
		src[i] = -800 + 1600*r.Float64()
	}
	// The edges of the vector loop's range (expLanes), each in every lane of a group of four:
	// results that are subnormal, overflow, or exact.
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), expMin, expMax,
		math.Nextafter(expMin, math.Inf(-1)), math.Nextafter(expMax, math.Inf(1)), -708.5, -745, -745.2, -746, 709.5, 710, 1e300, -1e300} {
		for lane := 0; lane < 4; lane++ {
			for i := 0; i < 4; i++ {
				src = append(src, -0.5*float64(i))
			}
			src[len(src)-4+lane] = x
		}
	}
	dst := expOf(make([]float64, len(src)), src)
	for i, x := range src {
		if math.IsNaN(x) { // a NaN's payload is whatever the operations propagate
			require.True(t, math.IsNaN(dst[i]))
			continue
		}
		require.Equal(t, math.Float64bits(exp(x)), math.Float64bits(dst[i]), "x=%v", x)
	}
	src32 := make([]float32, len(src))
	for i, x := range src {
		src32[i] = float32(x)
	}
	dst = expOf(dst, src32)
	for i, x := range src32 {
		if x != x {
			require.True(t, math.IsNaN(dst[i]))
			continue
		}
		require.Equal(t, math.Float64bits(exp(float64(x))), math.Float64bits(dst[i]), "x=%v", x)
	}
}

func BenchmarkExp(b *testing.B) {
	xs := make([]float64, 4096)
	for i := range xs {
		xs[i] = float64(i)/256 - 8
	}
	ys := make([]float64, len(xs))
	b.Run("exp", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			for j, x := range xs {
				ys[j] = exp(x)
			}
		}
	})
	b.Run("expOf", func(b *testing.B) { // the vector loop with AVX2
		for i := 0; i < b.N; i++ {
			expOf(ys, xs)
		}
	})
	b.Run("math.Exp", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			for j, x := range xs {
				ys[j] = math.Exp(x)
			}
		}
	})
}
