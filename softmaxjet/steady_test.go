package softmaxjet

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet/internal/par"
	"github.com/gatejet/gatejet/internal/testkit"
)

// TestSecondVectorEqualsGo: the AVX slab loop, with ordinary and with non-temporal stores,
// gives the very bits of the Go loop, for P a multiple of the lane count and not, on one
// goroutine and split.
func TestSecondVectorEqualsGo(t *testing.T) {
	testkit.RequireAVX(t, "slab loop", hasAVX, &useAVX)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, sh := range []Shape{{N: 300, K: 16, P: 16}, {N: 7, K: 130, P: 9}, {N: 3, K: 512, P: 1}, {N: 40, K: 3, P: 1000}, {N: 50, K: 5, P: 8}, {N: 9, K: 7, P: 20}} {
		for _, mw := range []int64{math.MaxInt64, 0} {
			c := newCase(rng, sh.N, sh.K, sh.P)
			l32, d32 := to32(c.l), to32(c.d)
			run := func() ([]float64, []float32) {
				o64, o32 := make([]float64, sh.SecondLen()), make([]float32, sh.SecondLen())
				require.NoError(t, Softmax[float64]{InvTau: c.s}.Second(o64, c.l, c.d, sh))
				require.NoError(t, Softmax[float32]{InvTau: c.s}.Second(o32, l32, d32, sh))
				return o64, o32
			}
			old := par.SetMinWork(mw)
			useAVX = false
			want64, want32 := run()
			useAVX = true
			for _, nt := range []int{1 << 62, 0} {
				oldNT := ntMin
				ntMin = nt
				got64, got32 := run()
				ntMin = oldNT
				require.Equal(t, want64, got64, "f64 %+v minWork=%d ntMin=%d", sh, mw, nt)
				require.Equal(t, want32, got32, "f32 %+v minWork=%d ntMin=%d", sh, mw, nt)
			}
			par.SetMinWork(old)
		}
	}
}

// TestSecondFloat32Ranges: blocks whose coefficient or centred values fall outside the range
// where float32 arithmetic is safe are computed in float64 and rounded once, so huge decoded
// values or temperatures give the float64 result rounded, not overflow.
func TestSecondFloat32Ranges(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct {
		name   string
		dScale float64
		s      float64
	}{{"huge decoded", 1e35, 1}, {"tiny decoded", 1e-35, 1}, {"hot", 1, 1e25}, {"cold", 1, 1e-25}} {
		sh := Shape{N: 4, K: 6, P: 5}
		l := randn(rng, sh.LogitsLen(), 1)
		d := randn(rng, sh.DecodedLen(), tc.dScale)
		l32, d32 := to32(l), to32(d)
		l, d = to64(l32), to64(d32)
		want := make([]float64, sh.SecondLen())
		require.NoError(t, Softmax[float64]{InvTau: tc.s}.Second(want, l, d, sh))
		got := make([]float32, sh.SecondLen())
		require.NoError(t, Softmax[float32]{InvTau: tc.s}.Second(got, l32, d32, sh))
		for i, w := range want {
			g := float64(got[i])
			w32 := float64(float32(w))
			if math.IsInf(w32, 0) {
				require.Equal(t, w32, g, "%s [%d]", tc.name, i)
				continue
			}
			require.False(t, math.IsNaN(g) || math.IsInf(g, 0), "%s [%d] = %v, want %v", tc.name, i, g, w)
		}
		// Against the float64 result rounded once (a cold gate underflows float32 either way).
		require.Less(t, relErr(got, to64(to32(want)), 1e-300), 1e-5, tc.name)
	}
}
