package softmaxjet

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/par"
	"github.com/gatejet/gatejet/internal/testkit"
)

// kernelCall is one call of every exported kernel on a fixed set of buffers.
type kernelCall struct {
	name string
	call func() error
}

// allKernels returns a call of each kernel, on element type T, over a batch of shape sh with
// inputs from rng, and outs, which returns a copy of every output buffer and zeroes them.
func allKernels[T gatejet.Float](rng *rand.Rand, sh Shape) (calls []kernelCall, outs func() [][]T) {
	conv := func(x []float64) []T {
		y := make([]T, len(x))
		for i, v := range x {
			y[i] = T(v)
		}
		return y
	}
	l, d, v := conv(randn(rng, sh.LogitsLen(), 1.5)), conv(randn(rng, sh.DecodedLen(), 1)), conv(randn(rng, sh.LogitsLen(), 1))
	gV, gF, gS, gG := conv(randn(rng, sh.ValueLen(), 1)), conv(randn(rng, sh.FirstLen(), 1)), conv(randn(rng, sh.SecondLen(), 1)), conv(randn(rng, sh.GNLen(), 1))
	alpha, beta := randn(rng, sh.K, 1), randn(rng, sh.K, 0.5)
	const s = 1.3
	var bufs [][]T
	mk := func(n int) []T { b := make([]T, n); bufs = append(bufs, b); return b }
	val, fst, sec, hvp, gn := mk(sh.ValueLen()), mk(sh.FirstLen()), mk(sh.SecondLen()), mk(sh.FirstLen()), mk(sh.GNLen())
	dl, dd, dv := mk(sh.LogitsLen()), mk(sh.DecodedLen()), mk(sh.LogitsLen())
	lval, lfst, lsec, lhvp, lgn := mk(sh.ValueLen()), mk(sh.FirstLen()), mk(sh.SecondLen()), mk(sh.FirstLen()), mk(sh.GNLen())
	ldl, ldd, ldv := mk(sh.LogitsLen()), mk(sh.DecodedLen()), mk(sh.LogitsLen())
	add := func(name string, f func() error) { calls = append(calls, kernelCall{name: name, call: f}) }
	add("Value", func() error { return Softmax[T]{InvTau: s}.Value(val, l, d, sh) })
	add("First", func() error { return Softmax[T]{InvTau: s}.First(fst, l, d, sh) })
	add("Second", func() error { return Softmax[T]{InvTau: s}.Second(sec, l, d, sh) })
	add("HVP", func() error { return Softmax[T]{InvTau: s}.HVP(hvp, l, d, v, sh) })
	add("GaussNewton", func() error { return Softmax[T]{InvTau: s}.GaussNewton(gn, l, d, sh) })
	add("ValueVJP", func() error { return Softmax[T]{InvTau: s}.ValueVJP(dl, dd, l, d, gV, sh) })
	add("FirstVJP", func() error { return Softmax[T]{InvTau: s}.FirstVJP(dl, dd, l, d, gF, sh) })
	add("SecondVJP", func() error { return Softmax[T]{InvTau: s}.SecondVJP(dl, dd, l, d, gS, sh) })
	add("HVPVJP", func() error { return Softmax[T]{InvTau: s}.HVPVJP(dl, dd, dv, l, d, v, gF, sh) })
	add("GaussNewtonVJP", func() error { return Softmax[T]{InvTau: s}.GaussNewtonVJP(dl, dd, l, d, gG, sh) })
	add("LogisticValue", func() error { return Logistic[T]{Alpha: alpha, Beta: beta}.Value(lval, l, d, sh) })
	add("LogisticFirst", func() error { return Logistic[T]{Alpha: alpha, Beta: beta}.First(lfst, l, d, sh) })
	add("LogisticSecond", func() error { return Logistic[T]{Alpha: alpha, Beta: beta}.Second(lsec, l, d, sh) })
	add("LogisticHVP", func() error { return Logistic[T]{Alpha: alpha, Beta: beta}.HVP(lhvp, l, d, v, sh) })
	add("LogisticGaussNewton", func() error { return Logistic[T]{Alpha: alpha, Beta: beta}.GaussNewton(lgn, l, d, sh) })
	add("LogisticValueVJP", func() error { return Logistic[T]{Alpha: alpha, Beta: beta}.ValueVJP(ldl, ldd, l, d, gV, sh) })
	add("LogisticFirstVJP", func() error { return Logistic[T]{Alpha: alpha, Beta: beta}.FirstVJP(ldl, ldd, l, d, gF, sh) })
	add("LogisticSecondVJP", func() error { return Logistic[T]{Alpha: alpha, Beta: beta}.SecondVJP(ldl, ldd, l, d, gS, sh) })
	add("LogisticHVPVJP", func() error { return Logistic[T]{Alpha: alpha, Beta: beta}.HVPVJP(ldl, ldd, ldv, l, d, v, gF, sh) })
	add("LogisticGaussNewtonVJP", func() error { return Logistic[T]{Alpha: alpha, Beta: beta}.GaussNewtonVJP(ldl, ldd, l, d, gG, sh) })
	return calls, func() [][]T {
		cp := make([][]T, len(bufs))
		for i, b := range bufs {
			cp[i] = append([]T(nil), b...)
			clear(b)
		}
		return cp
	}
}

