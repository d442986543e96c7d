package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The second channel of one row is K×K blocks of P: block (a,b) is f·(e[a] + e[b]) with the
// pair's coefficient f (pairCoef). coefAVX64 and coefAVX32 compute nsz, diag and the range
// verdict of secondCoefs four lanes at a time, and every coefficient once, rounded to the
// element type, into the matrix c (row a at c[a·Kp], Kp = K rounded up to 4): c[a·Kp+b] for
// b ≥ a. Block (a,b) with b < a takes c[b·Kp+a], the coefficient of the same pair, so the row
// writers rowAVX64 and rowAVX32 only broadcast a coefficient per block, from memory.

// coefPadData declares coefPad, the lane masks for the last K mod 4 atoms: the four int64
// lanes at coefPad<>+32−8·r have the lanes from r on set (the padding).
func coefPadData() Mem {
	m := GLOBL("coefPad", RODATA|NOPTR)
	for i := 0; i < 8; i++ {
		v := uint64(0)
		if i >= 4 {
			v = ^uint64(0)
		}
		DATA(8*i, U64(v))
	}
	return m
}

// coefConst loads the constants of coefChunk: Y15 = s2, Y14 = 1, Y13 = 1/2, Y12 = the sign
// bit, Y11 = all but the sign bit, Y10 = 2⁻⁹⁹, Y9 = 2¹⁰⁰, Y6 = 0, Y0 = +Inf, and the
// accumulators Y8 = +Inf (smallest positive ζ) and Y7 = all ones (lanes that passed).
func coefConst() {
	VBROADCASTSD(addr(Param("s2")), Y15)
	broadcastQ(0x3ff0000000000000, Y14)
	broadcastQ(0x3fe0000000000000, Y13)
	broadcastQ(0x8000000000000000, Y12)
	broadcastQ(0x7fffffffffffffff, Y11)
	broadcastQ(0x39c0000000000000, Y10)
	broadcastQ(0x4630000000000000, Y9)
	broadcastQ(0x7ff0000000000000, Y0)
	VMOVAPD(Y0, Y8)
	VXORPD(Y6, Y6, Y6)
	VPCMPEQQ(Y7, Y7, Y7)
}

// coefChunk is secondCoefs on the four ζ in Y1 (atoms CX to CX+3): it stores nsz = −(s2·ζ)
// and diag = s2·ζ·(1 − 2ζ)/2 (2ζ as ζ + ζ and /2 as ·1/2, both exact: the same bits) at
// (DI) and (SI), and leaves in Y2 the lanes that pass (diag 0 or of magnitude in [2⁻⁹⁹,
// 2¹⁰⁰], ζ ≥ 0; a NaN passes neither) and in Y4 ζ where ζ > 0, +Inf elsewhere.
func coefChunk() {
	VMULPD(Y1, Y15, Y2)
	VXORPD(Y12, Y2, Y3)
	VMOVUPD(Y3, f64.at(RDI, RCX))
	VADDPD(Y1, Y1, Y4)
	VSUBPD(Y4, Y14, Y4)
	VMULPD(Y4, Y2, Y4)
	VMULPD(Y13, Y4, Y4)
	VMOVUPD(Y4, f64.at(RSI, RCX))
	VANDPD(Y11, Y4, Y5)
	VCMPPD(U8(0x1d), Y10, Y5, Y2) // ≥ 2⁻⁹⁹
	VCMPPD(U8(0x12), Y9, Y5, Y3)  // ≤ 2¹⁰⁰
	VANDPD(Y3, Y2, Y2)
	VCMPPD(U8(0x00), Y6, Y5, Y3) // = 0
	VORPD(Y3, Y2, Y2)
	VCMPPD(U8(0x1d), Y6, Y1, Y3) // ζ ≥ 0
	VANDPD(Y3, Y2, Y2)
	VCMPPD(U8(0x1e), Y6, Y1, Y3) // ζ > 0
	VBLENDVPD(Y3, Y1, Y0, Y4)
}

// coef generates coefAVX64 and coefAVX32: they differ only in the stores of c.
func coef(e elem, coefPad Mem) {
	e.routine("coef", []string{
		"nsz[a], diag[a] for a < Kp (z padded to Kp), c[a·Kp+b] = nsz[a]·z[b] for a < K and",
		"(a &^ 3) ≤ b < Kp, then c[a·Kp+a] = diag[a]; zmin is the smallest positive z[a], a < K",
		"(+Inf if none), and ok whether every a < K passed the range check of secondCoefs. The",
		"products have nsz as the first operand, as in pairCoef.",
	}, []string{"coefAVX64 with c in float32: each coefficient computed in float64 and rounded once."})
	l := e.labels("c")
	loadArgs(arg{"nsz", RDI}, arg{"diag", RSI}, arg{"z", RDX}, arg{"K", RBX}, arg{"Kp", R10})
	coefConst()
	roundDown(RBX, R13, 4)
	XORQ(RCX, RCX)
	whileBelow(l("p1"), l("p1tail"), RCX, R13, 4, func() {
		VMOVUPD(f64.at(RDX, RCX), Y1)
		coefChunk()
		VANDPD(Y2, Y7, Y7)
		VMINPD(Y4, Y8, Y8)
	})

	Label(l("p1tail"))
	CMPQ(RCX, RBX)
	JAE(LabelRef(l("p1done")))
	MOVQ(RCX, RAX)
	SUBQ(RBX, RAX) // −(K mod 4)
	LEAQ(coefPad, R9)
	VMOVUPD(f64.at(RDX, RCX), Y1)
	coefChunk()
	VMOVDQU(memx(32, R9, RAX, 8), Y5) // the padding lanes
	VORPD(Y5, Y2, Y2)
	VBLENDVPD(Y5, Y0, Y4, Y4)
	VANDPD(Y2, Y7, Y7)
	VMINPD(Y4, Y8, Y8)

	Label(l("p1done"))
	across(Y8, X1, VMINPD, VMINSD)
	VMOVSD(X8, addr(Return("zmin")))
	VMOVMSKPD(Y7, EAX)
	CMPL(EAX, U8(15))
	SETEQ(addr(Return("ok")))

	Comment("R8 = row a of c, R9 = its length in bytes, R11 = a")
	loadArgs(arg{"c", R8})
	MOVQ(R10, R9)
	SHLQ(U8(e.shift), R9)
	XORQ(R11, R11)
	whileBelow(l("p2"), l("done"), R11, RBX, 1, func() {
		VBROADCASTSD(f64.at(RDI, R11), Y1) // nsz[a]
		roundDown(R11, RCX, 4)
		repeatBelow(l("p2b"), RCX, R10, U8(4), func() {
			VMULPD(f64.at(RDX, RCX), Y1, Y2)
			e.store(Y2, e.at(R8, RCX))
		})
		if e.bits == 64 {
			MOVQ(f64.at(RSI, R11), RAX)
			MOVQ(RAX, e.at(R8, R11))
		} else {
			VCVTSD2SS(f64.at(RSI, R11), X2, X2)
			VMOVSS(X2, e.at(R8, R11))
		}
		ADDQ(R9, R8)
	})
	done(l)
}
