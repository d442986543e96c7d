package softmaxjet

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/testkit"
)

// ulpDist is the distance in units in the last place between two non-negative floats: the
// difference of their bit patterns, which are ordered like the values.
func ulpDist(a, b float64) uint64 {
	x, y := math.Float64bits(a), math.Float64bits(b)
	if x > y {
		return x - y
	}
	return y - x
}

func TestExpNegSpecials(t *testing.T) {
	for _, tc := range []struct {
		x, want float64
	}{
		{0, 1},
		{math.Copysign(0, -1), 1},
		{-0x1p-1074, 1},
		{-0x1p-60, 1},
		{math.Inf(-1), 0},
		{-1e300, 0},
		{-math.MaxFloat64, 0},
		{-746, 0},
		{-800, 0},
		{-745.2, 0}, // e^x < 2⁻¹⁰⁷⁵: rounds to 0
		{-745.1, 0x1p-1074},
		{-1, math.Exp(-1)},
		{-0.5, math.Exp(-0.5)},
	} {
		got := expNeg(tc.x)
		require.Equal(t, math.Float64bits(tc.want), math.Float64bits(got), "expNeg(%v) = %v, want %v", tc.x, got, tc.want)
	}
	require.True(t, math.IsNaN(expNeg(math.NaN())), "expNeg(NaN)")
}

// expNegSweep is a dense sweep of [−746, 0] and the points where the algorithm changes
// regime: the normal/subnormal boundary at −708.4, −709.09 where 2^k itself turns subnormal
// (hence the split into 2^k1·2^k2), e^x = 2⁻¹⁰⁷⁴ at −744.44, the last nonzero result at
// −745.13, the halfway points of the reduction (x·log2e = n + ½), and |x| down to the
// smallest subnormal.
func expNegSweep() []float64 {
	const n = 1_000_000
	xs := make([]float64, 0, n+200_000)
	for i := 0; i <= n; i++ {
		xs = append(xs, -746*float64(i)/n)
	}
	rng := rand.New(rand.NewPCG(41, 42))
	for range 50_000 {
		xs = append(xs, -746*rng.Float64())
	}
	for _, c := range []float64{-708.3964185322641, -745.1332191019411, -709.0895657128241, -744.44} {
		for i := -20_000; i <= 20_000; i++ {
			xs = append(xs, c+float64(i)*1e-9)
		}
	}
	for k := 1; k <= 1076; k++ {
		h := (float64(-k) + 0.5) * math.Ln2
		xs = append(xs, h, math.Nextafter(h, 0), math.Nextafter(h, math.Inf(-1)))
	}
	for e := -1074; e <= 0; e++ {
		x := -math.Ldexp(1, e)
		xs = append(xs, x, x*1.5, math.Nextafter(x, 0))
	}
	return xs
}

// ln2Big is ln 2 to 330 bits, for expBig.
var ln2Big, _, _ = big.ParseFloat("0.69314718055994530941723212145817656807550013436025525412068000949339362196969471560586332699641868754200148102057068573368552023575813055703267075163507596193072757082837143519030703862389167347112335", 10, 330, big.ToNearestEven)

// expBig is e^x to about 150 bits: x = k·ln2 + r exactly enough, and the Taylor series of
// e^r, |r| ≤ ln2/2.
func expBig(x float64) *big.Float {
	const prec = 200
	k := math.Round(x / math.Ln2)
	r := new(big.Float).SetPrec(prec).SetFloat64(k)
	r.Mul(r, ln2Big)
	r.Sub(new(big.Float).SetPrec(prec).SetFloat64(x), r)
	sum := new(big.Float).SetPrec(prec).SetInt64(1)
	term := new(big.Float).SetPrec(prec).SetInt64(1)
	n := new(big.Float).SetPrec(prec)
	for i := int64(1); i < 60 && term.Sign() != 0 && term.MantExp(nil) > -160; i++ {
		term.Mul(term, r)
		term.Quo(term, n.SetInt64(i))
		sum.Add(sum, term)
	}
	return sum.SetMantExp(sum, int(k))
}

// ulpErr is |got − want| in units of the last place of want (2⁻¹⁰⁷⁴ below 2⁻¹⁰²²).
func ulpErr(got float64, want *big.Float) float64 {
	e := want.MantExp(nil) - 53 // want = m·2^(e+53), ½ ≤ m < 1: its ulp is 2^e
	e = max(e, -1074)
	d := new(big.Float).SetPrec(want.Prec()).SetFloat64(got)
	d.Sub(d, want)
	f, _ := d.SetMantExp(d, -e).Float64()
	return math.Abs(f)
}

