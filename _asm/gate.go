package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The softmax gate (gateAVX64, gateAVX32): gateGo four lanes at a time, with expNeg (exp.go)
// as the same sequence of operations, so the same bits; no FMA, which would round once where
// the Go code rounds twice. The constants are four lanes each, for memory operands.

// gateConsts are the constants of gateExp, in memory.
type gateConsts struct {
	log2e, ln2Hi, ln2Lo, p1, p2, p3, p4, p5 Mem
	// bias is the exponent bias as four int32 lanes.
	bias Mem
	// mask is the lane masks for the last K mod 4 atoms: the four int32 lanes at
	// gateMask<>+16−4·r have their first r lanes set (sign-extended to int64 lanes for
	// float64 data).
	mask Mem
}

// splat4 declares name<>, four float64 lanes of the bits v.
func splat4(name string, v uint64) Mem {
	m := GLOBL(name, RODATA|NOPTR)
	for i := 0; i < 4; i++ {
		DATA(8*i, U64(v))
	}
	return m
}

func gateData() gateConsts {
	var g gateConsts
	g.log2e = splat4("gateLog2e", 0x3ff71547652b82fe)
	g.ln2Hi = splat4("gateLn2Hi", 0x3fe62e42fee00000)
	g.ln2Lo = splat4("gateLn2Lo", 0x3dea39ef35793c76)
	g.p1 = splat4("gateP1", 0x3fc555555555553e)
	g.p2 = splat4("gateP2", 0xbf66c16c16bebd93)
	g.p3 = splat4("gateP3", 0x3f11566aaf25de2c)
	g.p4 = splat4("gateP4", 0xbebbbd41c5d26bf1)
	g.p5 = splat4("gateP5", 0x3e66376972bea4d0)
	g.bias = GLOBL("gateBias", RODATA|NOPTR)
	DATA(0, U64(0x000003ff000003ff))
	DATA(8, U64(0x000003ff000003ff))
	g.mask = GLOBL("gateMask", RODATA|NOPTR)
	DATA(0, U64(0xffffffffffffffff))
	DATA(8, U64(0xffffffffffffffff))
	DATA(16, U64(0))
	DATA(24, U64(0))
	return g
}

// gateExp replaces the four lanes of Y1 by expNeg of them, step by step as in exp.go, with
// Y15 = −746, Y11 = 1, Y10 = 2 and Y2–Y7 as scratch:
//
//	x = max(x, −746)       VMAXPD returns its second source (Go's first operand) when either
//	                       is NaN, so a NaN x stays NaN
//	kf = round(x·log2e)    Y2, to nearest even
//	hi = x − kf·ln2Hi      Y3
//	lo = kf·ln2Lo          Y4
//	r = hi − lo            Y5
//	t = r·r                Y6
//	p = t·(P1 + t·(P2 + t·(P3 + t·(P4 + t·P5))))   Y7
//	c = r − p              Y7
//	y = 1 − ((lo − r·c/(2 − c)) − hi)              Y3
//	k1 = k >> 1, k2 = k − k1 (int32 lanes), 2^k1 and 2^k2 from the exponent bits, and
//	y·2^k1·2^k2 in that order: the first product is exact, the second rounds once.
func gateExp(g gateConsts) {
	VMAXPD(Y1, Y15, Y1)
	VMULPD(g.log2e, Y1, Y2)
	VROUNDPD(U8(0), Y2, Y2)
	VMULPD(g.ln2Hi, Y2, Y3)
	VSUBPD(Y3, Y1, Y3)
	VMULPD(g.ln2Lo, Y2, Y4)
	VSUBPD(Y4, Y3, Y5)
	VMULPD(Y5, Y5, Y6)
	horner(Y6, Y7, g.p5, g.p4, g.p3, g.p2, g.p1)
	VSUBPD(Y7, Y5, Y7)
	VMULPD(Y7, Y5, Y5)
	VSUBPD(Y7, Y10, Y6)
	VDIVPD(Y6, Y5, Y5)
	VSUBPD(Y5, Y4, Y4)
	VSUBPD(Y3, Y4, Y4)
	VSUBPD(Y4, Y11, Y3)
	VCVTPD2DQY(Y2, X2)
	VPSRAD(U8(1), X2, X4)
	VPSUBD(X4, X2, X2)
	VPADDD(g.bias, X4, X4)
	VPADDD(g.bias, X2, X2)
	VPMOVZXDQ(X4, Y4)
	VPMOVZXDQ(X2, Y2)
	VPSLLQ(U8(52), Y4, Y4)
	VPSLLQ(U8(52), Y2, Y2)
	VMULPD(Y4, Y3, Y3)
	VMULPD(Y2, Y3, Y1)
}

