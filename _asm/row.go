package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The row writers, block (a,b) at o[(a·os+b)·P]: os = K for the second channel, 2K for the
// ℓℓ blocks of the coordinate second channel. Registers: BX = a, DI = the row's output at block (a,0), R11 = e, R14 =
// e[a], R10 = P in bytes (a block), R13 = its whole vectors in bytes, CX = the offset of
// block b in the output row and of e[b] in e, R12 = where the run of blocks ends, R8 = the
// coefficient of block b and R9 = the step to the next one (Kp elements for b < a, down a
// column of c, one element for b ≥ a, along a row), R15 = the variant: n = P·size/32 when
// P·size is a multiple of 32 bytes up to 128, e[a] then held in Y8–Y11 for the whole run,
// or 0, a loop over P; +8 for non-temporal stores. With e[a] in registers a block is one
// broadcast, n adds (e[b] from memory), n multiplies and n stores, and four instructions of
// bookkeeping: neither the choice of stores nor the pair's case (b < a, b = a, b > a) is
// made in the block loop, and no coefficient is computed or rounded there.

// lanes are the instructions of the row writer on the element type itself: eight float32
// lanes (…PS, …SS) or four float64 lanes (…PD, …SD), as rowT adds and multiplies in T.
type lanes struct {
	movu, bcast, add, mul, movs, adds, muls func(ops ...Op)
	movnt                                   func(a, b Op)
	// dispatch is the order in which the run tests the variants (R15).
	dispatch []int
}

func (e elem) lanes() lanes {
	if e.bits == 32 {
		return lanes{
			movu: VMOVUPS, movnt: VMOVNTPS, bcast: VBROADCASTSS,
			add: VADDPS, mul: VMULPS,
			movs: VMOVSS, adds: VADDSS, muls: VMULSS,
			dispatch: []int{10, 12, 2, 4, 9, 11, 1, 3, 8},
		}
	}
	return lanes{
		movu: VMOVUPD, movnt: VMOVNTPD, bcast: VBROADCASTSD,
		add: VADDPD, mul: VMULPD,
		movs: VMOVSD, adds: VADDSD, muls: VMULSD,
		dispatch: []int{12, 10, 4, 2, 9, 11, 1, 3, 8},
	}
}

var ys = []VecPhysical{Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15}

// variantLabel is the name of the block loop of variant v (R15) of e's row writer.
func (e elem) variantLabel(v int) string {
	switch {
	case v == 0:
		return e.lbl("r", "g")
	case v == 8:
		return e.lbl("r", "gnt")
	case v > 8:
		return e.lbl("r", fmt.Sprintf("v%dnt", v-8))
	}
	return e.lbl("r", fmt.Sprintf("v%d", v))
}

// rowBlock is block b of a row from e[a] in Y8 to Y(7+n), n vectors, stored with st.
func rowBlock(ln lanes, n int, st func(a, b Op)) {
	ln.bcast(mem(R8, 0), Y0)
	for j := 0; j < n; j++ {
		ln.add(memx(32*j, R11, RCX, 1), ys[8+j], ys[1+j])
	}
	for j := 0; j < n; j++ {
		ln.mul(Y0, ys[1+j], ys[1+j])
	}
	for j := 0; j < n; j++ {
		st(ys[1+j], memx(32*j, RDI, RCX, 1))
	}
}

