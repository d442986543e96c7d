package softmaxjet

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/testkit"
	"github.com/gatejet/gatejet/internal/tower"
	"github.com/stretchr/testify/require"
)

// This file holds the tests of the accepted parameter ranges (gatejet.MaxInvTau,
// gatejet.MaxLogisticAlpha), of the size checks made before allocating, and of the refusal of
// overlapping outputs.

// gateArg is a gate: softmax at inverse temperature s, or logistic with α, β.
type gateArg struct {
	logistic    bool
	s           float64
	alpha, beta []float64
}

// output is one output of one call, with the power of s (or α) it scales with.
type output struct {
	name  string
	order int
	data  []float64
}

// limitInputs are a batch's inputs: logits, decoded, direction, and the upstream gradients of
// the value, first (and HVP), second and Gauss-Newton channels.
type limitInputs[T gatejet.Float] struct {
	l, d, v, gV, gF, gS, gN []T
}

func toF64[T gatejet.Float](x []T) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

// runAll runs every channel and every VJP of the gate, and the tower, and returns their
// outputs.
func runAll[T gatejet.Float](t *testing.T, sh Shape, g gateArg, in limitInputs[T]) []output {
	t.Helper()
	var outs []output
	add := func(name string, order int, x []T) { outs = append(outs, output{name, order, toF64(x)}) }
	mk := func(n int) []T { return make([]T, n) }
	l, d, v := in.l, in.d, in.v
	val, fst, sec, hvp, gn := mk(sh.ValueLen()), mk(sh.FirstLen()), mk(sh.SecondLen()), mk(sh.FirstLen()), mk(sh.GNLen())
	type vjp struct {
		name       string
		orderL     int
		call       func(dl, dd, dv []T) error
		hasDV      bool
		orderD, dV int
	}
	var vjps []vjp
	if !g.logistic {
		s := g.s
		require.NoError(t, Softmax[T]{InvTau: s}.Value(val, l, d, sh))
		require.NoError(t, Softmax[T]{InvTau: s}.First(fst, l, d, sh))
		require.NoError(t, Softmax[T]{InvTau: s}.Second(sec, l, d, sh))
		require.NoError(t, Softmax[T]{InvTau: s}.HVP(hvp, l, d, v, sh))
		require.NoError(t, Softmax[T]{InvTau: s}.GaussNewton(gn, l, d, sh))
		vjps = []vjp{
			{"ValueVJP", 1, func(dl, dd, _ []T) error { return Softmax[T]{InvTau: s}.ValueVJP(dl, dd, l, d, in.gV, sh) }, false, 0, 0},
			{"FirstVJP", 2, func(dl, dd, _ []T) error { return Softmax[T]{InvTau: s}.FirstVJP(dl, dd, l, d, in.gF, sh) }, false, 1, 0},
			{"SecondVJP", 3, func(dl, dd, _ []T) error { return Softmax[T]{InvTau: s}.SecondVJP(dl, dd, l, d, in.gS, sh) }, false, 2, 0},
			{"HVPVJP", 3, func(dl, dd, dv []T) error { return Softmax[T]{InvTau: s}.HVPVJP(dl, dd, dv, l, d, v, in.gF, sh) }, true, 2, 2},
			{"GaussNewtonVJP", 3, func(dl, dd, _ []T) error { return Softmax[T]{InvTau: s}.GaussNewtonVJP(dl, dd, l, d, in.gN, sh) }, false, 2, 0},
		}
	} else {
		a, b := g.alpha, g.beta
		require.NoError(t, Logistic[T]{Alpha: a, Beta: b}.Value(val, l, d, sh))
		require.NoError(t, Logistic[T]{Alpha: a, Beta: b}.First(fst, l, d, sh))
		require.NoError(t, Logistic[T]{Alpha: a, Beta: b}.Second(sec, l, d, sh))
		require.NoError(t, Logistic[T]{Alpha: a, Beta: b}.HVP(hvp, l, d, v, sh))
		require.NoError(t, Logistic[T]{Alpha: a, Beta: b}.GaussNewton(gn, l, d, sh))
		vjps = []vjp{
			{"ValueVJP", 1, func(dl, dd, _ []T) error { return Logistic[T]{Alpha: a, Beta: b}.ValueVJP(dl, dd, l, d, in.gV, sh) }, false, 0, 0},
			{"FirstVJP", 2, func(dl, dd, _ []T) error { return Logistic[T]{Alpha: a, Beta: b}.FirstVJP(dl, dd, l, d, in.gF, sh) }, false, 1, 0},
			{"SecondVJP", 3, func(dl, dd, _ []T) error { return Logistic[T]{Alpha: a, Beta: b}.SecondVJP(dl, dd, l, d, in.gS, sh) }, false, 2, 0},
			{"HVPVJP", 3, func(dl, dd, dv []T) error {
				return Logistic[T]{Alpha: a, Beta: b}.HVPVJP(dl, dd, dv, l, d, v, in.gF, sh)
			}, true, 2, 2},
			{"GaussNewtonVJP", 3, func(dl, dd, _ []T) error {
				return Logistic[T]{Alpha: a, Beta: b}.GaussNewtonVJP(dl, dd, l, d, in.gN, sh)
			}, false, 2, 0},
		}
	}
	add("Value", 0, val)
	add("First", 1, fst)
	add("Second", 2, sec)
	add("HVP", 2, hvp)
	add("GaussNewton", 2, gn)
	for _, k := range vjps {
		dl, dd := mk(sh.LogitsLen()), mk(sh.DecodedLen())
		var dv []T
		if k.hasDV {
			dv = mk(sh.LogitsLen())
		}
		require.NoError(t, k.call(dl, dd, dv), k.name)
		add(k.name+"/dLogits", k.orderL, dl)
		add(k.name+"/dDecoded", k.orderD, dd)
		if k.hasDV {
			add(k.name+"/dV", k.dV, dv)
		}
	}
	var tv, tf, ts = mk(sh.ValueLen()), mk(sh.FirstLen()), mk(sh.SecondLen())
	var err error
	if g.logistic {
		err = tower.TowerLogisticChannels(tv, tf, ts, l, d, tower.Shape(sh), g.alpha, g.beta)
	} else {
		err = tower.TowerChannels(tv, tf, ts, l, d, tower.Shape(sh), g.s)
	}
	if err == nil {
		add("Tower/value", 0, tv)
		add("Tower/first", 1, tf)
		add("Tower/second", 2, ts)
	} else {
		// Only a float32 tower may refuse, past the range of its jets.
		var z T
		require.ErrorIs(t, err, map[bool]error{false: gatejet.ErrTemperature, true: gatejet.ErrParam}[g.logistic])
		require.IsType(t, float32(0), any(z))
	}
	return outs
}

