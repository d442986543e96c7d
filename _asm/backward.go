package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// backward generates backward/vec_amd64.s, the AVX loops of the stride-1 softmax backward
// (and, forward.go, the AVX2 loops of the forward):
// the float32 twin of each widens every element to float64 as it is loaded and rounds once as
// it is stored, so both do the Go loops' operations in their order and give their bits. Each
// Go declaration in vec_amd64.go has the Go loop it must match; the pure-Go twins are
// vec_other.go (-tags purego, or not amd64).
func backward() {
	for _, gen := range []func(elem){dot, writeSoftmax, dotRows4, writeRow} {
		gen(f64)
		gen(f32)
	}
	forward()
}

// loop4 runs body for AX = 0, 4, 8, … while AX < CX.
func loop4(e elem, prefix string, body func()) {
	l := e.labels(prefix)
	whileBelow(l("loop"), l("done"), RAX, RCX, 4, body)
	Label(l("done"))
}

func dot(e elem) {
	e.routine("dot", []string{
		"The four interleaved partial sums of Σ a_i·b_i over the first len(a) &^ 3 elements:",
		"lane j adds a_i·b_i for i ≡ j (mod 4) in index order, each product rounded, then the",
		"sum (as dot).",
	}, []string{"dotAVX64 for float32 data, each element widened to float64 first."})
	loadArgs(arg{"a", RSI}, arg{"len(a)", RCX}, arg{"b", RDI})
	ANDQ(I8(-4), RCX)
	XORQ(RAX, RAX)
	VXORPD(Y0, Y0, Y0)
	loop4(e, "d", func() {
		e.load(e.at(RSI, RAX), Y1)
		e.mul(e.at(RDI, RAX), Y1, Y2)
		VADDPD(Y1, Y0, Y0)
	})
	VMOVUPD(Y0, addr(Return("s0")))
	VZEROUPPER()
	RET()
}

// writeSoftmax generates writeSoftmaxAVX64 and writeSoftmaxAVX32, dx_i = y_i·(dy_i − av).
func writeSoftmax(e elem) {
	write(e, "writeSoftmax", "w", "dx_i = y_i·(dy_i − av) for the first len(dx) &^ 3 elements.",
		"writeSoftmaxAVX64 for float32 data: computed in float64, rounded once to float32.")
}

// writeRow generates writeRowAVX64 and writeRowAVX32, dx_i = y_i·(dy_i − a_i).
func writeRow(e elem) {
	write(e, "writeRow", "x", "dx_i = y_i·(dy_i − a_i) for the first len(dx) &^ 3 columns.",
		"writeRowAVX64 for float32 rows: computed in float64, rounded once.")
}

// write is writeSoftmax, with the float64 av broadcast in Y0, and writeRow, with the float64
// slice a at R8: dx_i = y_i·(dy_i − av) or y_i·(dy_i − a_i), labels prefixed by label; doc64
// and doc32 document the float64 and float32 routines.
func write(e elem, base, label, doc64, doc32 string) {
	e.routine(base, []string{doc64}, []string{doc32})
	loadArgs(arg{"dx", RDI}, arg{"len(dx)", RCX}, arg{"y", RSI}, arg{"dy", RDX})
	var sub Op = Y0
	if base == "writeRow" {
		loadArgs(arg{"a", R8})
		sub = f64.at(R8, RAX)
	} else {
		VBROADCASTSD(addr(Param("av")), Y0)
	}
	ANDQ(I8(-4), RCX)
	XORQ(RAX, RAX)
	loop4(e, label, func() {
		e.load(e.at(RDX, RAX), Y1)
		VSUBPD(sub, Y1, Y1)
		e.mul(e.at(RSI, RAX), Y1, Y2)
		e.store(Y1, e.at(RDI, RAX))
	})
	VZEROUPPER()
	RET()
}

func dotRows4(e elem) {
	e.routine("dotRows4", []string{
		"acc[i] += a[i]·b[i], then the same for rows a[stride:], a[2·stride:], a[3·stride:]",
		"(and b), in row order, for the first len(acc) &^ 3 columns.",
	}, []string{"dotRows4AVX64 for float32 rows, each element widened to float64 first."})
	loadArgs(arg{"acc", RDI}, arg{"len(acc)", RCX}, arg{"a", RSI}, arg{"b", RDX}, arg{"stride", R8})
	SHLQ(U8(e.shift), R8)
	ANDQ(I8(-4), RCX)
	XORQ(RAX, RAX)
	loop4(e, "r", func() {
		LEAQ(e.at(RSI, RAX), R9)
		LEAQ(e.at(RDX, RAX), R10)
		VMOVUPD(f64.at(RDI, RAX), Y0)
		for q := 0; q < 4; q++ {
			if q > 0 {
				ADDQ(R8, R9)
				ADDQ(R8, R10)
			}
			e.load(Mem{Base: R9}, Y1)
			e.mul(Mem{Base: R10}, Y1, Y2)
			VADDPD(Y1, Y0, Y0)
		}
		VMOVUPD(Y0, f64.at(RDI, RAX))
	})
	VZEROUPPER()
	RET()
}