// TestExpNegAccuracy: expNeg is within one ulp of e^x on [−746, 0], normal and subnormal
// results alike. math.Exp is no yardstick to the ulp: on amd64 it is itself off by up to 1.65
// ulp on this sweep (at −11.48467 by 1.4 ulp, where expNeg is 0.6 ulp off: the two are 2 ulp
// apart), so the error is measured against e^x computed with big.Float, at every point where
// expNeg and math.Exp differ and at every 64th point of the rest; against math.Exp, only that
// the two are at most 2 ulp apart.
func TestExpNegAccuracy(t *testing.T) {
	xs := expNegSweep()
	worst, worstX := 0.0, 0.0
	var dist uint64
	distX := 0.0
	differ, checked := 0, 0
	for i, x := range xs {
		got := expNeg(x)
		d := ulpDist(got, math.Exp(x))
		if d > dist {
			dist, distX = d, x
		}
		if d != 0 {
			differ++
		}
		if d == 0 && i%64 != 0 || raceEnabled && i%16 != 0 {
			continue // the race detector slows big.Float down too much for every point
		}
		checked++
		if e := ulpErr(got, expBig(x)); e > worst {
			worst, worstX = e, x
		}
	}
	t.Logf("%d points, %d differ from math.Exp (by at most %d ulp, at x = %v); of %d checked, expNeg is within %.3f ulp of e^x (at x = %v)", len(xs), differ, dist, distX, checked, worst, worstX)
	require.Less(t, worst, 1.0, "expNeg(%v) = %v, e^x = %v", worstX, expNeg(worstX), expBig(worstX))
	require.LessOrEqual(t, dist, uint64(2), "expNeg(%v) = %v, math.Exp = %v", distX, expNeg(distX), math.Exp(distX))
}

// gateRows are the logit rows the gate is tested on: random at a few spreads, offset by
// ±1e4, masked by −Inf, poisoned by NaN or +Inf, all −Inf, all equal.
func gateRows(rng *rand.Rand, K int) [][]float64 {
	var rows [][]float64
	row := func(f func(k int) float64) {
		r := make([]float64, K)
		for k := range r {
			r[k] = f(k)
		}
		rows = append(rows, r)
	}
	for _, scale := range []float64{1, 30} {
		for _, off := range []float64{0, 1e4, -1e4} {
			row(func(int) float64 { return off + scale*rng.NormFloat64() })
		}
	}
	row(func(k int) float64 { return float64(k%3) - 1 }) // ties and zeros
	row(func(int) float64 { return 2.5 })
	mask := rng.IntN(K)
	row(func(k int) float64 {
		if k == mask || k%5 == 4 {
			return math.Inf(-1)
		}
		return rng.NormFloat64()
	})
	if K > 1 {
		row(func(k int) float64 {
			if k != mask {
				return math.Inf(-1)
			}
			return rng.NormFloat64()
		})
	}
	row(func(int) float64 { return math.Inf(-1) })
	row(func(k int) float64 {
		if k == mask {
			return math.NaN()
		}
		return rng.NormFloat64()
	})
	row(func(k int) float64 {
		if k == mask {
			return math.Inf(1)
		}
		return rng.NormFloat64()
	})
	row(func(k int) float64 {
		if k == mask {
			return math.NaN()
		}
		return math.Inf(-1)
	})
	return rows
}

var gateScales = []float64{1e-3, 1, 37, 1e3}

// gateRowNaN reports whether a row of logits must give an all-NaN gate.
func gateRowNaN(l []float64) bool {
	finite := false
	for _, v := range l {
		if math.IsNaN(v) || math.IsInf(v, 1) {
			return true
		}
		finite = finite || !math.IsInf(v, -1)
	}
	return !finite
}

// TestGateVectorEqualsGo: the AVX gate gives the bits of gateGo for every K from 1 to 70 (all
// four residues mod 4), both dtypes, and writes nothing past z[K−1].
func TestGateVectorEqualsGo(t *testing.T) {
	testkit.RequireAVX(t, "gate", hasAVX, &useAVX)
	rng := rand.New(rand.NewPCG(43, 44))
	for K := 1; K <= 70; K++ {
		for ri, l := range gateRows(rng, K) {
			l32 := to32(l)
			for _, s := range gateScales {
				gateVectorEqualsGo(t, l, s, fmt.Sprintf("f64 K=%d row %d s=%v", K, ri, s))
				gateVectorEqualsGo(t, l32, s, fmt.Sprintf("f32 K=%d row %d s=%v", K, ri, s))
			}
		}
	}
}