// limitCase draws a batch of moderate values: logits, decoded values, directions and
// upstream gradients of magnitude about 1.
func limitCase[T gatejet.Float](rng *rand.Rand, sh Shape) limitInputs[T] {
	f := func(n int) []T {
		x := make([]T, n)
		for i := range x {
			x[i] = T(rng.NormFloat64())
		}
		return x
	}
	return limitInputs[T]{f(sh.LogitsLen()), f(sh.DecodedLen()), f(sh.LogitsLen()), f(sh.ValueLen()),
		f(sh.FirstLen()), f(sh.SecondLen()), f(sh.GNLen())}
}

// oneHotLimit returns what every output is at a one-hot gate (gate k* of each row is 1, the
// others 0; pick gives k* for row n): the value is D[k*], the value VJP's dDecoded is g on
// k* and 0 elsewhere, and every other output — every derivative of the gate — is exactly 0,
// the limit of s^k·e^(−s·gap) as s grows.
func oneHotLimit[T gatejet.Float](name string, n int, sh Shape, in limitInputs[T], pick func(n int) []bool) []float64 {
	out := make([]float64, n)
	K, P := sh.K, sh.P
	switch name {
	case "Value", "Tower/value":
		for r := 0; r < sh.N; r++ {
			for k, on := range pick(r) {
				if on {
					for c := 0; c < P; c++ {
						out[r*P+c] += float64(in.d[(r*K+k)*P+c])
					}
				}
			}
		}
	case "ValueVJP/dDecoded":
		for r := 0; r < sh.N; r++ {
			for k, on := range pick(r) {
				if on {
					for c := 0; c < P; c++ {
						out[(r*K+k)*P+c] = float64(in.gV[r*P+c])
					}
				}
			}
		}
	}
	for i, x := range out {
		out[i] = float64(T(x)) // the kernels sum in float64 and round once
	}
	return out
}