// gate generates gateAVX64 and gateAVX32: they differ in the loads of l, widened to float64
// for float32 logits.
func gate(e elem, g gateConsts) {
	e.routine("gate", []string{
		"z[k] = softmax(s·l)[k] for k < K, as gateGo: the maximum four lanes at a time (NaN passed",
		"over), the exponentials four lanes at a time with the last K mod 4 under a mask, summed",
		"in four lane accumulators and then the masked lanes in order, and z scaled by 1/sum.",
	}, []string{"gateAVX64 for float32 logits, widened to float64 as they are loaded."})
	l := e.labels("g")
	loadArgs(arg{"z", RDI}, arg{"l", RSI}, arg{"K", RBX})
	roundDown(RBX, R13, 4)
	broadcastQ(0xfff0000000000000, Y0) // −Inf
	XORQ(RCX, RCX)
	whileBelow(l("max4"), l("maxh"), RCX, R13, 4, func() {
		e.load(e.at(RSI, RCX), Y1)
		Comment("v > mx ? v : mx, so NaN is passed over as in gateGo")
		VMAXPD(Y0, Y1, Y0)
	})

	Label(l("maxh"))
	across(Y0, X1, VMAXPD, VMAXSD)

	whileBelow(l("max1"), l("exp"), RCX, RBX, 1, func() {
		e.loadScalar(e.at(RSI, RCX), X1)
		VMAXSD(X0, X1, X0)
	})

	Label(l("exp"))
	Comment("Y14 = mx, Y13 = s, Y15 = −746, Y11 = 1, Y10 = 2, Y12 = the lane sums")
	VBROADCASTSD(X0, Y14)
	VBROADCASTSD(addr(Param("s")), Y13)
	broadcastQ(0xc087500000000000, Y15)
	broadcastQ(0x3ff0000000000000, Y11)
	broadcastQ(0x4000000000000000, Y10)
	VXORPD(Y12, Y12, Y12)
	XORQ(RCX, RCX)

	whileBelow(l("exp4"), l("sum"), RCX, R13, 4, func() {
		e.load(e.at(RSI, RCX), Y1)
		VSUBPD(Y14, Y1, Y1)
		VMULPD(Y13, Y1, Y1)
		gateExp(g)
		VMOVUPD(Y1, f64.at(RDI, RCX))
		VADDPD(Y1, Y12, Y12)
	})

	Label(l("sum"))
	VEXTRACTF128(U8(1), Y12, X2)
	VHADDPD(X2, X12, X0) // a0 + a1, a2 + a3
	VHADDPD(X0, X0, X0)
	MOVQ(RBX, RDX)
	SUBQ(RCX, RDX) // K mod 4
	JZ(LabelRef(l("norm")))
	NEGQ(RDX)
	LEAQ(g.mask, RAX)
	if e.bits == 64 {
		VPMOVSXDQ(memx(16, RAX, RDX, 4), Y8)
		VMASKMOVPD(e.at(RSI, RCX), Y8, Y1)
	} else {
		VMOVDQU(memx(16, RAX, RDX, 4), X9)
		VPMOVSXDQ(X9, Y8)
		VMASKMOVPS(e.at(RSI, RCX), X9, X1)
		VCVTPS2PD(X1, Y1)
	}
	VSUBPD(Y14, Y1, Y1)
	VMULPD(Y13, Y1, Y1)
	gateExp(g)
	VMASKMOVPD(Y1, Y8, f64.at(RDI, RCX))
	VADDSD(X1, X0, X0)
	CMPQ(RDX, I8(-1))
	JEQ(LabelRef(l("norm")))
	VPERMILPD(U8(1), X1, X2)
	VADDSD(X2, X0, X0)
	CMPQ(RDX, I8(-2))
	JEQ(LabelRef(l("norm")))
	VEXTRACTF128(U8(1), Y1, X2)
	VADDSD(X2, X0, X0)

	Label(l("norm"))
	VDIVSD(X0, X11, X1) // 1/sum
	VBROADCASTSD(X1, Y1)
	XORQ(RCX, RCX)

	whileBelow(l("norm4"), l("norm1"), RCX, R13, 4, func() {
		VMULPD(f64.at(RDI, RCX), Y1, Y2)
		VMOVUPD(Y2, f64.at(RDI, RCX))
	})
	whileBelow(l("norm1"), l("done"), RCX, RBX, 1, func() {
		VMULSD(f64.at(RDI, RCX), X1, X2)
		VMOVSD(X2, f64.at(RDI, RCX))
	})
	done(l)
}
