package backward

import "math"

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
// dst. expReduce and expPoly are inlined, so the loop makes no calls on its fast path.
func expOf[T Float](dst []float64, src []T) []float64 {
	src = src[:len(dst)]
	for i, v := range src {
		x := float64(v)
		if !(x >= expMin && x <= expMax) {
			dst[i] = math.Exp(x)
			continue
		}
		dst[i] = expPoly(expReduce(x))
	}
	return dst
}

// expReduce returns, for x in [expMin, expMax], r = x − k·ln2/64 and scale = 2^(k/64) =
// 2^m · 2^(j/64) (see exp). It and expPoly are split so that each is small enough to be
// inlined.
func expReduce(x float64) (r, scale float64) {
	// Adding 1.5·2^52 rounds x·64/ln2 to an integer k held in the low bits of z.
	z := x*expInvC + expShift
	kb := math.Float64bits(z)
	kf := z - expShift
	// Cody-Waite: kf·expCHi is exact (kf has at most 17 bits, expCHi 36).
	r = (x - kf*expCHi) - kf*expCLo
	k := int64(kb - expShiftBits)
	scale = math.Float64frombits(exp2Tab[k&63] + uint64(k>>6)<<52)
	return r, scale
}

// expPoly returns scale·exp(r) for |r| ≤ ln2/128, as scale + scale·(exp(r) − 1).
func expPoly(r, scale float64) float64 {
	q := r * (1 + r*(1.0/2+r*(1.0/6+r*(1.0/24+r*(1.0/120)))))
	return scale + scale*q
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
