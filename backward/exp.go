package backward

import (
	"math"

	"github.com/gatejet/gatejet"
)

// exp is math.Exp for the kernels' hot loops: a table of 2^(j/64) and a degree-5 polynomial
// instead of math.Exp's general reduction, about twice as fast and within 3 ulp of
// math.Exp (the tests bound the difference). Arguments outside [expMin, expMax], where the
// result would overflow or be subnormal, and NaN go to math.Exp.
//
// With k = round(x·64/ln2) = 64m + j and r = x − k·ln2/64 (|r| ≤ ln2/128),
// exp(x) = 2^m · 2^(j/64) · exp(r), and exp(r) − 1 ≈ r + r²/2 + … + r⁵/120 to 4e-17.
func exp(x float64) float64 {
	if !(x >= expMin && x <= expMax) {
		return math.Exp(x)
	}
	return expPoly(expReduce(x))
}

// expOf sets dst[i] = exp(src[i]) for i < len(dst) (src must be at least as long) and returns
// dst: four at a time by the vector loop (expLanes) where it can, and by exp otherwise.
// expReduce and expPoly are inlined, so the Go loop makes no calls on its fast path.
func expOf[T gatejet.Float](dst []float64, src []T) []float64 {
	src = src[:len(dst)]
	for i := 0; i < len(src); {
		i += expLanes(dst[i:], src[i:])
		// The vector loop stops at four values one of which is out of its range, or before
		// the last len mod 4 (or does nothing: no AVX2).
		for stop := min(i+4, len(src)); i < stop; i++ {
			x := float64(src[i])
			if !(x >= expMin && x <= expMax) {
				dst[i] = math.Exp(x)
				continue
			}
			dst[i] = expPoly(expReduce(x))
		}
	}
	return dst
}

// expSum sets e_i = exp(x_i − sh) for i < len(e) (x at least as long) and returns Σ e_i in
// sum's order: four lane sums over i < len(e) &^ 3 by i mod 4, the rest added to the first,
// then (s0 + s1) + (s2 + s3). The vector loop (expSumLanes) does the groups of four it can.
func expSum[T gatejet.Float](e []float64, x []T, sh float64) float64 {
	x = x[:len(e)]
	var acc [4]float64
	n4 := len(e) &^ 3
	for i := 0; i < n4; i += 4 {
		i += expSumLanes(e[i:n4], x[i:n4], sh, &acc)
		if i == n4 {
			break
		}
		// Four values, one at least out of the vector loop's range.
		for j := range 4 {
			v := exp(float64(x[i+j]) - sh)
			e[i+j] = v
			acc[j] += v
		}
	}
	for i := n4; i < len(e); i++ {
		v := exp(float64(x[i]) - sh)
		e[i] = v
		acc[0] += v
	}
	return (acc[0] + acc[1]) + (acc[2] + acc[3])
}

// expSumLanesGo is the Go loop of expSumLanes (all of it: exp takes any argument).
func expSumLanesGo[T gatejet.Float](e []float64, x []T, sh float64, acc *[4]float64) int {
	n4 := len(e) &^ 3
	x = x[:n4]
	a0, a1, a2, a3 := acc[0], acc[1], acc[2], acc[3]
	for i := 0; i < n4; i += 4 {
		xi, ei := x[i:i+4:i+4], e[i:i+4:i+4]
		e0, e1 := exp(float64(xi[0])-sh), exp(float64(xi[1])-sh)
		e2, e3 := exp(float64(xi[2])-sh), exp(float64(xi[3])-sh)
		ei[0], ei[1], ei[2], ei[3] = e0, e1, e2, e3
		a0 += e0
		a1 += e1
		a2 += e2
		a3 += e3
	}
	acc[0], acc[1], acc[2], acc[3] = a0, a1, a2, a3
	return n4
}

