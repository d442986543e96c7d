package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// scaleRows generates scaleAVX64 and scaleAVX32, the writer of the coordinate second channel's
// blocks beyond the ℓℓ ones: n rows of P, o[i·P+c] = f[i]·x[i·xs+c], the product in float64
// and rounded once to the element type, as scaleGo. Registers: DI = o's row, SI = x's row,
// R8 = f[i], BX = the rows left, R10 = P, R13 = P rounded down to 4, R9 = xs in bytes, R12 =
// P in bytes, R11 = nt, CX = the column. With nt the four-lane stores are non-temporal (32
// bytes of float64, 16 of float32: the caller guarantees that o and P·size are multiples of
// that) and P is a multiple of 4, so there is no tail.
func scaleRows(e elem) {
	e.routine("scale", []string{
		"o[i·P+c] = f[i]·x[i·xs+c] for i < n, c < P, four lanes at a time, then one; with nt the",
		"stores are non-temporal (o and P·8 multiples of 32 bytes).",
	}, []string{"scaleAVX64 on float32 data, each product rounded once to float32; with nt o and P·4",
		"are multiples of 16 bytes."})
	l := e.labels("s")
	loadArgs(arg{"o", RDI}, arg{"x", RSI}, arg{"f", R8}, arg{"n", RBX}, arg{"P", R10}, arg{"xs", R9})
	SHLQ(U8(e.shift), R9)
	MOVQ(R10, R12)
	SHLQ(U8(e.shift), R12)
	roundDown(R10, R13, 4)
	MOVBLZX(addr(Param("nt")), R11L)

	Label(l("row"))
	TESTQ(RBX, RBX)
	JZ(LabelRef(l("done")))
	VBROADCASTSD(mem(R8, 0), Y0)
	XORQ(RCX, RCX)
	TESTQ(R11, R11)
	JNZ(LabelRef(l("nt")))
	TESTQ(R13, R13)
	JZ(LabelRef(l("tail")))
	repeatBelow(l("vec"), RCX, R13, U8(4), func() {
		e.load(e.at(RSI, RCX), Y1)
		VMULPD(Y0, Y1, Y1)
		e.store(Y1, e.at(RDI, RCX))
	})
	whileBelow(l("tail"), l("next"), RCX, R10, 1, func() {
		e.loadScalar(e.at(RSI, RCX), X1)
		VMULSD(X0, X1, X1)
		e.storeScalar(X1, e.at(RDI, RCX))
	})

	Label(l("nt"))
	Comment("P a multiple of 4: whole vectors, non-temporal")
	repeatBelow(l("ntvec"), RCX, R10, U8(4), func() {
		e.load(e.at(RSI, RCX), Y1)
		VMULPD(Y0, Y1, Y1)
		if e.bits == 64 {
			VMOVNTPD(Y1, e.at(RDI, RCX))
		} else {
			VCVTPD2PSY(Y1, X1)
			VMOVNTPS(X1, e.at(RDI, RCX))
		}
	})

	Label(l("next"))
	ADDQ(R12, RDI)
	ADDQ(R9, RSI)
	ADDQ(U8(8), R8)
	DECQ(RBX)
	JMP(LabelRef(l("row")))
	done(l)
}

// coordHVP generates coordHVPlAVX64/32 and coordHVPtAVX64/32, the softmax coordinate HVP's
// rows (coordHVPlGo, coordHVPtGo): products and sums in float64, each rounded as Go rounds
// them (no FMA), the result rounded once to the element type.
func coordHVP(e elem) {
	e.routine("coordHVPl", []string{
		"o[a·P+c] = g[a]·((su[a]·e[a·P+c] + vt[a]·d1[a·P+c]) − q[c]) for a < K, c < P, four lanes at",
		"a time, then one.",
	}, []string{"coordHVPlAVX64 on float32 d1 and o, widened to float64 and rounded once."})
	l := e.labels("hl")
	loadArgs(arg{"o", RDI}, arg{"e", RSI}, arg{"d1", RDX}, arg{"q", R11}, arg{"g", R8}, arg{"su", R9},
		arg{"vt", R14}, arg{"K", RBX}, arg{"P", R10})
	roundDown(R10, R13, 4)
	overRows(l, func() {
		VBROADCASTSD(mem(R8, 0), Y0)
		VBROADCASTSD(mem(R9, 0), Y2)
		VBROADCASTSD(mem(R14, 0), Y3)
	}, vectors4(l, func() {
		VMOVUPD(f64.at(RSI, RCX), Y1)
		VMULPD(Y2, Y1, Y1)
		e.load(e.at(RDX, RCX), Y4)
		VMULPD(Y3, Y4, Y4)
		VADDPD(Y4, Y1, Y1)
		VSUBPD(f64.at(R11, RCX), Y1, Y1)
		VMULPD(Y0, Y1, Y1)
		e.store(Y1, e.at(RDI, RCX))
	}), func() {
		VMOVSD(f64.at(RSI, RCX), X1)
		VMULSD(X2, X1, X1)
		e.loadScalar(e.at(RDX, RCX), X4)
		VMULSD(X3, X4, X4)
		VADDSD(X4, X1, X1)
		VSUBSD(f64.at(R11, RCX), X1, X1)
		VMULSD(X0, X1, X1)
		e.storeScalar(X1, e.at(RDI, RCX))
	}, func() {
		LEAQ(e.at(RDI, R10), RDI)
		LEAQ(f64.at(RSI, R10), RSI)
		LEAQ(e.at(RDX, R10), RDX)
		ADDQ(U8(8), R8)
		ADDQ(U8(8), R9)
		ADDQ(U8(8), R14)
	})
	done(l)

	e.routine("coordHVPt", []string{
		"o[k·P+c] = f[k]·x[k·P+c] + h[k]·y[k·P+c] for k < K, c < P, four lanes at a time, then one.",
	}, []string{"coordHVPtAVX64 on float32 data, widened to float64 and rounded once."})
	l = e.labels("ht")
	loadArgs(arg{"o", RDI}, arg{"x", RSI}, arg{"y", RDX}, arg{"f", R8}, arg{"h", R9},
		arg{"K", RBX}, arg{"P", R10})
	roundDown(R10, R13, 4)
	overRows(l, func() {
		VBROADCASTSD(mem(R8, 0), Y0)
		VBROADCASTSD(mem(R9, 0), Y2)
	}, vectors4(l, func() {
		e.load(e.at(RSI, RCX), Y1)
		VMULPD(Y0, Y1, Y1)
		e.load(e.at(RDX, RCX), Y4)
		VMULPD(Y2, Y4, Y4)
		VADDPD(Y4, Y1, Y1)
		e.store(Y1, e.at(RDI, RCX))
	}), func() {
		e.loadScalar(e.at(RSI, RCX), X1)
		VMULSD(X0, X1, X1)
		e.loadScalar(e.at(RDX, RCX), X4)
		VMULSD(X2, X4, X4)
		VADDSD(X4, X1, X1)
		e.storeScalar(X1, e.at(RDI, RCX))
	}, func() {
		LEAQ(e.at(RDI, R10), RDI)
		LEAQ(e.at(RSI, R10), RSI)
		LEAQ(e.at(RDX, R10), RDX)
		ADDQ(U8(8), R8)
		ADDQ(U8(8), R9)
	})
	done(l)
}
