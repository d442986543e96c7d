package main

import (
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The loops of the last-axis softmax forward (backward/forward.go): the max of a row, the
// exponentials e = exp(x − sh) with their sum, and the scaling by 1/S. The exponential is the
// package's exp (backward/exp.go: a table of 2^(j/64) and a degree-5 polynomial), four lanes
// at a time with the same operations in the same order, so the same bits; its table is
// passed by the caller (exp2Tab), its constants are repeated here by their bits.

// expConsts are the constants of expSum, four lanes each in memory.
type expConsts struct {
	invC, shift, cHi, cLo, min, max, c120, c24, c6, c2, one, mask63 Mem
}

// f64bits is the bits of v as a float64.
func f64bits(v float64) uint64 { return math.Float64bits(v) }

func expData() expConsts {
	return expConsts{
		invC:   splat4("expInvC", f64bits(0x1.71547652b82fep+6)),
		shift:  splat4("expShift", f64bits(0x1.8p52)), // its bits are expShiftBits
		cHi:    splat4("expCHi", f64bits(0x1.62e42fefa0000p-7)),
		cLo:    splat4("expCLo", f64bits(0x1.cf79abc9e3b3ap-46)),
		min:    splat4("expMin", f64bits(-708)),
		max:    splat4("expMax", f64bits(709)),
		c120:   splat4("expC120", f64bits(1.0/120)),
		c24:    splat4("expC24", f64bits(1.0/24)),
		c6:     splat4("expC6", f64bits(1.0/6)),
		c2:     splat4("expC2", f64bits(1.0/2)),
		one:    splat4("expOne", f64bits(1)),
		mask63: splat4("expMask63", 63),
	}
}

func forward() {
	c := expData()
	for _, e := range []elem{f64, f32} {
		maxLanes(e)
		expSum(e, c)
		scale(e)
	}
}

// maxLanes generates maxAVX64 and maxAVX32: lane j is the max of x_i, i ≡ j (mod 4), over the
// first len(x) &^ 3 elements, from −Inf, by v > m ? v : m (NaN passed over), as maxOf.
func maxLanes(e elem) {
	e.routine("max", []string{
		"Lane j of the result is the max of x_i over i ≡ j (mod 4), i < len(x) &^ 3, from −Inf,",
		"each step v > m ? v : m (a NaN is passed over), as the lanes of maxOf.",
	}, []string{"maxAVX64 for float32 data, widened to float64."})
	loadArgs(arg{"x", RSI}, arg{"len(x)", RCX})
	ANDQ(I8(-4), RCX)
	broadcastQ(0xfff0000000000000, Y0) // −Inf, through AX
	XORQ(RAX, RAX)
	loop4(e, "m", func() {
		e.load(e.at(RSI, RAX), Y1)
		Comment("VMAXPD returns its second source, m, unless v > m")
		VMAXPD(Y0, Y1, Y0)
	})
	VMOVUPD(Y0, addr(Return("m0")))
	VZEROUPPER()
	RET()
}

// expSum generates expSumAVX64 and expSumAVX32: e_i = exp(x_i − sh) and lane sums, as the Go
// loop of expSum, four elements at a time while all four x_i − sh lie in [expMin, expMax];
// the first group that does not is left to the caller (which calls math.Exp there).
//
//	d = x − sh                                   Y0
//	z = d·invC + shift                           Y1 (k in its low bits)
//	kf = z − shift                               Y2
//	r = (d − kf·cHi) − kf·cLo                    Y3
//	k = bits(z) − bits(shift)                    Y1 (int64 lanes)
//	j = k & 63                                   Y5
//	scale = tab[j] + (k − j)<<46                 Y7 ((k>>6)<<52 without an arithmetic shift)
//	q = r·(1 + r·(1/2 + r·(1/6 + r·(1/24 + r·(1/120)))))   Y4
//	e = scale + scale·q                          Y4
func expSum(e elem, c expConsts) {
	e.routine("expSum", []string{
		"e_i = exp(x_i − sh) for i < len(e) &^ 3, four at a time, each lane of acc adding the",
		"e_i of its lane in index order, as expSum's Go loop; it stops at the first four whose",
		"x − sh are not all in [expMin, expMax] (NaN included) and returns their index (else",
		"len(e) &^ 3). tab is exp2Tab.",
	}, []string{"expSumAVX64 for float32 data, widened to float64."})
	loadArgs(arg{"e", RDI}, arg{"len(e)", RCX}, arg{"x", RSI}, arg{"acc", R8}, arg{"tab", R9})
	l := e.labels("e")
	VBROADCASTSD(addr(Param("sh")), Y15)
	VMOVUPD(mem(R8, 0), Y12)
	ANDQ(I8(-4), RCX)
	XORQ(RAX, RAX)
	whileBelow(l("loop"), l("done"), RAX, RCX, 4, func() {
		e.load(e.at(RSI, RAX), Y0)
		VSUBPD(Y15, Y0, Y0)
		Comment("all four lanes in [expMin, expMax] (ordered: NaN is not)")
		VCMPPD(U8(0x1d), c.min, Y0, Y1) // d >= min
		VCMPPD(U8(0x12), c.max, Y0, Y2) // d <= max
		VANDPD(Y2, Y1, Y1)
		VMOVMSKPD(Y1, EDX)
		CMPL(EDX, U8(15))
		JNE(LabelRef(l("done")))
		VMULPD(c.invC, Y0, Y1)
		VADDPD(c.shift, Y1, Y1)
		VSUBPD(c.shift, Y1, Y2)
		VMULPD(c.cHi, Y2, Y3)
		VSUBPD(Y3, Y0, Y3)
		VMULPD(c.cLo, Y2, Y4)
		VSUBPD(Y4, Y3, Y3)
		VPSUBQ(c.shift, Y1, Y1)
		VPAND(c.mask63, Y1, Y5)
		VPCMPEQD(Y6, Y6, Y6)
		VPGATHERQQ(Y6, Mem{Base: R9, Index: Y5, Scale: 8}, Y7)
		VPSUBQ(Y5, Y1, Y1)
		VPSLLQ(U8(46), Y1, Y1)
		VPADDQ(Y1, Y7, Y7)
		horner(Y3, Y4, c.c120, c.c24, c.c6, c.c2, c.one)
		VMULPD(Y7, Y4, Y4)
		VADDPD(Y7, Y4, Y4)
		VMOVUPD(Y4, f64.at(RDI, RAX))
		VADDPD(Y4, Y12, Y12)
	})
	Label(l("done"))
	VMOVUPD(Y12, mem(R8, 0))
	Store(RAX, ReturnIndex(0))
	VZEROUPPER()
	RET()
}

// scale generates scaleAVX64 and scaleAVX32: y_i = e_i·r, rounded once to float32 for the
// float32 twin, as writeScaled.
func scale(e elem) {
	e.routine("scale", []string{"y_i = e_i·r for i < len(y) &^ 3, as writeScaled."},
		[]string{"scaleAVX64 for float32 outputs, rounded once."})
	loadArgs(arg{"y", RDI}, arg{"len(y)", RCX}, arg{"e", RSI})
	VBROADCASTSD(addr(Param("r")), Y0)
	ANDQ(I8(-4), RCX)
	XORQ(RAX, RAX)
	loop4(e, "s", func() {
		VMULPD(f64.at(RSI, RAX), Y0, Y1)
		e.store(Y1, e.at(RDI, RAX))
	})
	VZEROUPPER()
	RET()
}
