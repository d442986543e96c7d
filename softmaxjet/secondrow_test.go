package softmaxjet

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/gatejet/gatejet"
	"github.com/gatejet/gatejet/internal/par"
	"github.com/gatejet/gatejet/internal/testkit"
	"github.com/stretchr/testify/require"
)

// The second channel's AVX row path (secondCoefsVec, rowVec) against its Go twins
// (secondCoefs, pairCoef, rowT, rowGo), bit for bit, with the padding, the unused half of the
// coefficient matrix and the memory around the output poisoned.

// sameBits reports whether x and y have the same bits (NaN payloads included).
func sameBits[T gatejet.Float](x, y T) bool {
	var zero T
	if unsafe.Sizeof(zero) == 4 {
		return math.Float32bits(float32(x)) == math.Float32bits(float32(y))
	}
	return math.Float64bits(float64(x)) == math.Float64bits(float64(y))
}

func sameBitsOrNaN[T gatejet.Float](x, y T) bool {
	return sameBits(x, y) || x != x && y != y
}

// testGates returns gates of K atoms with the cases secondCoefs tells apart: ordinary,
// underflowing to 0, one-hot, subnormal, NaN, negative zero, negative, +Inf.
func testGates(rng *rand.Rand, K int) map[string][]float64 {
	gate := func(scale float64) []float64 {
		l := randn(rng, K, scale)
		z := make([]float64, K)
		gateGo(z, l, 1, K)
		return z
	}
	g := map[string][]float64{"softmax": gate(1.5), "spread": gate(300)}
	hot := make([]float64, K)
	hot[rng.IntN(K)] = 1
	g["one-hot"] = hot
	tiny := gate(1)
	tiny[rng.IntN(K)] = 5e-324
	tiny[rng.IntN(K)] = 1e-300
	g["subnormal"] = tiny
	nan := gate(1)
	for i := range nan {
		nan[i] = math.NaN()
	}
	g["NaN"] = nan
	one := gate(1)
	one[rng.IntN(K)] = math.NaN()
	g["one NaN"] = one
	nz := gate(1)
	nz[rng.IntN(K)] = math.Copysign(0, -1)
	g["-0"] = nz
	neg := gate(1)
	neg[rng.IntN(K)] = -1e-3
	g["negative"] = neg
	inf := gate(1)
	inf[rng.IntN(K)] = math.Inf(1)
	g["+Inf"] = inf
	return g
}

// testS2 returns values of s² around the thresholds of secondCoefs for the gate z: some put
// |diag[a]| or s²·ζ_min² just below, at and just above 2⁻⁹⁹, 2⁻⁹⁸ or 2¹⁰⁰.
func testS2(rng *rand.Rand, z []float64) []float64 {
	s2 := []float64{1, 0.25, 3.7, 1e-60, 1e60, 0x1p100, math.Nextafter(0x1p100, math.Inf(1)), 0x1p101, 1e-300, 1e300, math.Inf(1)}
	a := rng.IntN(len(z))
	zmin := math.Inf(1)
	for _, za := range z {
		if za > 0 && za < zmin {
			zmin = za
		}
	}
	for _, base := range []float64{
		0x1p-99 / math.Abs(z[a]*(1-2*z[a])/2),
		0x1p100 / math.Abs(z[a]*(1-2*z[a])/2),
		0x1p-98 / (zmin * zmin),
	} {
		if math.IsNaN(base) || math.IsInf(base, 0) || base == 0 {
			continue
		}
		s2 = append(s2, math.Nextafter(base, 0), base, math.Nextafter(base, math.Inf(1)))
	}
	return s2
}

// TestSecondCoefsVecEqualsGo: secondCoefsVec gives secondCoefs' nsz, diag and verdict, and its
// coefficient matrix holds T(pairCoef) on and right of the diagonal, for every K from 1 to 70,
// whatever the padding of z holds; nothing past the matrix is written.
func TestSecondCoefsVecEqualsGo(t *testing.T) {
	testkit.RequireAVX(t, "loops", hasAVX, &useAVX)
	useAVX = true
	t.Run("f64", func(t *testing.T) { coefsVecEqualGo[float64](t) })
	t.Run("f32", func(t *testing.T) { coefsVecEqualGo[float32](t) })
}

