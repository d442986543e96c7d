package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// centreAVX32 is not a twin of centreAVX64: it also looks for values out of range, eight
// lanes at a time where it can.
func centreAVX32() {
	routine("centreAVX32",
		"e[a·P+c] = float32(float64(d[a·P+c]) − m[c]) for a < K, c < P, eight lanes at a time, then",
		"four, then one; big reports whether some |d − m| > 2¹⁰⁰ (±Inf included), and maybe more",
		"(the caller then checks exactly). The eight-lane loop looks at the rounded float32 e, which",
		"is at least 2¹⁰⁰ in magnitude whenever |d − m| > 2¹⁰⁰ (rounding is monotonic and 2¹⁰⁰ a",
		"float32): as integers with the sign cleared, the largest |e| takes two instructions per",
		"eight lanes, against three per four for the comparison in float64 (a NaN counts as big).")
	l := f32.labels("c")
	loadArgs(centreArgs...)
	roundDown(R10, R12, 8)
	roundDown(R10, R13, 4)
	broadcastQ(0x7fffffffffffffff, Y5)
	broadcastQ(0x4630000000000000, Y6)
	MOVL(U32(0x7fffffff), EAX)
	MOVQ(RAX, X10)
	VPBROADCASTD(X10, Y10)
	Comment("Y4: largest |e| bits, eight lanes; Y9: four-lane flags; X7: one-lane flags")
	VXORPD(Y4, Y4, Y4)
	VXORPD(Y9, Y9, Y9)
	VXORPD(X7, X7, X7)

	overRows(l, func() {}, func() {
		TESTQ(R12, R12)
		JZ(LabelRef(l("vec4")))
		repeatBelow(l("vec8"), RCX, R12, U8(8), func() {
			VCVTPS2PD(f32.at(RSI, RCX), Y1)
			VCVTPS2PD(memx(16, RSI, RCX, 4), Y2)
			VSUBPD(f64.at(RDX, RCX), Y1, Y1)
			VSUBPD(memx(32, RDX, RCX, 8), Y2, Y2)
			VCVTPD2PSY(Y1, X1)
			VCVTPD2PSY(Y2, X2)
			VINSERTF128(U8(1), X2, Y1, Y1)
			VMOVUPS(Y1, f32.at(RDI, RCX))
			VPAND(Y10, Y1, Y1)
			VPMAXSD(Y1, Y4, Y4)
		})

		Label(l("vec4"))
		CMPQ(RCX, R13)
		JAE(LabelRef(l("tail")))
		VCVTPS2PD(f32.at(RSI, RCX), Y1)
		VSUBPD(f64.at(RDX, RCX), Y1, Y1)
		VCVTPD2PSY(Y1, X2)
		VMOVUPS(X2, f32.at(RDI, RCX))
		VANDPD(Y5, Y1, Y3)
		VCMPPD(U8(0x1e), Y6, Y3, Y3)
		VORPD(Y3, Y9, Y9)
		ADDQ(U8(4), RCX)
	}, func() {
		VCVTSS2SD(f32.at(RSI, RCX), X1, X1)
		VSUBSD(f64.at(RDX, RCX), X1, X1)
		VCVTSD2SS(X1, X1, X2)
		VMOVSS(X2, f32.at(RDI, RCX))
		VANDPD(X5, X1, X3)
		VCMPSD(U8(0x1e), X6, X3, X3)
		VORPD(X3, X7, X7)
	}, func() {
		LEAQ(f32.at(RDI, R10), RDI)
		LEAQ(f32.at(RSI, R10), RSI)
	})

	Label(l("done"))
	Comment("0x717fffff: below the bits of 2¹⁰⁰ in float32")
	MOVL(U32(0x717fffff), EAX)
	MOVQ(RAX, X8)
	VPBROADCASTD(X8, Y8)
	VPCMPGTD(Y8, Y4, Y4)
	VMOVMSKPS(Y4, EAX)
	VMOVMSKPD(Y9, ECX)
	ORL(ECX, EAX)
	VMOVMSKPD(X7, ECX)
	ORL(ECX, EAX)
	SETNE(addr(Return("big")))
	VZEROUPPER()
	RET()
}

// centreArgs are the arguments of centreAVX32 and centreAVX64 in their registers.
var centreArgs = []arg{{"e", RDI}, {"d", RSI}, {"m", RDX}, {"K", RBX}, {"P", R10}}

func centreAVX64() {
	routine("centreAVX64", "e[a·P+c] = d[a·P+c] − m[c] for a < K, c < P, four lanes at a time.")
	l := f64.labels("c")
	loadArgs(centreArgs...)
	roundDown(R10, R13, 4)
	overRows(l, func() {}, vectors4(l, func() {
		VMOVUPD(f64.at(RSI, RCX), Y1)
		VSUBPD(f64.at(RDX, RCX), Y1, Y1)
		VMOVUPD(Y1, f64.at(RDI, RCX))
	}), func() {
		VMOVSD(f64.at(RSI, RCX), X1)
		VSUBSD(f64.at(RDX, RCX), X1, X1)
		VMOVSD(X1, f64.at(RDI, RCX))
	}, func() {
		LEAQ(f64.at(RDI, R10), RDI)
		LEAQ(f64.at(RSI, R10), RSI)
	})
	done(l)
}

