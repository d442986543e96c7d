package softmaxjet

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/par"
	"github.com/gatejet/gatejet/internal/testkit"
	"github.com/stretchr/testify/require"
)

// TestLogitOffsets: softmax is invariant to adding a constant to every logit of a row; with
// the maximum subtracted, offsets of ±1e4 give finite channels equal to the un-offset ones.
func TestLogitOffsets(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for _, off := range []float64{1e4, -1e4} {
		c := newCase(rng, 3, 16, 4)
		c.s = 1
		base := map[string][]float64{}
		for _, ch := range []string{"value", "first", "second", "hvp", "gn"} {
			base[ch] = callChannel(ch, c)
		}
		shifted := c
		shifted.l = make([]float64, len(c.l))
		for i, x := range c.l {
			shifted.l[i] = x + off
		}
		for ch, want := range base {
			got := callChannel(ch, shifted)
			for _, x := range got {
				require.False(t, math.IsNaN(x) || math.IsInf(x, 0), "%s finite", ch)
			}
			// The offset logits carry |l|·ε ≈ 2e-12 of rounding into every gate.
			require.Less(t, relErr(got, want, 1e-3), 1e-10, "%s offset %v", ch, off)
		}
	}
}

// TestTemperatureScaling: the channels at inverse temperature s are those at s = 1 on the
// scaled logits s·l, times s^order — for s from 1e-3 to 1e3, including near one-hot gates.
func TestTemperatureScaling(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	for _, s := range []float64{1e-3, 0.1, 1, 10, 1e3} {
		c := newCase(rng, 3, 8, 4)
		c.s = s
		scaled := c
		scaled.s = 1
		scaled.l = make([]float64, len(c.l))
		for i, x := range c.l {
			scaled.l[i] = s * x
		}
		for _, tc := range []struct {
			ch    string
			order float64
		}{{"value", 0}, {"first", 1}, {"second", 2}, {"hvp", 2}, {"gn", 2}} {
			got := callChannel(tc.ch, c)
			want := callChannel(tc.ch, scaled)
			f := math.Pow(s, tc.order)
			for i := range want {
				want[i] *= f
			}
			for _, x := range got {
				require.False(t, math.IsNaN(x) || math.IsInf(x, 0))
			}
			require.Less(t, relErr(got, want, 1e-300), 1e-12, "%s at s=%v", tc.ch, s)
		}
	}
}

// TestNonFiniteStaysInItsRow: a NaN logit, a row of all −Inf logits or a +Inf decoded value
// spoil their own row only; every other row is bit-identical to a clean run.
func TestNonFiniteStaysInItsRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	N, K, P := 4, 5, 3
	clean := newCase(rng, N, K, P)
	poison := []struct {
		name string
		f    func(c *jetCase)
	}{
		{"NaN logit", func(c *jetCase) { c.l[1*K+2] = math.NaN() }},
		{"all -Inf logits", func(c *jetCase) {
			for k := 0; k < K; k++ {
				c.l[1*K+k] = math.Inf(-1)
			}
		}},
		{"+Inf logit", func(c *jetCase) { c.l[1*K] = math.Inf(1) }},
		{"NaN decoded", func(c *jetCase) { c.d[(1*K+3)*P+1] = math.NaN() }},
	}
	for _, p := range poison {
		bad := clean
		bad.l = append([]float64(nil), clean.l...)
		bad.d = append([]float64(nil), clean.d...)
		p.f(&bad)
		for _, ch := range []string{"value", "first", "second", "hvp", "gn"} {
			want, got := callChannel(ch, clean), callChannel(ch, bad)
			per := len(want) / N
			for n := 0; n < N; n++ {
				row := got[n*per : (n+1)*per]
				if n != 1 {
					require.Equal(t, want[n*per:(n+1)*per], row, "%s: %s leaked into row %d", p.name, ch, n)
					continue
				}
				hasNaN := false
				for _, x := range row {
					hasNaN = hasNaN || math.IsNaN(x)
				}
				require.True(t, hasNaN, "%s: %s row 1 should show the NaN", p.name, ch)
			}
		}
	}
}

// TestMaskedAtoms: −Inf logits alongside finite ones mask those atoms: zero gate, zero
// derivatives for them, and the rest equal to the jet over the unmasked atoms alone.
func TestMaskedAtoms(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 38))
	K, P := 6, 4
	c := newCase(rng, 1, K, P)
	masked := map[int]bool{1: true, 4: true}
	var keep []int
	for k := 0; k < K; k++ {
		if masked[k] {
			c.l[k] = math.Inf(-1)
		} else {
			keep = append(keep, k)
		}
	}
	small := jetCase{sh: Shape{1, len(keep), P}, s: c.s}
	for _, k := range keep {
		small.l = append(small.l, c.l[k])
		small.d = append(small.d, c.d[k*P:(k+1)*P]...)
	}
	first, smallFirst := callChannel("first", c), callChannel("first", small)
	second, smallSecond := callChannel("second", c), callChannel("second", small)
	for _, x := range append(first, second...) {
		require.False(t, math.IsNaN(x) || math.IsInf(x, 0))
	}
	Ks := len(keep)
	for a := 0; a < K; a++ {
		for col := 0; col < P; col++ {
			if masked[a] {
				require.Zero(t, first[a*P+col])
			}
		}
	}
	for i, a := range keep {
		for col := 0; col < P; col++ {
			require.InDelta(t, smallFirst[i*P+col], first[a*P+col], 1e-15)
		}
		for j, b := range keep {
			for col := 0; col < P; col++ {
				require.InDelta(t, smallSecond[(i*Ks+j)*P+col], second[(a*K+b)*P+col], 1e-15)
			}
		}
	}
}