func coefsVecEqualGo[T gatejet.Float](t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	sentinel := T(math.Float32frombits(0x7fc0dead))
	verdicts := map[bool]int{}
	for K := 1; K <= 70; K++ {
		Kp := padK(K)
		for name, g := range testGates(rng, K) {
			wantNsz, wantDiag := make([]float64, K), make([]float64, K)
			for _, s2 := range testS2(rng, g) {
				for _, pad := range []float64{0, math.NaN()} {
					want := secondCoefs(wantNsz, wantDiag, g, s2)

					zbuf := make([]float64, Kp)
					copy(zbuf, g)
					for i := K; i < Kp; i++ {
						zbuf[i] = pad
					}
					z := zbuf[:K]
					nsz, diag := make([]float64, Kp), make([]float64, Kp)
					cbuf := make([]T, K*Kp+8)
					for i := range cbuf {
						cbuf[i] = sentinel
					}
					c := cbuf[:K*Kp]
					got := secondCoefsVec(c, nsz, diag, z, s2, K)
					what := fmt.Sprintf("K=%d %s s2=%v pad=%v", K, name, s2, pad)
					if want != got {
						t.Fatalf("%s: verdict %v, want %v", what, got, want)
					}
					verdicts[got]++
					for a := 0; a < K; a++ {
						if !sameBits(wantNsz[a], nsz[a]) || !sameBits(wantDiag[a], diag[a]) {
							t.Fatalf("%s: nsz[%d], diag[%d] = %v, %v, want %v, %v", what, a, a, nsz[a], diag[a], wantNsz[a], wantDiag[a])
						}
						for b := a; b < K; b++ {
							if w := T(pairCoef(wantNsz, g, wantDiag, a, b)); !sameBits(w, c[a*Kp+b]) {
								t.Fatalf("%s: c[%d][%d] = %v, want %v", what, a, b, c[a*Kp+b], w)
							}
						}
					}
					for i := K * Kp; i < len(cbuf); i++ {
						if !sameBits(sentinel, cbuf[i]) {
							t.Fatalf("%s: written past the matrix at %d", what, i)
						}
					}
				}
			}
		}
	}
	require.NotZero(t, verdicts[true])
	require.NotZero(t, verdicts[false])
}

// TestRowVecEqualsRowT: the AVX row writer gives rowT's bits (and, in float64, rowGo's) for K
// from 1 to 70 and every P from 1 to 40, with ordinary and non-temporal stores (taken only
// where the output and P·size are 32-byte aligned), e aligned and not, coefficients from
// secondCoefsVec with the unused half of the matrix poisoned, and ordinary, extreme and
// non-finite values; nothing outside the row's output is written.
func TestRowVecEqualsRowT(t *testing.T) {
	testkit.RequireAVX(t, "loops", hasAVX, &useAVX)
	t.Run("f64", func(t *testing.T) { rowVecEqualRowT[float64](t) })
	t.Run("f32", func(t *testing.T) { rowVecEqualRowT[float32](t) })
}