func gateVectorEqualsGo[T gatejet.Float](t *testing.T, l []T, s float64, name string) {
	K := len(l)
	const guard = 5
	want := make([]float64, K)
	useAVX = false
	gateVec(want, l, s, K)
	buf := make([]float64, K+guard)
	for i := range buf {
		buf[i] = -7
	}
	useAVX = true
	gateVec(buf[:K:K], l, s, K)
	for k, w := range want {
		g := buf[k]
		if math.IsNaN(w) && math.IsNaN(g) {
			continue
		}
		if math.Float64bits(w) != math.Float64bits(g) {
			t.Fatalf("%s: z[%d]: Go %v, AVX %v", name, k, w, g)
		}
	}
	for i, v := range buf[K:] {
		require.Equal(t, -7.0, v, "%s: AVX wrote z[%d]", name, K+i)
	}
}

// TestGateStaysInBounds: the AVX gate's tail (masked loads and stores of the last K mod 4
// atoms) touches nothing past l[K−1] or z[K−1]: with both ending against an unmapped page, a
// lane read or written past them would fault.
func TestGateStaysInBounds(t *testing.T) {
	testkit.RequireAVX(t, "gate", hasAVX, &useAVX)
	g := testkit.GuardedPages(t, 2) // z and l
	rng := rand.New(rand.NewPCG(49, 50))
	for K := 1; K <= 70; K++ {
		z := testkit.GuardedSlice[float64](g, 0, true, K)
		l64 := testkit.GuardedSlice[float64](g, 1, true, K)
		l32 := testkit.GuardedSlice[float32](g, 1, true, K)
		for k := range K {
			l64[k] = rng.NormFloat64()
		}
		gateInBounds(t, z, l64, fmt.Sprintf("f64 K=%d", K))
		for k := range K {
			l32[k] = float32(rng.NormFloat64())
		}
		gateInBounds(t, z, l32, fmt.Sprintf("f32 K=%d", K))
	}
}

func gateInBounds[T gatejet.Float](t *testing.T, z []float64, l []T, name string) {
	K := len(l)
	want := make([]float64, K)
	gateGo(want, l, 1.7, K)
	useAVX = true
	gateVec(z, l, 1.7, K)
	for k := range want {
		require.Equal(t, math.Float64bits(want[k]), math.Float64bits(z[k]), "%s: z[%d]", name, k)
	}
}

// TestGateVectorExpSweep: the AVX exponential gives the bits of expNeg over the whole sweep,
// seen through rows l = (0, x_1, …, x_63) at s = 1, whose gate is expNeg(x_k)/Σ.
func TestGateVectorExpSweep(t *testing.T) {
	testkit.RequireAVX(t, "gate", hasAVX, &useAVX)
	xs := expNegSweep()
	const K = 64
	l := make([]float64, K)
	for i := 0; i < len(xs); i += K - 1 {
		n := copy(l[1:], xs[i:])
		gateVectorEqualsGo(t, l[:n+1], 1, fmt.Sprintf("sweep from x = %v", xs[i]))
		gateVectorEqualsGo(t, to32(l[:n+1]), 1, fmt.Sprintf("f32 sweep from x = %v", xs[i]))
	}
}

// accurateSum is Σx with Neumaier's compensation: to well under an ulp for these few terms.
func accurateSum(x []float64) float64 {
	sum, comp := 0.0, 0.0
	for _, v := range x {
		u := sum + v
		if math.Abs(sum) >= math.Abs(v) {
			comp += (sum - u) + v
		} else {
			comp += (v - u) + sum
		}
		sum = u
	}
	return sum + comp
}

// gateRef is a reference gate: math.Exp and an accurate sum, so that a comparison measures
// the gate under test.
func gateRef(z, l []float64, s float64) {
	mx := math.Inf(-1)
	for _, v := range l {
		mx = math.Max(mx, v)
	}
	for k, v := range l {
		z[k] = math.Exp(s * (v - mx))
	}
	sum := accurateSum(z)
	for k := range z {
		z[k] /= sum
	}
}