// requireOneHotLimits runs every output of the gate g (runAll) and checks that each is finite
// and exactly its limit at the one-hot (or saturated) gate pick (oneHotLimit); what labels
// the failures.
func requireOneHotLimits[T gatejet.Float](t *testing.T, what string, sh Shape, g gateArg, in limitInputs[T], pick func(n int) []bool) {
	t.Helper()
	for _, o := range runAll(t, sh, g, in) {
		want := oneHotLimit(o.name, len(o.data), sh, in, pick)
		for i, x := range o.data {
			require.False(t, math.IsNaN(x) || math.IsInf(x, 0), "%s %s[%d] = %v", what, o.name, i, x)
			require.Equal(t, want[i], x, "%s %s[%d]: limit", what, o.name, i)
		}
	}
}

// TestExtremeTemperatures: at every accepted inverse temperature up to gatejet.MaxInvTau,
// every channel and VJP (and the tower) of finite moderate inputs is finite; at large s the
// gate is one-hot and each output is its exact limit; with tied logits, where the gate is not
// one-hot at any s, each output is s^order times its value at s = 1 (the orders reach s³);
// and at s = 1e-300 the gate is uniform. Before the bound, s = 5.7e102 (s³ overflows) made
// SecondVJP and HVPVJP dLogits NaN, and s = 1.35e154 (s²) Second, HVP and FirstVJP too.
func TestExtremeTemperatures(t *testing.T) {
	forFloats(t, extremeTemperatures[float64], extremeTemperatures[float32])
}

func extremeTemperatures[T gatejet.Float](t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 72))
	sh := Shape{N: 3, K: 5, P: 3}
	for _, s := range []float64{1e50, 1e99, gatejet.MaxInvTau} {
		in := limitCase[T](rng, sh)
		argmax := func(n int) []bool {
			on := make([]bool, sh.K)
			best := 0
			for k := 1; k < sh.K; k++ {
				if in.l[n*sh.K+k] > in.l[n*sh.K+best] {
					best = k
				}
			}
			on[best] = true
			return on
		}
		requireOneHotLimits(t, fmt.Sprintf("s=%g", s), sh, gateArg{s: s}, in, argmax)

		// Tied maxima: atoms 0 and 1 share the largest logit, so ζ = (½, ½, 0, …) at any large
		// s, which is the gate at s = 1 with the other atoms masked (−Inf).
		tied, masked := in, in
		tied.l, masked.l = make([]T, len(in.l)), make([]T, len(in.l))
		for n := 0; n < sh.N; n++ {
			for k := 0; k < sh.K; k++ {
				i := n*sh.K + k
				tied.l[i], masked.l[i] = T(-1-float64(k)), T(math.Inf(-1))
				if k < 2 {
					tied.l[i], masked.l[i] = 0.5, 0.5
				}
			}
		}
		requireScaled[T](t, fmt.Sprintf("tied s=%g", s), s, runAll(t, sh, gateArg{s: s}, tied), runAll(t, sh, gateArg{s: 1}, in64(masked)))
	}

	// A tiny inverse temperature: the gate is uniform and each output is s^order times its
	// value on all-equal logits at s = 1 (0 where that underflows, as it must).
	const s = 1e-300
	in := limitCase[T](rng, sh)
	flat := in
	flat.l = make([]T, len(in.l))
	requireScaled[T](t, "s=1e-300", s, runAll(t, sh, gateArg{s: s}, in), runAll(t, sh, gateArg{s: 1}, in64(flat)))
}

func isFloat32[T gatejet.Float]() bool {
	var z T
	return unsafe.Sizeof(z) == 4
}

// byName indexes outputs by name.
func byName(outs []output) map[string]output {
	m := map[string]output{}
	for _, o := range outs {
		m[o.name] = o
	}
	return m
}

// in64 converts inputs to float64: references are computed in float64 on the same values.
func in64[T gatejet.Float](in limitInputs[T]) limitInputs[float64] {
	return limitInputs[float64]{toF64(in.l), toF64(in.d), toF64(in.v), toF64(in.gV), toF64(in.gF), toF64(in.gS), toF64(in.gN)}
}