func row(e elem) {
	e.routine("row", []string{
		"rowAVX32 for float64: four lanes at a time, then one (P·8 a multiple of 32 bytes for nt).",
	}, []string{
		"One float32 row of the second channel, as rowT: block (a,b) is o[(a·os+b)·P+c] = f·(e[a·P+c]",
		"+ e[b·P+c]) with f = c[min(a,b)·Kp + max(a,b)] (coefAVX32), eight lanes at a time, then",
		"one. With nt the vector stores are non-temporal (the caller guarantees that o and P·4 are",
		"multiples of 32 bytes). Kp ≥ 4.",
	})
	ln := e.lanes()
	l := e.labels("r")
	loadArgs(arg{"o", RDI}, arg{"e", R11}, arg{"P", R10})
	SHLQ(U8(e.shift), R10)
	roundDown(R10, R13, 32)
	XORQ(R15, R15)
	CMPQ(R10, U8(128))
	JA(LabelRef(l("variant")))
	CMPQ(R10, R13)
	JNE(LabelRef(l("variant")))
	MOVQ(R10, R15)
	SHRQ(U8(5), R15)

	Label(l("variant"))
	MOVBLZX(addr(Param("nt")), EAX)
	SHLQ(U8(3), RAX)
	ORQ(RAX, R15)
	MOVQ(R11, R14)
	XORQ(RBX, RBX)

	whileBelow(l("a"), l("done"), RBX, addr(Param("K")), 1, func() {
		MOVQ(R15, RAX)
		ANDQ(U8(7), RAX)
		JZ(LabelRef(l("lower")))
		for j := 0; j < 4; j++ {
			ln.movu(mem(R14, 32*j), ys[8+j])
			if j < 3 {
				CMPQ(RAX, U8(j+1))
				JEQ(LabelRef(l("lower")))
			}
		}

		Label(l("lower"))
		Comment("b < a: c[b·Kp+a], down column a")
		loadArgs(arg{"c", R8})
		LEAQ(e.at(R8, RBX), R8)
		Load(Param("Kp"), R9)
		SHLQ(U8(e.shift), R9)
		XORQ(RCX, RCX)
		MOVQ(R14, R12)
		SUBQ(R11, R12)

		Label(l("run"))
		CMPQ(RCX, R12)
		JAE(LabelRef(l("rundone")))
		for _, v := range ln.dispatch {
			CMPQ(R15, U8(v))
			JEQ(LabelRef(e.variantLabel(v)))
		}
		JMP(LabelRef(e.variantLabel(0)))

		Label(l("rundone"))
		CMPQ(R9, U8(e.size))
		JEQ(LabelRef(l("nexta")))
		Comment("b ≥ a: c[a·Kp+b], along row a")
		Load(Param("Kp"), R8)
		IMULQ(RBX, R8)
		ADDQ(RBX, R8)
		SHLQ(U8(e.shift), R8)
		ADDQ(addr(Param("c").Base()), R8)
		MOVQ(U32(e.size), R9)
		Load(Param("K"), R12)
		IMULQ(R10, R12)
		JMP(LabelRef(l("run")))

		Label(l("nexta"))
		ADDQ(R10, R14)
		Comment("on to block (a+1, 0): os blocks of P further")
		Load(Param("os"), RAX)
		IMULQ(R10, RAX)
		ADDQ(RAX, RDI)
	})

	for _, nt := range []int{0, 8} {
		st := func(a, b Op) { ln.movu(a, b) }
		if nt != 0 {
			st = ln.movnt
		}
		for n := 1; n <= 4; n++ {
			blocks(e, e.variantLabel(n+nt), U8(32*n), func() { rowBlock(ln, n, st) })
		}
	}

	rowAny(e, ln, true)
	rowAny(e, ln, false)
	done(l)
}

// blocks is the block loop at label top: body for each block, then R8 on to the next block's
// coefficient and CX on by step, while CX < R12 (the run's end); then on to the end of the run.
func blocks(e elem, top string, step Op, body func()) {
	repeatBelow(top, RCX, R12, step, func() {
		body()
		ADDQ(R9, R8)
	})
	JMP(LabelRef(e.lbl("r", "rundone")))
}

// rowAny is the block loop for any P (variants 8 and 0): whole vectors, non-temporal with nt
// (then P·size is a multiple of 32), else followed by one lane at a time.
func rowAny(e elem, ln lanes, nt bool) {
	l := e.labels("r")
	top, vec := l("g"), l("gv")
	st := func(a, b Op) { ln.movu(a, b) }
	if nt {
		top, vec = l("gnt"), l("gntv")
		st = ln.movnt
	}
	blocks(e, top, R10, func() {
		if nt {
			Commentf("any P·%d a multiple of 32: whole vectors, non-temporal", e.size)
		} else {
			Comment("any P: whole vectors, then one lane at a time")
		}
		ln.bcast(mem(R8, 0), Y0)
		LEAQ(memx(0, R11, RCX, 1), RSI)
		LEAQ(memx(0, RDI, RCX, 1), RDX)
		XORQ(RAX, RAX)
		if !nt {
			TESTQ(R13, R13)
			JZ(LabelRef(l("gt")))
		}
		repeatBelow(vec, RAX, R13, U8(32), func() {
			ln.movu(memx(0, R14, RAX, 1), Y1)
			ln.add(memx(0, RSI, RAX, 1), Y1, Y1)
			ln.mul(Y0, Y1, Y1)
			st(Y1, memx(0, RDX, RAX, 1))
		})
		if !nt {
			whileBelow(l("gt"), l("gnext"), RAX, R10, e.size, func() {
				ln.movs(memx(0, R14, RAX, 1), X1)
				ln.adds(memx(0, RSI, RAX, 1), X1, X1)
				ln.muls(X0, X1, X1)
				ln.movs(X1, memx(0, RDX, RAX, 1))
			})
			Label(l("gnext"))
		}
	})
}