func TestEmptyBatch(t *testing.T) {
	sh := Shape{0, 4, 3}
	var empty []float64
	require.NoError(t, Softmax[float64]{InvTau: 1}.Second(empty, empty, empty, sh))
	require.NoError(t, Softmax[float64]{InvTau: 1}.SecondVJP(empty, empty, empty, empty, empty, sh))
	require.NoError(t, Softmax[float64]{InvTau: 1}.HVPVJP(empty, empty, empty, empty, empty, empty, empty, sh))
	require.NoError(t, Logistic[float64]{Alpha: []float64{1, 1, 1, 1}, Beta: []float64{0, 0, 0, 0}}.Second(empty, empty, empty, sh))
}

func TestErrors(t *testing.T) {
	sh := Shape{2, 3, 4}
	l, d := make([]float64, 6), make([]float64, 24)
	al, be := []float64{1, 1, 1}, []float64{0, 0, 0}
	cases := []struct {
		name string
		call func() error
		kind error
		arg  string
	}{
		{"K=0", func() error { return Softmax[float64]{InvTau: 1}.First(nil, nil, nil, Shape{1, 0, 1}) }, gatejet.ErrShape, "shape"},
		{"P=0", func() error { return Softmax[float64]{InvTau: 1}.First(nil, nil, nil, Shape{1, 1, 0}) }, gatejet.ErrShape, "shape"},
		{"N<0", func() error { return Softmax[float64]{InvTau: 1}.First(nil, nil, nil, Shape{-1, 1, 1}) }, gatejet.ErrShape, "shape"},
		{"overflow", func() error {
			return Softmax[float64]{InvTau: 1}.Second(nil, nil, nil, Shape{1 << 20, 1 << 20, 1 << 20})
		}, gatejet.ErrSize, "shape"},
		{"dst short", func() error { return Softmax[float64]{InvTau: 1}.Second(make([]float64, 10), l, d, sh) }, gatejet.ErrSize, "dst"},
		{"logits short", func() error { return Softmax[float64]{InvTau: 1}.First(make([]float64, 24), l[:5], d, sh) }, gatejet.ErrSize, "logits"},
		{"decoded long", func() error { return Softmax[float64]{InvTau: 1}.Value(make([]float64, 8), l, make([]float64, 25), sh) }, gatejet.ErrSize, "decoded"},
		{"v short", func() error { return Softmax[float64]{InvTau: 1}.HVP(make([]float64, 24), l, d, l[:3], sh) }, gatejet.ErrSize, "v"},
		{"g short", func() error { return Softmax[float64]{InvTau: 1}.SecondVJP(nil, nil, l, d, make([]float64, 3), sh) }, gatejet.ErrSize, "g"},
		{"dLogits short", func() error { return Softmax[float64]{InvTau: 1}.FirstVJP(l[:2], nil, l, d, d, sh) }, gatejet.ErrSize, "dLogits"},
		{"invTau 0", func() error { return Softmax[float64]{InvTau: 0}.First(make([]float64, 24), l, d, sh) }, gatejet.ErrTemperature, "invTau"},
		{"invTau <0", func() error { return Softmax[float64]{InvTau: -2}.Second(make([]float64, 72), l, d, sh) }, gatejet.ErrTemperature, "invTau"},
		{"invTau NaN", func() error { return Softmax[float64]{InvTau: math.NaN()}.GaussNewton(make([]float64, 18), l, d, sh) }, gatejet.ErrTemperature, "invTau"},
		{"invTau Inf", func() error { return Softmax[float64]{InvTau: math.Inf(1)}.HVPVJP(nil, nil, nil, l, d, l, d, sh) }, gatejet.ErrTemperature, "invTau"},
		{"alpha len", func() error { return Logistic[float64]{Alpha: al[:2], Beta: be}.First(make([]float64, 24), l, d, sh) }, gatejet.ErrParam, "alpha"},
		{"beta NaN", func() error {
			return Logistic[float64]{Alpha: al, Beta: []float64{0, math.NaN(), 0}}.Second(make([]float64, 72), l, d, sh)
		}, gatejet.ErrNonFinite, "beta"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ge := testkit.RequireGatejetError(t, tc.call, tc.kind)
			require.Equal(t, tc.arg, ge.Arg)
			require.Contains(t, ge.Error(), "softmaxjet.")
		})
	}
}

// TestDeterministicAcrossCores: rows are independent and each is computed by one goroutine with
// the same code, so any split gives bit-identical output.
func TestDeterministicAcrossCores(t *testing.T) {
	rng := rand.New(rand.NewPCG(39, 40))
	c := newCase(rng, 257, 9, 7)
	g := randn(rng, c.sh.SecondLen(), 1)
	run := func() ([]float64, []float64, []float64) {
		sec := callChannel("second", c)
		dl, dd := make([]float64, c.sh.LogitsLen()), make([]float64, c.sh.DecodedLen())
		require.NoError(t, Softmax[float64]{InvTau: c.s}.SecondVJP(dl, dd, c.l, c.d, g, c.sh))
		return sec, dl, dd
	}
	old := par.SetMinWork(1 << 62)
	s1, l1, d1 := run()
	par.SetMinWork(0)
	for _, p := range []int{1, 2, 3, 8} {
		oldP := par.SetMaxProcs(p)
		s2, l2, d2 := run()
		par.SetMaxProcs(oldP)
		require.Equal(t, s1, s2)
		require.Equal(t, l1, l2)
		require.Equal(t, d1, d2)
	}
	par.SetMinWork(old)
}
