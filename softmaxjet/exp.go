package softmaxjet

import (
	"math"

	"github.com/gatejet/gatejet"
)

// The softmax gate's exponential. Its arguments s·(l_k − max) are never positive, so the
// reduction and the scaling only need the range [−746, 0]; and the gate is computed in AVX
// four lanes at a time (gateAVX64, gateAVX32 in slab_amd64.s), so expNeg is written without
// branches on the value, as one sequence of operations the vector code repeats step by step
// for the same bits. It is the fdlibm algorithm (e_exp.c): x = k·ln2 + r with |r| ≤ ln2/2,
// a rational approximation of exp(r), and a scaling by 2^k.
//
// Every product that feeds an addition or a subtraction is wrapped in float64(…): the Go spec
// lets the compiler fuse x*y + z into one FMA (a single rounding) on some targets unless the
// product is explicitly converted, and the vector code uses no FMA.

const (
	expLog2e = 1.44269504088896338700e+00  // 0x3ff71547652b82fe, 1/ln2
	expLn2Hi = 6.93147180369123816490e-01  // 0x3fe62e42fee00000, ln2's leading 32 bits: k·expLn2Hi is exact
	expLn2Lo = 1.90821492927058770002e-10  // 0x3dea39ef35793c76, ln2 − expLn2Hi
	expP1    = 1.66666666666666019037e-01  // 0x3fc555555555553e
	expP2    = -2.77777777770155933842e-03 // 0xbf66c16c16bebd93
	expP3    = 6.61375632143793436117e-05  // 0x3f11566aaf25de2c
	expP4    = -1.65339022054652515390e-06 // 0xbebbbd41c5d26bf1
	expP5    = 4.13813679705723846039e-08  // 0x3e66376972bea4d0

	// expMin is where the arguments are clamped: exp(−746) < 2⁻¹⁰⁷⁵ rounds to 0, and so does
	// everything below, while 2^k for k ≥ round(−746/ln2) = −1076 still splits into two
	// normal powers of two.
	expMin = -746.0
)

// expNeg returns e^x for x ≤ 0, within one ulp: 0 for x ≤ −746 (−Inf included), NaN for
// NaN, 1 for ±0. Positive x are outside its domain (the scaling is built for k ≤ 0).
func expNeg(x float64) float64 {
	x = max(x, expMin) // NaN stays NaN
	kf := math.RoundToEven(x * expLog2e)
	hi := x - float64(kf*expLn2Hi)
	lo := float64(kf * expLn2Lo)
	r := hi - lo
	t := float64(r * r)
	p := float64(t * expP5)
	p = float64(t * (expP4 + p))
	p = float64(t * (expP3 + p))
	p = float64(t * (expP2 + p))
	p = float64(t * (expP1 + p))
	c := r - p
	y := 1 - ((lo - float64(r*c)/(2-c)) - hi)
	// 2^k as 2^k1·2^k2, both normal, applied one after the other: y·2^k1 is exact, so a
	// subnormal result is rounded once, by the second product. For NaN, k is garbage and y
	// is NaN.
	k := int64(kf)
	k1 := k >> 1
	k2 := k - k1
	return y * math.Float64frombits(uint64(k1+1023)<<52) * math.Float64frombits(uint64(k2+1023)<<52)
}

// gateGo writes the gate z = softmax(s·l) of one row, in the order the vector code
// (gateAVX64, gateAVX32) follows for the same bits:
//
//	mx  = max_k float64(l_k), NaN skipped
//	e_k = expNeg(s·(float64(l_k) − mx)), stored in z
//	sum = (a0 + a1) + (a2 + a3) with a_j = Σ e_k over k ≡ j (mod 4), k < 4⌊K/4⌋, in k order,
//	      then the remaining e_k added in k order
//	z_k = e_k·(1/sum)
//
// A NaN logit gives e_k = NaN and so a NaN sum; a +Inf logit (∞ − ∞) or a row of all −Inf
// logits (−∞ − (−∞)) gives NaN too: the whole row is NaN. −Inf logits alongside finite ones
// give e_k = 0.
func gateGo[T gatejet.Float](z []float64, l []T, s float64, K int) {
	l, z = l[:K], z[:K]
	mx := math.Inf(-1)
	for _, v := range l {
		if f := float64(v); f > mx {
			mx = f
		}
	}
	var a0, a1, a2, a3 float64
	k := 0
	for ; k+4 <= K; k += 4 {
		lk, zk := l[k:k+4:k+4], z[k:k+4:k+4]
		e0 := expNeg(s * (float64(lk[0]) - mx))
		e1 := expNeg(s * (float64(lk[1]) - mx))
		e2 := expNeg(s * (float64(lk[2]) - mx))
		e3 := expNeg(s * (float64(lk[3]) - mx))
		zk[0], zk[1], zk[2], zk[3] = e0, e1, e2, e3
		a0 += e0
		a1 += e1
		a2 += e2
		a3 += e3
	}
	sum := (a0 + a1) + (a2 + a3)
	for ; k < K; k++ {
		e := expNeg(s * (float64(l[k]) - mx))
		z[k] = e
		sum += e
	}
	r := 1 / sum
	for k := range z {
		z[k] *= r
	}
}
