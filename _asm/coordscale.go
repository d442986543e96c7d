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