func rowVecEqualRowT[T gatejet.Float](t *testing.T) {
	var zero T
	size := int(unsafe.Sizeof(zero))
	rng := rand.New(rand.NewPCG(43, uint64(size)))
	Ks := []int{1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 31, 33, 64, 70}
	Ps := make([]int, 40)
	for i := range Ps {
		Ps[i] = i + 1
	}
	if raceEnabled || testing.Short() {
		Ks, Ps = []int{1, 3, 4, 5, 16, 17, 33}, []int{1, 3, 4, 5, 7, 8, 9, 12, 16, 20, 24, 31, 32, 33, 40}
	}
	const guard = 40
	sentinel := T(math.Float32frombits(0x7fc0beef))
	kinds := []string{"plain", "extreme", "non-finite"}
	for _, K := range Ks {
		Kp := padK(K)
		for _, P := range Ps {
			for _, kind := range kinds {
				// The gate, s² and e of the row.
				l := randn(rng, K, 1.5)
				s2 := 0.5 + rng.Float64()
				if kind != "plain" {
					l = randn(rng, K, 60)
					s2 = []float64{1e-30, 1e30, 0x1p100, 1e-300}[rng.IntN(4)]
				}
				zbuf := make([]float64, Kp)
				z := zbuf[:K]
				gateGo(z, l, 1, K)
				if kind == "non-finite" && rng.IntN(2) == 0 {
					z[rng.IntN(K)] = math.NaN()
				}
				ebuf := make([]T, K*P+8)
				eOff := rng.IntN(2)
				e := ebuf[eOff : eOff+K*P] // aligned or not
				for i := range e {
					e[i] = T(rng.NormFloat64())
					if kind != "plain" {
						e[i] = T(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(80)-40)))
					}
				}
				if kind == "non-finite" {
					for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e300, 5e-324} {
						e[rng.IntN(len(e))] = T(v)
					}
				}
				nsz, diag := make([]float64, Kp), make([]float64, Kp)
				c := make([]T, K*Kp)
				useAVX = true
				secondCoefsVec(c, nsz, diag, z, s2, K)
				for a := 0; a < K; a++ { // the writer must read only b ≥ a of row a
					for b := 0; b < Kp; b++ {
						if b < a || b >= K {
							c[a*Kp+b] = T(math.NaN())
						}
					}
				}

				want := make([]T, K*K*P)
				useAVX = false
				rowT(want, nsz, z, diag, e, K, P, K)
				if size == 8 {
					ew := make([]float64, len(e))
					for i, v := range e {
						ew[i] = float64(v)
					}
					alt := make([]T, K*K*P)
					rowGo(alt, nsz, z, diag, ew, K, P, K)
					for i := range want {
						if !sameBits(want[i], alt[i]) {
							t.Fatalf("K=%d P=%d %s: rowGo [%d] = %v, rowT %v", K, P, kind, i, alt[i], want[i])
						}
					}
				}

				useAVX = true
				for _, nt := range []bool{false, true} {
					for _, shift := range []int{0, 1} {
						for _, os := range []int{K, 2 * K} { // the second channel; the ℓℓ blocks of the coordinate one
							L := ((K-1)*os + K) * P
							buf := make([]T, L+2*guard+64)
							for i := range buf {
								buf[i] = sentinel
							}
							start := guard + (64-int(uintptr(unsafe.Pointer(&buf[guard])))%64)%64/size + shift
							o := buf[start : start+L]
							used := rowVec(o, c, nsz, z, diag, e, K, P, os, nt)
							wantNT := nt && shift == 0 && P*size%32 == 0
							what := fmt.Sprintf("K=%d P=%d os=%d %s nt=%v shift=%d", K, P, os, kind, nt, shift)
							require.Equal(t, wantNT, used, "non-temporal stores %s", what)
							for i := range want {
								a, b, cc := i/(K*P), i/P%K, i%P
								if got := o[(a*os+b)*P+cc]; !sameBits(want[i], got) {
									t.Fatalf("%s: block (%d,%d) [%d]: AVX %v, rowT %v", what, a, b, cc, got, want[i])
								}
							}
							for i := range buf {
								inBlock := i >= start && i < start+L && (i-start)/P%os < K
								if !inBlock && !sameBits(sentinel, buf[i]) {
									t.Fatalf("%s: written outside the row's blocks at %d (row at %d..%d)", what, i, start, start+L)
								}
							}
						}
					}
				}
			}
		}
	}
	if hasAVX {
		sfence()
	}
}

// TestCentreVecCheck: centreVec's verdict on e is centre's (|e| ≤ 2¹⁰⁰ or not finite), and its e
// the same bits, with one value just below, at or just above 2¹⁰⁰ in magnitude, of either
// sign, infinite or NaN, at every position of rows of every P from 1 to 40, so in every lane
// of the eight-, four- and one-lane loops.
func TestCentreVecCheck(t *testing.T) {
	defer func(u bool) { useAVX = u }(useAVX)
	useAVX = hasAVX
	rng := rand.New(rand.NewPCG(45, 46))
	specials := []float64{0x1p100, -0x1p100, math.Nextafter(0x1p100, 0), 0x1p101, -0x1p101, 3e38, math.Inf(1), math.Inf(-1), math.NaN()}
	for P := 1; P <= 40; P++ {
		K := 3
		for pos := 0; pos < K*P; pos++ {
			for _, v := range specials {
				for _, mShift := range []float64{0, 1, -1} {
					d := make([]float32, K*P)
					for i := range d {
						d[i] = float32(rng.NormFloat64())
					}
					d[pos] = float32(v)
					m := randn(rng, P, 1)
					// m small against d, so d − m crosses 2¹⁰⁰ by rounding or not at all.
					m[pos%P] = mShift * 1e-3
					want := make([]float32, K*P)
					wantOK := centre(want, d, m, K, P, true)
					got := make([]float32, K*P)
					gotOK := centreVec(got, d, m, K, P, true)
					require.Equal(t, wantOK, gotOK, "P=%d pos=%d v=%v", P, pos, v)
					for i := range want {
						require.True(t, sameBits(want[i], got[i]), "P=%d pos=%d v=%v [%d]", P, pos, v, i)
					}
				}
			}
		}
	}
	// A value of d that is not a float32 above 2¹⁰⁰ but whose difference rounds to 2¹⁰⁰ in
	// float32: flagged by the AVX loop, then judged exactly.
	P := 16
	d := make([]float32, P)
	m := make([]float64, P)
	d[5] = float32(0x1p100)
	m[5] = -0x1p60 // d − m = 2¹⁰⁰ + 2⁶⁰: above 2¹⁰⁰, float32 2¹⁰⁰
	e := make([]float32, P)
	require.False(t, centreVec(e, d, m, 1, P, true))
	require.Equal(t, float32(0x1p100), e[5])
}