// requireScaled checks got = f^order·ref output by output (ref computed in float64): NaN
// never, and, within a tolerance relative to the largest entry of the reference (the terms of
// a sum are scaled one by one), the scaled reference wherever that scale is within T's range.
func requireScaled[T gatejet.Float](t *testing.T, what string, f float64, got, ref []output) {
	t.Helper()
	is32 := isFloat32[T]()
	rm := byName(ref)
	for _, o := range got {
		r, ok := rm[o.name]
		require.True(t, ok, "%s: %s has no reference", what, o.name)
		fo := math.Pow(f, float64(o.order))
		tol := 1e-12
		if is32 {
			tol = 1e-5
		}
		tol *= fo * math.Max(testkit.MaxAbs(r.data), 1)
		for i, x := range o.data {
			require.False(t, math.IsNaN(x), "%s %s[%d] = %v", what, o.name, i, x)
			want := fo * r.data[i]
			if is32 && tol > 1e-5*math.MaxFloat32 {
				// The output's scale f^order·|ref| is beyond float32: an entry is its float64
				// value rounded once, and so ±Inf unless that is exactly 0 (never NaN).
				continue
			}
			require.False(t, math.IsInf(x, 0), "%s %s[%d] = %v, want %v", what, o.name, i, x, want)
			require.InDelta(t, want, x, tol+0x1p-149, "%s %s[%d]", what, o.name, i)
		}
	}
}

// TestExtremeLogisticSlopes: the same for the logistic gate up to gatejet.MaxLogisticAlpha:
// a saturated gate (σ = 0 or 1) has exactly zero derivatives, and at l = 0 (σ(β), not
// saturated) each output is α^order times its value at α = 1. Before the bound, α = 1e200
// made LogisticSecond NaN (α² overflows, times σ” = 0).
func TestExtremeLogisticSlopes(t *testing.T) {
	forFloats(t, extremeLogisticSlopes[float64], extremeLogisticSlopes[float32])
}

func extremeLogisticSlopes[T gatejet.Float](t *testing.T) {
	rng := rand.New(rand.NewPCG(73, 74))
	sh := Shape{N: 3, K: 4, P: 2}
	for _, a := range []float64{1e50, 1e99, gatejet.MaxLogisticAlpha, -gatejet.MaxLogisticAlpha} {
		alpha, beta := make([]float64, sh.K), make([]float64, sh.K)
		for k := range alpha {
			alpha[k], beta[k] = a, rng.NormFloat64()
		}
		in := limitCase[T](rng, sh)
		on := func(n int) []bool {
			o := make([]bool, sh.K)
			for k := range o {
				o[k] = a*float64(in.l[n*sh.K+k]) > 0
			}
			return o
		}
		requireOneHotLimits(t, fmt.Sprintf("α=%g", a), sh, gateArg{logistic: true, alpha: alpha, beta: beta}, in, on)

		// l = 0: the gate is σ(β) whatever α, and its k-th derivative α^k·σ^(k)(β).
		zero := in
		zero.l = make([]T, len(in.l))
		ones := make([]float64, sh.K)
		for k := range ones {
			ones[k] = math.Copysign(1, a)
		}
		requireScaled[T](t, fmt.Sprintf("l=0 α=%g", a), math.Abs(a),
			runAll(t, sh, gateArg{logistic: true, alpha: alpha, beta: beta}, zero),
			runAll(t, sh, gateArg{logistic: true, alpha: ones, beta: beta}, in64(zero)))
	}
}