// overRows is the loop of centreAVX32, centreAVX64 and hvpOut over K rows (BX, counted down)
// of P columns (R10), up to the label done: for each row start, then vecs from column CX = 0
// (on to the first column left), tail for each column left, and next to move the row
// pointers on.
func overRows(l func(string) string, start, vecs, tail, next func()) {
	Label(l("a"))
	TESTQ(RBX, RBX)
	JZ(LabelRef(l("done")))
	start()
	XORQ(RCX, RCX)
	vecs()
	whileBelow(l("tail"), l("next"), RCX, R10, 1, tail)

	Label(l("next"))
	next()
	DECQ(RBX)
	JMP(LabelRef(l("a")))
}

// vectors4 is the vecs of overRows that runs vec for each four columns up to R13.
func vectors4(l func(string) string, vec func()) func() {
	return func() {
		TESTQ(R13, R13)
		JZ(LabelRef(l("tail")))
		repeatBelow(l("vec"), RCX, R13, U8(4), vec)
	}
}

// done is the label done of l's routine, its end.
func done(l func(string) string) {
	Label(l("done"))
	VZEROUPPER()
	RET()
}

// mean generates meanAVX64 and meanAVX32: the columns of d in the element type, widened to
// float64 as they are loaded.
func mean(e elem) {
	routine(e.name("mean"),
		"m[c] = Σ_k z[k]·d[k·P+c] for c < P, the terms added in k order to 0, with the sums of 16,",
		"then 4, then 1 column held in registers across k.")
	l := func(s string) string { return e.name("mean") + "_" + s }
	loadArgs(arg{"m", RDI}, arg{"z", RDX}, arg{"d", RSI}, arg{"K", RBX}, arg{"P", R10})
	Comment("R12 = the row stride in bytes, CX = the column")
	MOVQ(R10, R12)
	SHLQ(U8(e.shift), R12)
	XORQ(RCX, RCX)

	// columns CX to CX+4n, n = 4 or 1 vectors, the sums in Y4 to Y(3+n)
	cols := func(n int, this, next string) {
		Label(l("c" + this))
		LEAQ(mem(RCX, 4*n), RAX)
		CMPQ(RAX, R10)
		JA(LabelRef(l("c" + next)))
		for j := 0; j < n; j++ {
			VXORPD(ys[4+j], ys[4+j], ys[4+j])
		}
		LEAQ(e.at(RSI, RCX), R11)
		XORQ(R8, R8)

		whileBelow(l("k"+this), l("s"+this), R8, RBX, 1, func() {
			VBROADCASTSD(f64.at(RDX, R8), Y0)
			for j := 0; j < n; j++ {
				e.load(mem(R11, 4*e.size*j), Y1)
				VMULPD(Y0, Y1, Y1)
				VADDPD(Y1, ys[4+j], ys[4+j])
			}
			ADDQ(R12, R11)
		})

		Label(l("s" + this))
		for j := 0; j < n; j++ {
			VMOVUPD(ys[4+j], memx(32*j, RDI, RCX, 8))
		}
		MOVQ(RAX, RCX)
		JMP(LabelRef(l("c" + this)))
	}
	cols(4, "16", "4")
	cols(1, "4", "1")

	whileBelow(l("c1"), l("done"), RCX, R10, 1, func() {
		VXORPD(X4, X4, X4)
		LEAQ(e.at(RSI, RCX), R11)
		XORQ(R8, R8)
		whileBelow(l("k1"), l("s1"), R8, RBX, 1, func() {
			e.loadScalar(mem(R11, 0), X1)
			VMULSD(f64.at(RDX, R8), X1, X1)
			VADDSD(X1, X4, X4)
			ADDQ(R12, R11)
		})

		Label(l("s1"))
		VMOVSD(X4, f64.at(RDI, RCX))
	})
	done(l)
}

// hvpOut generates hvpOutAVX64 and hvpOutAVX32: they differ in the stores of o.
func hvpOut(e elem) {
	e.routine("hvpOut", []string{
		"o[a·P+c] = f[a]·(e[a·P+c]·u[a] − w[c]) for a < K, c < P, four lanes at a time.",
	}, []string{"hvpOutAVX64 computed in float64 and rounded once to float32."})
	l := e.labels("h")
	loadArgs(arg{"o", RDI}, arg{"e", RSI}, arg{"w", RDX}, arg{"f", R8}, arg{"u", R9},
		arg{"K", RBX}, arg{"P", R10})
	roundDown(R10, R13, 4)

	overRows(l, func() {
		VBROADCASTSD(mem(R8, 0), Y0)
		VBROADCASTSD(mem(R9, 0), Y2)
	}, vectors4(l, func() {
		VMOVUPD(f64.at(RSI, RCX), Y1)
		VMULPD(Y2, Y1, Y1)
		VSUBPD(f64.at(RDX, RCX), Y1, Y1)
		VMULPD(Y0, Y1, Y1)
		e.store(Y1, e.at(RDI, RCX))
	}), func() {
		VMOVSD(f64.at(RSI, RCX), X1)
		VMULSD(X2, X1, X1)
		VSUBSD(f64.at(RDX, RCX), X1, X1)
		VMULSD(X0, X1, X1)
		e.storeScalar(X1, e.at(RDI, RCX))
	}, func() {
		LEAQ(e.at(RDI, R10), RDI)
		LEAQ(f64.at(RSI, R10), RSI)
		ADDQ(U8(8), R8)
		ADDQ(U8(8), R9)
	})
	done(l)
}