// TestKernelsAllocateNothing: once the pools are warm, a call of any kernel allocates nothing,
// on the caller alone and split over the cores (the row split's bookkeeping is pooled too).
func TestKernelsAllocateNothing(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("allocation counts are not meaningful under -cover or -race (sync.Pool drops items at random)")
	}
	for _, split := range []bool{false, true} {
		mw := int64(math.MaxInt64)
		if split {
			mw = 0
		}
		func() {
			defer par.SetMinWork(par.SetMinWork(mw))
			sh := Shape{N: 64, K: 8, P: 12}
			c64, _ := allKernels[float64](rand.New(rand.NewPCG(1, 2)), sh)
			c32, _ := allKernels[float32](rand.New(rand.NewPCG(1, 2)), sh)
			for i, calls := range [][]kernelCall{c64, c32} {
				for _, kc := range calls {
					name := fmt.Sprintf("%s/f%d/split=%v", kc.name, 64>>i, split)
					require.NoError(t, kc.call(), name)
					allocs := testing.AllocsPerRun(50, func() {
						if err := kc.call(); err != nil {
							panic(err)
						}
					})
					require.Zero(t, allocs, name)
				}
			}
		}()
	}
}

// TestKernelsDeterministicAcrossCores: every kernel, float64 and float32, gives bit-identical
// outputs on one goroutine and split over 1, 2, 3 or 8 of them.
func TestKernelsDeterministicAcrossCores(t *testing.T) {
	sh := Shape{N: 97, K: 9, P: 7}
	t.Run("f64", func(t *testing.T) { deterministicKernels[float64](t, sh) })
	t.Run("f32", func(t *testing.T) { deterministicKernels[float32](t, sh) })
}

func deterministicKernels[T gatejet.Float](t *testing.T, sh Shape) {
	calls, outs := allKernels[T](rand.New(rand.NewPCG(3, 4)), sh)
	runAll := func() [][][]T {
		var res [][][]T
		for _, kc := range calls {
			require.NoError(t, kc.call(), kc.name)
			res = append(res, outs())
		}
		return res
	}
	old := par.SetMinWork(math.MaxInt64)
	defer par.SetMinWork(old)
	want := runAll()
	par.SetMinWork(0)
	for _, p := range []int{1, 2, 3, 8} {
		oldP := par.SetMaxProcs(p)
		got := runAll()
		par.SetMaxProcs(oldP)
		for k := range want {
			for b := range want[k] {
				for i := range want[k][b] {
					w, g := want[k][b][i], got[k][b][i]
					if math.Float64bits(float64(w)) != math.Float64bits(float64(g)) {
						t.Fatalf("%s: buffer %d [%d]: %v on one goroutine, %v split over %d", calls[k].name, b, i, w, g, p)
					}
				}
			}
		}
	}
}

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

// TestKernelsVectorEqualGo: with the AVX loops on and off, every kernel gives the same bits,
// for P a multiple of the lane count (and of 16) and not.
func TestKernelsVectorEqualGo(t *testing.T) {
	testkit.RequireAVX(t, "loops", hasAVX, &useAVX)
	for _, sh := range []Shape{{N: 13, K: 9, P: 7}, {N: 11, K: 5, P: 16}, {N: 6, K: 17, P: 37}, {N: 5, K: 1, P: 3}} {
		t.Run(fmt.Sprintf("%+v/f64", sh), func(t *testing.T) { vectorEqualGo[float64](t, sh) })
		t.Run(fmt.Sprintf("%+v/f32", sh), func(t *testing.T) { vectorEqualGo[float32](t, sh) })
	}
}

func vectorEqualGo[T gatejet.Float](t *testing.T, sh Shape) {
	calls, outs := allKernels[T](rand.New(rand.NewPCG(9, uint64(sh.P))), sh)
	for _, kc := range calls {
		useAVX = false
		require.NoError(t, kc.call(), kc.name)
		want := outs()
		useAVX = true
		require.NoError(t, kc.call(), kc.name)
		got := outs()
		for b := range want {
			for i := range want[b] {
				if math.Float64bits(float64(want[b][i])) != math.Float64bits(float64(got[b][i])) {
					t.Fatalf("%s: buffer %d [%d]: Go %v, AVX %v", kc.name, b, i, want[b][i], got[b][i])
				}
			}
		}
	}
}