// expReduce returns, for x in [expMin, expMax], r = x − k·ln2/64 and scale = 2^(k/64) =
// 2^m · 2^(j/64) (see exp). It and expPoly are split so that each is small enough to be
// inlined.
func expReduce(x float64) (r, scale float64) {
	// Adding 1.5·2^52 rounds x·64/ln2 to an integer k held in the low bits of z. Each product
	// is converted to float64 so that no compiler fuses it with the sum into an FMA (GOAMD64=v3
	// would): one rounding instead of two, and bits different from the vector loop's.
	z := float64(x*expInvC) + expShift
	kb := math.Float64bits(z)
	kf := z - expShift
	// Cody-Waite: kf·expCHi is exact (kf has at most 17 bits, expCHi 36).
	r = (x - float64(kf*expCHi)) - float64(kf*expCLo)
	k := int64(kb - expShiftBits)
	scale = math.Float64frombits(exp2Tab[k&63] + uint64(k>>6)<<52)
	return r, scale
}

// expPoly returns scale·exp(r) for |r| ≤ ln2/128, as scale + scale·(exp(r) − 1).
func expPoly(r, scale float64) float64 {
	q := float64(r * (1.0 / 120))
	q = float64(r * (1.0/24 + q))
	q = float64(r * (1.0/6 + q))
	q = float64(r * (1.0/2 + q))
	q = r * (1 + q)
	return scale + float64(scale*q)
}

const (
	expMin       = -708.0
	expMax       = 709.0
	expInvC      = 0x1.71547652b82fep+6  // 64/ln2
	expCHi       = 0x1.62e42fefa0000p-7  // ln2/64, leading 36 bits
	expCLo       = 0x1.cf79abc9e3b3ap-46 // ln2/64 − expCHi
	expShift     = 0x1.8p52
	expShiftBits = 0x4338000000000000 // math.Float64bits(expShift)
)

// exp2Tab[j] holds the bits of 2^(j/64), correctly rounded.
var exp2Tab = [64]uint64{
	0x3ff0000000000000, 0x3ff02c9a3e778061, 0x3ff059b0d3158574, 0x3ff0874518759bc8,
	0x3ff0b5586cf9890f, 0x3ff0e3ec32d3d1a2, 0x3ff11301d0125b51, 0x3ff1429aaea92de0,
	0x3ff172b83c7d517b, 0x3ff1a35beb6fcb75, 0x3ff1d4873168b9aa, 0x3ff2063b88628cd6,
	0x3ff2387a6e756238, 0x3ff26b4565e27cdd, 0x3ff29e9df51fdee1, 0x3ff2d285a6e4030b,
	0x3ff306fe0a31b715, 0x3ff33c08b26416ff, 0x3ff371a7373aa9cb, 0x3ff3a7db34e59ff7,
	0x3ff3dea64c123422, 0x3ff4160a21f72e2a, 0x3ff44e086061892d, 0x3ff486a2b5c13cd0,
	0x3ff4bfdad5362a27, 0x3ff4f9b2769d2ca7, 0x3ff5342b569d4f82, 0x3ff56f4736b527da,
	0x3ff5ab07dd485429, 0x3ff5e76f15ad2148, 0x3ff6247eb03a5585, 0x3ff6623882552225,
	0x3ff6a09e667f3bcd, 0x3ff6dfb23c651a2f, 0x3ff71f75e8ec5f74, 0x3ff75feb564267c9,
	0x3ff7a11473eb0187, 0x3ff7e2f336cf4e62, 0x3ff82589994cce13, 0x3ff868d99b4492ed,
	0x3ff8ace5422aa0db, 0x3ff8f1ae99157736, 0x3ff93737b0cdc5e5, 0x3ff97d829fde4e50,
	0x3ff9c49182a3f090, 0x3ffa0c667b5de565, 0x3ffa5503b23e255d, 0x3ffa9e6b5579fdbf,
	0x3ffae89f995ad3ad, 0x3ffb33a2b84f15fb, 0x3ffb7f76f2fb5e47, 0x3ffbcc1e904bc1d2,
	0x3ffc199bdd85529c, 0x3ffc67f12e57d14b, 0x3ffcb720dcef9069, 0x3ffd072d4a07897c,
	0x3ffd5818dcfba487, 0x3ffda9e603db3285, 0x3ffdfc97337b9b5f, 0x3ffe502ee78b3ff6,
	0x3ffea4afa2a490da, 0x3ffefa1bee615a27, 0x3fff50765b6e4540, 0x3fffa7c1819e90d8,
}