// gateMathExp is the gate as the package computed it before expNeg, for the benchmark.
func gateMathExp[T gatejet.Float](z []float64, l []T, s float64) {
	mx := math.Inf(-1)
	for _, v := range l {
		if f := float64(v); f > mx {
			mx = f
		}
	}
	sum := 0.0
	for k, v := range l {
		x := math.Exp(s * (float64(v) - mx))
		z[k] = x
		sum += x
	}
	r := 1 / sum
	for k := range z {
		z[k] *= r
	}
}

// TestGateAgainstMathExp: on finite rows the gate sums to 1 within the rounding of its own sum
// and matches a math.Exp softmax to 1e-15 relative; a NaN, a +Inf or all −Inf gives an
// all-NaN row; −Inf atoms get exactly 0. On the Go and (where there is one) the AVX path.
func TestGateAgainstMathExp(t *testing.T) {
	defer func(u bool) { useAVX = u }(useAVX)
	for _, avx := range []bool{false, true} {
		if avx && !hasAVX {
			continue
		}
		useAVX = avx
		rng := rand.New(rand.NewPCG(45, 46))
		worstSum, worstRel := 0.0, 0.0
		for K := 1; K <= 70; K++ {
			z, ref := make([]float64, K), make([]float64, K)
			for ri, l := range gateRows(rng, K) {
				for _, s := range gateScales {
					name := fmt.Sprintf("avx=%v K=%d row %d s=%v", avx, K, ri, s)
					gateVec(z, l, s, K)
					if gateRowNaN(l) {
						for k, v := range z {
							require.True(t, math.IsNaN(v), "%s: z[%d] = %v, want NaN", name, k, v)
						}
						continue
					}
					gateRef(ref, l, s)
					// The sum of z: 1 but for the rounding of e_k·(1/sum) (≤ 1 ulp each, so
					// ≤ 2⁻⁵³ of the total each), of 1/sum, and of the sum itself, whose
					// error grows with its K/4 + 3 additions; accumulated accurately here.
					for k, v := range z {
						if math.IsInf(l[k], -1) {
							require.Equal(t, 0.0, v, "%s: masked z[%d]", name, k)
						}
					}
					got := accurateSum(z)
					sumErr := math.Abs(got - 1)
					worstSum = max(worstSum, sumErr/0x1p-53)
					require.LessOrEqual(t, sumErr, float64(K/4+6)*0x1p-53, "%s: Σz = 1 %+g", name, got-1)
					for k, w := range ref {
						rel := math.Abs(z[k]-w) / w
						if w < 0x1p-1000 { // subnormal exponentials: one subnormal ulp each
							require.LessOrEqual(t, math.Abs(z[k]-w), 0x1p-1000, "%s: z[%d]", name, k)
							continue
						}
						worstRel = max(worstRel, rel)
						require.LessOrEqual(t, rel, 1e-15, "%s: z[%d] = %v, math.Exp softmax %v", name, k, z[k], w)
					}
				}
			}
		}
		t.Logf("avx=%v: |Σz − 1| ≤ %g·2⁻⁵³, relative error to the math.Exp softmax ≤ %.3g", avx, worstSum, worstRel)
	}
}

// BenchmarkGate: ns per row of the softmax gate (max, exponentials, sum, normalisation),
// vectorised and Go, with math.Exp (the gate before expNeg) for reference.
func BenchmarkGate(b *testing.B) {
	for _, K := range []int{16, 64} {
		b.Run(fmt.Sprintf("K=%d/f64", K), func(b *testing.B) { benchGate[float64](b, K) })
		b.Run(fmt.Sprintf("K=%d/f32", K), func(b *testing.B) { benchGate[float32](b, K) })
	}
}

func benchGate[T gatejet.Float](b *testing.B, K int) {
	const rows = 256
	rng := rand.New(rand.NewPCG(47, uint64(K)))
	l := make([]T, rows*K)
	for i := range l {
		l[i] = T(1.5 * rng.NormFloat64())
	}
	z := make([]float64, K)
	run := func(name string, avx bool, f func(l []T)) {
		b.Run(name, func(b *testing.B) {
			defer func(u bool) { useAVX = u }(useAVX)
			useAVX = avx
			iters := 0
			start := time.Now()
			for b.Loop() {
				for n := 0; n < rows; n++ {
					f(l[n*K : n*K+K])
				}
				iters++
			}
			b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(iters*rows), "ns/row")
		})
	}
	if hasAVX {
		run("avx", true, func(l []T) { gateVec(z, l, 1.3, K) })
	}
	run("go", false, func(l []T) { gateGo(z, l, 1.3, K) })
	run("math.Exp", false, func(l []T) { gateMathExp(z, l, 1.3) })
}