// TestParameterBounds: past the bounds the kernels refuse, naming the bound, where they used
// to return NaN.
func TestParameterBounds(t *testing.T) {
	sh := Shape{N: 1, K: 6, P: 1}
	l := []float64{0.5, 0.2, -0.1, 0.3, 0.9, -2}
	d := []float64{1, 2, 3, 4, 5, 6}
	for _, s := range []float64{math.Nextafter(gatejet.MaxInvTau, math.Inf(1)), 5.7e102, 1.35e154, math.MaxFloat64} {
		err := Softmax[float64]{InvTau: s}.SecondVJP(make([]float64, 6), nil, l, d, make([]float64, 36), sh)
		require.ErrorIs(t, err, gatejet.ErrTemperature, "s=%g", s)
		require.ErrorContains(t, err, "MaxInvTau")
		require.ErrorIs(t, Softmax[float64]{InvTau: s}.Second(make([]float64, 36), l, d, sh), gatejet.ErrTemperature)
	}
	al, be := []float64{1, 1e200, 1, 1, 1, 1}, make([]float64, 6)
	err := Logistic[float64]{Alpha: al, Beta: be}.Second(make([]float64, 36), l, d, sh)
	require.ErrorIs(t, err, gatejet.ErrParam)
	require.ErrorContains(t, err, "MaxLogisticAlpha")
	var ge *gatejet.Error
	require.True(t, errors.As(err, &ge))
	require.Equal(t, "alpha", ge.Arg)

}

// TestKernelScratchSizes: a kernel whose per-goroutine scratch would exceed gatejet.MaxBytes
// is refused before it allocates; an empty batch needs none.
func TestKernelScratchSizes(t *testing.T) {
	sh := Shape{N: 1, K: 64, P: 64}
	l, d := make([]float64, sh.LogitsLen()), make([]float64, sh.DecodedLen())
	dst := make([]float64, sh.SecondLen())
	n, _ := scratchLen[float64](secondRows[float64]{}, sh.K, sh.P)
	testkit.WithMaxBytes(t, int64(8*n))
	require.NoError(t, Softmax[float64]{InvTau: 1}.Second(dst, l, d, sh))
	gatejet.SetMaxBytes(int64(8*n - 1))
	err := Softmax[float64]{InvTau: 1}.Second(dst, l, d, sh)
	require.ErrorIs(t, err, gatejet.ErrSize)
	require.ErrorContains(t, err, "softmaxjet.Softmax.Second")
	require.NoError(t, Softmax[float64]{InvTau: 1}.Second(nil, nil, nil, Shape{N: 0, K: 1 << 40, P: 1 << 20}))
	_, ok := scratchLen[float64](secondRows[float64]{}, math.MaxInt/2, 2)
	require.False(t, ok)
	_, ok = scratchLen[float32](logisticRows[float32, logisticGaussNewtonVJPRows[float32]]{}, 1<<32, 1<<31)
	require.False(t, ok)
}

// TestScratchLenClosedForm: each kernel's scratch, its gate's row state and its own pieces,
// as its carve counts it, is the size written out here by hand.
func TestScratchLenClosedForm(t *testing.T) {
	testScratchLenClosedForm[float64](t)
	testScratchLenClosedForm[float32](t)
}

func testScratchLenClosedForm[T gatejet.Float](t *testing.T) {
	size := int(unsafe.Sizeof(T(0)))
	words := func(bytes int) int { return (bytes + 7) / 8 }
	for _, K := range []int{1, 3, 4, 5, 17, 64} {
		for _, P := range []int{1, 2, 7, 16} {
			Kp := padK(K)
			softmax, logistic := Kp+P+K*P, 4*K
			for _, c := range []struct {
				k    kernel[T]
				want int
			}{
				{valueRows[T]{}, softmax},
				{softmaxRows[T, firstRows[T]]{}, softmax},
				{secondRows[T]{}, softmax + 2*Kp + words(K*Kp*size) + words(K*P*size) + 7},
				{softmaxRows[T, hvpRows[T]]{}, softmax + 3*K + P},
				{softmaxRows[T, gaussNewtonRows[T]]{}, softmax},
				{softmaxRows[T, valueVJPRows[T]]{}, softmax + K},
				{softmaxRows[T, firstVJPRows[T]]{}, softmax + K + P + K*P},
				{softmaxRows[T, secondVJPRows[T]]{}, softmax + K + P + 2*K*P},
				{softmaxRows[T, hvpVJPRows[T]]{}, softmax + 4*K + 3*P},
				{softmaxRows[T, gaussNewtonVJPRows[T]]{}, softmax + K + P + K*P},
				{logisticRows[T, logisticValueRows[T]]{}, logistic + P},
				{logisticRows[T, logisticFirstRows[T]]{}, logistic},
				{logisticRows[T, logisticSecondRows[T]]{}, logistic},
				{logisticRows[T, logisticHVPRows[T]]{}, logistic + K},
				{logisticRows[T, logisticGaussNewtonRows[T]]{}, logistic + K*P},
				{logisticRows[T, logisticValueVJPRows[T]]{}, logistic},
				{logisticRows[T, logisticFirstVJPRows[T]]{}, logistic},
				{logisticRows[T, logisticSecondVJPRows[T]]{}, logistic},
				{logisticRows[T, logisticHVPVJPRows[T]]{}, logistic + K},
				{logisticRows[T, logisticGaussNewtonVJPRows[T]]{}, logistic + 2*K*P},
			} {
				n, ok := scratchLen(c.k, K, P)
				require.True(t, ok)
				require.Equal(t, c.want, n, "K=%d P=%d size=%d %T", K, P, size, c.k)
			}
		}
	}
}