// TestSecondVectorEqualsGoSweep: Second with the AVX loops gives the bits of the Go loops for K
// from 1 to 70 and P from 1 to 40 (sampled), ordinary and non-temporal stores, with gates
// that underflow, temperatures and decoded values that take float32 rows off the float32
// path, and non-finite inputs.
func TestSecondVectorEqualsGoSweep(t *testing.T) {
	testkit.RequireAVX(t, "loops", hasAVX, &useAVX)
	defer func(n int) { ntMin = n }(ntMin)
	defer par.SetMinWork(par.SetMinWork(0))
	rng := rand.New(rand.NewPCG(47, 48))
	Ks := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 16, 17, 32, 33, 70}
	Ps := []int{1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 20, 24, 31, 32, 33, 40}
	if raceEnabled || testing.Short() {
		Ks, Ps = []int{1, 4, 5, 16, 17}, []int{1, 5, 8, 16, 20, 32}
	}
	type tc struct {
		name   string
		lScale float64
		dScale float64
		s      float64
		poison bool
	}
	cases := []tc{{"plain", 1.5, 1, 1.3, false}, {"spread", 200, 1, 1, false}, {"huge decoded", 1, 1e33, 1, false},
		{"tiny decoded", 1, 1e-35, 1, false}, {"hot", 1, 1, 1e25, false}, {"cold", 1, 1, 1e-25, false}, {"non-finite", 1.5, 1, 1, true}}
	for _, K := range Ks {
		for _, P := range Ps {
			for _, c := range cases {
				sh := Shape{N: 3, K: K, P: P}
				l := randn(rng, sh.LogitsLen(), c.lScale)
				d := randn(rng, sh.DecodedLen(), c.dScale)
				if c.poison {
					l[K+rng.IntN(K)] = math.NaN()                                            // row 1
					d[2*K*P+rng.IntN(K*P)] = []float64{math.Inf(1), math.NaN()}[rng.IntN(2)] // row 2
				}
				l32, d32 := to32(l), to32(d)
				run := func() ([]float64, []float32) {
					o64, o32 := make([]float64, sh.SecondLen()), make([]float32, sh.SecondLen())
					require.NoError(t, Softmax[float64]{InvTau: c.s}.Second(o64, l, d, sh))
					require.NoError(t, Softmax[float32]{InvTau: c.s}.Second(o32, l32, d32, sh))
					return o64, o32
				}
				useAVX = false
				want64, want32 := run()
				useAVX = true
				for _, nt := range []int{1 << 62, 0} {
					ntMin = nt
					got64, got32 := run()
					for i := range want64 {
						// A NaN gate has a payload of its own in the Go and AVX gates (gateGo,
						// gateAVX64): NaN matches NaN here; TestRowVecEqualsRowT has the row
						// writer's NaN bits.
						if !sameBitsOrNaN(want64[i], got64[i]) || !sameBitsOrNaN(want32[i], got32[i]) {
							t.Fatalf("K=%d P=%d %s ntMin=%d [%d]: f64 Go %v AVX %v, f32 Go %v AVX %v", K, P, c.name, nt, i, want64[i], got64[i], want32[i], got32[i])
						}
					}
				}
			}
		}
	}
}