// TestCarveBeyondCountPanics: a kernel that carves a piece its count does not hold panics on
// its first row, whatever the shape.
func TestCarveBeyondCountPanics(t *testing.T) {
	c := carver{b: make([]float64, 5)}
	require.Len(t, c.f64(2, 2), 4)
	require.PanicsWithValue(t, "softmaxjet: a kernel carves more scratch than it counted", func() { c.f64(2, 1) })
}

// TestOverlapRefused: an output that shares memory with an input or with another output is
// refused with ErrParam naming it, in every kernel: the kernels write while they read, so
// such a call returned a wrong result (none of them documents in-place use).
func TestOverlapRefused(t *testing.T) {
	sh := Shape{N: 2, K: 3, P: 2}
	arena := make([]float64, 200)
	l := arena[0:6] // every case's first output starts at arena[3], inside the logits
	d, v := make([]float64, 12), make([]float64, 6)
	gV, gF, gS, gN := make([]float64, 4), make([]float64, 12), make([]float64, 36), make([]float64, 18)
	al, be := []float64{1, 2, 3}, []float64{0, 0, 0}
	o := func(n int) []float64 { return arena[3 : 3+n] }
	cases := []testkit.OverlapCase{
		{Name: "Value", Arg: "dst", Call: func() error { return Softmax[float64]{InvTau: 1}.Value(o(4), l, d, sh) }},
		{Name: "First", Arg: "dst", Call: func() error { return Softmax[float64]{InvTau: 1}.First(o(12), l, d, sh) }},
		{Name: "Second", Arg: "dst", Call: func() error { return Softmax[float64]{InvTau: 1}.Second(o(36), l, d, sh) }},
		{Name: "HVP", Arg: "dst", Call: func() error { return Softmax[float64]{InvTau: 1}.HVP(o(12), l, d, v, sh) }},
		{Name: "GaussNewton", Arg: "dst", Call: func() error { return Softmax[float64]{InvTau: 1}.GaussNewton(o(18), l, d, sh) }},
		{Name: "ValueVJP", Arg: "dLogits", Call: func() error { return Softmax[float64]{InvTau: 1}.ValueVJP(o(6), nil, l, d, gV, sh) }},
		{Name: "FirstVJP", Arg: "dDecoded", Call: func() error { return Softmax[float64]{InvTau: 1}.FirstVJP(nil, o(12), l, d, gF, sh) }},
		{Name: "SecondVJP", Arg: "dLogits", Call: func() error { return Softmax[float64]{InvTau: 1}.SecondVJP(o(6), nil, l, d, gS, sh) }},
		{Name: "HVPVJP", Arg: "dV", Call: func() error { return Softmax[float64]{InvTau: 1}.HVPVJP(nil, nil, o(6), l, d, v, gF, sh) }},
		{Name: "GaussNewtonVJP", Arg: "dDecoded", Call: func() error { return Softmax[float64]{InvTau: 1}.GaussNewtonVJP(nil, o(12), l, d, gN, sh) }},
		{Name: "LogisticValue", Arg: "dst", Call: func() error { return Logistic[float64]{Alpha: al, Beta: be}.Value(o(4), l, d, sh) }},
		{Name: "LogisticFirst", Arg: "dst", Call: func() error { return Logistic[float64]{Alpha: al, Beta: be}.First(o(12), l, d, sh) }},
		{Name: "LogisticSecond", Arg: "dst", Call: func() error { return Logistic[float64]{Alpha: al, Beta: be}.Second(o(36), l, d, sh) }},
		{Name: "LogisticHVP", Arg: "dst", Call: func() error { return Logistic[float64]{Alpha: al, Beta: be}.HVP(o(12), l, d, v, sh) }},
		{Name: "LogisticGaussNewton", Arg: "dst", Call: func() error { return Logistic[float64]{Alpha: al, Beta: be}.GaussNewton(o(18), l, d, sh) }},
		{Name: "LogisticValueVJP", Arg: "dDecoded", Call: func() error { return Logistic[float64]{Alpha: al, Beta: be}.ValueVJP(nil, o(12), l, d, gV, sh) }},
		{Name: "LogisticFirstVJP", Arg: "dLogits", Call: func() error { return Logistic[float64]{Alpha: al, Beta: be}.FirstVJP(o(6), nil, l, d, gF, sh) }},
		{Name: "LogisticSecondVJP", Arg: "dDecoded", Call: func() error { return Logistic[float64]{Alpha: al, Beta: be}.SecondVJP(nil, o(12), l, d, gS, sh) }},
		{Name: "LogisticHVPVJP", Arg: "dV", Call: func() error { return Logistic[float64]{Alpha: al, Beta: be}.HVPVJP(nil, nil, o(6), l, d, v, gF, sh) }},
		{Name: "LogisticGaussNewtonVJP", Arg: "dLogits", Call: func() error { return Logistic[float64]{Alpha: al, Beta: be}.GaussNewtonVJP(o(6), nil, l, d, gN, sh) }},

		// Outputs against each other, the same slice included.
		{Name: "ValueVJP outputs", Arg: "dLogits", Call: func() error { return Softmax[float64]{InvTau: 1}.ValueVJP(gF[:6], gF, arena[100:106], d, gV, sh) }},
		{Name: "HVPVJP same output", Arg: "dLogits", Call: func() error { return Softmax[float64]{InvTau: 1}.HVPVJP(v, nil, v, l, d, arena[100:106], gF, sh) }},
		// An output that is exactly an input.
		{Name: "FirstVJP g", Arg: "dDecoded", Call: func() error { return Softmax[float64]{InvTau: 1}.FirstVJP(nil, gF, l, d, gF, sh) }},
		{Name: "Value decoded tail", Arg: "dst", Call: func() error { return Softmax[float64]{InvTau: 1}.Value(d[8:], l, d, sh) }},
		// An output over the logistic gate's parameters.
		{Name: "LogisticFirst alpha", Arg: "dst", Call: func() error {
			return Logistic[float64]{Alpha: arena[110:113], Beta: be}.First(arena[100:112], arena[120:126], d, sh)
		}},
		{Name: "LogisticHVPVJP beta", Arg: "dV", Call: func() error {
			return Logistic[float64]{Alpha: al, Beta: arena[105:108]}.HVPVJP(nil, nil, arena[100:106], arena[120:126], d, v, gF, sh)
		}},
	}
	testkit.RequireOverlapsRefused(t, cases)
}

// TestOverlapNamesTheParameter: an output over a gate's vector parameter is refused naming
// that parameter (the gate's vecNames, in the order of its vecs).
func TestOverlapNamesTheParameter(t *testing.T) {
	sh := Shape{N: 2, K: 3, P: 2}
	arena := make([]float64, 200)
	d, v, gF := make([]float64, 12), make([]float64, 6), make([]float64, 12)
	al, be := []float64{1, 2, 3}, []float64{0, 0, 0}
	err := Logistic[float64]{Alpha: arena[110:113], Beta: be}.First(arena[100:112], arena[120:126], d, sh)
	require.ErrorIs(t, err, gatejet.ErrParam)
	require.ErrorContains(t, err, "dst overlaps alpha")
	err = Logistic[float64]{Alpha: al, Beta: arena[105:108]}.HVPVJP(nil, nil, arena[100:106], arena[120:126], d, v, gF, sh)
	require.ErrorIs(t, err, gatejet.ErrParam)
	require.ErrorContains(t, err, "dV overlaps beta")
}
